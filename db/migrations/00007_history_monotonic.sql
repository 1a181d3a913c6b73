-- +goose Up
-- History timestamps never go back within an instance: each turn's ack
-- stamps its events no earlier than the instance's last event, which the
-- instance row now carries (the turn's fetch and ack read it with the row
-- they lock anyway, and the ack writes it with the row it updates anyway).
-- No index names it, so the instance's updates stay HOT.
ALTER TABLE instances ADD COLUMN last_event_at timestamptz;

-- +goose Down
ALTER TABLE instances DROP COLUMN last_event_at;
