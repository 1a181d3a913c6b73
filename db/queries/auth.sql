-- name: CreateNamespace :one
INSERT INTO namespaces (name, description, retention)
VALUES (sqlc.arg(name), sqlc.arg(description), sqlc.narg(retention_ms)::bigint * interval '1 millisecond')
ON CONFLICT (name) DO NOTHING
RETURNING *;

-- name: GetNamespace :one
SELECT * FROM namespaces WHERE name = sqlc.arg(name);

-- name: ListNamespaces :many
SELECT * FROM namespaces ORDER BY name;

-- name: ListNamespaceNames :many
SELECT name FROM namespaces;

-- name: NamespaceHasInstances :one
SELECT EXISTS (SELECT 1 FROM instances WHERE namespace = sqlc.arg(namespace))::boolean AS has;

-- name: LockInstancesForNamespaceDelete :exec
-- A namespace's deletion waits for the transactions writing instances
-- (starts in flight) and holds new ones back until it commits: it sees
-- every start that committed, and a start after it finds the namespace
-- gone (StartInstances).
LOCK TABLE instances IN SHARE MODE;

-- name: NamespaceExists :one
SELECT EXISTS (SELECT 1 FROM namespaces WHERE name = sqlc.arg(name))::boolean AS exists;

-- name: DeleteNamespaceSchedules :exec
-- A namespace's schedules and their actions.
WITH a AS (
    DELETE FROM schedule_actions x WHERE x.namespace = sqlc.arg(namespace)
)
DELETE FROM schedules s WHERE s.namespace = sqlc.arg(namespace);

-- name: DeleteNamespaceSearchAttributes :exec
DELETE FROM search_attributes WHERE namespace = sqlc.arg(namespace);

-- name: DeleteNamespaceWorkers :exec
DELETE FROM workers WHERE namespace = sqlc.arg(namespace);

-- name: DeleteNamespace :execrows
DELETE FROM namespaces WHERE name = sqlc.arg(name);

-- name: CreateAPIKey :one
INSERT INTO api_keys (id, namespace, role, secret_hash, name)
VALUES (sqlc.arg(id), sqlc.narg(namespace), sqlc.arg(role), sqlc.arg(secret_hash), sqlc.arg(name))
RETURNING *;

-- name: GetAPIKey :one
SELECT * FROM api_keys WHERE id = sqlc.arg(id);

-- name: ListAPIKeys :many
-- The keys of a namespace, and the keys of every namespace (NULL), newest
-- first.
SELECT * FROM api_keys
WHERE namespace = sqlc.arg(namespace) OR (sqlc.arg(with_global)::boolean AND namespace IS NULL)
ORDER BY created_at DESC, id
LIMIT 1000;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = now()
WHERE id = sqlc.arg(id) AND (namespace = sqlc.arg(namespace) OR (sqlc.arg(with_global)::boolean AND namespace IS NULL))
  AND revoked_at IS NULL;

-- name: LockNamespace :one
SELECT name FROM namespaces WHERE name = sqlc.arg(name) FOR UPDATE;

-- name: CountValidAPIKeys :one
SELECT count(*) FROM api_keys WHERE revoked_at IS NULL;

-- name: WorkerOwner :one
-- The owner of a worker session ('' when it has none).
SELECT COALESCE(owner, '')::text AS owner FROM workers
WHERE namespace = sqlc.arg(namespace) AND worker_id = sqlc.arg(worker_id);

-- name: UpdateNamespace :one
-- Sets the description and the retention (each only when given; a
-- retention of 0 ms clears it).
UPDATE namespaces SET
    description = COALESCE(sqlc.narg(description)::text, description),
    retention = CASE WHEN sqlc.narg(retention_ms)::bigint IS NULL THEN retention
                     WHEN sqlc.narg(retention_ms)::bigint = 0 THEN NULL
                     ELSE sqlc.narg(retention_ms)::bigint * interval '1 millisecond' END
WHERE name = sqlc.arg(name)
RETURNING *;

-- name: TakeExpiredInstances :many
-- One bounded batch of the retention job in a namespace: at most max_rows
-- closed instances that closed longer ago than its retention (retention_ms),
-- locked (rows another transaction holds are skipped; the next batch
-- takes them). The caller deletes them with the statements below, by
-- namespace and = ANY(ids), so that each finds its rows by key.
SELECT i.namespace, i.instance_id FROM instances i
WHERE i.namespace = sqlc.arg(namespace) AND i.status <> 'running'
  AND i.completed_at < now() - sqlc.arg(retention_ms)::bigint * interval '1 millisecond'
ORDER BY i.completed_at
LIMIT sqlc.arg(max_rows)
FOR UPDATE OF i SKIP LOCKED;

-- name: DeleteInstancesHistory :exec
DELETE FROM history WHERE namespace = sqlc.arg(namespace) AND instance_id = ANY(sqlc.arg(instance_ids)::text[]);

-- name: DeleteInstancesAttempts :exec
DELETE FROM worker_queue WHERE namespace = sqlc.arg(namespace) AND instance_id = ANY(sqlc.arg(instance_ids)::text[]);

-- name: DeleteInstances :exec
DELETE FROM instances WHERE namespace = sqlc.arg(namespace) AND instance_id = ANY(sqlc.arg(instance_ids)::text[]);
