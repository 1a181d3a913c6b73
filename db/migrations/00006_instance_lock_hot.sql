-- +goose Up
-- Locking and unlocking an instance become HOT updates: the new row version
-- stays on its page and no index gets an entry. PostgreSQL does that only
-- when no index names a column the update changes, and
-- instances_lock_token indexed lock_token, which every turn's lock and
-- release change: each of an instance's updates (about four per
-- 1-activity workflow) wrote an entry into every index of the table. The
-- ack now finds its instance by primary key: the turn's token carries the
-- instance id ("<lock uuid>.<base64url instance id>", see
-- server/store/turntoken.go).
--
-- fillfactor 80 leaves room on each page for the versions of the updates
-- that follow an instance's insert (measured in docs/benchmarks.md).
DROP INDEX IF EXISTS instances_lock_token;
ALTER TABLE instances SET (fillfactor = 80);

-- +goose Down
ALTER TABLE instances RESET (fillfactor);
CREATE UNIQUE INDEX instances_lock_token ON instances (lock_token) WHERE lock_token IS NOT NULL;
