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
