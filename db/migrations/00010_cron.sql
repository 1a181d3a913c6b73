-- +goose Up
-- A cron workflow (StartWorkflowRequest.cron_schedule): each execution that
-- completes or fails is followed by the next, started at the schedule's
-- next time (docs/api.md, "Cron workflows"). NULL for any other workflow.
ALTER TABLE instances ADD COLUMN cron_schedule text;

-- +goose Down
ALTER TABLE instances DROP COLUMN cron_schedule;
