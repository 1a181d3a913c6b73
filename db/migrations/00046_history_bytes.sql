-- +goose Up
-- The size of the current execution's history, in bytes of its events'
-- stored payloads: bounded like its length (--history-bytes-warn,
-- --max-history-bytes). A new column with a constant default is instant.
ALTER TABLE instances ADD COLUMN history_bytes bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE instances DROP COLUMN history_bytes;
