-- name: GetHistory :many
SELECT event_id, kind, payload, created_at FROM history
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND execution_id = sqlc.arg(execution_id)
ORDER BY event_id;

-- name: ActivityStates :many
-- For each activity of an execution, whether it is done (the rule is
-- tether_activity_done's, migration 00062). Activities not done are
-- outstanding.
SELECT activity_id::bigint AS activity_id,
       tether_activity_done(bit_or(tether_activity_event(kind, payload)))::boolean AS done
FROM history
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND execution_id = sqlc.arg(execution_id)
  AND activity_id IS NOT NULL
GROUP BY activity_id;

-- name: AppendEvents :exec
-- Appends the events of one or more turns in one statement: element k of
-- the arrays is one event (unnested side by side). activity_ids and
-- timer_ids hold 0 for none; created_at_us is microseconds since the epoch,
-- 0 for now().
INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, activity_id, timer_id, payload, created_at)
SELECT sqlc.arg(namespace), e.instance_id, e.execution_id, e.event_id, e.kind, NULLIF(e.activity_id, 0),
       NULLIF(e.timer_id, 0), e.payload,
       COALESCE(tether_add('epoch'::timestamptz, NULLIF(e.created_at_us, 0) * interval '1 microsecond'), now())
FROM (SELECT unnest(sqlc.arg(instance_ids)::text[]) AS instance_id, unnest(sqlc.arg(execution_ids)::bigint[]) AS execution_id,
             unnest(sqlc.arg(event_ids)::bigint[]) AS event_id, unnest(sqlc.arg(kinds)::text[]) AS kind,
             unnest(sqlc.arg(activity_ids)::bigint[]) AS activity_id, unnest(sqlc.arg(timer_ids)::bigint[]) AS timer_id,
             unnest(sqlc.arg(payloads)::jsonb[]) AS payload, unnest(sqlc.arg(created_at_us)::bigint[]) AS created_at_us) e;

-- name: CopyEvents :copyfrom
-- Appends many events with the COPY protocol (large turns).
INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, activity_id, timer_id, payload, created_at)
VALUES (sqlc.arg(namespace), sqlc.arg(instance_id), sqlc.arg(execution_id), sqlc.arg(event_id), sqlc.arg(kind),
        sqlc.narg(activity_id), sqlc.narg(timer_id), sqlc.arg(payload), sqlc.arg(created_at));

-- name: GetHistoryPage :many
-- One page of an execution's history: up to page_size events after
-- after_event_id, in order.
SELECT event_id, kind, payload, created_at FROM history
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND execution_id = sqlc.arg(execution_id)
  AND event_id > sqlc.arg(after_event_id)::bigint
ORDER BY event_id
LIMIT sqlc.arg(page_size)::int;

-- name: ExecutionOfRunID :one
-- The execution of instance_id whose run id is run_id: the current one
-- (instances.run_id), or a past one, whose WorkflowStarted event (event 1)
-- recorded it. No row: no execution of the instance has that run id.
SELECT x.execution_id FROM (
    SELECT i.execution_id FROM instances i
    WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = sqlc.arg(instance_id) AND i.run_id = sqlc.arg(run_id)::uuid
    UNION ALL
    SELECT h.execution_id FROM history h
    WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = sqlc.arg(instance_id) AND h.event_id = 1
      AND h.kind = 'WorkflowStarted' AND h.payload ->> 'run_id' = sqlc.arg(run_id)::text
) x
LIMIT 1;

-- name: RunIDOfExecution :one
-- The run id a past execution's WorkflowStarted event recorded ('' when
-- it predates run ids).
SELECT COALESCE(h.payload ->> 'run_id', '')::text AS run_id FROM history h
WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = sqlc.arg(instance_id)
  AND h.execution_id = sqlc.arg(execution_id) AND h.event_id = 1;
