-- name: TaskQueueBacklog :many
-- The backlog of every task queue, for the metrics gauges: one set-based
-- read every few seconds (server.BacklogGauge), never per request. kind
-- 'workflow': the workflows with a message due that no turn holds (their
-- oldest message's wait); kind 'activity': the attempts due that nobody
-- holds (the dequeue index covers exactly those rows).
SELECT 'workflow'::text AS kind, namespace, task_queue,
       count(DISTINCT instance_id)::bigint AS backlog,
       (EXTRACT(EPOCH FROM now() - min(visible_at)) * 1000)::bigint AS oldest_ms
FROM orchestrator_queue
WHERE lock_token IS NULL AND visible_at <= now()
GROUP BY namespace, task_queue
UNION ALL
SELECT 'activity'::text AS kind, namespace, task_queue,
       count(*)::bigint AS backlog,
       (EXTRACT(EPOCH FROM now() - min(visible_at)) * 1000)::bigint AS oldest_ms
FROM worker_queue
WHERE lock_token IS NULL AND visible_at <= now()
GROUP BY namespace, task_queue;
