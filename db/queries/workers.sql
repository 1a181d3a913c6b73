-- name: ListWorkers :many
-- One page of worker sessions, by worker_id, after after_worker_id.
SELECT * FROM workers
WHERE namespace = sqlc.arg(namespace) AND (sqlc.narg(state)::text IS NULL OR state = sqlc.narg(state)::text)
  AND worker_id > sqlc.arg(after_worker_id)::text
ORDER BY worker_id
LIMIT sqlc.arg(page_size)::int;

-- name: GetWorker :one
SELECT * FROM workers WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id);

-- name: BoundAttempts :many
SELECT * FROM worker_queue
WHERE namespace = sqlc.arg(namespace) AND worker_id = ANY(sqlc.arg(worker_ids)::text[]) AND lock_token IS NOT NULL
ORDER BY id;

-- name: ExpireWorkerLeases :many
-- ACTIVE → INACTIVE for workers whose lease passed (one namespace per
-- statement, as every sweeper statement).
UPDATE workers w SET state = 'inactive', state_changed_at = now()
FROM (
    SELECT worker_id AS wid FROM workers
    WHERE namespace = sqlc.arg(namespace) AND state = 'active' AND lease_expires_at < now()
    ORDER BY lease_expires_at
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.worker_id = c.wid
RETURNING w.namespace, w.worker_id, w.host_task_queue, w.lease_expires_at;

-- name: FlagWorkerAttempts :many
-- The attempts the lost workers of a namespace hold (worker_ids): flagged
-- cancelled (worker_lost) and released, so that their locks no longer
-- count. One statement for every worker of the namespace in a sweep, its
-- attempts locked in id order (the lock order of worker_queue).
UPDATE worker_queue w
SET cancel_requested = true,
    cancel_reason = COALESCE(w.cancel_reason, 'worker_lost'),
    cancel_requested_at = LEAST(w.cancel_requested_at, now()),
    start_to_close_deadline = NULL, heartbeat_deadline = NULL
FROM (
    SELECT (q).ctid AS tid FROM worker_queue q
    WHERE q.namespace = sqlc.arg(namespace) AND q.worker_id = ANY(sqlc.arg(worker_ids)::text[])
      AND q.lock_token IS NOT NULL AND NOT q.cancel_requested
    ORDER BY q.id
    FOR NO KEY UPDATE
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*;

-- name: TakeQueueAttempts :many
-- Attempts waiting in a (host) task queue nobody will serve any more.
DELETE FROM worker_queue d
USING (
    SELECT (wq).ctid AS tid FROM worker_queue wq
    WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = sqlc.arg(task_queue)
      AND wq.lock_token IS NULL AND NOT wq.cancel_requested
    FOR UPDATE SKIP LOCKED
) v
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = v.tid
RETURNING d.*;

-- name: CleanupWorkers :many
-- INACTIVE → CLEANED_UP after the cleanup delay; only a tombstone stays.
-- One namespace per statement.
UPDATE workers w
SET state = 'cleaned_up', state_changed_at = now(), metadata = '{}', task_queues = '{}'
FROM (
    SELECT worker_id AS wid FROM workers
    WHERE namespace = sqlc.arg(namespace) AND state = 'inactive' AND state_changed_at < now() - sqlc.arg(delay_ms)::bigint * interval '1 millisecond'
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.worker_id = c.wid
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

-- name: RenewWorkers :many
-- A batch of heartbeats from workers that have a session: renews each one
-- that is not cleaned up, in one statement, and returns its state before
-- the heartbeat (inactive: resurrected) through prev_state, which the
-- update sets from the row version it replaces (the latest committed one).
-- The rows are locked in key order first (the lock order of workers): the
-- join's order is the plan's — on a small table, a sequential scan's — so
-- that concurrent batches naming a worker twice deadlocked. The batch is
-- unnested from an array, which the planner counts as a few rows
-- (jsonb_to_recordset counts 100): it then probes the primary key per
-- worker instead of hashing the whole table. Workers that come back with
-- no row are new or cleaned up: UpsertWorkers handles them. One
-- namespace per statement: the batch's workers of other namespaces are
-- left out.
UPDATE workers w SET
    identity = COALESCE(c.j->>'identity', ''),
    host = COALESCE(c.j->>'host', ''),
    build_id = COALESCE(c.j->>'build_id', ''),
    task_queues = COALESCE(ARRAY(SELECT jsonb_array_elements_text(c.j->'task_queues')), '{}'),
    host_task_queue = c.j->>'host_task_queue',
    metadata = COALESCE(NULLIF(c.j->'metadata', 'null'::jsonb), '{}'),
    prev_state = w.state,
    state = 'active',
    lease_duration = (c.j->>'lease_ms')::bigint * interval '1 millisecond',
    lease_expires_at = tether_add(now(), (c.j->>'lease_ms')::bigint * interval '1 millisecond'),
    last_heartbeat_at = now(),
    state_changed_at = GREATEST(w.state_changed_at, tether_add(now(), CASE WHEN w.state <> 'active' THEN interval '0' END))
FROM (
    SELECT k.namespace, k.worker_id, x.j
    FROM unnest(ARRAY(SELECT jsonb_array_elements(sqlc.arg(workers)::jsonb))) AS x(j)
    JOIN workers k ON k.namespace = sqlc.arg(namespace) AND k.worker_id = x.j->>'worker_id'
    WHERE x.j->>'namespace' = sqlc.arg(namespace) AND k.state <> 'cleaned_up'
      AND (k.owner IS NULL OR k.owner = x.j->>'owner')
    ORDER BY k.namespace, k.worker_id
    FOR NO KEY UPDATE OF k
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.worker_id = c.worker_id
RETURNING w.namespace, w.worker_id, w.prev_state::text AS prev_state, w.state, w.lease_expires_at,
          COALESCE(c.j->>'owner', '')::text AS owner;

-- name: UpsertWorkers :many
-- The heartbeats of a batch that RenewWorkers did not apply, in one
-- statement: creates each new worker session (or renews one created
-- meanwhile); cleaned-up workers are left alone (no row comes back for
-- them). inserted tells a new session from one created concurrently. The
-- owner (the API key or session secret that created the session) is set
-- at insert and never changed; a session is renewed only by its owner (or
-- by anyone when it has none: created before owners existed, or without a
-- key or secret). One namespace per statement (workers: the batch's
-- heartbeats of that namespace).
INSERT INTO workers AS w (namespace, worker_id, identity, host, build_id, task_queues, host_task_queue,
                          metadata, state, lease_duration, lease_expires_at, last_heartbeat_at, state_changed_at, owner)
SELECT sqlc.arg(namespace), x.worker_id, COALESCE(x.identity, ''), COALESCE(x.host, ''), COALESCE(x.build_id, ''),
       COALESCE(x.task_queues, '{}'), x.host_task_queue, COALESCE(x.metadata, '{}'), 'active',
       x.lease_ms * interval '1 millisecond', now() + x.lease_ms * interval '1 millisecond', now(), now(), x.owner
FROM jsonb_to_recordset(sqlc.arg(workers)::jsonb) AS x(
    worker_id text, identity text, host text, build_id text, task_queues text[],
    host_task_queue text, metadata jsonb, lease_ms bigint, owner text)
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
    -- (the inserted values, now(): Citus allows no STABLE function here)
    last_heartbeat_at = EXCLUDED.last_heartbeat_at,
    state_changed_at = GREATEST(w.state_changed_at, CASE WHEN w.state <> 'active' THEN EXCLUDED.state_changed_at END)
WHERE w.state <> 'cleaned_up' AND (w.owner IS NULL OR w.owner = EXCLUDED.owner)
RETURNING w.namespace, w.worker_id, w.state, w.lease_expires_at, (w.xmax = 0)::bool AS inserted;

-- name: RenewWorkersAttempts :many
-- Renews the attempts held by the workers of a heartbeat batch (to twice
-- each one's lease) and returns them with their cancel info. When a worker
-- lists the attempts it holds (tokens), only those are renewed, and those
-- fetched within its last lease (their token may not have reached the list
-- yet): an attempt bound to the same worker id by an earlier process that
-- died is not kept alive by its successor. The attempts are locked in id
-- order (the lock order of worker_queue), then renewed. A lock counts
-- until the sweeper releases it (see HeartbeatAttempt). One namespace per
-- statement (the batch's workers of other namespaces are left out).
UPDATE worker_queue q
SET locked_until = GREATEST(q.locked_until, tether_add(now(), c.extend_ms * interval '1 millisecond'))
FROM (
    SELECT (wq).ctid AS tid, x.extend_ms::bigint AS extend_ms
    FROM jsonb_to_recordset(sqlc.arg(workers)::jsonb)
        AS x(namespace text, worker_id text, extend_ms bigint, tokens text[], lease_ms bigint)
    JOIN worker_queue wq ON wq.worker_id = x.worker_id AND wq.namespace = sqlc.arg(namespace)
    WHERE x.namespace = sqlc.arg(namespace) AND wq.lock_token IS NOT NULL AND wq.locked_until > now() - interval '1 day'
      AND (x.tokens IS NULL OR wq.lock_token::text = ANY(x.tokens)
           OR wq.started_at > now() - x.lease_ms * interval '1 millisecond')
    ORDER BY wq.id
    FOR NO KEY UPDATE OF wq
) c
WHERE q.namespace = sqlc.arg(namespace) AND q.ctid = c.tid
RETURNING q.namespace, q.worker_id::text AS worker_id, q.lock_token::uuid AS lock_token, q.cancel_requested, q.cancel_reason,
          q.cancel_requested_at;

-- name: CountWorkersByState :many
SELECT state, count(*)::bigint AS workers FROM workers GROUP BY state;

-- name: LostHostQueues :many
-- Of the given task queues, the host task queues whose worker is no longer
-- active: nothing scheduled there would ever be picked up.
SELECT DISTINCT ON (host_task_queue) host_task_queue::text AS task_queue, worker_id, state
FROM workers
WHERE namespace = sqlc.arg(namespace) AND host_task_queue = ANY(sqlc.arg(task_queues)::text[])
ORDER BY host_task_queue, last_heartbeat_at DESC;
