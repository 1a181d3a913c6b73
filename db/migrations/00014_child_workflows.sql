-- +goose Up
-- Child workflows (docs/architecture.md, "Child workflows"): a child
-- instance records its parent — namespace, instance, execution — the
-- child's number within that execution (the start_child_workflow
-- command's child_id) and what happens to it when the parent closes.
ALTER TABLE instances ADD COLUMN parent_namespace text;
ALTER TABLE instances ADD COLUMN parent_instance_id text;
ALTER TABLE instances ADD COLUMN parent_execution_id bigint;
ALTER TABLE instances ADD COLUMN parent_child_id bigint;
ALTER TABLE instances ADD COLUMN parent_close_policy text
    CHECK (parent_close_policy IN ('terminate', 'request_cancel', 'abandon'));
-- The children of a parent, for its close policy and its cancels.
CREATE INDEX instances_parent ON instances (parent_namespace, parent_instance_id, parent_execution_id)
    WHERE parent_instance_id IS NOT NULL;

-- +goose Down
DROP INDEX instances_parent;
ALTER TABLE instances DROP COLUMN parent_close_policy;
ALTER TABLE instances DROP COLUMN parent_child_id;
ALTER TABLE instances DROP COLUMN parent_execution_id;
ALTER TABLE instances DROP COLUMN parent_instance_id;
ALTER TABLE instances DROP COLUMN parent_namespace;
