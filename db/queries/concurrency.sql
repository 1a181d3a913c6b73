-- name: ConcurrencyStart :one
-- Puts a workflow just started (in this transaction) under its
-- concurrency key (tether_concurrency_start, migration 00051): it runs
-- when the key has a free slot and no older workflow waits for one, and
-- waits otherwise. Returns whether it runs, the key's counts, and the
-- workflow to ask to cancel (cancel_oldest), locked.
SELECT c.admitted::boolean AS admitted, c.running::integer AS running, c.waiting::bigint AS waiting, COALESCE(c.cancel, '')::text AS cancel
FROM tether_concurrency_start(sqlc.arg(namespace)::text, sqlc.arg(instance_id)::text, sqlc.arg(key)::text,
                              sqlc.arg(max_running)::integer, sqlc.arg(strategy)::text) AS c;

-- name: ConcurrencyKeyCounts :one
-- A concurrency key's limit, how many of its workflows hold a slot, and
-- how many wait for one.
SELECT COALESCE((SELECT k.max_running FROM concurrency_keys k WHERE k.namespace = sqlc.arg(namespace) AND k.key = sqlc.arg(key)), 0)::bigint AS max_running,
       COALESCE((SELECT k.running FROM concurrency_keys k WHERE k.namespace = sqlc.arg(namespace) AND k.key = sqlc.arg(key)), 0)::bigint AS running,
       (SELECT count(*) FROM instances i
        WHERE i.namespace = sqlc.arg(namespace) AND i.concurrency IS NOT NULL AND i.status = 'running'
          AND (i.concurrency ->> 'key') = sqlc.arg(key)::text AND i.locked_by = 'tether:concurrency')::bigint AS waiting;

-- name: QueueConcurrencyKeys :many
-- The concurrency keys of a task queue's running workflows (at most 100,
-- by key), each with its limit and namespace-wide counts.
SELECT k.key, k.max_running::bigint AS max_running, k.running::bigint AS running,
       (SELECT count(*) FROM instances w
        WHERE w.namespace = k.namespace AND w.concurrency IS NOT NULL AND w.status = 'running'
          AND (w.concurrency ->> 'key') = k.key AND w.locked_by = 'tether:concurrency')::bigint AS waiting
FROM concurrency_keys k
WHERE k.namespace = sqlc.arg(namespace)
  AND EXISTS (SELECT 1 FROM instances i
              WHERE i.namespace = sqlc.arg(namespace) AND i.concurrency IS NOT NULL AND i.status = 'running'
                AND (i.concurrency ->> 'key') = k.key AND i.task_queue = sqlc.arg(task_queue))
ORDER BY k.key
LIMIT 100;

-- name: AdmitWaitingConcurrency :many
-- The sweeper's pass over a namespace's concurrency keys: each key with a
-- free slot and a workflow waiting for one admits its oldest waiting ones
-- (tether_concurrency_admit). It catches the admissions a close skipped
-- because another transaction held the waiting workflow then. Keys are
-- locked in key order (the lock order of several keys); at most 100 keys
-- a pass. On Citus, where this statement would run on the worker node and
-- the function there could run no statement of its own, the sweeper runs
-- WaitingConcurrencyKeys and AdmitConcurrencyKeys instead.
SELECT a.id::text AS instance_id
FROM (SELECT k.key FROM concurrency_keys k
      WHERE k.namespace = sqlc.arg(namespace) AND k.running < k.max_running
        AND EXISTS (SELECT 1 FROM instances i
                    WHERE i.namespace = sqlc.arg(namespace) AND i.concurrency IS NOT NULL AND i.status = 'running'
                      AND (i.concurrency ->> 'key') = k.key AND i.locked_by = 'tether:concurrency')
      ORDER BY k.key
      LIMIT 100) k
CROSS JOIN LATERAL tether_concurrency_admit(sqlc.arg(namespace)::text, k.key) AS a(id);

-- name: WaitingConcurrencyKeys :many
-- AdmitWaitingConcurrency's keys, on Citus: the keys of the namespace with
-- a free slot and a workflow waiting for one, in key order (at most 100).
SELECT k.key FROM concurrency_keys k
WHERE k.namespace = sqlc.arg(namespace) AND k.running < k.max_running
  AND EXISTS (SELECT 1 FROM instances i
              WHERE i.namespace = sqlc.arg(namespace) AND i.concurrency IS NOT NULL AND i.status = 'running'
                AND (i.concurrency ->> 'key') = k.key AND i.locked_by = 'tether:concurrency')
ORDER BY k.key
LIMIT 100;

-- name: AdmitConcurrencyKeys :many
-- AdmitWaitingConcurrency's admissions, on Citus: the oldest waiting
-- workflows of each of keys (in their order) admitted up to the key's
-- limit. The statement names no table, so that Citus runs the function on
-- the coordinator, which routes each of its statements to the namespace's
-- node and sends its pg_notify where the servers' LISTEN hears it.
SELECT a.id::text AS instance_id
FROM unnest(sqlc.arg(keys)::text[]) WITH ORDINALITY AS k(key, n)
CROSS JOIN LATERAL tether_concurrency_admit(sqlc.arg(namespace)::text, k.key) AS a(id)
ORDER BY k.n;

-- name: TakeConcurrencyWakes :many
-- On Citus, the queues of the workflows admitted in this transaction (or
-- left by one that did not take them) on a worker node: the close's
-- trigger wrote them to concurrency_wakes instead of notifying there
-- (migration 00057). They are deleted, and the server wakes the queues
-- after the commit.
DELETE FROM concurrency_wakes WHERE namespace = sqlc.arg(namespace)
RETURNING task_queue;
-- name: RefuseChildStart :exec
-- A child workflow refused by its concurrency key (strategy
-- cancel_newest): the ChildWorkflowStarted its parent execution got from
-- StartChildren, in this transaction, becomes StartChildWorkflowFailed
-- with the refusal as its error (the caller deletes the child). Found
-- through the parent's messages (orchestrator_queue_instance).
UPDATE orchestrator_queue q
SET kind = 'StartChildWorkflowFailed',
    payload = (q.payload - 'child_execution_id' - 'child_run_id') || jsonb_build_object('error', sqlc.arg(error)::jsonb)
WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = sqlc.arg(parent_instance_id)
  AND q.execution_id = sqlc.arg(parent_execution_id)::bigint AND q.kind = 'ChildWorkflowStarted'
  AND (q.payload ->> 'child_id')::bigint = sqlc.arg(child_id)::bigint AND q.lock_token IS NULL;

-- name: AdmitWaitingActivityConcurrency :many
-- The sweeper's pass over a namespace's activity concurrency keys
-- (migration 00059), as AdmitWaitingConcurrency's over the workflows':
-- each key with a free slot and an attempt waiting for one admits its
-- oldest waiting ones (tether_activity_concurrency_admit). Keys are locked
-- in key order; at most 100 keys a pass.
SELECT k.key, a.n::integer AS admitted
FROM (SELECT c.key FROM activity_concurrency_keys c
      WHERE c.namespace = sqlc.arg(namespace) AND c.running < c.max_running
        AND EXISTS (SELECT 1 FROM worker_queue w
                    WHERE w.namespace = sqlc.arg(namespace) AND (w.options -> 'concurrency' ->> 'key') = c.key
                      AND w.options ? 'concurrency_wait')
      ORDER BY c.key
      LIMIT 100) k
CROSS JOIN LATERAL tether_activity_concurrency_admit(sqlc.arg(namespace)::text, k.key) AS a(n);

-- name: WaitingActivityConcurrencyKeys :many
-- AdmitWaitingActivityConcurrency's keys, on Citus: the activity
-- concurrency keys of the namespace with a free slot and an attempt
-- waiting for one, in key order (at most 100).
SELECT c.key FROM activity_concurrency_keys c
WHERE c.namespace = sqlc.arg(namespace) AND c.running < c.max_running
  AND EXISTS (SELECT 1 FROM worker_queue w
              WHERE w.namespace = sqlc.arg(namespace) AND (w.options -> 'concurrency' ->> 'key') = c.key
                AND w.options ? 'concurrency_wait')
ORDER BY c.key
LIMIT 100;

-- name: AdmitActivityConcurrencyKeys :many
-- AdmitWaitingActivityConcurrency's admissions, on Citus: the oldest
-- waiting attempts of each of keys (in their order) admitted up to the
-- key's limit. The statement names no table, so that Citus runs the
-- function on the coordinator, which routes each of its statements to the
-- namespace's node and sends its pg_notify where the servers' LISTEN
-- hears it.
SELECT k.key::text AS key, a.n::integer AS admitted
FROM unnest(sqlc.arg(keys)::text[]) WITH ORDINALITY AS k(key, o)
CROSS JOIN LATERAL tether_activity_concurrency_admit(sqlc.arg(namespace)::text, k.key) AS a(n)
ORDER BY k.o;

-- name: TakeActivityConcurrencyWakes :many
-- On Citus, the queues of the activity attempts admitted in this
-- transaction (or left by one that did not take them) on a worker node:
-- worker_queue's triggers wrote them to activity_concurrency_wakes
-- instead of notifying there (migration 00064). They are deleted, and the
-- server wakes the queues after the commit.
DELETE FROM activity_concurrency_wakes WHERE namespace = sqlc.arg(namespace)
RETURNING task_queue;
