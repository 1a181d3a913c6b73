-- +goose Up
-- run_id: the current execution's run id, a UUID of its own for every
-- execution (Temporal's RunID; the execution number stays). A new row —
-- a start, a restart of a finished instance (which replaces its row), a
-- child's start — gets a fresh one from the default; a continue-as-new
-- or a cron's next run sets the next execution's, chosen by the server
-- (FinishTurns), so that the ContinuedAsNew event can name it. Each
-- execution's WorkflowStarted event records its run id too, so that the
-- run ids of past executions stay known. The volatile default gives every
-- existing row a distinct one. No index names the column: FinishTurns
-- stays a HOT update.
ALTER TABLE instances ADD COLUMN run_id uuid NOT NULL DEFAULT gen_random_uuid();
-- parent_run_id: the run id of the parent execution that started this
-- instance as a child workflow.
ALTER TABLE instances ADD COLUMN parent_run_id uuid;
UPDATE instances c SET parent_run_id = p.run_id
FROM instances p
WHERE c.parent_namespace = p.namespace AND c.parent_instance_id = p.instance_id
  AND c.parent_execution_id = p.execution_id;

-- +goose Down
ALTER TABLE instances DROP COLUMN parent_run_id;
ALTER TABLE instances DROP COLUMN run_id;
