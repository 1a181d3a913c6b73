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

-- name: StopWaitingCronChildren :many
-- The cancel, by their parents' turns, of child workflows that are cron
-- workflows between two runs (children: one object per child named by a
-- request_cancel_child_workflow command, with its parent execution and
-- the reason): as StopWaitingCron, each ends canceled at once, with
-- nothing to run, instead of getting a CancelRequested message that no
-- started execution would read. Each child is a key probe, checked to be
-- the child of that parent execution. Returns the stopped children; the
-- caller drops their messages and tells their parents (CancelChildren
-- skips them: they no longer run).
WITH k AS (
    SELECT (x ->> 'instance_id')::text AS instance_id, (x ->> 'parent_instance_id')::text AS parent_instance_id,
           (x ->> 'parent_execution_id')::bigint AS parent_execution_id, (x ->> 'reason')::text AS reason
    FROM jsonb_array_elements(sqlc.arg(children)::jsonb) x
)
UPDATE instances c
SET status = 'canceled', cancel_requested = true, cancel_reason = k.reason, completed_at = now(), updated_at = now()
FROM k
WHERE c.namespace = sqlc.arg(namespace) AND c.instance_id = k.instance_id
  AND c.parent_namespace = sqlc.arg(namespace) AND c.parent_instance_id = k.parent_instance_id
  AND c.parent_execution_id = k.parent_execution_id
  AND c.status = 'running' AND NOT c.cancel_requested AND c.cron_schedule IS NOT NULL AND c.next_event_id = 1
  AND (c.locked_until IS NULL OR c.locked_until < now())
RETURNING c.instance_id;
