-- +goose Up
-- A child workflow's retry policy (start_child_workflow's retry_policy)
-- and which attempt its current execution is (docs/architecture.md,
-- "Child workflows"): a failed execution with attempts left is followed
-- by the next one after the policy's backoff.
ALTER TABLE instances ADD COLUMN retry_policy jsonb;
ALTER TABLE instances ADD COLUMN retry_attempt integer NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE instances DROP COLUMN retry_attempt;
ALTER TABLE instances DROP COLUMN retry_policy;
