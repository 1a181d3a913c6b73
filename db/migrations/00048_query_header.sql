-- +goose Up
-- The header a query carries (api.Header), handed to the worker with the
-- query; NULL when the query has none. Workflow starts, signals, updates
-- and activities keep theirs in the JSON of the event or options they
-- travel with.
ALTER TABLE queries ADD COLUMN header jsonb;

-- +goose Down
ALTER TABLE queries DROP COLUMN header;
