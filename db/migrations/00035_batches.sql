-- +goose Up
-- Batch operations (docs/api.md, "Batch operations"): a job that cancels,
-- terminates, signals or deletes every workflow of a namespace matching a
-- list query, run by the batch service (server/services/batch). The job
-- walks the matching instances by instance_id: after_id is the last one
-- it handled, advanced in the transaction that applies the operation to
-- that instance (or records its failure), so that a job resumes where it
-- was after a restart and handles each instance once. owner and
-- lease_until say which replica runs it; a replica claims a running job
-- whose lease is free or expired with FOR UPDATE SKIP LOCKED. state is one
-- of api.BatchStates(); failures holds the first api.MaxBatchFailures
-- failures ({workflow_id, reason, at}).
CREATE TABLE batches (
    namespace       text        NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    batch_id        text        NOT NULL,
    operation       text        NOT NULL,
    query           text        NOT NULL,
    reason          text        NOT NULL DEFAULT '',
    signal_name     text        NOT NULL DEFAULT '',
    signal_input    jsonb,
    force           boolean     NOT NULL DEFAULT false,
    rate_per_second integer     NOT NULL,
    state           text        NOT NULL
                    CHECK (state = ANY (ARRAY['running', 'paused', 'completed', 'canceled', 'failed'])),
    total           bigint      NOT NULL DEFAULT 0,
    done            bigint      NOT NULL DEFAULT 0,
    failed          bigint      NOT NULL DEFAULT 0,
    failures        jsonb       NOT NULL DEFAULT '[]',
    after_id        text        NOT NULL DEFAULT '',
    error           text        NOT NULL DEFAULT '',
    identity        text        NOT NULL DEFAULT '',
    owner           text,
    lease_until     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    PRIMARY KEY (namespace, batch_id)
);

-- +goose Down
DROP TABLE batches;
