-- name: InsertAttempts :exec
-- Inserts activity attempts in one statement (a turn's new activities,
-- retries, reschedules). last_error is the failure of the attempt a retry
-- follows (api.LastFailure), shown by describe while the retry waits.
WITH f AS (
    -- Flow control (migration 00042): each attempt whose options have a
    -- priority (the activity's, or its workflow's), its priority key,
    -- fairness key and stride (1 ms / weight), as StartInstances does for
    -- starts; attempts without one have none of this.
    SELECT e->>'instance_id' AS instance_id, (e->>'execution_id')::bigint AS execution_id,
           (e->>'activity_id')::bigint AS activity_id, (e->>'attempt')::integer AS attempt,
           e->>'task_queue' AS task_queue,
           tether_priority_key(e->'options'->'priority') AS pk,
           tether_fairness_key(e->'options'->'priority') AS fk,
           tether_fairness_stride(e->'options'->'priority') AS stride
    FROM jsonb_array_elements(sqlc.arg(attempts)::jsonb) AS e
    WHERE e->'options'->'priority' IS NOT NULL
), k AS (
    INSERT INTO flow_keys AS fk (namespace, task_queue, kind, fairness_key, pass, step)
    SELECT sqlc.arg(namespace), f.task_queue, 'a', f.fk,
           LEAST(now(), (SELECT q.pass FROM worker_queue q
                         WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = f.task_queue
                           AND q.priority = min(f.pk) AND q.pass IS NOT NULL AND q.lock_token IS NULL
                         ORDER BY q.pass LIMIT 1)) + sum(f.stride),
           sum(f.stride)
    FROM f GROUP BY f.task_queue, f.fk
    ORDER BY f.task_queue, f.fk
    ON CONFLICT (namespace, task_queue, kind, fairness_key) DO UPDATE
    SET pass = tether_flow_pass(fk.pass, excluded.step, excluded.pass),
        step = excluded.step
    RETURNING fk.task_queue, fk.fairness_key, fk.pass - fk.step AS base
), p AS (
    SELECT f.instance_id, f.execution_id, f.activity_id, f.attempt, f.pk,
           k.base + sum(f.stride) OVER (PARTITION BY f.task_queue, f.fk
                                        ORDER BY f.instance_id, f.execution_id, f.activity_id, f.attempt) AS pass
    FROM f JOIN k ON k.task_queue = f.task_queue AND k.fairness_key = f.fk
)
INSERT INTO worker_queue (
    namespace, task_queue, instance_id, execution_id, activity_id, attempt,
    activity_type, workflow_type, workflow_task_queue, input, options,
    start_to_close_ms, heartbeat_timeout_ms, heartbeat_details, last_error,
    scheduled_at, visible_at, schedule_to_start_deadline, schedule_to_close_deadline, priority, pass, run_id)
SELECT sqlc.arg(namespace), a.task_queue, a.instance_id, a.execution_id, a.activity_id, a.attempt,
       a.activity_type, a.workflow_type, a.workflow_task_queue, a.input, COALESCE(a.options, '{}'),
       COALESCE(a.start_to_close_ms, 0), COALESCE(a.heartbeat_timeout_ms, 0), a.heartbeat_details, a.last_error,
       now(),
       now() + COALESCE(a.delay_ms, 0) * interval '1 millisecond',
       CASE WHEN a.schedule_to_start_ms > 0
            THEN now() + (COALESCE(a.delay_ms, 0) + a.schedule_to_start_ms) * interval '1 millisecond' END,
       COALESCE(a.schedule_to_close_deadline,
                CASE WHEN a.schedule_to_close_ms > 0 THEN now() + a.schedule_to_close_ms * interval '1 millisecond' END),
       COALESCE(p.pk, 3),
       p.pass,
       a.run_id
FROM jsonb_to_recordset(sqlc.arg(attempts)::jsonb) AS a(
    task_queue text, instance_id text, execution_id bigint, activity_id bigint, attempt integer,
    activity_type text, workflow_type text, workflow_task_queue text, input jsonb, options jsonb,
    start_to_close_ms bigint, heartbeat_timeout_ms bigint, heartbeat_details jsonb,
    delay_ms bigint, schedule_to_start_ms bigint, schedule_to_close_ms bigint,
    schedule_to_close_deadline timestamptz, last_error jsonb, run_id uuid)
LEFT JOIN p ON p.instance_id = a.instance_id AND p.execution_id = a.execution_id
                  AND p.activity_id = a.activity_id AND p.attempt = a.attempt;

-- name: FetchAttempts :many
-- Claims up to max_tasks visible attempts of the task queues (in the order
-- the queues are given), binding them to the worker in the same statement.
-- A worker whose session is no longer active (inactive, cleaned up) claims
-- nothing; a worker id without a session is served. A cancelled attempt is
-- held from now on: the sweeper's retention of cancelled attempts nobody
-- holds (cancelled_unheld_at) no longer applies to it. The lock tokens
-- come from the caller (lock_tokens: at least max_tasks of them), one per
-- attempt claimed.
--
-- A rate limit of a queue (task_queue_limits, work 'a'; migration 00043)
-- bounds what the fetch takes of it, as LockNextTurns does for turns: its
-- token bucket row is locked (in queue order), at most its whole tokens
-- are taken, and those taken are spent (tb). Queues without a limit have no
-- row: one probe of the primary key per queue finds none.
WITH bud AS (
    SELECT l.task_queue,
           GREATEST(0, floor(LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))))::bigint AS n
    FROM task_queue_limits l
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = ANY(sqlc.arg(task_queues)::text[]) AND l.work = 'a'
    ORDER BY l.task_queue
    FOR UPDATE
), cand AS MATERIALIZED (
    -- The attempts to claim, each with its token: computed once (as a
    -- subquery of the UPDATE, a plan that rescans it for each row would
    -- skip the rows this statement already updated and number the next
    -- ones from 1 again), and the ctid its lock found, through which the
    -- claim writes it (a TID scan; joined by id, a fresh database's
    -- generic plan read the whole namespace through worker_queue_activity).
    SELECT x.tid, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token
    FROM unnest(sqlc.arg(task_queues)::text[]) WITH ORDINALITY AS tq(name, ord)
    CROSS JOIN LATERAL (
      SELECT z.tid FROM (
      SELECT y.tid, row_number() OVER () AS rn FROM (
        -- A queue without flow control (the flow index has no attempt of
        -- it: one probe) is taken in visible order, as it always was.
        SELECT pl.tid FROM (
            SELECT (wq).ctid AS tid FROM worker_queue wq
            WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = tq.name
              AND wq.lock_token IS NULL AND wq.visible_at <= now()
              AND NOT EXISTS (SELECT 1 FROM worker_queue fe
                              WHERE fe.namespace = sqlc.arg(namespace) AND fe.task_queue = tq.name
                                AND fe.pass IS NOT NULL AND fe.lock_token IS NULL)
            ORDER BY wq.visible_at, wq.id
            LIMIT sqlc.arg(max_tasks)
            FOR UPDATE SKIP LOCKED
        ) pl
        UNION ALL
        -- Flow control (migration 00042): the queue's visible attempts in
        -- (priority, pass) order, where an attempt without flow control is
        -- priority 3 with visible_at as its pass (as LockNextTurns takes
        -- turns), each locked by primary key as it is pulled; each branch
        -- has its LIMIT, so that its plan starts fast whatever the
        -- statistics say (as in LockNextTurns).
        SELECT fl.tid FROM (
            (SELECT q1.id FROM worker_queue q1
             WHERE q1.namespace = sqlc.arg(namespace) AND q1.task_queue = tq.name AND q1.priority < 3
               AND q1.pass IS NOT NULL AND q1.lock_token IS NULL AND q1.visible_at <= now()
             ORDER BY q1.priority, q1.pass, q1.id
             LIMIT 1000)
            UNION ALL
            (SELECT q3.id FROM (
                 (SELECT q2.id, q2.pass AS r FROM worker_queue q2
                  WHERE q2.namespace = sqlc.arg(namespace) AND q2.task_queue = tq.name AND q2.priority = 3
                    AND q2.pass IS NOT NULL AND q2.lock_token IS NULL AND q2.visible_at <= now()
                  ORDER BY q2.pass, q2.id
                  LIMIT 1000)
                 UNION ALL
                 (SELECT q0.id, q0.visible_at AS r FROM worker_queue q0
                  WHERE q0.namespace = sqlc.arg(namespace) AND q0.task_queue = tq.name
                    AND q0.lock_token IS NULL AND q0.visible_at <= now() AND q0.pass IS NULL
                  ORDER BY q0.visible_at, q0.id
                  LIMIT 1000)
             ) q3 ORDER BY q3.r, q3.id)
            UNION ALL
            (SELECT q5.id FROM worker_queue q5
             WHERE q5.namespace = sqlc.arg(namespace) AND q5.task_queue = tq.name AND q5.priority > 3
               AND q5.pass IS NOT NULL AND q5.lock_token IS NULL AND q5.visible_at <= now()
             ORDER BY q5.priority, q5.pass, q5.id
             LIMIT 1000)
        ) u
        CROSS JOIN LATERAL (
            -- By primary key: lock_token is checked on the row locked,
            -- outside (a condition here, or pushed down here, which the
            -- LIMIT prevents, would make the dequeue index's predicate
            -- hold, and an empty table's plan walk that index).
            SELECT (wl).ctid AS tid, wl.lock_token FROM worker_queue wl
            WHERE wl.namespace = sqlc.arg(namespace) AND wl.id = u.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        ) fl
        WHERE fl.lock_token IS NULL AND EXISTS (SELECT 1 FROM worker_queue fe
                      WHERE fe.namespace = sqlc.arg(namespace) AND fe.task_queue = tq.name
                        AND fe.pass IS NOT NULL AND fe.lock_token IS NULL)
        LIMIT sqlc.arg(max_tasks)
      ) y
      ) z
      -- The queue's budget, when it has a rate limit.
      WHERE z.rn <= COALESCE((SELECT b.n FROM bud b WHERE b.task_queue = tq.name), z.rn)
    ) x
    WHERE NOT EXISTS (
        SELECT 1 FROM workers k
        WHERE k.namespace = sqlc.arg(namespace) AND k.worker_id = sqlc.arg(worker_id) AND k.state <> 'active'
    )
    LIMIT sqlc.arg(max_tasks)
), taken AS (
UPDATE worker_queue w
SET lock_token = c.token,
    locked_until = now() + sqlc.arg(lock_ms)::bigint * interval '1 millisecond',
    worker_id = sqlc.arg(worker_id),
    delivery_count = w.delivery_count + 1,
    started_at = now(),
    cancelled_unheld_at = NULL,
    start_to_close_deadline = tether_add(now(), CASE WHEN w.start_to_close_ms > 0 AND NOT w.cancel_requested
                                                     THEN w.start_to_close_ms * interval '1 millisecond' END),
    heartbeat_deadline = tether_add(now(), CASE WHEN w.heartbeat_timeout_ms > 0 AND NOT w.cancel_requested
                                                THEN w.heartbeat_timeout_ms * interval '1 millisecond' END)
FROM cand c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*
), tb AS (
    -- The attempts taken spend their queues' tokens (limited queues only).
    UPDATE task_queue_limits l
    SET tokens = LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))
                 - (SELECT count(*) FROM taken WHERE taken.task_queue = l.task_queue),
        refilled_at = now()
    FROM bud
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = bud.task_queue AND l.work = 'a'
)
SELECT id, namespace, task_queue, instance_id, execution_id, activity_id, attempt, activity_type,
       workflow_type, workflow_task_queue, input, options, start_to_close_ms, heartbeat_timeout_ms,
       scheduled_at, visible_at, schedule_to_start_deadline, schedule_to_close_deadline,
       start_to_close_deadline, heartbeat_deadline, started_at, lock_token, locked_until, worker_id,
       delivery_count, heartbeat_details, last_heartbeat_at, cancel_requested, cancel_reason,
       cancel_requested_at, last_error, cancelled_unheld_at, priority, pass, run_id
FROM taken;

-- name: FetchAttemptsPlain :many
-- FetchAttempts for task queues without flow control: the same claim
-- without the rate limits (no bucket read or spent) and without the flow
-- branch (no probe of the flow index; each queue's attempts in visible
-- order), as the fetch was before flow control. The store sends it when
-- it knows that none of the queues has a rate limit or flow-controlled
-- attempts waiting (flowStates, server/store/flowstate.go).
WITH cand AS MATERIALIZED (
    -- The attempts to claim, each with its token, computed once (see
    -- FetchAttempts), and the ctid its lock found: the claim writes each
    -- through it (a TID scan; joined by id, a fresh database's generic
    -- plan read the whole namespace through worker_queue_activity).
    SELECT x.tid, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token
    FROM unnest(sqlc.arg(task_queues)::text[]) WITH ORDINALITY AS tq(name, ord)
    CROSS JOIN LATERAL (
        SELECT (wq).ctid AS tid FROM worker_queue wq
        WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = tq.name
          AND wq.lock_token IS NULL AND wq.visible_at <= now()
        ORDER BY wq.visible_at, wq.id
        LIMIT sqlc.arg(max_tasks)
        FOR UPDATE SKIP LOCKED
    ) x
    WHERE NOT EXISTS (
        SELECT 1 FROM workers k
        WHERE k.namespace = sqlc.arg(namespace) AND k.worker_id = sqlc.arg(worker_id) AND k.state <> 'active'
    )
    LIMIT sqlc.arg(max_tasks)
)
UPDATE worker_queue w
SET lock_token = c.token,
    locked_until = now() + sqlc.arg(lock_ms)::bigint * interval '1 millisecond',
    worker_id = sqlc.arg(worker_id)::text,
    delivery_count = w.delivery_count + 1,
    started_at = now(),
    cancelled_unheld_at = NULL,
    start_to_close_deadline = tether_add(now(), CASE WHEN w.start_to_close_ms > 0 AND NOT w.cancel_requested
                                                     THEN w.start_to_close_ms * interval '1 millisecond' END),
    heartbeat_deadline = tether_add(now(), CASE WHEN w.heartbeat_timeout_ms > 0 AND NOT w.cancel_requested
                                                THEN w.heartbeat_timeout_ms * interval '1 millisecond' END)
FROM cand c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*;

-- name: FetchAttemptsKeyed :many
-- FetchAttempts for task queues of which one has a rate limit per
-- fairness key (fairness_key_limits, work 'a'; migration 00054), as
-- LockNextTurnsKeyed does for turns: each queue's attempts in flow order
-- (as FetchAttempts' flow branch), of which each fairness key (the
-- attempt's priority, in its options) gives at most the whole tokens of
-- its bucket, and the queue's own rate limit bounds the whole. The limit
-- rows are locked first (task_queue_limits, then fairness_key_limits, in
-- queue order), then the buckets of the keys among each queue's first
-- 1 000 candidates (in queue and key order); the attempts taken are spent
-- from their queues' and their keys' buckets (a key without a bucket row
-- starts full). Attempts without a fairness key are not bound per key.
WITH bud AS (
    SELECT l.task_queue,
           GREATEST(0, floor(LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))))::bigint AS n
    FROM task_queue_limits l
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = ANY(sqlc.arg(task_queues)::text[]) AND l.work = 'a'
    ORDER BY l.task_queue
    FOR UPDATE
), kl AS (
    -- Locked after bud (the one-time filter reads bud first).
    SELECT k.task_queue, k.rate, k.burst FROM fairness_key_limits k
    WHERE k.namespace = sqlc.arg(namespace) AND k.task_queue = ANY(sqlc.arg(task_queues)::text[]) AND k.work = 'a'
      AND (SELECT count(*) FROM bud) >= 0
    ORDER BY k.task_queue
    FOR UPDATE
), cands AS MATERIALIZED (
    -- Each queue's first 1 000 visible attempts in flow order (see
    -- FetchAttempts), each with its place and its fairness key ('' for
    -- none); kl is locked first (the one-time filter).
    SELECT tq.name AS task_queue, y.id, y.ord, y.fk
    FROM unnest(sqlc.arg(task_queues)::text[]) WITH ORDINALITY AS tq(name, qord)
    CROSS JOIN LATERAL (
        SELECT u.id, row_number() OVER () AS ord, COALESCE(u.fk, '') AS fk FROM (
            (SELECT q1.id, q1.options->'priority'->>'fairness_key' AS fk FROM worker_queue q1
             WHERE q1.namespace = sqlc.arg(namespace) AND q1.task_queue = tq.name AND q1.priority < 3
               AND q1.pass IS NOT NULL AND q1.lock_token IS NULL AND q1.visible_at <= now()
             ORDER BY q1.priority, q1.pass, q1.id
             LIMIT 1000)
            UNION ALL
            (SELECT q3.id, q3.fk FROM (
                 (SELECT q2.id, q2.options->'priority'->>'fairness_key' AS fk, q2.pass AS r FROM worker_queue q2
                  WHERE q2.namespace = sqlc.arg(namespace) AND q2.task_queue = tq.name AND q2.priority = 3
                    AND q2.pass IS NOT NULL AND q2.lock_token IS NULL AND q2.visible_at <= now()
                  ORDER BY q2.pass, q2.id
                  LIMIT 1000)
                 UNION ALL
                 (SELECT q0.id, q0.options->'priority'->>'fairness_key' AS fk, q0.visible_at AS r FROM worker_queue q0
                  WHERE q0.namespace = sqlc.arg(namespace) AND q0.task_queue = tq.name
                    AND q0.lock_token IS NULL AND q0.visible_at <= now() AND q0.pass IS NULL
                  ORDER BY q0.visible_at, q0.id
                  LIMIT 1000)
             ) q3 ORDER BY q3.r, q3.id)
            UNION ALL
            (SELECT q5.id, q5.options->'priority'->>'fairness_key' AS fk FROM worker_queue q5
             WHERE q5.namespace = sqlc.arg(namespace) AND q5.task_queue = tq.name AND q5.priority > 3
               AND q5.pass IS NOT NULL AND q5.lock_token IS NULL AND q5.visible_at <= now()
             ORDER BY q5.priority, q5.pass, q5.id
             LIMIT 1000)
        ) u
        LIMIT 1000
    ) y
    WHERE (SELECT count(*) FROM kl) >= 0
), kb AS MATERIALIZED (
    -- The whole tokens of each key among a queue's candidates: its
    -- bucket's, locked (as the last fetch left it), or a full bucket.
    SELECT d.task_queue, d.fk,
           COALESCE((SELECT GREATEST(0, floor(LEAST(kl.burst, b.tokens + kl.rate * extract(epoch FROM now() - b.refilled_at))))
                     FROM fairness_key_buckets b
                     WHERE b.namespace = sqlc.arg(namespace) AND b.task_queue = d.task_queue AND b.work = 'a'
                       AND b.fairness_key = d.fk
                     FOR UPDATE), floor(kl.burst))::bigint AS n
    FROM (SELECT DISTINCT cands.task_queue, cands.fk FROM cands WHERE cands.fk <> '' ORDER BY 1, 2) d
    JOIN kl ON kl.task_queue = d.task_queue
), pick AS MATERIALIZED (
    -- The attempts to claim, each with its token and the ctid its lock
    -- found (see FetchAttempts).
    SELECT x.tid, (sqlc.arg(lock_tokens)::uuid[])[row_number() OVER ()] AS token
    FROM unnest(sqlc.arg(task_queues)::text[]) WITH ORDINALITY AS tq(name, qord)
    CROSS JOIN LATERAL (
        SELECT fl.tid FROM (
            SELECT f.id, f.ord FROM (
                SELECT c.id, c.ord, c.fk, row_number() OVER (PARTITION BY c.fk ORDER BY c.ord) AS krn
                FROM cands c WHERE c.task_queue = tq.name
            ) f
            WHERE f.fk = '' OR NOT EXISTS (SELECT 1 FROM kl WHERE kl.task_queue = tq.name)
               OR f.krn <= COALESCE((SELECT kb.n FROM kb WHERE kb.task_queue = tq.name AND kb.fk = f.fk), 0)
            ORDER BY f.ord
        ) v
        CROSS JOIN LATERAL (
            SELECT (wl).ctid AS tid, wl.lock_token FROM worker_queue wl
            WHERE wl.namespace = sqlc.arg(namespace) AND wl.id = v.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED
        ) fl
        WHERE fl.lock_token IS NULL
        LIMIT LEAST(sqlc.arg(max_tasks)::bigint, (SELECT b.n FROM bud b WHERE b.task_queue = tq.name))
    ) x
    WHERE NOT EXISTS (
        SELECT 1 FROM workers k
        WHERE k.namespace = sqlc.arg(namespace) AND k.worker_id = sqlc.arg(worker_id) AND k.state <> 'active'
    )
    LIMIT sqlc.arg(max_tasks)
), taken AS (
UPDATE worker_queue w
SET lock_token = c.token,
    locked_until = now() + sqlc.arg(lock_ms)::bigint * interval '1 millisecond',
    worker_id = sqlc.arg(worker_id)::text,
    delivery_count = w.delivery_count + 1,
    started_at = now(),
    cancelled_unheld_at = NULL,
    start_to_close_deadline = tether_add(now(), CASE WHEN w.start_to_close_ms > 0 AND NOT w.cancel_requested
                                                     THEN w.start_to_close_ms * interval '1 millisecond' END),
    heartbeat_deadline = tether_add(now(), CASE WHEN w.heartbeat_timeout_ms > 0 AND NOT w.cancel_requested
                                                THEN w.heartbeat_timeout_ms * interval '1 millisecond' END)
FROM pick c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*
), tb AS (
    -- The attempts taken spend their queues' tokens (limited queues only).
    UPDATE task_queue_limits l
    SET tokens = LEAST(l.burst, l.tokens + l.rate * extract(epoch FROM now() - l.refilled_at))
                 - (SELECT count(*) FROM taken WHERE taken.task_queue = l.task_queue),
        refilled_at = now()
    FROM bud
    WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = bud.task_queue AND l.work = 'a'
), kt AS (
    -- And their keys' tokens (in queue and key order): a key without a
    -- bucket row gets one, full but for what it spent now.
    INSERT INTO fairness_key_buckets AS b (namespace, task_queue, work, fairness_key, rate, burst, tokens, refilled_at)
    SELECT sqlc.arg(namespace), t.task_queue, 'a', t.fk, kl.rate, kl.burst, kl.burst - t.n, now()
    FROM (SELECT taken.task_queue, taken.options->'priority'->>'fairness_key' AS fk, count(*) AS n FROM taken
          WHERE COALESCE(taken.options->'priority'->>'fairness_key', '') <> ''
          GROUP BY 1, 2) t
    JOIN kl ON kl.task_queue = t.task_queue
    ORDER BY t.task_queue, t.fk
    ON CONFLICT (namespace, task_queue, work, fairness_key) DO UPDATE
    SET tokens = LEAST(excluded.burst, b.tokens + excluded.rate * extract(epoch FROM excluded.refilled_at - b.refilled_at))
                 - (excluded.burst - excluded.tokens),
        rate = excluded.rate, burst = excluded.burst, refilled_at = excluded.refilled_at
)
SELECT id, namespace, task_queue, instance_id, execution_id, activity_id, attempt, activity_type,
       workflow_type, workflow_task_queue, input, options, start_to_close_ms, heartbeat_timeout_ms,
       scheduled_at, visible_at, schedule_to_start_deadline, schedule_to_close_deadline,
       start_to_close_deadline, heartbeat_deadline, started_at, lock_token, locked_until, worker_id,
       delivery_count, heartbeat_details, last_heartbeat_at, cancel_requested, cancel_reason,
       cancel_requested_at, last_error, cancelled_unheld_at, priority, pass, run_id
FROM taken;

-- name: InsertAttemptsClaiming :many
-- Eager dispatch: inserts the attempts of one or more turns as
-- InsertAttempts does, those with a claim_worker already held by that
-- worker (the one acknowledging the turn) for claim_lock_ms with the lock
-- token claim_token — locked, bound
-- and started exactly as FetchAttempts would leave them — unless that
-- worker's session is no longer active; returns the attempts it claimed.
-- Claiming in the insert spares each such attempt an update: a new version
-- of the row with an entry in every index of the table (the claim changes
-- indexed columns, so it cannot be HOT).
WITH f AS (
    -- Flow control (migration 00042): each attempt whose options have a
    -- priority (the activity's, or its workflow's), its priority key,
    -- fairness key and stride (1 ms / weight), as StartInstances does for
    -- starts; attempts without one have none of this.
    SELECT e->>'instance_id' AS instance_id, (e->>'execution_id')::bigint AS execution_id,
           (e->>'activity_id')::bigint AS activity_id, (e->>'attempt')::integer AS attempt,
           e->>'task_queue' AS task_queue,
           tether_priority_key(e->'options'->'priority') AS pk,
           tether_fairness_key(e->'options'->'priority') AS fk,
           tether_fairness_stride(e->'options'->'priority') AS stride
    FROM jsonb_array_elements(sqlc.arg(attempts)::jsonb) AS e
    WHERE e->'options'->'priority' IS NOT NULL
), k AS (
    INSERT INTO flow_keys AS fk (namespace, task_queue, kind, fairness_key, pass, step)
    SELECT sqlc.arg(namespace), f.task_queue, 'a', f.fk,
           LEAST(now(), (SELECT q.pass FROM worker_queue q
                         WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = f.task_queue
                           AND q.priority = min(f.pk) AND q.pass IS NOT NULL AND q.lock_token IS NULL
                         ORDER BY q.pass LIMIT 1)) + sum(f.stride),
           sum(f.stride)
    FROM f GROUP BY f.task_queue, f.fk
    ORDER BY f.task_queue, f.fk
    ON CONFLICT (namespace, task_queue, kind, fairness_key) DO UPDATE
    SET pass = tether_flow_pass(fk.pass, excluded.step, excluded.pass),
        step = excluded.step
    RETURNING fk.task_queue, fk.fairness_key, fk.pass - fk.step AS base
), p AS (
    SELECT f.instance_id, f.execution_id, f.activity_id, f.attempt, f.pk,
           k.base + sum(f.stride) OVER (PARTITION BY f.task_queue, f.fk
                                        ORDER BY f.instance_id, f.execution_id, f.activity_id, f.attempt) AS pass
    FROM f JOIN k ON k.task_queue = f.task_queue AND k.fairness_key = f.fk
), ins AS (
    INSERT INTO worker_queue (
        namespace, task_queue, instance_id, execution_id, activity_id, attempt,
        activity_type, workflow_type, workflow_task_queue, input, options,
        start_to_close_ms, heartbeat_timeout_ms, heartbeat_details,
        scheduled_at, visible_at, schedule_to_start_deadline, schedule_to_close_deadline,
        lock_token, locked_until, worker_id, delivery_count, started_at,
        start_to_close_deadline, heartbeat_deadline, priority, pass, run_id)
    SELECT sqlc.arg(namespace), a.task_queue, a.instance_id, a.execution_id, a.activity_id, a.attempt,
           a.activity_type, a.workflow_type, a.workflow_task_queue, a.input, COALESCE(a.options, '{}'),
           COALESCE(a.start_to_close_ms, 0), COALESCE(a.heartbeat_timeout_ms, 0), a.heartbeat_details,
           now(),
           now() + COALESCE(a.delay_ms, 0) * interval '1 millisecond',
           CASE WHEN a.schedule_to_start_ms > 0
                THEN now() + (COALESCE(a.delay_ms, 0) + a.schedule_to_start_ms) * interval '1 millisecond' END,
           COALESCE(a.schedule_to_close_deadline,
                    CASE WHEN a.schedule_to_close_ms > 0 THEN now() + a.schedule_to_close_ms * interval '1 millisecond' END),
           CASE WHEN c.claimed THEN a.claim_token END,
           CASE WHEN c.claimed THEN now() + a.claim_lock_ms * interval '1 millisecond' END,
           CASE WHEN c.claimed THEN a.claim_worker END,
           CASE WHEN c.claimed THEN 1 ELSE 0 END,
           CASE WHEN c.claimed THEN now() END,
           CASE WHEN c.claimed AND a.start_to_close_ms > 0
                THEN now() + a.start_to_close_ms * interval '1 millisecond' END,
           CASE WHEN c.claimed AND a.heartbeat_timeout_ms > 0
                THEN now() + a.heartbeat_timeout_ms * interval '1 millisecond' END,
           COALESCE(p.pk, 3),
           p.pass,
           a.run_id
    FROM jsonb_to_recordset(sqlc.arg(attempts)::jsonb) AS a(
        task_queue text, instance_id text, execution_id bigint, activity_id bigint, attempt integer,
        activity_type text, workflow_type text, workflow_task_queue text, input jsonb, options jsonb,
        start_to_close_ms bigint, heartbeat_timeout_ms bigint, heartbeat_details jsonb,
        delay_ms bigint, schedule_to_start_ms bigint, schedule_to_close_ms bigint,
        schedule_to_close_deadline timestamptz, claim_worker text, claim_lock_ms bigint, run_id uuid, claim_token uuid)
    LEFT JOIN p ON p.instance_id = a.instance_id AND p.execution_id = a.execution_id
                  AND p.activity_id = a.activity_id AND p.attempt = a.attempt
    CROSS JOIN LATERAL (
        SELECT a.claim_worker IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM workers k
            WHERE k.namespace = sqlc.arg(namespace) AND k.worker_id = a.claim_worker AND k.state <> 'active'
        ) AND NOT EXISTS (
            -- A rate-limited queue's attempts go through its fetch.
            SELECT 1 FROM task_queue_limits l
            WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = a.task_queue AND l.work = 'a'
        ) AS claimed
    ) c
    RETURNING *
)
SELECT id, namespace, task_queue, instance_id, execution_id, activity_id, attempt, activity_type,
       workflow_type, workflow_task_queue, input, options, start_to_close_ms, heartbeat_timeout_ms,
       scheduled_at, visible_at, schedule_to_start_deadline, schedule_to_close_deadline,
       start_to_close_deadline, heartbeat_deadline, started_at, lock_token, locked_until, worker_id,
       delivery_count, heartbeat_details, last_heartbeat_at, cancel_requested, cancel_reason,
       cancel_requested_at, last_error, cancelled_unheld_at, priority, pass, run_id
FROM ins WHERE lock_token IS NOT NULL
ORDER BY instance_id, activity_id;

-- name: HeartbeatAttempt :one
-- Extends the lock even when cancellation was requested, and returns the
-- cancel info. Details, when given, are recorded and reset the heartbeat
-- timeout. A lock is valid until the sweeper releases it (ExpireLocks),
-- not merely until locked_until: nobody else can hold the attempt before
-- (the fetch takes only unlocked rows), and after an outage the sweeper
-- holds expiry for a grace period so that the holder renews and reports
-- first (this, TakeAttempt(s) and AbandonAttempt). The day bounds how long
-- an unreleased lock counts (a sweeper down for that long), and, as a
-- range like the former "locked_until > now()", keeps the planner on
-- worker_queue_lock_token rather than walking worker_queue_locked_until.
UPDATE worker_queue
SET locked_until = GREATEST(locked_until, now() + sqlc.arg(extend_ms)::bigint * interval '1 millisecond'),
    heartbeat_details = CASE WHEN sqlc.arg(has_details)::boolean THEN sqlc.arg(details)::jsonb ELSE heartbeat_details END,
    -- Both only move forward: GREATEST keeps the column where the
    -- CASE gives NULL (no details), and takes the new time otherwise.
    last_heartbeat_at = GREATEST(last_heartbeat_at, tether_add(now(), CASE WHEN sqlc.arg(has_details)::boolean THEN interval '0' END)),
    heartbeat_deadline = GREATEST(heartbeat_deadline,
        tether_add(now(), CASE WHEN sqlc.arg(has_details)::boolean AND heartbeat_timeout_ms > 0 AND NOT cancel_requested
                               THEN heartbeat_timeout_ms * interval '1 millisecond' END))
WHERE lock_token = sqlc.arg(lock_token) AND namespace = sqlc.arg(namespace) AND locked_until > now() - interval '1 day'
RETURNING cancel_requested, cancel_reason, locked_until;

-- name: TakeAttempt :one
-- Removes a held attempt (complete, fail): the caller decides what follows.
-- timed_out names a StartToClose or Heartbeat deadline that passed before
-- the report (the sweeper had not flagged it yet): the report is then late.
-- now() comes from the USING subquery: Citus takes no stable function in
-- a RETURNING.
DELETE FROM worker_queue
USING (SELECT now() AS at) n
WHERE lock_token = sqlc.arg(lock_token) AND namespace = sqlc.arg(namespace) AND locked_until > now() - interval '1 day'
RETURNING sqlc.embed(worker_queue),
          (CASE WHEN cancel_requested THEN ''
                WHEN start_to_close_deadline <= n.at THEN 'start_to_close'
                WHEN heartbeat_deadline <= n.at THEN 'heartbeat'
                ELSE '' END)::text AS timed_out;

-- name: TakeAttempts :many
-- TakeAttempt for the held attempts whose lock_token is one of
-- lock_tokens (the completions of a group): a token that no longer holds
-- its attempt has no row. The attempts are locked in id order (the lock
-- order of worker_queue, see docs/architecture.md), then deleted.
--
-- In the same statement, the result of each attempt that is neither timed
-- out (timed_out) nor cancelled is enqueued to its workflow execution, as
-- EnqueueMessages would (dropped when the execution is over or was
-- continued): a message of kind, whose payload is the element of results
-- at the place of its lock_token in lock_tokens (the event, a jsonb
-- object) with the attempt's activity_id and attempt, in the order of the
-- tokens. Each row says whether its result was enqueued
-- (enqueued) and to which task queue (workflow_queue, '' when none of its
-- instance's was). The caller handles
-- the others (late, cancelled) on its own.
WITH victims AS (
    SELECT x.*,
           (CASE WHEN x.cancel_requested THEN ''
                 WHEN x.start_to_close_deadline <= now() THEN 'start_to_close'
                 WHEN x.heartbeat_deadline <= now() THEN 'heartbeat'
                 ELSE '' END)::text AS timed_out
    FROM worker_queue x
    WHERE x.lock_token = ANY(sqlc.arg(lock_tokens)::uuid[]) AND x.namespace = sqlc.arg(namespace) AND x.locked_until > now() - interval '1 day'
    ORDER BY x.id
    FOR UPDATE
), enq AS (
    -- A workflow with a priority (instances.priority) gets its result at
    -- its priority, with its visible time as its pass (see EnqueueMessages).
    INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, visible_at, priority, pass)
    SELECT i.namespace, i.instance_id, v.execution_id, i.task_queue, sqlc.arg(kind)::text,
           (sqlc.arg(results)::jsonb[])[array_position(sqlc.arg(lock_tokens)::uuid[], v.lock_token)]
               || jsonb_build_object('activity_id', v.activity_id, 'attempt', v.attempt),
           n.at,
           tether_priority_key(i.priority),
           -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN i.priority IS NOT NULL
            THEN LEAST(n.at,
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = i.namespace AND vq.task_queue = i.task_queue
                          AND vq.priority = tether_priority_key(i.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
    -- A join, not a LATERAL … LIMIT probe (Citus pushes down no LIMIT in a
    -- LATERAL over a CTE): victims are a few rows of one namespace, each
    -- matching at most one instance by its key. visible_at is the
    -- transaction's now() as a subquery's: Citus computes it on the
    -- coordinator, whose now() the eager turn's fetch (LockNextTurns)
    -- compares with, where a worker node's now() in this SELECT would be
    -- later (the result not yet visible to it).
    FROM victims v
    JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = v.instance_id
                    AND i.status = 'running' AND i.execution_id = v.execution_id
    CROSS JOIN (SELECT now() AS at) n
    WHERE v.timed_out = '' AND NOT v.cancel_requested
    ORDER BY v.lock_token
    RETURNING instance_id, (payload->>'activity_id')::bigint AS activity_id, task_queue
)
DELETE FROM worker_queue w
USING victims v, (SELECT now() AS at) n
WHERE w.namespace = sqlc.arg(namespace) AND w.id = v.id
-- timed_out is victims' expression again: sqlc does not resolve a CTE's
-- computed column in a DELETE's RETURNING (same row, same now()); now()
-- comes from the USING subquery (Citus takes no stable function in a
-- RETURNING).
RETURNING sqlc.embed(w),
          (CASE WHEN w.cancel_requested THEN ''
                WHEN w.start_to_close_deadline <= n.at THEN 'start_to_close'
                WHEN w.heartbeat_deadline <= n.at THEN 'heartbeat'
                ELSE '' END)::text AS timed_out,
          EXISTS (SELECT 1 FROM enq WHERE enq.instance_id = w.instance_id AND enq.activity_id = w.activity_id) AS enqueued,
          COALESCE((SELECT enq.task_queue FROM enq WHERE enq.instance_id = w.instance_id LIMIT 1), '')::text AS workflow_queue;

-- name: AbandonAttempt :one
UPDATE worker_queue
SET lock_token = NULL, locked_until = NULL, worker_id = NULL,
    start_to_close_deadline = NULL, heartbeat_deadline = NULL,
    visible_at = now() + sqlc.arg(delay_ms)::bigint * interval '1 millisecond'
WHERE lock_token = sqlc.arg(lock_token) AND namespace = sqlc.arg(namespace) AND locked_until > now() - interval '1 day'
RETURNING *;

-- name: DeleteAttempts :exec
-- Each attempt found by a key probe (the LATERAL … LIMIT is never
-- flattened into a join) and deleted through the ctid found.
DELETE FROM worker_queue d
USING (
    SELECT f.tid FROM unnest(sqlc.arg(ids)::bigint[]) AS k(id)
    CROSS JOIN LATERAL (
        SELECT (x).ctid AS tid FROM worker_queue x
        WHERE x.namespace = sqlc.arg(namespace) AND x.id = k.id
        LIMIT 1
    ) f
) t
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = t.tid;

-- name: DropUnheldExecutionAttempts :execrows
-- A workflow-wide cancel of executions — of each instance named in
-- instance_ids, execution executions[instance_id].execution_id: attempts
-- nobody holds have nobody to tell, so they are removed (they never start)
-- rather than flagged. Locked in id order, then deleted.
DELETE FROM worker_queue d
USING (
    SELECT (w).ctid AS tid FROM worker_queue w
    WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = ANY(sqlc.arg(instance_ids)::text[])
      AND w.execution_id = (sqlc.arg(executions)::jsonb -> w.instance_id ->> 'execution_id')::bigint
      AND w.lock_token IS NULL
    ORDER BY w.id
    FOR UPDATE
) v
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = v.tid;

-- name: FlagExecution :exec
-- Flags every attempt of executions — of each instance named in
-- instance_ids, execution executions[instance_id].execution_id, with
-- reason executions[instance_id].reason (first reason wins) — cancelled
-- in one predicate update, and notifies each worker holding a flagged
-- attempt (key_prefix || worker id: its cancel key), so that the statement
-- needs no answer and travels with the commit. The flag of a held attempt
-- changes no column that an index names (key or predicate;
-- cancelled_unheld_at stays NULL), so that it is a HOT update: no index
-- entry per row. Its deadlines stay: the sweeper skips cancelled attempts.
-- The attempts are locked in id order (the row lock changes no column
-- either), then flagged.
WITH u AS (
    UPDATE worker_queue w
    SET cancel_requested = true,
        cancel_reason = COALESCE(w.cancel_reason, sqlc.arg(executions)::jsonb -> w.instance_id ->> 'reason'),
        cancel_requested_at = LEAST(w.cancel_requested_at, now()),
        cancelled_unheld_at = tether_add(now(), CASE WHEN w.lock_token IS NULL THEN interval '0' END)
    FROM (
        SELECT (x).ctid AS tid FROM worker_queue x
        WHERE x.namespace = sqlc.arg(namespace) AND x.instance_id = ANY(sqlc.arg(instance_ids)::text[])
          AND x.execution_id = (sqlc.arg(executions)::jsonb -> x.instance_id ->> 'execution_id')::bigint
          AND NOT x.cancel_requested
        ORDER BY x.id
        FOR NO KEY UPDATE
    ) c
    WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
    RETURNING w.worker_id
)
SELECT pg_notify(sqlc.arg(channel)::text, sqlc.arg(key_prefix)::text || x.worker_id)
FROM (SELECT DISTINCT worker_id FROM u WHERE worker_id IS NOT NULL) x
-- Not on Citus (citus.version is its setting): the statement runs on the
-- namespace's worker node, whose notifications the server's LISTEN on the
-- coordinator does not hear (and a NOTIFY there fails a two-phase
-- commit); the store reads the holders then (CancelledAttemptHolders).
WHERE current_setting('citus.version', true) IS NULL;

-- name: CancelledAttemptHolders :many
-- The workers holding a cancelled attempt of executions (instance_ids,
-- executions[instance_id].execution_id): on Citus, whom FlagExecution
-- flagged, to be told from the coordinator (Options.Citus).
SELECT DISTINCT w.worker_id::text AS worker_id
FROM worker_queue w
WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = ANY(sqlc.arg(instance_ids)::text[])
  AND w.execution_id = (sqlc.arg(executions)::jsonb -> w.instance_id ->> 'execution_id')::bigint
  AND w.cancel_requested AND w.worker_id IS NOT NULL;

-- name: FlagActivities :many
-- Flags every attempt of the named activities cancelled, set-based (one
-- statement per batch); returns the workers holding a flagged attempt. As
-- FlagExecution: a HOT update for a held attempt; one nobody holds gets
-- cancelled_unheld_at (the sweeper drops it after its retention). Locked
-- in id order, then flagged.
WITH u AS (
    UPDATE worker_queue w
    SET cancel_requested = true,
        cancel_reason = COALESCE(w.cancel_reason, c.reason),
        cancel_requested_at = LEAST(w.cancel_requested_at, now()),
        cancelled_unheld_at = tether_add(now(), CASE WHEN w.lock_token IS NULL THEN interval '0' END)
    FROM (
        SELECT (x).ctid AS tid, a.reason::text AS reason
        FROM jsonb_to_recordset(sqlc.arg(cancels)::jsonb) AS a(activity_id bigint, reason text)
        JOIN worker_queue x ON x.activity_id = a.activity_id
        WHERE x.namespace = sqlc.arg(namespace) AND x.instance_id = sqlc.arg(instance_id)
          AND x.execution_id = sqlc.arg(execution_id) AND NOT x.cancel_requested
        ORDER BY x.id
        FOR NO KEY UPDATE OF x
    ) c
    WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
    RETURNING w.worker_id
)
SELECT DISTINCT worker_id::text FROM u WHERE worker_id IS NOT NULL;

-- name: NextActivityWake :one
-- When a poll of the queues should look again: the earliest future
-- visible_at of their attempts, or, for a rate-limited queue (migration
-- 00043) with attempts waiting, when its bucket has its next whole token.
SELECT min(x.visible_at)::timestamptz AS next_visible
FROM unnest(sqlc.arg(task_queues)::text[]) AS tq(name)
CROSS JOIN LATERAL (
    (SELECT wq.visible_at FROM worker_queue wq
     WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = tq.name
       AND wq.lock_token IS NULL AND wq.visible_at > now()
     ORDER BY wq.visible_at
     LIMIT 1)
    UNION ALL
    (SELECT l.refilled_at + (1 - l.tokens) / l.rate * interval '1 second'
     FROM task_queue_limits l
     WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = tq.name AND l.work = 'a'
       AND l.refilled_at + (1 - l.tokens) / l.rate * interval '1 second' > now()
       AND EXISTS (SELECT 1 FROM worker_queue v
                   WHERE v.namespace = sqlc.arg(namespace) AND v.task_queue = tq.name
                     AND v.lock_token IS NULL AND v.visible_at <= now()))
) x
HAVING count(*) > 0;

-- name: NextActivityWakePlain :one
-- NextActivityWake of queues without a rate limit (flowStates,
-- server/store/flowstate.go): the earliest future visible_at of their
-- attempts, without a read of task_queue_limits.
SELECT min(x.visible_at)::timestamptz AS next_visible
FROM unnest(sqlc.arg(task_queues)::text[]) AS tq(name)
CROSS JOIN LATERAL (
    SELECT wq.visible_at FROM worker_queue wq
    WHERE wq.namespace = sqlc.arg(namespace) AND wq.task_queue = tq.name
      AND wq.lock_token IS NULL AND wq.visible_at > now()
    ORDER BY wq.visible_at
    LIMIT 1
) x
HAVING count(*) > 0;

-- name: ExpireLocks :many
-- Releases attempts whose lock expired, so they can be delivered again.
-- The attempt waits to be started again: its ScheduleToStart runs anew.
-- One namespace per statement, as every sweeper statement.
UPDATE worker_queue w
SET lock_token = NULL, locked_until = NULL, worker_id = NULL,
    start_to_close_deadline = NULL, heartbeat_deadline = NULL,
    started_at = CASE WHEN w.schedule_to_start_deadline IS NULL THEN w.started_at END,
    schedule_to_start_deadline = tether_add(now(), w.schedule_to_start_deadline - w.visible_at)
FROM (
    SELECT (x).ctid AS tid FROM worker_queue x
    WHERE namespace = sqlc.arg(namespace) AND lock_token IS NOT NULL AND locked_until < now()
    ORDER BY locked_until
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*;

-- name: TakeScheduleToStartExpired :many
DELETE FROM worker_queue d
USING (
    SELECT (x).ctid AS tid FROM worker_queue x
    WHERE x.namespace = sqlc.arg(namespace)
      AND lock_token IS NULL AND started_at IS NULL AND schedule_to_start_deadline < now()
      AND NOT cancel_requested
    ORDER BY schedule_to_start_deadline
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) v
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = v.tid
RETURNING d.*;

-- name: FlagAttemptTimeouts :many
-- StartToClose and Heartbeat timeouts: the running attempt is flagged
-- cancelled; the caller schedules the next attempt or fails the activity.
-- Due attempts come from worker_queue_deadline (keyed on the earliest of an
-- attempt's ScheduleToClose, StartToClose and Heartbeat deadlines), oldest
-- first; cancelled ones are skipped on the heap. (The ORDER BY keeps the
-- plan on the index: PostgreSQL keeps no statistics on the expression of a
-- partial index, and for a bare LIMIT it may prefer a sequential scan.)
-- A cancelled attempt keeps its deadlines (its flag is a HOT update) but
-- has nothing left to time out: once one of them passes, the statement's
-- first part (cleared) removes them, once, so that the attempt leaves the
-- index and later sweeps do not read it again. The worker holding it still
-- acknowledges it (stale), or lets its lock expire (it is then dropped).
-- Both parts skip the attempts another transaction holds (the next sweep
-- finds them), so that the sweep never waits on a row lock.
WITH cleared AS (
    UPDATE worker_queue x
    SET schedule_to_close_deadline = NULL, start_to_close_deadline = NULL, heartbeat_deadline = NULL
    FROM (
        SELECT (y).ctid AS tid FROM worker_queue y
        WHERE namespace = sqlc.arg(namespace)
          AND LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) < now()
          AND cancel_requested
        ORDER BY LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)
        LIMIT sqlc.arg(max_rows)
        FOR UPDATE SKIP LOCKED
    ) d
    WHERE x.namespace = sqlc.arg(namespace) AND x.ctid = d.tid
    RETURNING x.id
)
UPDATE worker_queue w
SET cancel_requested = true,
    cancel_reason = CASE WHEN c.start_to_close THEN 'timeout:start_to_close' ELSE 'timeout:heartbeat' END,
    cancel_requested_at = now(),
    start_to_close_deadline = NULL, heartbeat_deadline = NULL
FROM (
    SELECT (y).ctid AS tid, y.start_to_close_deadline < now() AS start_to_close FROM worker_queue y
    WHERE namespace = sqlc.arg(namespace)
      AND LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) < now()
      AND (start_to_close_deadline < now() OR heartbeat_deadline < now())
      AND NOT cancel_requested
    ORDER BY LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)
    LIMIT sqlc.arg(max_rows)
    FOR NO KEY UPDATE SKIP LOCKED
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid AND NOT w.cancel_requested
RETURNING w.*;

-- name: FlagScheduleToCloseExpired :many
-- ScheduleToClose timeouts, through worker_queue_deadline (oldest first);
-- cancelled attempts are skipped on the heap (FlagAttemptTimeouts clears
-- their deadlines). The attempt's deadlines are cleared: it has fired.
UPDATE worker_queue w
SET cancel_requested = true,
    cancel_reason = COALESCE(w.cancel_reason, 'timeout:schedule_to_close'),
    cancel_requested_at = LEAST(w.cancel_requested_at, now()),
    schedule_to_close_deadline = NULL, start_to_close_deadline = NULL, heartbeat_deadline = NULL
FROM (
    SELECT (y).ctid AS tid FROM worker_queue y
    WHERE namespace = sqlc.arg(namespace) AND LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) < now()
      AND schedule_to_close_deadline < now() AND NOT cancel_requested
    ORDER BY LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) c
WHERE w.namespace = sqlc.arg(namespace) AND w.ctid = c.tid
RETURNING w.*;

-- name: DeleteCancelledUnlocked :execrows
-- Cancelled attempts nobody holds: kept for a while so that a worker can
-- see the flag on fetch, then dropped. They are found through
-- worker_queue_cancelled_unheld (cancelled_unheld_at is set by a flag that
-- finds the attempt unheld, cleared by its fetch), oldest first; the cancel
-- and lock columns are checked on the heap too, so that a held attempt is
-- never dropped. (The ORDER BY keeps a plan made without statistics off
-- worker_queue_dequeue, whose predicate the statement implies as well.)
DELETE FROM worker_queue d
USING (
    SELECT (x).ctid AS tid FROM worker_queue x
    WHERE x.namespace = sqlc.arg(namespace) AND cancelled_unheld_at < now() - sqlc.arg(older_than_ms)::bigint * interval '1 millisecond'
      AND cancel_requested AND lock_token IS NULL
    ORDER BY cancelled_unheld_at
    LIMIT sqlc.arg(max_rows)
    FOR UPDATE SKIP LOCKED
) v
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = v.tid;

-- name: QueueStats :one
SELECT count(*) FILTER (WHERE lock_token IS NULL AND visible_at <= now())::bigint AS backlog,
       COALESCE(EXTRACT(EPOCH FROM now() - min(visible_at) FILTER (WHERE lock_token IS NULL AND visible_at <= now())) * 1000, 0)::bigint AS oldest_ms,
       count(*) FILTER (WHERE lock_token IS NOT NULL)::bigint AS running
FROM worker_queue WHERE namespace = sqlc.arg(namespace) AND task_queue = sqlc.arg(task_queue);

-- name: WorkflowQueueBacklog :one
SELECT count(DISTINCT instance_id)::bigint FROM orchestrator_queue
WHERE namespace = sqlc.arg(namespace) AND task_queue = sqlc.arg(task_queue) AND visible_at <= now();

-- name: TakeUnheldWaitingAttempts :many
-- The attempts nobody holds of an execution's activities with
-- wait_for_cancellation that are being cancelled — every activity of the
-- execution (all_activities) or those named in activity_ids — removed and
-- returned: the caller delivers their ActivityCanceled at once, since no
-- worker will report an outcome. Locked in id order, then deleted.
DELETE FROM worker_queue d
USING (
    SELECT (w).ctid AS tid FROM worker_queue w
    WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = sqlc.arg(instance_id)
      AND w.execution_id = sqlc.arg(execution_id) AND w.lock_token IS NULL
      AND (w.options->>'wait_for_cancellation') = 'true'
      AND (sqlc.arg(all_activities)::boolean OR w.activity_id = ANY(sqlc.arg(activity_ids)::bigint[]))
    ORDER BY w.id
    FOR UPDATE
) v
WHERE d.namespace = sqlc.arg(namespace) AND d.ctid = v.tid
RETURNING d.*;

-- name: DescribePending :one
-- What execution (namespace, instance_id, execution_id) waits for, for
-- describe: its pending activities (the latest attempt row of each: a
-- timed-out attempt still held, cancelled, stays until its worker lets go
-- while its retry waits), running children and timers, each list bounded
-- by max_rows (in id order) with its full count.
-- One statement, one round trip; each part is read by index
-- (worker_queue_activity, instances_parent, orchestrator_queue_instance).
SELECT
  (SELECT count(DISTINCT w.activity_id) FROM worker_queue w
   WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = sqlc.arg(instance_id)
     AND w.execution_id = sqlc.arg(execution_id))::bigint AS activity_count,
  COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.activity_id) FROM (
     SELECT DISTINCT ON (w.activity_id) w.activity_id, w.activity_type, w.task_queue, w.attempt,
            (w.options -> 'retry_policy' ->> 'maximum_attempts')::integer AS maximum_attempts,
            w.scheduled_at, w.visible_at, w.visible_at > now() AS in_backoff, w.started_at,
            w.lock_token IS NOT NULL AS held, w.worker_id, w.last_heartbeat_at, w.heartbeat_details,
            w.cancel_requested, w.cancel_reason, w.last_error
     FROM worker_queue w
     WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = sqlc.arg(instance_id)
       AND w.execution_id = sqlc.arg(execution_id)
     ORDER BY w.activity_id, w.attempt DESC
     LIMIT sqlc.arg(max_rows)) a), '[]')::jsonb AS activities,
  (SELECT count(*) FROM instances c
   WHERE c.namespace = sqlc.arg(namespace) AND c.parent_namespace = sqlc.arg(namespace)
     AND c.parent_instance_id = sqlc.arg(instance_id)
     AND c.parent_execution_id = sqlc.arg(execution_id) AND c.status = 'running')::bigint AS child_count,
  COALESCE((SELECT jsonb_agg(to_jsonb(k) ORDER BY k.parent_child_id) FROM (
     SELECT c.instance_id, c.workflow_type, c.execution_id, c.parent_child_id, c.cancel_requested, c.created_at
     FROM instances c
     WHERE c.namespace = sqlc.arg(namespace) AND c.parent_namespace = sqlc.arg(namespace)
       AND c.parent_instance_id = sqlc.arg(instance_id)
       AND c.parent_execution_id = sqlc.arg(execution_id) AND c.status = 'running'
     ORDER BY c.parent_child_id
     LIMIT sqlc.arg(max_rows)) k), '[]')::jsonb AS children,
  (SELECT count(*) FROM orchestrator_queue q
   WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = sqlc.arg(instance_id)
     AND q.execution_id = sqlc.arg(execution_id) AND q.kind = 'TimerFired')::bigint AS timer_count,
  COALESCE((SELECT jsonb_agg(to_jsonb(m) ORDER BY m.fire_at, m.timer_id) FROM (
     SELECT (q.payload ->> 'timer_id')::bigint AS timer_id, q.visible_at AS fire_at
     FROM orchestrator_queue q
     WHERE q.namespace = sqlc.arg(namespace) AND q.instance_id = sqlc.arg(instance_id)
       AND q.execution_id = sqlc.arg(execution_id) AND q.kind = 'TimerFired'
     ORDER BY q.visible_at
     LIMIT sqlc.arg(max_rows)) m), '[]')::jsonb AS timers;
