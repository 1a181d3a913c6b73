-- +goose Up
-- A turn's lock on its messages (orchestrator_queue.lock_token) becomes a
-- HOT update: the new row version stays on its page and no index gets an
-- entry. PostgreSQL does that only when no index names a column the update
-- changes, and orchestrator_queue_lock indexed lock_token: every message
-- got a second entry in each of the table's four indexes when its turn
-- locked it — the dequeue index then held two entries per message, both
-- walked by the turn fetch. The statements that find a turn's messages by
-- its token now also name the instance, and read
-- orchestrator_queue_instance (a turn's messages are its instance's).
--
-- fillfactor 50 leaves room on each page for the locked versions of the
-- messages inserted there.
DROP INDEX IF EXISTS orchestrator_queue_lock;
ALTER TABLE orchestrator_queue SET (fillfactor = 50);

-- +goose Down
ALTER TABLE orchestrator_queue RESET (fillfactor);
CREATE INDEX orchestrator_queue_lock ON orchestrator_queue (lock_token) WHERE lock_token IS NOT NULL;
