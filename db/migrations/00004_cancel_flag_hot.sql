-- +goose Up
-- Flagging an attempt cancelled must be a HOT update: the new row version
-- stays on the old one's page and no index gets an entry. PostgreSQL does
-- that only when the update changes no column that an index names, in its
-- key or in its predicate. Three deadline indexes had "NOT cancel_requested"
-- in their predicates, worker_queue_cancelled_unlocked was keyed on
-- cancel_requested_at, and the flag also cleared the StartToClose and
-- Heartbeat deadlines: every flag of a held attempt inserted an entry into
-- each of the row's indexes (primary key, activity, lock token, worker,
-- lock expiry: 50 000 entries for a workflow holding 10 000 activities).
--
-- The cancel flag now writes only cancel_requested, cancel_reason,
-- cancel_requested_at and, for an attempt nobody holds, cancelled_unheld_at;
-- no index names the first three, and the last stays NULL on a held attempt.
--
-- worker_queue_deadline replaces worker_queue_s2c, worker_queue_st2c and
-- worker_queue_heartbeat: one entry per attempt, keyed on the earliest of
-- its running deadlines (LEAST skips NULLs; an attempt with none is not in
-- the index). The sweeper's deadline statements find what is due through it
-- and skip cancelled attempts on the heap; a cancelled attempt whose
-- deadline passes has its deadlines cleared by the sweep, once, so that it
-- leaves the index (the flag itself no longer clears them).
--
-- cancelled_unheld_at is when an attempt nobody held was flagged (a select
-- loser not yet fetched); the fetch clears it. It replaces
-- worker_queue_cancelled_unlocked, which the sweeper used to drop such
-- attempts after their retention. Its index also names lock_token IS NULL
-- (lock_token is indexed already, so the flag stays HOT): the drop's
-- predicate implies that of worker_queue_dequeue as well, and on a table
-- without statistics the planner would otherwise walk the whole dequeue
-- index for it.
--
-- A HOT update also needs room for the new row version on the old one's
-- page, and a mass cancel writes a new version of every attempt of a page
-- in one statement (the old versions can be pruned only after it commits).
-- An attempt grows twice after its insert: the fetch adds the lock token,
-- worker id, lock and start times, and the flag the reason and its time.
-- The fetch's new version stays on the page when it fits, and the page's
-- live versions must then fill at most about half of it. For the smallest
-- attempts (no input, a 17-byte worker id; 10 000 held attempts of one
-- workflow, measured) that takes fillfactor 35: 10 000 of the 10 000 flags
-- are HOT, against 8 422 at 40, 8 160 at 50 and 80 at the default 100
-- (larger attempts grow less in proportion, and get there at higher
-- fillfactors). The rows are transient: a backlog takes about three times
-- the pages it would at 100.
ALTER TABLE worker_queue ADD COLUMN cancelled_unheld_at timestamptz;
UPDATE worker_queue SET cancelled_unheld_at = cancel_requested_at
WHERE cancel_requested AND lock_token IS NULL;
DROP INDEX IF EXISTS worker_queue_s2c;
DROP INDEX IF EXISTS worker_queue_st2c;
DROP INDEX IF EXISTS worker_queue_heartbeat;
DROP INDEX IF EXISTS worker_queue_cancelled_unlocked;
CREATE INDEX worker_queue_deadline ON worker_queue
    ((LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)))
    WHERE LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) IS NOT NULL;
CREATE INDEX worker_queue_cancelled_unheld ON worker_queue (cancelled_unheld_at)
    WHERE cancelled_unheld_at IS NOT NULL AND lock_token IS NULL;
ALTER TABLE worker_queue SET (fillfactor = 35);

-- +goose Down
ALTER TABLE worker_queue RESET (fillfactor);
DROP INDEX IF EXISTS worker_queue_cancelled_unheld;
DROP INDEX IF EXISTS worker_queue_deadline;
ALTER TABLE worker_queue DROP COLUMN cancelled_unheld_at;
CREATE INDEX worker_queue_s2c ON worker_queue (schedule_to_close_deadline)
    WHERE schedule_to_close_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_st2c ON worker_queue (start_to_close_deadline)
    WHERE start_to_close_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_heartbeat ON worker_queue (heartbeat_deadline)
    WHERE heartbeat_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_cancelled_unlocked ON worker_queue (cancel_requested_at)
    WHERE cancel_requested AND lock_token IS NULL;
