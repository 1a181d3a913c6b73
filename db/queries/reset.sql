-- name: ResetCopyHistory :exec
-- A reset's new run gets the history of the run it is reset from, up to
-- upto_event_id (the events before the turn that runs again), under its
-- own execution id; its WorkflowStarted (event 1) gets started_patch
-- merged in (the new run's run_id and reset_from). One statement, in
-- event order.
INSERT INTO history (namespace, instance_id, execution_id, event_id, kind, activity_id, timer_id, payload, created_at)
SELECT h.namespace, h.instance_id, sqlc.arg(new_execution_id)::bigint, h.event_id, h.kind, h.activity_id, h.timer_id,
       CASE WHEN h.event_id = 1 THEN h.payload || sqlc.arg(started_patch)::jsonb ELSE h.payload END,
       h.created_at
FROM history h
WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = sqlc.arg(instance_id)
  AND h.execution_id = sqlc.arg(from_execution_id) AND h.event_id <= sqlc.arg(upto_event_id)::bigint
ORDER BY h.event_id;

-- name: ResetInstance :exec
-- Makes the instance's row the reset's new run (the caller holds it FOR
-- UPDATE): running on new_execution_id with run id new_run_id, the next
-- ids after the copied history, no lock, no sticky worker (the next turn
-- carries the whole history), no build id (the next worker's pins it), no
-- failing turn, the execution deadline counted again from now, and
-- reset_from.
UPDATE instances
SET status = 'running', execution_id = sqlc.arg(new_execution_id), run_id = sqlc.arg(new_run_id)::uuid,
    input = sqlc.narg(input)::jsonb, result = NULL, error = NULL,
    next_event_id = sqlc.arg(next_event_id), next_activity_id = sqlc.arg(next_activity_id),
    next_timer_id = sqlc.arg(next_timer_id),
    cancel_requested = sqlc.arg(cancel_requested), cancel_reason = sqlc.narg(cancel_reason),
    -- NULL without a timeout; tether_add: Citus takes no stable function of a column in an UPDATE.
    execution_deadline = tether_add(now(), execution_timeout),
    lock_token = NULL, locked_until = NULL, locked_by = NULL, sticky_worker_id = NULL,
    task_failures = 0, last_task_error = NULL, completed_at = NULL,
    last_event_at = sqlc.narg(last_event_at)::timestamptz, build_id = NULL,
    reset_from = sqlc.arg(reset_from)::jsonb, history_bytes = sqlc.arg(history_bytes)::bigint, updated_at = now()
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: ResetPendingSignals :many
-- The signals waiting for the instance (a reset keeps them, in order, for
-- its new run, unless they are excluded).
SELECT payload, payload_bytes FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND kind = 'SignalReceived'
ORDER BY id;

-- name: ResetEnqueue :exec
-- The messages of a reset's new run, in the order given (seq): the turn
-- that runs again, then the signals re-applied. payload_bytes keeps a
-- signal's size for the pending-message bound. priority is the
-- workflow's stored priority (NULL: none; see EnqueueMessagesTo).
INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, payload_bytes,
                                priority, pass)
SELECT sqlc.arg(namespace), sqlc.arg(instance_id), m.execution_id, sqlc.arg(task_queue), m.kind, m.payload,
       COALESCE(m.payload_bytes, 0),
       tether_priority_key(sqlc.narg(priority)::jsonb),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN sqlc.narg(priority)::jsonb IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = sqlc.arg(task_queue)
                          AND vq.priority = tether_priority_key(sqlc.narg(priority)::jsonb) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM jsonb_to_recordset(sqlc.arg(messages)::jsonb)
    AS m(seq integer, execution_id bigint, kind text, payload jsonb, payload_bytes integer)
ORDER BY m.seq;

-- name: ResetTimers :exec
-- The timers a reset's new run still waits for: TimerFired messages of the
-- new execution, each visible at its original time (at_ms: Unix
-- milliseconds; now when past), with the workflow's priority (as
-- ResetEnqueue).
INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at, priority, pass)
SELECT sqlc.arg(namespace), sqlc.arg(instance_id), sqlc.arg(execution_id)::bigint, sqlc.arg(task_queue), 'TimerFired',
       m.payload, greatest(now(), to_timestamp(m.at_ms / 1000.0)),
       tether_priority_key(sqlc.narg(priority)::jsonb),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN sqlc.narg(priority)::jsonb IS NOT NULL
            THEN LEAST(greatest(now(), to_timestamp(m.at_ms / 1000.0)),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = sqlc.arg(task_queue)
                          AND vq.priority = tether_priority_key(sqlc.narg(priority)::jsonb) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM jsonb_to_recordset(sqlc.arg(timers)::jsonb) AS m(payload jsonb, at_ms bigint);
