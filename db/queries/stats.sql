-- name: GrownTables :many
-- Of Tether's busy tables, those that more than doubled (plus min_rows)
-- since their statistics were last taken (reltuples -1: never), and that
-- this role may analyze (it owns them, or is a superuser).
SELECT c.relname::text AS table_name
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_stat_user_tables s ON s.relid = c.oid
WHERE c.relname = ANY(sqlc.arg(tables)::text[]) AND c.relnamespace = current_schema()::regnamespace
  AND s.n_live_tup > 2 * GREATEST(c.reltuples, 0) + sqlc.arg(min_rows)::bigint
  AND pg_has_role(c.relowner, 'MEMBER');

-- name: AnalyzeInstances :exec
ANALYZE instances;

-- name: AnalyzeHistory :exec
ANALYZE history;

-- name: AnalyzeOrchestratorQueue :exec
ANALYZE orchestrator_queue;

-- name: AnalyzeWorkerQueue :exec
ANALYZE worker_queue;

-- name: AnalyzeWorkers :exec
ANALYZE workers;
