-- name: UpsertWorker :one
-- Creates or renews a worker session; a cleaned-up worker is left alone (no
-- row comes back). prev_state is the state before this heartbeat ('' for a
-- new worker).
WITH prev AS (
    SELECT state FROM workers
    WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id)
)
INSERT INTO workers AS w (namespace, worker_id, identity, host, build_id, task_queues, host_task_queue,
                          metadata, state, lease_duration, lease_expires_at, last_heartbeat_at, state_changed_at)
VALUES (sqlc.arg(namespace), sqlc.arg(worker_id), sqlc.arg(identity), sqlc.arg(host), sqlc.arg(build_id),
        sqlc.arg(task_queues)::text[], sqlc.narg(host_task_queue), sqlc.arg(metadata), 'active',
        sqlc.arg(lease_ms)::bigint * interval '1 millisecond',
        now() + sqlc.arg(lease_ms)::bigint * interval '1 millisecond', now(), now())
ON CONFLICT (namespace, worker_id) DO UPDATE SET
    identity = EXCLUDED.identity,
    host = EXCLUDED.host,
    build_id = EXCLUDED.build_id,
    task_queues = EXCLUDED.task_queues,
    host_task_queue = EXCLUDED.host_task_queue,
    metadata = EXCLUDED.metadata,
    state = 'active',
    lease_duration = EXCLUDED.lease_duration,
    lease_expires_at = EXCLUDED.lease_expires_at,
    last_heartbeat_at = now(),
    state_changed_at = CASE WHEN w.state = 'active' THEN w.state_changed_at ELSE now() END
WHERE w.state <> 'cleaned_up'
RETURNING w.state, w.lease_expires_at, COALESCE((SELECT state FROM prev), '')::text AS prev_state;

-- name: WorkerState :one
SELECT state FROM workers WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id);

-- name: RenewWorkerAttempts :many
-- One statement renews every attempt the worker holds (also cancelled ones)
-- and returns their cancel info.
UPDATE worker_queue
SET locked_until = GREATEST(locked_until, now() + sqlc.arg(extend_ms)::bigint * interval '1 millisecond')
WHERE worker_id = sqlc.arg(worker_id) AND namespace = sqlc.arg(namespace)
  AND lock_token IS NOT NULL AND locked_until > now()
RETURNING lock_token::uuid AS lock_token, cancel_requested, cancel_reason;

-- name: ListWorkers :many
SELECT * FROM workers
WHERE namespace = sqlc.arg(namespace) AND (sqlc.narg(state)::text IS NULL OR state = sqlc.narg(state)::text)
ORDER BY worker_id
LIMIT 1000;

-- name: GetWorker :one
SELECT * FROM workers WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id);

-- name: BoundAttempts :many
SELECT * FROM worker_queue
WHERE namespace = sqlc.arg(namespace) AND worker_id = ANY(sqlc.arg(worker_ids)::text[]) AND lock_token IS NOT NULL
ORDER BY id;

-- name: ExpireWorkerLeases :many
-- ACTIVE → INACTIVE for workers whose lease passed.
UPDATE workers w SET state = 'inactive', state_changed_at = now()
FROM (
    SELECT namespace AS ns, worker_id AS wid FROM workers
    WHERE state = 'active' AND lease_expires_at < now()
    ORDER BY lease_expires_at
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = c.ns AND w.worker_id = c.wid
RETURNING w.namespace, w.worker_id, w.host_task_queue, w.lease_expires_at;

-- name: FlagWorkerAttempts :many
-- The attempts a lost worker holds: flagged cancelled (worker_lost) and
-- released, so that their locks no longer count.
UPDATE worker_queue
SET cancel_requested = true,
    cancel_reason = COALESCE(cancel_reason, 'worker_lost'),
    cancel_requested_at = COALESCE(cancel_requested_at, now()),
    start_to_close_deadline = NULL, heartbeat_deadline = NULL
WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id)
  AND lock_token IS NOT NULL AND NOT cancel_requested
RETURNING *;

-- name: TakeQueueAttempts :many
-- Attempts waiting in a (host) task queue nobody will serve any more.
DELETE FROM worker_queue d
WHERE d.id IN (
    SELECT wq.id FROM worker_queue wq
    WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = sqlc.arg(task_queue)
      AND wq.lock_token IS NULL AND NOT wq.cancel_requested
    FOR UPDATE SKIP LOCKED
)
RETURNING d.*;

-- name: CleanupWorkers :many
-- INACTIVE → CLEANED_UP after the cleanup delay; only a tombstone stays.
UPDATE workers w
SET state = 'cleaned_up', state_changed_at = now(), metadata = '{}', task_queues = '{}'
FROM (
    SELECT namespace AS ns, worker_id AS wid FROM workers
    WHERE state = 'inactive' AND state_changed_at < now() - sqlc.arg(delay_ms)::bigint * interval '1 millisecond'
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = c.ns AND w.worker_id = c.wid
RETURNING w.namespace, w.worker_id;

-- name: LiveQueueWorkers :many
SELECT worker_id, host_task_queue FROM workers
WHERE namespace = sqlc.arg(namespace) AND state = 'active'
  AND (sqlc.arg(task_queue)::text = ANY(task_queues) OR host_task_queue = sqlc.arg(task_queue)::text)
ORDER BY worker_id;

-- name: HostQueueOwner :one
SELECT worker_id, state FROM workers
WHERE namespace = sqlc.arg(namespace) AND host_task_queue = sqlc.arg(task_queue)::text
ORDER BY last_heartbeat_at DESC
LIMIT 1;

-- name: PendingCancels :many
-- The held attempts of a worker whose cancellation was requested: what a
-- worker's cancel long-poll answers.
SELECT lock_token::uuid AS lock_token, COALESCE(cancel_reason, '')::text AS reason,
       cancel_requested_at::timestamptz AS requested_at
FROM worker_queue
WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id)
  AND lock_token IS NOT NULL AND cancel_requested
ORDER BY cancel_requested_at;
