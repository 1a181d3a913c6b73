-- name: SetQueueLimit :exec
-- Sets the rate limit of a task queue's turns (work 'w') or attempts
-- (work 'a'): rate per second, a burst of burst; a bucket set again keeps
-- its tokens (at most the new burst), a new one starts full.
INSERT INTO task_queue_limits (namespace, task_queue, work, rate, burst, tokens)
VALUES (sqlc.arg(namespace), sqlc.arg(task_queue), sqlc.arg(work), sqlc.arg(rate), sqlc.arg(burst), sqlc.arg(burst))
ON CONFLICT (namespace, task_queue, work) DO UPDATE
SET rate = excluded.rate, burst = excluded.burst,
    -- excluded.refilled_at is now() (the column's default): Citus takes no
    -- stable function in DO UPDATE SET.
    tokens = LEAST(excluded.burst, task_queue_limits.tokens
                   + task_queue_limits.rate * extract(epoch FROM excluded.refilled_at - task_queue_limits.refilled_at)),
    refilled_at = excluded.refilled_at;

-- name: DeleteQueueLimit :exec
-- Removes the rate limit of a task queue's turns or attempts.
DELETE FROM task_queue_limits
WHERE namespace = sqlc.arg(namespace) AND task_queue = sqlc.arg(task_queue) AND work = sqlc.arg(work);

-- name: QueueLimits :many
-- The rate limits of a task queue.
SELECT work, rate FROM task_queue_limits
WHERE namespace = sqlc.arg(namespace) AND task_queue = sqlc.arg(task_queue);

-- name: QueueBacklogByPriority :many
-- The visible work waiting on a task queue by kind ('w': messages of
-- turns, 'a': unlocked attempts) and priority.
SELECT 'w'::text AS work, q.priority, count(*) AS n
FROM orchestrator_queue q
WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = sqlc.arg(task_queue) AND q.visible_at <= now()
  AND q.lock_token IS NULL
GROUP BY q.priority
UNION ALL
SELECT 'a'::text, w.priority, count(*)
FROM worker_queue w
WHERE w.namespace = sqlc.arg(namespace) AND w.task_queue = sqlc.arg(task_queue) AND w.visible_at <= now()
  AND w.lock_token IS NULL
GROUP BY w.priority
ORDER BY 1 DESC, 2;

-- name: FlowStates :many
-- What the fetches of the task queues need to know of flow control (the
-- store's flowStates, refreshed in the background): for each queue and
-- work (task_queues[k], works[k]: 'w' turns, 'a' attempts), whether it has
-- a rate limit (a task_queue_limits row), a rate limit per fairness key
-- (a fairness_key_limits row) and whether flow-controlled work
-- of it waits (the flow index of its queue has a row: the turn fetch's and
-- the attempt fetch's own gate). One key probe per queue and table.
SELECT k.task_queue::text AS task_queue, k.work::text AS work,
       EXISTS (SELECT 1 FROM task_queue_limits l
               WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = k.task_queue AND l.work = k.work) AS limited,
       EXISTS (SELECT 1 FROM fairness_key_limits kl
               WHERE kl.namespace = sqlc.arg(namespace) AND kl.task_queue = k.task_queue AND kl.work = k.work) AS keyed,
       CASE WHEN k.work = 'w'
            THEN EXISTS (SELECT 1 FROM orchestrator_queue q
                         WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = k.task_queue AND q.pass IS NOT NULL)
            ELSE EXISTS (SELECT 1 FROM worker_queue w
                         WHERE w.namespace = sqlc.arg(namespace) AND w.task_queue = k.task_queue
                           AND w.pass IS NOT NULL AND w.lock_token IS NULL)
       END::boolean AS flow
FROM (SELECT (sqlc.arg(task_queues)::text[])[i] AS task_queue, (sqlc.arg(works)::text[])[i] AS work
      FROM generate_subscripts(sqlc.arg(task_queues)::text[], 1) AS i) k;

-- name: SetFairnessKeyLimit :exec
-- Sets the rate limit of each fairness key of a task queue's turns (work
-- 'w') or attempts (work 'a'): rate per second, a burst of burst.
INSERT INTO fairness_key_limits (namespace, task_queue, work, rate, burst)
VALUES (sqlc.arg(namespace), sqlc.arg(task_queue), sqlc.arg(work), sqlc.arg(rate), sqlc.arg(burst))
ON CONFLICT (namespace, task_queue, work) DO UPDATE
SET rate = excluded.rate, burst = excluded.burst;

-- name: DeleteFairnessKeyLimit :execrows
-- Removes the rate limit per fairness key of a task queue's turns or
-- attempts (its keys' buckets go next: DeleteFairnessKeyBuckets, after
-- the limit's row, in the fetches' lock order).
DELETE FROM fairness_key_limits l
WHERE l.namespace = sqlc.arg(namespace) AND l.task_queue = sqlc.arg(task_queue) AND l.work = sqlc.arg(work);

-- name: DeleteFairnessKeyBuckets :exec
-- Removes the buckets of the fairness keys of a task queue's turns or
-- attempts.
DELETE FROM fairness_key_buckets b
WHERE b.namespace = sqlc.arg(namespace) AND b.task_queue = sqlc.arg(task_queue) AND b.work = sqlc.arg(work);

-- name: FairnessKeyLimits :many
-- The rates per fairness key of a task queue.
SELECT work, rate FROM fairness_key_limits
WHERE namespace = sqlc.arg(namespace) AND task_queue = sqlc.arg(task_queue);
