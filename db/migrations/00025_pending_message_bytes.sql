-- +goose Up
-- The size in bytes, as sent, of a message a client or another workflow
-- added to an instance (a signal, an update): the pending-message bound
-- (store.Options.PendingMessageBytes) sums it at write time. Messages the
-- server makes itself (starts, results, timers) leave it 0. Adding a column
-- with a constant default rewrites nothing.
ALTER TABLE orchestrator_queue ADD COLUMN payload_bytes integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE orchestrator_queue DROP COLUMN payload_bytes;
