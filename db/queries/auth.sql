-- name: CreateNamespace :one
INSERT INTO namespaces (name, description) VALUES (sqlc.arg(name), sqlc.arg(description))
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
