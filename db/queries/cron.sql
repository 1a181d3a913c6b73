-- name: StopWaitingCron :one
-- The cancel of a cron workflow between two runs: its current execution
-- has not started (its start message waits for the schedule's time) and
-- no turn holds it, so it ends canceled at once, with nothing to run. No
-- row for any other instance (the ordinary cancel request applies).
UPDATE instances
SET status = 'canceled', cancel_requested = true, cancel_reason = sqlc.arg(reason),
    completed_at = now(), updated_at = now()
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
  AND status = 'running' AND cron_schedule IS NOT NULL AND next_event_id = 1
  AND (locked_until IS NULL OR locked_until < now())
RETURNING execution_id;
