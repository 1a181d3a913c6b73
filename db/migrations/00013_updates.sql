-- +goose Up
-- Workflow updates (docs/api.md, "Updates"): one row per update id of an
-- instance, so that a repeated request finds its update (the handler runs
-- once) and waits on its stage. The update itself travels to the workflow
-- as a WorkflowUpdateAccepted message; the ack of the turn that saw it
-- writes the stage (accepted, completed or rejected) and wakes the waiting
-- requests.
CREATE TABLE updates (
    namespace    text NOT NULL,
    instance_id  text NOT NULL,
    update_id    text NOT NULL,
    update_name  text NOT NULL,
    stage        text NOT NULL DEFAULT 'admitted',
    result       jsonb,
    error        jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, instance_id, update_id)
);

-- +goose Down
DROP TABLE updates;
