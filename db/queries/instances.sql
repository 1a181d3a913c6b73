-- name: StartInstances :many
-- Starts a group of instances of one namespace in one statement: each
-- start (starts: a jsonb array of objects with instance_id, workflow_type,
-- task_queue, input, timeout_ms, payload, cron_schedule, delay_ms,
-- search_attributes, memo; distinct instance ids) creates its instance, or
-- restarts a finished one as its next execution, with its start message
-- (payload: the WorkflowStarted event, visible after delay_ms: a cron
-- workflow's first run waits for its schedule). The caller wakes the
-- pollers of the starts' task queues (a notification of its own, sent in
-- the same batch). One statement, atomic on its own, so that a group of
-- starts is one round trip and one commit. Returns the instances started;
-- a start whose id a running instance holds gets no row and writes
-- nothing.
--
-- A restart replaces the finished row (d) with a fresh one whose
-- execution_id is the next (and whose run_id is a fresh one, written into
-- its WorkflowStarted message): every other column starts from its default,
-- so that nothing of the last execution — its parent, its children, its
-- build id, its sticky worker — carries over. The insert does nothing for
-- an id that is held: by a running instance, which d leaves, or by a
-- concurrent start that took it first (d then deletes nothing). Rows are
-- locked and inserted in id order.
WITH s AS (
    -- -> keeps a JSON null a jsonb null, as a parameter of its own would;
    -- an absent key is SQL NULL.
    SELECT e->>'instance_id' AS instance_id, e->>'workflow_type' AS workflow_type, e->>'task_queue' AS task_queue,
           e->'input' AS input, (e->>'timeout_ms')::bigint AS timeout_ms, e->'payload' AS payload,
           e->>'cron_schedule' AS cron_schedule, COALESCE((e->>'delay_ms')::bigint, 0) AS delay_ms,
           e->'search_attributes' AS search_attributes, e->'memo' AS memo, e->'priority' AS priority
    FROM jsonb_array_elements(sqlc.arg(starts)::jsonb) AS e
    -- Nothing starts in a namespace that no longer exists: a deletion
    -- (DeleteNamespace) holds the instances in SHARE mode until it
    -- commits, so this statement's snapshot, taken once it has its lock,
    -- sees the namespace gone.
    WHERE EXISTS (SELECT 1 FROM namespaces n WHERE n.name = sqlc.arg(namespace))
), d AS (
    -- The finished instances are locked in key order (the lock order of
    -- every statement that locks several rows), each by a key probe from
    -- its start (the LATERAL … FOR UPDATE is never flattened into a join),
    -- then deleted by the ctids locked, joined as a parameterized TID scan.
    -- Other forms each met a generic plan that reads the namespace: a
    -- semi-join of the instances with the starts (a scan of the instances
    -- running the locking subquery for each: quadratic); "namespace = $1
    -- AND ctid = ANY(…)" (made without statistics: the key's first column
    -- read, the ctids filtered); "ctid = ANY(…)" alone (made on an empty
    -- table: a sequential scan). (y).ctid: sqlc knows no system column in
    -- a select list.
    -- The ids are read from the parameter again, not from s: on Citus a
    -- DELETE through ctids must be routed whole to one node, which a
    -- read of another part of the statement prevents.
    DELETE FROM instances x
    USING (
        SELECT f.tid
        FROM (SELECT DISTINCT e->>'instance_id' AS instance_id
              FROM jsonb_array_elements(sqlc.arg(starts)::jsonb) AS e
              WHERE EXISTS (SELECT 1 FROM namespaces n WHERE n.name = sqlc.arg(namespace))
              ORDER BY 1) o
        CROSS JOIN LATERAL (
            SELECT (y).ctid AS tid FROM instances y
            WHERE y.namespace = sqlc.arg(namespace) AND y.instance_id = o.instance_id AND y.status <> 'running'
            FOR UPDATE OF y
        ) f
    ) t
    WHERE x.namespace = sqlc.arg(namespace) AND x.ctid = t.tid
    RETURNING x.instance_id, x.execution_id
), i AS (
    INSERT INTO instances AS i (namespace, instance_id, execution_id, workflow_type, task_queue, input, execution_deadline,
                                cron_schedule, search_attributes, memo, priority)
    SELECT sqlc.arg(namespace), s.instance_id, COALESCE(d.execution_id, 0) + 1,
           s.workflow_type, s.task_queue, s.input,
           CASE WHEN s.timeout_ms > 0 THEN now() + s.timeout_ms * interval '1 millisecond' END,
           s.cron_schedule, s.search_attributes, s.memo, s.priority
    FROM s LEFT JOIN d ON d.instance_id = s.instance_id
    ORDER BY s.instance_id
    ON CONFLICT (namespace, instance_id) DO NOTHING
    RETURNING i.instance_id, i.execution_id, i.status, i.task_queue, i.run_id
), f AS (
    -- Flow control (a start with a priority: flow_keys, migration 00042):
    -- each such start's priority key, fairness key and stride (1 ms /
    -- weight). Starts without one have none of this.
    SELECT i.instance_id, i.task_queue,
           tether_priority_key(s.priority) AS pk,
           tether_fairness_key(s.priority) AS fk,
           tether_fairness_stride(s.priority) AS stride
    FROM i JOIN s ON s.instance_id = i.instance_id
    WHERE s.priority IS NOT NULL
), k AS (
    -- Keys are locked in key order (the INSERT takes the rows in the
    -- order given). Each fairness key's clock moves by the strides of its starts, from
    -- where it was or, for a key that fell behind (or is new), from the
    -- queue's current virtual time: the earliest pass waiting at the
    -- starts' priority, or now when none waits. Returns where each key
    -- was (base).
    INSERT INTO flow_keys AS fk (namespace, task_queue, kind, fairness_key, pass, step)
    SELECT sqlc.arg(namespace), f.task_queue, 'w', f.fk,
           LEAST(now(), (SELECT q.pass FROM orchestrator_queue q
                         WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = f.task_queue
                           AND q.priority = min(f.pk) AND q.pass IS NOT NULL
                         ORDER BY q.pass LIMIT 1)) + sum(f.stride),
           sum(f.stride)
    FROM f GROUP BY f.task_queue, f.fk
    ORDER BY f.task_queue, f.fk
    ON CONFLICT (namespace, task_queue, kind, fairness_key) DO UPDATE
    SET pass = tether_flow_pass(fk.pass, excluded.step, excluded.pass),
        step = excluded.step
    RETURNING fk.task_queue, fk.fairness_key, fk.pass - fk.step AS base
), p AS (
    -- Each flow-controlled start's pass: its key's clock after the
    -- strides of the key's starts before it in this group (id order).
    SELECT f.instance_id, f.pk,
           k.base + sum(f.stride) OVER (PARTITION BY f.task_queue, f.fk ORDER BY f.instance_id) AS pass
    FROM f JOIN k ON k.task_queue = f.task_queue AND k.fairness_key = f.fk
), m AS (
    INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at,
                                    priority, pass)
    SELECT sqlc.arg(namespace), i.instance_id, i.execution_id, i.task_queue, 'WorkflowStarted',
           s.payload || jsonb_build_object('run_id', i.run_id), now() + s.delay_ms * interval '1 millisecond',
           COALESCE(p.pk, 3), p.pass
    FROM i JOIN s ON s.instance_id = i.instance_id LEFT JOIN p ON p.instance_id = i.instance_id
)
SELECT i.instance_id, i.execution_id, i.status, i.run_id
FROM i;

-- name: GetInstance :one
SELECT * FROM instances WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: GetInstancesByID :many
-- The instances of instance_ids (no row for an unknown id), each found by
-- a key probe (the LATERAL … LIMIT is never flattened into a join: no
-- statistics make it a scan of the namespace).
SELECT sqlc.embed(instances)
FROM unnest(sqlc.arg(instance_ids)::text[]) AS k(id)
CROSS JOIN LATERAL (
    SELECT * FROM instances i
    WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = k.id
    LIMIT 1
) AS instances;

-- name: ListInstances :many
-- Keyset paging, newest first. "created_at IS NOT NULL" always holds; it
-- is the predicate of instances_list (see migration 00003), stated so that
-- this query, and no key lookup, can use that index. A list shows
-- summaries: the payloads (input, result, errors' details and stacks) are
-- left in the table, so that listing never renders them.
SELECT namespace, instance_id, workflow_type, task_queue, status, execution_id,
  NULL::jsonb AS input, NULL::jsonb AS result, (error - 'details' - 'stack')::jsonb AS error,
  next_event_id, next_activity_id, next_timer_id, cancel_requested, cancel_reason,
  execution_timeout, execution_deadline, lock_token, locked_until, locked_by, sticky_worker_id,
  task_failures, (last_task_error - 'details' - 'stack')::jsonb AS last_task_error,
  created_at, updated_at, completed_at, last_event_at, cron_schedule, build_id,
  parent_namespace, parent_instance_id, parent_execution_id, parent_child_id, parent_close_policy,
  retry_policy, retry_attempt, search_attributes, NULL::jsonb AS memo, has_children, run_id, parent_run_id,
  NULL::jsonb AS reset_from, priority, history_bytes, concurrency
FROM instances
WHERE namespace = sqlc.arg(namespace) AND created_at IS NOT NULL
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status)::text)
  AND (sqlc.narg(workflow_type)::text IS NULL OR workflow_type = sqlc.narg(workflow_type)::text)
  AND (sqlc.narg(before_created)::timestamptz IS NULL
       OR (created_at, instance_id) < (sqlc.narg(before_created)::timestamptz, sqlc.arg(before_id)::text))
ORDER BY created_at DESC, instance_id DESC
LIMIT sqlc.arg(max_rows);

-- name: RequestCancel :one
-- Marks a running instance cancel-requested; no row when it is finished or
-- already cancel-requested (the first reason wins).
UPDATE instances SET cancel_requested = true, cancel_reason = sqlc.arg(reason), updated_at = now()
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
  AND status = 'running' AND NOT cancel_requested
RETURNING execution_id, task_queue;

-- name: LockNextTurns :many
-- Workflow turns, locked in one statement: up to max_turns of the queue's
-- (the eager_* arrays NULL), or the eager turns of a group of activity
-- results (the eager_* arrays given; max_turns at least their length). It
-- locks each instance for a worker, marks up to max_messages of its
-- visible messages (and at most max_turn_bytes of them past the first)
-- as consumed by the turn (id order), and returns the
-- instances in id order, each with those messages (jsonb, id order), the
-- states of the activities they name (jsonb, activity id → done), and
-- eager_element: the (1-based) element of the arrays whose worker took
-- the eager turn, 0 for a turn of the queue's. The two ways of finding
-- the instances are the two branches of the candidate union, each
-- candidate with the worker, the lock duration and the build id to lock
-- it for; the lock, the messages and the activity states are written once
-- for both (a generic plan runs only the branch its parameters select:
-- the eager branch finds nothing for NULL arrays, the queue's branch is
-- switched off by its one-time filter). Each candidate takes its lock
-- token from lock_tokens (the caller's: at least max_turns of them, and
-- one per eager element), picked in the candidates' subquery (a
-- subscript of a parameter in the SET list crashed the Citus 13.2
-- coordinator), and each instance and message is updated
-- through the ctid its lock or probe found (a TID scan: with the
-- namespace named as a value, a join on the key let a generic plan made
-- on an empty table read the namespace through the key's first column).
--
-- The fetch (eager_* arrays NULL): running, unlocked instances of the task
-- queue that have a visible message, for worker worker_id of build id
-- build_id, locked for lock_ms. Candidates come from the queue's dequeue
-- index in order; each is locked by primary key (LATERAL … FOR UPDATE
-- SKIP LOCKED) as it is pulled, so that the plan never scans the
-- instances, and the statement stops pulling after max_turns candidates.
-- Two messages of one instance are two candidates of the same instance
-- (its own lock does not skip it): the UPDATE takes each instance once,
-- so a fetch returns from 1 to max_turns distinct instances when any is
-- free. Each is skipped, never waited for, when another transaction holds
-- it, so the lock order is not at stake.
-- Messages of an instance a live turn holds (locked_until not passed) are
-- no candidates — the turn's own and those that arrived during it:
-- however many turns are in flight and however many messages wait for
-- them, the first 1 000 candidates are messages of instances free to take
-- (an expired turn's instance is, so that its turn is delivered again).
-- The check is a scalar subquery, a key probe per message: as NOT EXISTS
-- the planner may make it an anti-join over all instances. The same probe
-- skips the instances pinned to another build id (build_id: the fetching
-- worker's, '' for none): an execution takes the build id of the worker
-- that fetches its first turn, and later turns go only to workers of that
-- build id — to any worker when it is ''. Both checks are one rule,
-- tether_turn_open (migration 00062), in every probe of this statement and
-- its two variants.
--
-- The eager turns (eager_* arrays given): element k asks for the turn of
-- instance eager_instance_ids[k] on task queue eager_task_queues[k], for
-- worker eager_worker_ids[k] of build id eager_build_ids[k], locked for
-- eager_lock_ms[k] ms. Each instance is found by primary key and is no
-- candidate for an element when it is held, finished, on another queue,
-- pinned to another build id than the element's — or when other
-- activities of its execution are still outstanding: their results may
-- come in a moment, and a turn taken now would see only this one (the
-- queue's poll, a few milliseconds later, batches what has arrived). An
-- instance named by several elements is locked once, for the first
-- element (array order) whose worker may take it. An instance another
-- transaction holds (an ack, a poll, another group of results) is
-- skipped, never waited for: the results' transaction already holds
-- attempts, and instances come before worker_queue in the lock order
-- (docs/architecture.md); the queue's poll takes the turn then.
--
-- With first_turns (a start handing its first turn to a waiting worker),
-- an eager element takes only an execution that has had no turn yet
-- (next_event_id 1) and has a visible message (its start message, unless
-- a cron schedule delays it): a turn that needs no history to build. The
-- check is a scalar subquery, a key probe (as EXISTS the planner may make
-- it a semi-join over the whole queue). The results' eager turns leave
-- first_turns false (their instance has the result they just enqueued).
--
-- With hold_expired (the server's outage grace: after it started, and
-- after the database was unreachable) an instance whose lock expired is
-- held like a live one, in both ways: the worker that holds its turn may
-- have run it through the outage, and its retried ack, which the token
-- still matching lets through (GetLockedTurns), comes within the grace.
--
-- A rate limit of the queue (task_queue_limits, work 'w'; migration
-- 00043) bounds the fetch: its token bucket row is locked (concurrent
-- fetches of a limited queue, on any replica, take turns), the queue's
-- branch takes at most the whole tokens it has, and the turns taken are
-- spent (tb). A queue without a limit has no row: one probe of the
-- primary key finds none, and nothing is bounded or spent. The eager turns
-- skip limited queues, and queues with a rate limit per fairness key
-- (their poll takes the turn, within the limit: LockNextTurnsKeyed).
WITH bud AS (
    SELECT GREATEST(0, floor(LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))))::bigint AS n
    FROM task_queue_limits l
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = 'w'
      AND sqlc.narg(eager_instance_ids)::text[] IS NULL
    FOR UPDATE
), inst AS (
    UPDATE instances i
    SET lock_token = c.token,
        locked_until = tether_add(now(), c.lock_ms * interval '1 millisecond'),
        locked_by = c.worker_id,
        build_id = COALESCE(i.build_id, c.build_id)
    FROM (SELECT u.*, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token FROM (
        (SELECT DISTINCT ON (e.instance_id) e.tid, e.instance_id, r.worker_id, r.lock_ms, r.build_id,
                r.k AS eager_element
         FROM (
             SELECT k, (sqlc.narg(eager_instance_ids)::text[])[k] AS instance_id,
                    (sqlc.narg(eager_worker_ids)::text[])[k] AS worker_id,
                    (sqlc.narg(eager_task_queues)::text[])[k] AS task_queue,
                    (sqlc.narg(eager_lock_ms)::bigint[])[k] AS lock_ms,
                    (sqlc.narg(eager_build_ids)::text[])[k] AS build_id
             FROM generate_subscripts(sqlc.narg(eager_instance_ids)::text[], 1) AS k
         ) r
         CROSS JOIN LATERAL (
             SELECT (ix).ctid AS tid, ix.instance_id FROM instances ix
             WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = r.instance_id
               AND ix.task_queue = r.task_queue AND ix.status = 'running'
               AND tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, r.build_id)
               AND (NOT sqlc.arg(first_turns)::boolean
                    OR (ix.next_event_id = 1 AND (
                        SELECT true FROM orchestrator_queue q0
                        WHERE q0.namespace = sqlc.arg(namespace) AND q0.instance_id = ix.instance_id AND q0.visible_at <= now()
                        LIMIT 1)))
               AND NOT COALESCE((
                   SELECT true FROM worker_queue w
                   WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = ix.instance_id
                     AND w.execution_id = ix.execution_id AND NOT w.cancel_requested
                   LIMIT 1), false)
               AND NOT EXISTS (
                   SELECT 1 FROM task_queue_limits l
                   WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = ix.task_queue AND l.work = 'w'
               )
               AND NOT EXISTS (
                   SELECT 1 FROM fairness_key_limits kl
                   WHERE kl.namespace = sqlc.arg(namespace) AND kl.task_queue = ix.task_queue AND kl.work = 'w'
               )
             FOR NO KEY UPDATE OF ix SKIP LOCKED
         ) e
         ORDER BY e.instance_id, r.k)
        UNION ALL
        (SELECT c.tid, c.instance_id, sqlc.arg(worker_id)::text, sqlc.arg(lock_ms)::bigint,
                sqlc.arg(build_id)::text, 0
         FROM (
             -- A queue without flow control (the flow index has no message
             -- of it: one probe, a one-time filter) is taken in visible
             -- order from orchestrator_queue_dequeue, as it always was.
             SELECT q.namespace, q.instance_id
              FROM orchestrator_queue q
              WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = sqlc.arg(task_queue) AND q.visible_at <= now()
                AND COALESCE((
                    SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                    FROM instances ix
                    WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q.instance_id), true)
                AND NOT EXISTS (SELECT 1 FROM orchestrator_queue fe
                                WHERE fe.namespace = sqlc.arg(namespace) AND fe.task_queue = sqlc.arg(task_queue)
                                  AND fe.pass IS NOT NULL)
              ORDER BY q.visible_at
              LIMIT 1000
         ) q
         CROSS JOIN LATERAL (
             SELECT (i2).ctid AS tid, i2.instance_id
             FROM instances i2
             WHERE i2.namespace = sqlc.arg(namespace) AND i2.instance_id = q.instance_id
               AND i2.status = 'running'
               AND tether_turn_open(i2.locked_until, i2.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
             FOR UPDATE SKIP LOCKED
         ) c
         WHERE sqlc.narg(eager_instance_ids)::text[] IS NULL
         LIMIT (SELECT bud.n FROM bud))
        UNION ALL
        (SELECT c.tid, c.instance_id, sqlc.arg(worker_id)::text, sqlc.arg(lock_ms)::bigint,
                sqlc.arg(build_id)::text, 0
         FROM (
             -- A queue with flow control: its messages in (priority, pass)
             -- order.
             SELECT q.namespace, q.instance_id
              FROM (
                 -- Flow control (migration 00042): the queue's visible
                 -- messages in (priority, pass) order, where a message
                 -- without flow control is priority 3 with visible_at as
                 -- its pass: priorities 1 and 2, then priority 3 (the
                 -- flow-controlled ones merged with the others), then 4
                 -- and 5, each from its index in order. The branches of a
                 -- UNION ALL run in turn, and only as far as the LIMIT
                 -- pulls. Each branch has its
                 -- LIMIT, so that its plan starts fast (an index scan in
                 -- order) whatever the statistics say: without it, a
                 -- large queue's plan sorted the whole queue for the merge.
                 -- The probe of a message's instance (held or pinned, see
                 -- above) is in each branch, ahead of its LIMIT.
                 (SELECT q1.namespace, q1.instance_id FROM orchestrator_queue q1
                  WHERE q1.namespace = sqlc.arg(namespace) AND q1.task_queue = sqlc.arg(task_queue)
                    AND q1.priority < 3 AND q1.pass IS NOT NULL AND q1.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q1.instance_id), true)
                  ORDER BY q1.priority, q1.pass
                  LIMIT 1000)
                 UNION ALL
                 (SELECT q3.namespace, q3.instance_id FROM (
                      (SELECT q2.namespace, q2.instance_id, q2.pass AS r FROM orchestrator_queue q2
                       WHERE q2.namespace = sqlc.arg(namespace) AND q2.task_queue = sqlc.arg(task_queue)
                         AND q2.priority = 3 AND q2.pass IS NOT NULL AND q2.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q2.instance_id), true)
                       ORDER BY q2.pass
                       LIMIT 1000)
                      UNION ALL
                      (SELECT q0.namespace, q0.instance_id, q0.visible_at AS r FROM orchestrator_queue q0
                       WHERE q0.namespace = sqlc.arg(namespace) AND q0.task_queue = sqlc.arg(task_queue)
                         AND q0.visible_at <= now() AND q0.pass IS NULL
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q0.instance_id), true)
                       ORDER BY q0.visible_at
                       LIMIT 1000)
                  ) q3 ORDER BY q3.r)
                 UNION ALL
                 (SELECT q5.namespace, q5.instance_id FROM orchestrator_queue q5
                  WHERE q5.namespace = sqlc.arg(namespace) AND q5.task_queue = sqlc.arg(task_queue)
                    AND q5.priority > 3 AND q5.pass IS NOT NULL AND q5.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q5.instance_id), true)
                  ORDER BY q5.priority, q5.pass
                  LIMIT 1000)
             ) q
              WHERE EXISTS (SELECT 1 FROM orchestrator_queue fe
                            WHERE fe.namespace = sqlc.arg(namespace) AND fe.task_queue = sqlc.arg(task_queue)
                              AND fe.pass IS NOT NULL)
              LIMIT 1000
         ) q
         CROSS JOIN LATERAL (
             SELECT (i2).ctid AS tid, i2.instance_id
             FROM instances i2
             WHERE i2.namespace = sqlc.arg(namespace) AND i2.instance_id = q.instance_id
               AND i2.status = 'running'
               AND tether_turn_open(i2.locked_until, i2.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
             FOR UPDATE SKIP LOCKED
         ) c
         WHERE sqlc.narg(eager_instance_ids)::text[] IS NULL
         LIMIT (SELECT bud.n FROM bud))
        LIMIT sqlc.arg(max_turns)
    ) u) c
    WHERE i.namespace = sqlc.arg(namespace) AND i.ctid = c.tid
    RETURNING i.*, c.eager_element
), msgs AS (
    -- Each locked instance's messages, then each message by primary key
    -- (a join, not a semi-join: as "m.id IN (…)" the planner ran the
    -- per-instance scan again for every message, n² scans for n turns).
    UPDATE orchestrator_queue m SET lock_token = x.lock_token
    FROM (
        -- A turn takes its first message whatever its size, and the
        -- next ones while the messages taken total at most
        -- max_turn_bytes: however much waits for one instance, its turn
        -- stays buildable (a jsonb value holds at most 256 MB) and its
        -- answer bounded; the rest waits for the next turn. A message's
        -- size is the one recorded when a client sent it (payload_bytes:
        -- signals, updates), else its stored size read from its header,
        -- unless compressed (which would hide its size): then it is
        -- measured as text. Sizes are taken only of the max_messages
        -- messages the turn may take.
        SELECT i3.lock_token, y.tid FROM inst i3
        CROSS JOIN LATERAL (
            SELECT z.tid FROM (
                SELECT w.tid, row_number() OVER (ORDER BY w.id) AS n,
                       sum(CASE WHEN w.payload_bytes > 0 THEN w.payload_bytes
                                WHEN pg_column_compression(w.payload) IS NULL THEN pg_column_size(w.payload)
                                ELSE octet_length(w.payload::text) END) OVER (ORDER BY w.id) AS upto
                FROM (
                    SELECT q.id, (q).ctid AS tid, q.payload_bytes, q.payload
                    FROM orchestrator_queue q
                    WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = i3.instance_id AND q.visible_at <= now()
                    ORDER BY q.id
                    LIMIT sqlc.arg(max_messages)
                ) w
            ) z
            WHERE z.n = 1 OR z.upto <= sqlc.arg(max_turn_bytes)::bigint
        ) y
    ) x
    WHERE m.namespace = sqlc.arg(namespace) AND m.ctid = x.tid
    RETURNING m.instance_id, m.id, m.execution_id, m.kind, m.payload, m.visible_at
), tb AS (
    -- The turns taken spend the queue's tokens (a limited queue only).
    UPDATE task_queue_limits l
    SET tokens = LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))
                 - (SELECT count(*) FROM inst WHERE inst.eager_element = 0),
        refilled_at = now()
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = 'w'
      AND sqlc.narg(eager_instance_ids)::text[] IS NULL
)
SELECT inst.*,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', msgs.id, 'execution_id', msgs.execution_id, 'kind', msgs.kind,
                                                     'payload', msgs.payload, 'visible_at', msgs.visible_at) ORDER BY msgs.id)
                 FROM msgs WHERE msgs.instance_id = inst.instance_id), '[]'::jsonb)::jsonb AS messages,
       COALESCE((SELECT jsonb_object_agg(s.activity_id, s.done)
                 FROM (SELECT h.activity_id,
                              tether_activity_done(bit_or(tether_activity_event(h.kind, h.payload))) AS done
                       FROM history h
                       WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = inst.instance_id
                         AND h.execution_id = inst.execution_id
                         AND h.activity_id IN (SELECT (msgs.payload->>'activity_id')::bigint FROM msgs
                                               WHERE msgs.instance_id = inst.instance_id AND msgs.payload ? 'activity_id')
                       GROUP BY h.activity_id) s), '{}'::jsonb)::jsonb AS activity_states
FROM inst
ORDER BY inst.instance_id;

-- name: LockNextTurnsPlain :many
-- LockNextTurns for task queues without flow control: the same statement
-- without its rate limit (no bucket read or spent, the eager turns not
-- checked against task_queue_limits) and without the flow branch (no
-- probe of the flow index; the queue's messages in visible order). The
-- store sends it for a queue it knows to have no rate limit and no
-- flow-controlled work waiting (flowStates, server/store/flowstate.go);
-- its rows are LockNextTurns'.
WITH inst AS (
    UPDATE instances i
    SET lock_token = c.token,
        locked_until = tether_add(now(), c.lock_ms * interval '1 millisecond'),
        locked_by = c.worker_id,
        build_id = COALESCE(i.build_id, c.build_id)
    FROM (SELECT u.*, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token FROM (
        (SELECT DISTINCT ON (e.instance_id) e.tid, e.instance_id, r.worker_id, r.lock_ms, r.build_id,
                r.k AS eager_element
         FROM (
             SELECT k, (sqlc.narg(eager_instance_ids)::text[])[k] AS instance_id,
                    (sqlc.narg(eager_worker_ids)::text[])[k] AS worker_id,
                    (sqlc.narg(eager_task_queues)::text[])[k] AS task_queue,
                    (sqlc.narg(eager_lock_ms)::bigint[])[k] AS lock_ms,
                    (sqlc.narg(eager_build_ids)::text[])[k] AS build_id
             FROM generate_subscripts(sqlc.narg(eager_instance_ids)::text[], 1) AS k
         ) r
         CROSS JOIN LATERAL (
             SELECT (ix).ctid AS tid, ix.instance_id FROM instances ix
             WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = r.instance_id
               AND ix.task_queue = r.task_queue AND ix.status = 'running'
               AND tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, r.build_id)
               AND (NOT sqlc.arg(first_turns)::boolean
                    OR (ix.next_event_id = 1 AND (
                        SELECT true FROM orchestrator_queue q0
                        WHERE q0.namespace = sqlc.arg(namespace) AND q0.instance_id = ix.instance_id AND q0.visible_at <= now()
                        LIMIT 1)))
               AND NOT COALESCE((
                   SELECT true FROM worker_queue w
                   WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = ix.instance_id
                     AND w.execution_id = ix.execution_id AND NOT w.cancel_requested
                   LIMIT 1), false)
             FOR NO KEY UPDATE OF ix SKIP LOCKED
         ) e
         ORDER BY e.instance_id, r.k)
        UNION ALL
        (SELECT c.tid, c.instance_id, sqlc.arg(worker_id)::text, sqlc.arg(lock_ms)::bigint,
                sqlc.arg(build_id)::text, 0
         FROM (
             SELECT q.namespace, q.instance_id
              FROM orchestrator_queue q
              WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = sqlc.arg(task_queue) AND q.visible_at <= now()
                AND COALESCE((
                    SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                    FROM instances ix
                    WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q.instance_id), true)
              ORDER BY q.visible_at
              LIMIT 1000
         ) q
         CROSS JOIN LATERAL (
             SELECT (i2).ctid AS tid, i2.instance_id
             FROM instances i2
             WHERE i2.namespace = sqlc.arg(namespace) AND i2.instance_id = q.instance_id
               AND i2.status = 'running'
               AND tether_turn_open(i2.locked_until, i2.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
             FOR UPDATE SKIP LOCKED
         ) c
         WHERE sqlc.narg(eager_instance_ids)::text[] IS NULL)
        LIMIT sqlc.arg(max_turns)
    ) u) c
    WHERE i.namespace = sqlc.arg(namespace) AND i.ctid = c.tid
    RETURNING i.*, c.eager_element
), msgs AS (
    -- Each locked instance's messages, then each message by primary key
    -- (a join, not a semi-join: as "m.id IN (…)" the planner ran the
    -- per-instance scan again for every message, n² scans for n turns).
    UPDATE orchestrator_queue m SET lock_token = x.lock_token
    FROM (
        -- A turn takes its first message whatever its size, and the
        -- next ones while the messages taken total at most
        -- max_turn_bytes: however much waits for one instance, its turn
        -- stays buildable (a jsonb value holds at most 256 MB) and its
        -- answer bounded; the rest waits for the next turn. A message's
        -- size is the one recorded when a client sent it (payload_bytes:
        -- signals, updates), else its stored size read from its header,
        -- unless compressed (which would hide its size): then it is
        -- measured as text. Sizes are taken only of the max_messages
        -- messages the turn may take.
        SELECT i3.lock_token, y.tid FROM inst i3
        CROSS JOIN LATERAL (
            SELECT z.tid FROM (
                SELECT w.tid, row_number() OVER (ORDER BY w.id) AS n,
                       sum(CASE WHEN w.payload_bytes > 0 THEN w.payload_bytes
                                WHEN pg_column_compression(w.payload) IS NULL THEN pg_column_size(w.payload)
                                ELSE octet_length(w.payload::text) END) OVER (ORDER BY w.id) AS upto
                FROM (
                    SELECT q.id, (q).ctid AS tid, q.payload_bytes, q.payload
                    FROM orchestrator_queue q
                    WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = i3.instance_id AND q.visible_at <= now()
                    ORDER BY q.id
                    LIMIT sqlc.arg(max_messages)
                ) w
            ) z
            WHERE z.n = 1 OR z.upto <= sqlc.arg(max_turn_bytes)::bigint
        ) y
    ) x
    WHERE m.namespace = sqlc.arg(namespace) AND m.ctid = x.tid
    RETURNING m.instance_id, m.id, m.execution_id, m.kind, m.payload, m.visible_at
)
SELECT inst.*,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', msgs.id, 'execution_id', msgs.execution_id, 'kind', msgs.kind,
                                                     'payload', msgs.payload, 'visible_at', msgs.visible_at) ORDER BY msgs.id)
                 FROM msgs WHERE msgs.instance_id = inst.instance_id), '[]'::jsonb)::jsonb AS messages,
       COALESCE((SELECT jsonb_object_agg(s.activity_id, s.done)
                 FROM (SELECT h.activity_id,
                              tether_activity_done(bit_or(tether_activity_event(h.kind, h.payload))) AS done
                       FROM history h
                       WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = inst.instance_id
                         AND h.execution_id = inst.execution_id
                         AND h.activity_id IN (SELECT (msgs.payload->>'activity_id')::bigint FROM msgs
                                               WHERE msgs.instance_id = inst.instance_id AND msgs.payload ? 'activity_id')
                       GROUP BY h.activity_id) s), '{}'::jsonb)::jsonb AS activity_states
FROM inst
ORDER BY inst.instance_id;

-- name: LockNextTurnsKeyed :many
-- LockNextTurns' fetch (no eager turns) for a task queue with a rate
-- limit per fairness key (fairness_key_limits, work 'w'; migration 00054):
-- the queue's messages in flow order (as LockNextTurns' flow branch), of
-- which each fairness key (its instance's priority) gives at most the
-- whole tokens of its bucket; the queue's own rate limit, when it has one,
-- bounds the whole as in LockNextTurns. The queue's limit rows are locked
-- first (task_queue_limits, then fairness_key_limits: concurrent fetches
-- of the queue, on any replica, take turns, and read each key's bucket as
-- the last fetch left it), then the buckets of the keys among the first
-- 1 000 candidates; the turns taken are spent from their keys' buckets
-- (kt: a key without a bucket row starts full). The candidates and their
-- keys are read whole (a window per key): a fetch of such a queue reads up
-- to 1 000 messages and their instances' keys, where the other fetches
-- stop after max_turns. Turns of instances without a fairness key are not
-- bound per key.
WITH bud AS (
    SELECT GREATEST(0, floor(LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))))::bigint AS n
    FROM task_queue_limits l
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = 'w'
    FOR UPDATE
), kl AS (
    -- Locked after bud (the one-time filter reads bud first).
    SELECT k.rate, k.burst FROM fairness_key_limits k
    WHERE k.namespace = sqlc.arg(namespace) AND k.task_queue = sqlc.arg(task_queue) AND k.work = 'w'
      AND (SELECT count(*) FROM bud) >= 0
    FOR UPDATE
), cands AS MATERIALIZED (
    -- The first 1 000 candidates in flow order, each with its place and
    -- its instance's fairness key ('' for none); kl is locked first (the
    -- one-time filter).
    SELECT q.instance_id, row_number() OVER () AS ord,
           COALESCE((SELECT ik.priority->>'fairness_key' FROM instances ik
                     WHERE ik.namespace = sqlc.arg(namespace) AND ik.instance_id = q.instance_id), '') AS fk
    FROM (
        SELECT q.namespace, q.instance_id
        FROM (
                 (SELECT q1.namespace, q1.instance_id FROM orchestrator_queue q1
                  WHERE q1.namespace = sqlc.arg(namespace) AND q1.task_queue = sqlc.arg(task_queue)
                    AND q1.priority < 3 AND q1.pass IS NOT NULL AND q1.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q1.instance_id), true)
                  ORDER BY q1.priority, q1.pass
                  LIMIT 1000)
                 UNION ALL
                 (SELECT q3.namespace, q3.instance_id FROM (
                      (SELECT q2.namespace, q2.instance_id, q2.pass AS r FROM orchestrator_queue q2
                       WHERE q2.namespace = sqlc.arg(namespace) AND q2.task_queue = sqlc.arg(task_queue)
                         AND q2.priority = 3 AND q2.pass IS NOT NULL AND q2.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q2.instance_id), true)
                       ORDER BY q2.pass
                       LIMIT 1000)
                      UNION ALL
                      (SELECT q0.namespace, q0.instance_id, q0.visible_at AS r FROM orchestrator_queue q0
                       WHERE q0.namespace = sqlc.arg(namespace) AND q0.task_queue = sqlc.arg(task_queue)
                         AND q0.visible_at <= now() AND q0.pass IS NULL
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q0.instance_id), true)
                       ORDER BY q0.visible_at
                       LIMIT 1000)
                  ) q3 ORDER BY q3.r)
                 UNION ALL
                 (SELECT q5.namespace, q5.instance_id FROM orchestrator_queue q5
                  WHERE q5.namespace = sqlc.arg(namespace) AND q5.task_queue = sqlc.arg(task_queue)
                    AND q5.priority > 3 AND q5.pass IS NOT NULL AND q5.visible_at <= now()
                    AND COALESCE((
                        SELECT tether_turn_open(ix.locked_until, ix.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
                        FROM instances ix
                        WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = q5.instance_id), true)
                  ORDER BY q5.priority, q5.pass
                  LIMIT 1000)
        ) q
        LIMIT 1000
    ) q
    WHERE (SELECT count(*) FROM kl) >= 0
), kb AS MATERIALIZED (
    -- The whole tokens of each key among the candidates: its bucket's,
    -- locked (the latest, as the last fetch left it), or a full bucket.
    SELECT d.fk,
           COALESCE((SELECT GREATEST(0, floor(LEAST(kl.burst, b.tokens + kl.rate * extract(epoch FROM now() - b.refilled_at))))
                     FROM fairness_key_buckets b
                     WHERE b.namespace = sqlc.arg(namespace) AND b.task_queue = sqlc.arg(task_queue) AND b.work = 'w'
                       AND b.fairness_key = d.fk
                     FOR UPDATE), floor(kl.burst))::bigint AS n
    FROM (SELECT DISTINCT cands.fk FROM cands WHERE cands.fk <> '' ORDER BY cands.fk) d
    CROSS JOIN kl
), inst AS (
    UPDATE instances i
    SET lock_token = c.token,
        locked_until = tether_add(now(), sqlc.arg(lock_ms)::bigint * interval '1 millisecond'),
        locked_by = sqlc.arg(worker_id)::text,
        build_id = COALESCE(i.build_id, sqlc.arg(build_id)::text)
    FROM (SELECT u.*, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token FROM (
        SELECT c.tid, c.instance_id
        FROM (
            SELECT f.instance_id FROM (
                SELECT cands.instance_id, cands.ord, cands.fk,
                       row_number() OVER (PARTITION BY cands.fk ORDER BY cands.ord) AS krn
                FROM cands
            ) f
            WHERE f.fk = '' OR NOT EXISTS (SELECT 1 FROM kl)
               OR f.krn <= COALESCE((SELECT kb.n FROM kb WHERE kb.fk = f.fk), 0)
            ORDER BY f.ord
        ) q
        CROSS JOIN LATERAL (
            SELECT (i2).ctid AS tid, i2.instance_id
            FROM instances i2
            WHERE i2.namespace = sqlc.arg(namespace) AND i2.instance_id = q.instance_id
              AND i2.status = 'running'
              AND tether_turn_open(i2.locked_until, i2.build_id, sqlc.arg(hold_expired)::boolean, sqlc.arg(build_id)::text)
            FOR UPDATE SKIP LOCKED
        ) c
        LIMIT LEAST(sqlc.arg(max_turns)::bigint, (SELECT bud.n FROM bud))
    ) u) c
    WHERE i.namespace = sqlc.arg(namespace) AND i.ctid = c.tid
    RETURNING i.*, NULL::integer AS eager_element
), msgs AS (
    -- Each locked instance's messages, then each message by primary key
    -- (a join, not a semi-join: as "m.id IN (…)" the planner ran the
    -- per-instance scan again for every message, n² scans for n turns).
    UPDATE orchestrator_queue m SET lock_token = x.lock_token
    FROM (
        -- A turn takes its first message whatever its size, and the
        -- next ones while the messages taken total at most
        -- max_turn_bytes: however much waits for one instance, its turn
        -- stays buildable (a jsonb value holds at most 256 MB) and its
        -- answer bounded; the rest waits for the next turn. A message's
        -- size is the one recorded when a client sent it (payload_bytes:
        -- signals, updates), else its stored size read from its header,
        -- unless compressed (which would hide its size): then it is
        -- measured as text. Sizes are taken only of the max_messages
        -- messages the turn may take.
        SELECT i3.lock_token, y.tid FROM inst i3
        CROSS JOIN LATERAL (
            SELECT z.tid FROM (
                SELECT w.tid, row_number() OVER (ORDER BY w.id) AS n,
                       sum(CASE WHEN w.payload_bytes > 0 THEN w.payload_bytes
                                WHEN pg_column_compression(w.payload) IS NULL THEN pg_column_size(w.payload)
                                ELSE octet_length(w.payload::text) END) OVER (ORDER BY w.id) AS upto
                FROM (
                    SELECT q.id, (q).ctid AS tid, q.payload_bytes, q.payload
                    FROM orchestrator_queue q
                    WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = i3.instance_id AND q.visible_at <= now()
                    ORDER BY q.id
                    LIMIT sqlc.arg(max_messages)
                ) w
            ) z
            WHERE z.n = 1 OR z.upto <= sqlc.arg(max_turn_bytes)::bigint
        ) y
    ) x
    WHERE m.namespace = sqlc.arg(namespace) AND m.ctid = x.tid
    RETURNING m.instance_id, m.id, m.execution_id, m.kind, m.payload, m.visible_at
), tb AS (
    -- The turns taken spend the queue's tokens (a limited queue only).
    UPDATE task_queue_limits l
    SET tokens = LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))
                 - (SELECT count(*) FROM inst),
        refilled_at = now()
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = 'w'
), kt AS (
    -- And their keys' tokens (in key order): a key without a bucket row
    -- gets one, full but for what it spent now.
    INSERT INTO fairness_key_buckets AS b (namespace, task_queue, work, fairness_key, rate, burst, tokens, refilled_at)
    SELECT sqlc.arg(namespace), sqlc.arg(task_queue), 'w', t.fk, kl.rate, kl.burst, kl.burst - t.n, now()
    FROM (SELECT inst.priority->>'fairness_key' AS fk, count(*) AS n FROM inst
          WHERE COALESCE(inst.priority->>'fairness_key', '') <> ''
          GROUP BY 1) t
    CROSS JOIN kl
    ORDER BY t.fk
    ON CONFLICT (namespace, task_queue, work, fairness_key) DO UPDATE
    SET tokens = LEAST(excluded.burst, b.tokens + excluded.rate * extract(epoch FROM excluded.refilled_at - b.refilled_at))
                 - (excluded.burst - excluded.tokens),
        rate = excluded.rate, burst = excluded.burst, refilled_at = excluded.refilled_at
)
SELECT inst.*,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', msgs.id, 'execution_id', msgs.execution_id, 'kind', msgs.kind,
                                                     'payload', msgs.payload, 'visible_at', msgs.visible_at) ORDER BY msgs.id)
                 FROM msgs WHERE msgs.instance_id = inst.instance_id), '[]'::jsonb)::jsonb AS messages,
       COALESCE((SELECT jsonb_object_agg(s.activity_id, s.done)
                 FROM (SELECT h.activity_id,
                              tether_activity_done(bit_or(tether_activity_event(h.kind, h.payload))) AS done
                       FROM history h
                       WHERE h.namespace = sqlc.arg(namespace) AND h.instance_id = inst.instance_id
                         AND h.execution_id = inst.execution_id
                         AND h.activity_id IN (SELECT (msgs.payload->>'activity_id')::bigint FROM msgs
                                               WHERE msgs.instance_id = inst.instance_id AND msgs.payload ? 'activity_id')
                       GROUP BY h.activity_id) s), '{}'::jsonb)::jsonb AS activity_states
FROM inst
ORDER BY inst.instance_id;

-- name: GetLockedTurns :many
-- The first step of an ack of one or more turns, in one round trip: of the
-- instances named in instance_ids (distinct), those whose lock the token
-- at the same place in lock_tokens still holds — each locked, in id order —
-- with the transaction's time (what now() is in every statement of the
-- ack), the turn's messages in id order, and the state of each activity
-- the messages or the activity_ids paired with it in activity_instance_ids
-- name — of every activity of the execution when its element of alls is
-- true (a turn that ends it) — (its
-- id → done: completed, failed or cancel-requested; absent: never
-- scheduled in this execution), and the timers named in the timer_ids
-- paired with it in timer_instance_ids whose TimerFired message of the execution
-- waits in the queue, not consumed by the turn (pending_timers: the ones a
-- cancel_timer still cancels). A turn whose lock is lost has no row: the
-- token no longer the instance's, because the turn was acknowledged or
-- failed, or another worker took it (a poll or an eager turn gives the
-- instance a new token). locked_until is not checked: an ack that comes
-- after its lock expired — a worker that ran the turn through a server
-- or database outage — is accepted as long as nobody took the turn.
-- Each instance is found and locked by a key probe from its id, in id
-- order (the LATERAL … FOR UPDATE is never flattened into a join),
-- whatever the statistics of the table say: as "instance_id = ANY(ids)" a
-- generic plan made without statistics read the whole namespace through
-- the primary key's first column.
SELECT sqlc.embed(instances), now()::timestamptz AS tx_time,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', q.id, 'execution_id', q.execution_id, 'kind', q.kind,
                                                     'payload', q.payload, 'visible_at', q.visible_at) ORDER BY q.id)
                 FROM orchestrator_queue q
                 WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = instances.instance_id
                   AND q.lock_token = instances.lock_token), '[]'::jsonb)::jsonb AS messages,
       COALESCE((SELECT jsonb_object_agg(s.activity_id, s.done)
                 FROM (SELECT h.activity_id,
                              tether_activity_done(bit_or(tether_activity_event(h.kind, h.payload))) AS done
                       FROM history h
                       WHERE NOT k.all_activities
                         AND h.namespace = sqlc.arg(namespace) AND h.instance_id = instances.instance_id
                         AND h.execution_id = instances.execution_id
                         AND h.activity_id IN (
                             SELECT (q.payload->>'activity_id')::bigint FROM orchestrator_queue q
                             WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = instances.instance_id
                               AND q.lock_token = instances.lock_token AND q.payload ? 'activity_id'
                             UNION ALL
                             SELECT a.id FROM (SELECT unnest(sqlc.arg(activity_instance_ids)::text[]) AS instance_id,
                                                      unnest(sqlc.arg(activity_ids)::bigint[]) AS id) a
                             WHERE a.instance_id = instances.instance_id)
                       GROUP BY h.activity_id
                       UNION ALL
                       SELECT h.activity_id,
                              tether_activity_done(bit_or(tether_activity_event(h.kind, h.payload))) AS done
                       FROM history h
                       WHERE k.all_activities
                         AND h.namespace = sqlc.arg(namespace) AND h.instance_id = instances.instance_id
                         AND h.execution_id = instances.execution_id AND h.activity_id IS NOT NULL
                       GROUP BY h.activity_id) s), '{}'::jsonb)::jsonb AS activity_states,
       COALESCE((SELECT jsonb_agg((q.payload->>'timer_id')::bigint)
                 FROM orchestrator_queue q
                 WHERE instances.instance_id = ANY(sqlc.arg(timer_instance_ids)::text[])
                   AND q.namespace = sqlc.arg(namespace) AND q.instance_id = instances.instance_id
                   AND q.execution_id = instances.execution_id AND q.kind = 'TimerFired'
                   AND q.lock_token IS DISTINCT FROM instances.lock_token
                   AND (q.payload->>'timer_id')::bigint IN (
                       SELECT tm.id FROM (SELECT unnest(sqlc.arg(timer_instance_ids)::text[]) AS instance_id,
                                                 unnest(sqlc.arg(timer_ids)::bigint[]) AS id) tm
                       WHERE tm.instance_id = instances.instance_id)),
                '[]'::jsonb)::jsonb AS pending_timers
FROM (SELECT unnest(sqlc.arg(instance_ids)::text[]) AS id, unnest(sqlc.arg(lock_tokens)::uuid[]) AS lock_token,
             unnest(sqlc.arg(alls)::boolean[]) AS all_activities ORDER BY 1) AS k
CROSS JOIN LATERAL (
    SELECT * FROM instances i
    WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = k.id
      AND i.lock_token = k.lock_token
    FOR UPDATE
) AS instances
ORDER BY instances.instance_id;

-- name: GetLockedInstance :one
-- The ack's first step: the instance whose lock the token still holds
-- (expired or not: see GetLockedTurns), and the transaction's time (what
-- now() is in every statement of the ack).
SELECT sqlc.embed(instances), now()::timestamptz AS tx_time FROM instances
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
  AND lock_token = sqlc.arg(lock_token)
FOR UPDATE;

-- name: ReleaseInstance :exec
UPDATE instances SET lock_token = NULL, locked_until = NULL, locked_by = NULL
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: ReleaseTurn :one
-- Releases a turn that was locked and never delivered (a start's hand-off
-- whose poll had ended): the instance's lock, if the turn's token still
-- holds it, and the build id its first turn would have pinned. Its
-- messages stay visible (the next fetch marks them as its own); no row
-- when the lock is no longer the turn's.
UPDATE instances
SET lock_token = NULL, locked_until = NULL, locked_by = NULL,
    build_id = CASE WHEN next_event_id = 1 THEN NULL ELSE build_id END
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
  AND lock_token = sqlc.arg(lock_token)
RETURNING task_queue;

-- name: FailInstanceTurn :exec
-- last_task_error is the turn's error with "since": when the first of the
-- consecutive failures happened (kept from the error before, if any;
-- FinishTurns clears it).
UPDATE instances
SET lock_token = NULL, locked_until = NULL, locked_by = NULL, sticky_worker_id = NULL,
    task_failures = task_failures + 1,
    last_task_error = sqlc.arg(last_task_error)::jsonb
        || jsonb_build_object('since', now())
        || jsonb_strip_nulls(jsonb_set('{"since": null}'::jsonb, '{since}', COALESCE(last_task_error -> 'since', 'null'::jsonb))),
    updated_at = now()
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: FinishTurns :exec
-- Writes the instances of one or more acknowledged turns and releases their
-- locks: element k of the arrays is the row of instance instance_ids[k]
-- (distinct ids). inputs, results and errors hold SQL NULL for no value
-- (a JSON null is a jsonb null). A few fields keep the instance's own
-- value when given as: run_ids the nil UUID, history_bytes -1,
-- last_event_at_us 0 (microseconds since the epoch: a text's cast to
-- timestamptz is STABLE, which an UPDATE on Citus may not apply to a
-- column's value). has_children, when true, marks an instance whose turn
-- started a child workflow (it stays set). The caller's transaction holds
-- the instances' locks (GetLockedTurns, or a terminate's lock), so that
-- their row versions stay put: each is found by a key probe from its id
-- (the LATERAL … LIMIT is never flattened into a join) and updated through
-- the ctid found (a parameterized TID scan). As "instance_id = ANY(ids)" a
-- generic plan made on a table without statistics read the whole
-- namespace through the primary key's first column, on every call, until
-- the next ANALYZE (StartInstances tells the other forms tried). (x).ctid:
-- sqlc knows no system column in a select list.
UPDATE instances
SET status = t.status, execution_id = t.execution_id,
    run_id = COALESCE(NULLIF(t.run_id, '00000000-0000-0000-0000-000000000000'::uuid), instances.run_id),
    workflow_type = t.workflow_type, input = t.input, result = t.result, error = t.error,
    next_event_id = t.next_event_id, next_activity_id = t.next_activity_id, next_timer_id = t.next_timer_id,
    history_bytes = COALESCE(NULLIF(t.history_bytes, -1), instances.history_bytes),
    last_event_at = COALESCE(tether_add('epoch'::timestamptz, NULLIF(t.last_event_at_us, 0) * interval '1 microsecond'),
                             instances.last_event_at),
    completed_at = tether_add(now(), CASE WHEN t.status = 'running' THEN NULL ELSE interval '0' END),
    build_id = CASE WHEN t.execution_id = instances.execution_id THEN instances.build_id END,
    has_children = instances.has_children OR t.has_children,
    sticky_worker_id = CASE WHEN t.status = 'running' AND t.execution_id = instances.execution_id
                            THEN instances.locked_by END,
    lock_token = NULL, locked_until = NULL, locked_by = NULL,
    task_failures = 0, last_task_error = NULL,
    updated_at = now()
FROM (
    SELECT p.tid, f.status, f.execution_id, f.run_id, f.workflow_type, f.input, f.result, f.error,
           f.next_event_id, f.next_activity_id, f.next_timer_id, f.history_bytes, f.last_event_at_us, f.has_children
    FROM (
        -- Unnested side by side (set-returning functions in one select
        -- list advance together): element k of every array is one row.
        SELECT unnest(sqlc.arg(instance_ids)::text[]) AS instance_id, unnest(sqlc.arg(statuses)::text[]) AS status,
               unnest(sqlc.arg(execution_ids)::bigint[]) AS execution_id, unnest(sqlc.arg(run_ids)::uuid[]) AS run_id,
               unnest(sqlc.arg(workflow_types)::text[]) AS workflow_type, unnest(sqlc.arg(inputs)::jsonb[]) AS input,
               unnest(sqlc.arg(results)::jsonb[]) AS result, unnest(sqlc.arg(errors)::jsonb[]) AS error,
               unnest(sqlc.arg(next_event_ids)::bigint[]) AS next_event_id,
               unnest(sqlc.arg(next_activity_ids)::bigint[]) AS next_activity_id,
               unnest(sqlc.arg(next_timer_ids)::bigint[]) AS next_timer_id,
               unnest(sqlc.arg(history_bytes)::bigint[]) AS history_bytes,
               unnest(sqlc.arg(last_event_at_us)::bigint[]) AS last_event_at_us,
               unnest(sqlc.arg(has_children)::boolean[]) AS has_children
    ) f
    CROSS JOIN LATERAL (
        SELECT (x).ctid AS tid FROM instances x
        WHERE x.namespace = sqlc.arg(namespace) AND x.instance_id = f.instance_id
        LIMIT 1
    ) p
) t
WHERE instances.namespace = sqlc.arg(namespace) AND instances.ctid = t.tid;

-- name: DeleteInstance :one
DELETE FROM instances WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id)
RETURNING status, execution_id;

-- name: DeleteHistory :exec
DELETE FROM history WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: GetInstanceForUpdate :one
SELECT * FROM instances WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id) FOR UPDATE;

-- name: TakeTimedOutInstances :many
-- Running instances past their execution deadline and not held by a turn
-- (one namespace per statement).
SELECT * FROM instances
WHERE namespace = sqlc.arg(namespace) AND status = 'running' AND execution_deadline < now()
  AND (locked_until IS NULL OR locked_until < now())
ORDER BY execution_deadline
LIMIT sqlc.arg(max_rows)
FOR UPDATE SKIP LOCKED;
