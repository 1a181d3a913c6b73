-- name: EnqueueMessages :many
-- Enqueues messages to instances that are running (and, when execution_id
-- is given, still on that execution); messages to anything else are dropped
-- here. Returns, for each message enqueued, its instance, the task
-- queue that received it and whether it is flow-controlled. Each message looks
-- its instance up by primary key: the LIMIT keeps the LATERAL a per-message
-- probe (without it the planner flattens the join and, believing
-- jsonb_to_recordset's 100 rows, hashes every running instance). On Citus,
-- EnqueueMessagesJoin.
--
-- A message to a workflow with a priority (instances.priority, migration
-- 00042) is a later turn of that workflow: it gets the workflow's priority
-- key and, as its pass (flow-controlled, in the flow index), the earlier
-- of its visible time and the queue's current virtual time: the earliest
-- pass waiting in the queue at that priority (the value StartInstances'
-- key clocks start from), less 1 µs. Its fairness key's clock is not
-- moved: a workflow under way goes ahead of the starts that wait, even
-- when their passes fell behind the wall clock (a backlog started at
-- under 1 000/s). Every statement that enqueues a later message computes
-- the pass so (the "Later message" expression, the same in each, a probe
-- of orchestrator_queue_flow); it runs only for a workflow with a
-- priority, so that queues without flow control never read the index.
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at, priority, pass)
SELECT i.namespace, i.instance_id, m.execution_id, i.task_queue, m.kind, m.payload,
       now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
       tether_priority_key(i.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN i.priority IS NOT NULL
            THEN LEAST(now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = i.namespace AND vq.task_queue = i.task_queue
                          AND vq.priority = tether_priority_key(i.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM jsonb_to_recordset(sqlc.arg(messages)::jsonb)
    AS m(instance_id text, execution_id bigint, kind text, payload jsonb, delay_ms bigint)
CROSS JOIN LATERAL (
    SELECT ix.namespace, ix.instance_id, ix.task_queue, ix.priority
    FROM instances ix
    WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = m.instance_id
      AND ix.status = 'running' AND (m.execution_id IS NULL OR ix.execution_id = m.execution_id)
    LIMIT 1
) i
RETURNING o.instance_id, o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: EnqueueMessagesJoin :many
-- EnqueueMessages for Citus (Options.Citus), which pushes down no LIMIT in
-- a LATERAL over a function: the instances by primary key, their ids an
-- array (an InitPlan) probed as = ANY. On plain PostgreSQL a generic plan
-- made without statistics runs it as a walk of the namespace.
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at, priority, pass)
SELECT i.namespace, i.instance_id, m.execution_id, i.task_queue, m.kind, m.payload,
       now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
       tether_priority_key(i.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN i.priority IS NOT NULL
            THEN LEAST(now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = i.namespace AND vq.task_queue = i.task_queue
                          AND vq.priority = tether_priority_key(i.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM jsonb_to_recordset(sqlc.arg(messages)::jsonb)
    AS m(instance_id text, execution_id bigint, kind text, payload jsonb, delay_ms bigint)
JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = m.instance_id
                AND i.status = 'running' AND (m.execution_id IS NULL OR i.execution_id = m.execution_id)
WHERE i.instance_id = ANY(ARRAY(SELECT e->>'instance_id' FROM jsonb_array_elements(sqlc.arg(messages)::jsonb) e))
RETURNING o.instance_id, o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: EnqueueSignal :one
-- Enqueues a signal to a running instance and returns its task queue and
-- whether the signal is flow-controlled (no row: not running, or unknown). The instance row is locked FOR KEY SHARE,
-- which waits for a turn being acknowledged (its ack holds the row FOR
-- UPDATE) and then re-reads the row: a signal either commits before the
-- ack, which sees it and refuses to end the workflow (PendingSignals),
-- or finds the workflow over and is refused. Never is it accepted and then
-- dropped with the finished workflow's messages.
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, payload_bytes, priority, pass)
SELECT i.namespace, i.instance_id, NULL, i.task_queue, 'SignalReceived', sqlc.arg(payload)::jsonb,
       sqlc.arg(payload_bytes)::integer,
       -- The workflow's priority (see EnqueueMessages).
       tether_priority_key(i.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see
       -- EnqueueMessages); the virtual time is looked up beside the
       -- instance (Citus takes no subquery here correlated with a subquery).
       CASE WHEN i.priority IS NOT NULL THEN LEAST(now(), i.vt) END
FROM (
    SELECT ix.namespace, ix.instance_id, ix.task_queue, ix.priority,
           CASE WHEN ix.priority IS NOT NULL
                THEN (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                      WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = ix.task_queue
                        AND vq.priority = tether_priority_key(ix.priority) AND vq.pass IS NOT NULL
                      ORDER BY vq.pass LIMIT 1) END AS vt
    FROM instances ix
    WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = sqlc.arg(instance_id)
      AND ix.status = 'running'
    FOR KEY SHARE
) i
RETURNING o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: EnqueueMessagesTo :exec
-- Enqueues messages to one instance the transaction has just written or
-- holds (so it is running, on task_queue): nothing to look up, no answer
-- to wait for — the statement travels with the next one (see pipe.go).
-- priority is the instance's stored priority (instances.priority; NULL:
-- none): the messages get its priority key and their visible time as
-- their pass, as in EnqueueMessages.
INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at, priority, pass)
SELECT sqlc.arg(namespace), sqlc.arg(instance_id), m.execution_id, sqlc.arg(task_queue), m.kind, m.payload,
       now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
       tether_priority_key(sqlc.narg(priority)::jsonb),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN sqlc.narg(priority)::jsonb IS NOT NULL
            THEN LEAST(now() + COALESCE(m.delay_ms, 0) * interval '1 millisecond',
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = sqlc.arg(task_queue)
                          AND vq.priority = tether_priority_key(sqlc.narg(priority)::jsonb) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM jsonb_to_recordset(sqlc.arg(messages)::jsonb)
    AS m(execution_id bigint, kind text, payload jsonb, delay_ms bigint);

-- name: DeleteLockedMessages :exec
-- A turn's messages are its instance's: they are found through
-- orchestrator_queue_instance (lock_token has no index, so that locking
-- them is a HOT update).
DELETE FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND lock_token = sqlc.arg(lock_token);

-- name: ConsumeMessages :many
-- Deletes the consumed messages of one or more turns — of each instance
-- named in instance_ids, those locked by the element of lock_tokens at
-- the same place —
-- and returns, of those instances, the ones that have visible messages
-- their turn did not take: messages that arrived during the turn, whose own
-- wake-up found the instance locked. Sent with the ack's COMMIT
-- (readAtCommit); the caller announces their next turns once it has
-- committed. The rows the DELETE removes are still in the SELECT's
-- snapshot, hence its lock_token filter.
WITH d AS (
    DELETE FROM orchestrator_queue q
    WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = ANY(sqlc.arg(instance_ids)::text[])
      AND q.lock_token = (sqlc.arg(lock_tokens)::uuid[])[array_position(sqlc.arg(instance_ids)::text[], q.instance_id)]
)
SELECT DISTINCT q.instance_id FROM orchestrator_queue q
WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = ANY(sqlc.arg(instance_ids)::text[])
  AND q.visible_at <= now()
  AND (q.lock_token IS NULL
       OR q.lock_token <> (sqlc.arg(lock_tokens)::uuid[])[array_position(sqlc.arg(instance_ids)::text[], q.instance_id)]);

-- name: DeferLockedMessages :exec
-- A failed turn: its messages become visible again after the backoff.
UPDATE orchestrator_queue
SET lock_token = NULL, visible_at = now() + sqlc.arg(delay_ms)::bigint * interval '1 millisecond'
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND lock_token = sqlc.arg(lock_token);

-- name: DeleteInstanceMessages :exec
-- Every message of the instances (finished or deleted).
DELETE FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND instance_id = ANY(sqlc.arg(instance_ids)::text[]);

-- name: DeleteExecutionMessages :exec
-- After continue-as-new: drops what was addressed to the old execution
-- (timers, activity results); signals (execution_id NULL) carry over.
DELETE FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND execution_id = sqlc.arg(execution_id);

-- name: DeleteCanceledTimers :exec
-- Deletes the TimerFired messages of the timers that acknowledged turns
-- cancelled, for one or more instances in one statement: each instance
-- named in instance_ids loses the timers turns[instance_id].timer_ids of
-- execution turns[instance_id].execution_id. Found by the instance index.
DELETE FROM orchestrator_queue q
WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = ANY(sqlc.arg(instance_ids)::text[])
  AND q.execution_id = (sqlc.arg(turns)::jsonb -> q.instance_id ->> 'execution_id')::bigint
  AND q.kind = 'TimerFired'
  AND (q.payload->>'timer_id')::bigint IN (
      SELECT jsonb_array_elements_text(sqlc.arg(turns)::jsonb -> q.instance_id -> 'timer_ids')::bigint);

-- name: NextWorkflowWake :one
-- When a poll of the queue should look again: the earliest future
-- visible_at of its messages, or, for a rate-limited queue (migration
-- 00043) with work waiting, when its bucket has its next whole token, or
-- when the first of its fairness keys' buckets (migration 00054) has its next.
SELECT w.visible_at::timestamptz AS visible_at FROM (
    (SELECT q.visible_at FROM orchestrator_queue q
     WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = sqlc.arg(task_queue) AND q.visible_at > now()
     ORDER BY q.visible_at
     LIMIT 1)
    UNION ALL
    (SELECT l.refilled_at + (1 - l.tokens) / l.rate * interval '1 second'
     FROM task_queue_limits l
     WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = 'w'
       AND l.refilled_at + (1 - l.tokens) / l.rate * interval '1 second' > now()
       AND EXISTS (SELECT 1 FROM orchestrator_queue v
                   WHERE v.namespace = sqlc.arg(namespace) AND v.task_queue = sqlc.arg(task_queue) AND v.visible_at <= now()))
    UNION ALL
    -- A rate limit per fairness key (migration 00054): when the next
    -- key's bucket has its next whole token, with work waiting.
    (SELECT b.refilled_at + (1 - b.tokens) / b.rate * interval '1 second'
     FROM fairness_key_buckets b
     WHERE b.namespace = sqlc.arg(namespace) AND b.task_queue = sqlc.arg(task_queue) AND b.work = 'w'
       AND b.tokens < 1
       AND EXISTS (SELECT 1 FROM orchestrator_queue v
                   WHERE v.namespace = sqlc.arg(namespace) AND v.task_queue = sqlc.arg(task_queue) AND v.visible_at <= now())
     ORDER BY 1
     LIMIT 1)
) w
WHERE w.visible_at > now()
ORDER BY w.visible_at
LIMIT 1;

-- name: NextWorkflowWakePlain :one
-- NextWorkflowWake of a queue without a rate limit (flowStates,
-- server/store/flowstate.go): the earliest future visible_at of its
-- messages, without a read of task_queue_limits.
SELECT q.visible_at::timestamptz AS visible_at FROM orchestrator_queue q
WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = sqlc.arg(task_queue) AND q.visible_at > now()
ORDER BY q.visible_at
LIMIT 1;

-- name: Notify :exec
SELECT pg_notify(sqlc.arg(channel)::text, k) FROM unnest(sqlc.arg(keys)::text[]) AS k;

-- name: GenericPlans :exec
-- For the transactions of the hot path (turn fetches, acks, activity
-- results, starts): their statements run on the generic plan from the
-- first call on a connection. Each is written for its generic plan (the
-- plan tests check those), so PostgreSQL's first five custom plans per
-- connection, again after every ANALYZE of a table a statement reads, would
-- only plan again what is known. Local to the transaction: the statements
-- whose best plan depends on their values (a list query's filter) keep
-- PostgreSQL's choice. Not on Citus (citus.version is its setting): its
-- distributed planner cannot route a generic plan ("could not create
-- distributed plan"), so there the mode stays as it is.
SELECT set_config('plan_cache_mode', 'force_generic_plan', true)
WHERE current_setting('citus.version', true) IS NULL;

-- name: RelaxCommit :exec
-- For transactions that only take locks (the fetches): their commit need not
-- wait for the WAL flush. A fetch lost in a database crash is a lock that
-- never was: the work is simply delivered again.
SET LOCAL synchronous_commit TO OFF;

-- name: PendingSignals :many
-- Of the instances named in instance_ids, those to which signals arrived
-- after their turn (the element of lock_tokens at the instance's place in
-- instance_ids) was fetched:
-- a turn that would end the workflow must see them (and updates) first.
SELECT DISTINCT q.instance_id
FROM orchestrator_queue q
WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = ANY(sqlc.arg(instance_ids)::text[])
  AND q.kind IN ('SignalReceived', 'WorkflowUpdateAccepted') AND q.visible_at <= now()
  AND (q.lock_token IS NULL OR q.lock_token <> (sqlc.arg(lock_tokens)::uuid[])[array_position(sqlc.arg(instance_ids)::text[], q.instance_id)]);

-- name: UnlockMessages :exec
-- A turn refused: its messages go back to the queue untouched.
UPDATE orchestrator_queue SET lock_token = NULL
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) AND lock_token = sqlc.arg(lock_token);

-- name: LockInstanceMessages :exec
-- Serializes the requests that add messages to one instance from outside
-- (signals, updates) until their transactions end, so that the
-- pending-message bound read next (PendingMessageLoad) holds under
-- concurrency. An advisory lock of its own key space (class 34): it never
-- waits for a turn, an ack or a poll.
SELECT pg_advisory_xact_lock(34, hashtext(sqlc.arg(namespace)::text || '/' || sqlc.arg(instance_id)::text));

-- name: PendingMessageLoad :one
-- The signals and updates waiting for an instance (its turn in flight
-- included): how many, and their bytes as sent. Found through
-- orchestrator_queue_instance; the bound keeps the rows few.
SELECT count(*)::bigint AS messages, COALESCE(sum(payload_bytes), 0)::bigint AS bytes
FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
  AND kind IN ('SignalReceived', 'WorkflowUpdateAccepted');
