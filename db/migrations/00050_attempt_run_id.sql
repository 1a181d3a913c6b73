-- +goose Up
-- The run id of the execution that scheduled an activity attempt, handed
-- to the worker with the attempt (activity.GetInfo(ctx).WorkflowExecution.RunID).
-- NULL for attempts scheduled before this column existed: the worker then
-- names the execution by its number.
ALTER TABLE worker_queue ADD COLUMN run_id uuid;

-- +goose Down
ALTER TABLE worker_queue DROP COLUMN run_id;
