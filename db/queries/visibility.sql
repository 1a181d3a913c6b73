-- name: CreateSearchAttribute :one
-- Registers a search attribute; no row when the name is taken (whatever
-- its type).
INSERT INTO search_attributes (namespace, name, type)
VALUES (sqlc.arg(namespace), sqlc.arg(name), sqlc.arg(type))
ON CONFLICT (namespace, name) DO NOTHING
RETURNING *;

-- name: ListSearchAttributes :many
-- The search attributes of a namespace, by name (at most 1000: the
-- server's registration refuses more).
SELECT * FROM search_attributes WHERE namespace = sqlc.arg(namespace) ORDER BY name LIMIT 1000;

-- name: CountSearchAttributes :one
SELECT count(*) FROM search_attributes WHERE namespace = sqlc.arg(namespace);

-- name: DeleteSearchAttribute :execrows
-- Unregisters a search attribute. The values workflows hold stay in their
-- rows, unsearchable until a attribute of that name is registered again.
DELETE FROM search_attributes WHERE namespace = sqlc.arg(namespace) AND name = sqlc.arg(name);

-- name: UpsertSearchAttributes :execrows
-- A workflow's upsert_search_attributes command: merges the attributes
-- into the instance's (a null value removes the attribute) — unless the
-- merged attributes would total more than max_bytes as JSON text: then
-- nothing changes and no row is counted.
UPDATE instances i
SET search_attributes = m.v
FROM (SELECT NULLIF(jsonb_strip_nulls(COALESCE(x.search_attributes, '{}'::jsonb) || sqlc.arg(attributes)::jsonb), '{}'::jsonb) AS v
      FROM instances x
      WHERE x.namespace = sqlc.arg(namespace) AND x.instance_id = sqlc.arg(instance_id)) m
WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = sqlc.arg(instance_id)
  AND (m.v IS NULL OR octet_length(m.v::text) <= sqlc.arg(max_bytes)::integer);

-- name: UpsertMemo :execrows
-- A workflow's upsert_memo commands: merges the fields into the
-- instance's memo (a null value removes the field; the values are kept as
-- they are, nulls inside them too) — unless the merged memo would total
-- more than max_bytes as JSON text: then nothing changes and no row is
-- counted.
UPDATE instances i
SET memo = m.v
FROM (SELECT NULLIF((COALESCE(x.memo, '{}'::jsonb)
                     - ARRAY(SELECT f.key FROM jsonb_each(sqlc.arg(fields)::jsonb) f WHERE f.value = 'null'::jsonb))
                    || (SELECT COALESCE(jsonb_object_agg(f.key, f.value), '{}'::jsonb)
                        FROM jsonb_each(sqlc.arg(fields)::jsonb) f WHERE f.value <> 'null'::jsonb),
                    '{}'::jsonb) AS v
      FROM instances x
      WHERE x.namespace = sqlc.arg(namespace) AND x.instance_id = sqlc.arg(instance_id)) m
WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = sqlc.arg(instance_id)
  AND (m.v IS NULL OR octet_length(m.v::text) <= sqlc.arg(max_bytes)::integer);

-- name: SetStatementTimeout :exec
-- Bounds each later statement of the transaction to ms milliseconds (a
-- list or count with a query: the list timeout, store.Options.ListTimeout).
SELECT set_config('statement_timeout', sqlc.arg(ms)::bigint::text, true);
