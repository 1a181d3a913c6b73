-- name: InsertQuery :one
-- Inserts a query of an execution of the instance (execution_id 0: the
-- current one) and returns its task queue, whose query pollers the caller
-- wakes. No row comes back when the instance or the execution does not
-- exist.
INSERT INTO queries AS q (query_id, namespace, instance_id, execution_id, task_queue, query_name, input, header)
SELECT sqlc.arg(query_id), i.namespace, i.instance_id,
       CASE WHEN sqlc.arg(execution_id)::bigint > 0 THEN sqlc.arg(execution_id)::bigint ELSE i.execution_id END,
       i.task_queue, sqlc.arg(query_name), sqlc.arg(input), sqlc.narg(header)::jsonb
FROM instances i
WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = sqlc.arg(instance_id)
  AND sqlc.arg(execution_id)::bigint <= i.execution_id
RETURNING q.task_queue;

-- name: ClaimQuery :one
-- Claims the oldest unanswered query of a task queue that nobody holds
-- (or whose claim ran out: its worker went away) for worker_id.
UPDATE queries q SET claimed_by = sqlc.arg(worker_id), claimed_until = now() + sqlc.arg(claim_ms)::bigint * interval '1 millisecond'
WHERE q.namespace = sqlc.arg(namespace) AND q.query_id = (
    SELECT c.query_id FROM queries c
    WHERE c.namespace = sqlc.arg(namespace) AND c.task_queue = sqlc.arg(task_queue) AND NOT c.answered
      AND (c.claimed_until IS NULL OR c.claimed_until < now())
    ORDER BY c.created_at
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING q.query_id, q.instance_id, q.execution_id, q.task_queue, q.query_name, q.input, q.header;

-- name: AnswerQuery :one
-- Records a claimed query's answer (the caller wakes its waiting request).
-- No row comes back when the query is gone or already answered.
UPDATE queries SET answered = true, result = sqlc.arg(result), error = sqlc.arg(error)
WHERE namespace = sqlc.arg(namespace) AND query_id = sqlc.arg(query_id) AND NOT answered
RETURNING query_id;

-- name: GetQueryAnswer :one
SELECT answered, result, error FROM queries
WHERE namespace = sqlc.arg(namespace) AND query_id = sqlc.arg(query_id);

-- name: DeleteQuery :exec
DELETE FROM queries WHERE namespace = sqlc.arg(namespace) AND query_id = sqlc.arg(query_id);

-- name: DeleteOldQueries :execrows
-- The sweeper's: queries whose request went away without deleting them
-- (one namespace per statement).
DELETE FROM queries WHERE namespace = sqlc.arg(namespace) AND created_at < now() - sqlc.arg(age_ms)::bigint * interval '1 millisecond';
