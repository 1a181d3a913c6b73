-- +goose Up
-- Heartbeats rewrite a worker's row once a lease/3. With no index on the
-- columns a heartbeat changes, PostgreSQL updates the row in place on its
-- page (a HOT update: no index entry, a fraction of the WAL); the free
-- space left on each page keeps room for the new row versions. The lease
-- sweep reads the workers table sequentially instead: a few thousand
-- narrow rows once a sweep interval.
--
-- prev_state is the state the last heartbeat found (inactive: that
-- heartbeat resurrected the worker); the heartbeat's UPDATE sets it and
-- returns it, so reading it needs neither a second statement nor a row lock.
DROP INDEX IF EXISTS workers_lease;
ALTER TABLE workers SET (fillfactor = 50);
ALTER TABLE workers ADD COLUMN prev_state text;

-- +goose Down
ALTER TABLE workers DROP COLUMN prev_state;
ALTER TABLE workers RESET (fillfactor);
CREATE INDEX workers_lease ON workers (lease_expires_at) WHERE state = 'active';
