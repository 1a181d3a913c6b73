-- name: InsertReceipts :exec
-- The answers of a group of reports, keyed by lock token (a report applied
-- twice keeps its first answer), with the digest of what each report said:
-- element k of the arrays is one receipt (unnested side by side).
INSERT INTO report_receipts (lock_token, namespace, kind, answer, digest)
SELECT unnest(sqlc.arg(lock_tokens)::uuid[]), sqlc.arg(namespace)::text, unnest(sqlc.arg(kinds)::text[]),
       unnest(sqlc.arg(answers)::jsonb[]), unnest(sqlc.arg(digests)::bytea[])
ON CONFLICT (namespace, lock_token) DO NOTHING;

-- name: GetReceipt :one
SELECT kind, answer, digest FROM report_receipts
WHERE lock_token = sqlc.arg(lock_token) AND namespace = sqlc.arg(namespace);

-- name: DeleteOldReceipts :execrows
-- The sweeper's, one namespace per statement.
DELETE FROM report_receipts d
WHERE d.namespace = sqlc.arg(namespace) AND d.lock_token IN (
    SELECT r.lock_token FROM report_receipts r
    WHERE r.namespace = sqlc.arg(namespace) AND r.created_at < now() - sqlc.arg(keep_ms)::bigint * interval '1 millisecond'
    ORDER BY r.created_at
    LIMIT sqlc.arg(max_rows)::int
);
