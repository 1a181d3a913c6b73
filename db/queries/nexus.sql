-- name: CreateNexusEndpoint :one
-- Stores a new Nexus endpoint; no row when the name is taken.
INSERT INTO nexus_endpoints (name, target_namespace, target_task_queue, description)
VALUES (sqlc.arg(name), sqlc.arg(target_namespace), sqlc.arg(target_task_queue), sqlc.arg(description))
ON CONFLICT (name) DO NOTHING
RETURNING *;

-- name: GetNexusEndpoint :one
SELECT * FROM nexus_endpoints WHERE name = sqlc.arg(name);

-- name: ListNexusEndpoints :many
SELECT * FROM nexus_endpoints ORDER BY name;

-- name: DeleteNexusEndpoint :execrows
DELETE FROM nexus_endpoints WHERE name = sqlc.arg(name);
