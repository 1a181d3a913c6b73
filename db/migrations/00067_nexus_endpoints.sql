-- +goose Up
-- Nexus endpoints (docs/sdk.md, "Nexus"): an endpoint's name maps to the
-- namespace and task queue whose workers handle its operations
-- (Temporal's `temporal operator nexus endpoint create --name E
-- --target-namespace NS --target-task-queue Q`). Endpoints belong to no
-- namespace: a caller in any namespace names one; the target namespace
-- need not exist when the endpoint is created (as in Temporal), an
-- operation sent to a missing one fails.
CREATE TABLE nexus_endpoints (
    name              text        PRIMARY KEY,
    target_namespace  text        NOT NULL,
    target_task_queue text        NOT NULL,
    description       text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE nexus_endpoints;
