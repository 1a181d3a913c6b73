-- name: MarkAttemptPending :one
-- The activity returned ErrResultPending: the attempt stays held (its lock
-- token completes it) but leaves its worker, whose lease and renewals no
-- longer concern it; its lock lasts until a minute past its StartToClose
-- or ScheduleToClose deadline (the timeouts still flag it), or for ever
-- when it has neither: the year 9999, a time every reader can hold (an
-- 'infinity' lock made the attempt unreadable, so never completable).
-- Heartbeats and the cancel flag work as before.
UPDATE worker_queue
SET worker_id = NULL,
    locked_until = COALESCE(tether_add(LEAST(start_to_close_deadline, schedule_to_close_deadline), interval '1 minute'),
                            '9999-01-01 00:00:00+00'::timestamptz)
WHERE lock_token = sqlc.arg(lock_token) AND namespace = sqlc.arg(namespace) AND locked_until > now() - interval '1 day'
RETURNING id;

-- name: HeldAttemptToken :one
-- The lock token of the held attempt of an activity (by workflow id,
-- execution — 0: the current one — and activity id), for completion by id.
SELECT w.lock_token::uuid AS lock_token FROM worker_queue w
WHERE w.namespace = sqlc.arg(namespace) AND w.instance_id = sqlc.arg(instance_id) AND w.activity_id = sqlc.arg(activity_id)
  AND w.lock_token IS NOT NULL
  AND w.execution_id = COALESCE(NULLIF(sqlc.arg(execution_id)::bigint, 0),
                                (SELECT i.execution_id FROM instances i WHERE i.namespace = sqlc.arg(namespace) AND i.instance_id = sqlc.arg(instance_id)))
ORDER BY w.attempt DESC
LIMIT 1;
