-- +goose Up
-- Workflow reset (docs/api.md, "Reset"). reset_from: where the instance's
-- current run came from when a reset made it — {execution_id (of the run
-- it describes), run_id, from_execution_id, event_id, reset_type, reason,
-- request_id} — read by describe only when its execution_id is the
-- current one (a later continue-as-new or restart leaves it stale rather
-- than write it on the hot path). No index names it.
ALTER TABLE instances ADD COLUMN reset_from jsonb;
-- A reset batch's options (operation 'reset'): the reset type, the build
-- id of reset_type build_id, and whether signals are re-applied.
ALTER TABLE batches ADD COLUMN reset_type text NOT NULL DEFAULT '';
ALTER TABLE batches ADD COLUMN reset_build_id text NOT NULL DEFAULT '';
ALTER TABLE batches ADD COLUMN reset_reapply_signals boolean NOT NULL DEFAULT true;

-- +goose Down
ALTER TABLE batches DROP COLUMN reset_reapply_signals;
ALTER TABLE batches DROP COLUMN reset_build_id;
ALTER TABLE batches DROP COLUMN reset_type;
ALTER TABLE instances DROP COLUMN reset_from;
