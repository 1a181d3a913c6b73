-- name: CreateBatch :execrows
-- A new batch job; no row is written when the id is taken.
INSERT INTO batches (namespace, batch_id, operation, query, reason, signal_name, signal_input, force,
                     rate_per_second, state, total, identity, reset_type, reset_build_id, reset_reapply_signals)
VALUES (sqlc.arg(namespace), sqlc.arg(batch_id), sqlc.arg(operation), sqlc.arg(query), sqlc.arg(reason),
        sqlc.arg(signal_name), sqlc.narg(signal_input), sqlc.arg(force), sqlc.arg(rate_per_second),
        sqlc.arg(state), sqlc.arg(total), sqlc.arg(identity), sqlc.arg(reset_type), sqlc.arg(reset_build_id),
        sqlc.arg(reset_reapply_signals))
ON CONFLICT (namespace, batch_id) DO NOTHING;

-- name: GetBatch :one
SELECT * FROM batches WHERE namespace = sqlc.arg(namespace) AND batch_id = sqlc.arg(batch_id);

-- name: LockBatch :one
-- A batch job, locked for the transaction: each step of the job and each
-- change of its state take this lock first.
SELECT * FROM batches WHERE namespace = sqlc.arg(namespace) AND batch_id = sqlc.arg(batch_id)
FOR UPDATE;

-- name: ListBatches :many
-- A page of a namespace's batch jobs, newest first, after the page token's
-- (created_at, batch_id).
SELECT * FROM batches
WHERE namespace = sqlc.arg(namespace)
  AND (sqlc.arg(first)::boolean OR (created_at, batch_id) < (sqlc.arg(after_at)::timestamptz, sqlc.arg(after_id)::text))
ORDER BY created_at DESC, batch_id DESC
LIMIT sqlc.arg(max_rows);

-- name: ClaimBatch :one
-- The batch service's claim: the oldest job in the running state whose
-- lease is free or expired, that no other transaction holds (another
-- replica skips it), leased to owner. One namespace per statement.
UPDATE batches b
SET owner = sqlc.arg(owner), lease_until = now() + sqlc.arg(lease_ms)::bigint * interval '1 millisecond'
FROM (SELECT c.batch_id FROM batches c
      WHERE c.namespace = sqlc.arg(namespace) AND c.state = sqlc.arg(running_state) AND (c.lease_until IS NULL OR c.lease_until < now())
      ORDER BY c.created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED) claim
WHERE b.namespace = sqlc.arg(namespace) AND b.batch_id = claim.batch_id
RETURNING b.*;

-- name: AdvanceBatch :exec
-- One instance handled: the cursor moves to it, done or failed counts it
-- (a failure is kept in failures while there are fewer than max_failures),
-- and the lease is renewed.
UPDATE batches
SET after_id = sqlc.arg(after_id), done = done + sqlc.arg(done_delta), failed = failed + sqlc.arg(failed_delta),
    failures = CASE WHEN sqlc.narg(failure)::jsonb IS NOT NULL AND jsonb_array_length(failures) < sqlc.arg(max_failures)::int
                    THEN failures || sqlc.narg(failure)::jsonb ELSE failures END,
    lease_until = now() + sqlc.arg(lease_ms)::bigint * interval '1 millisecond',
    updated_at = now()
WHERE namespace = sqlc.arg(namespace) AND batch_id = sqlc.arg(batch_id);

-- name: SetBatchState :one
-- A change of state (pause, resume, cancel, or the end of the job); a job
-- that is no longer running has no owner. finished_at is set when the new
-- state is final.
UPDATE batches
SET state = sqlc.arg(state), error = sqlc.arg(error), updated_at = now(), owner = NULL, lease_until = NULL,
    finished_at = tether_add(now(), CASE WHEN sqlc.arg(final)::boolean THEN interval '0' END)
WHERE namespace = sqlc.arg(namespace) AND batch_id = sqlc.arg(batch_id)
RETURNING *;

-- name: ReleaseBatch :exec
-- The owner stops running a job it still holds (the replica shuts down):
-- another may claim it at once.
UPDATE batches SET owner = NULL, lease_until = NULL
WHERE namespace = sqlc.arg(namespace) AND batch_id = sqlc.arg(batch_id) AND owner = sqlc.arg(owner);
