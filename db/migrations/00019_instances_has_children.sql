-- +goose Up
-- has_children: a turn of the instance started a child workflow (set by
-- the ack that starts it, FinishTurns; never cleared). The ack of a turn
-- that closes a workflow applies its parent close policy
-- (ApplyClosePolicy) only when the flag is set: for the workflows that
-- never had a child — nearly all of them — that statement and its round
-- trip are gone from the closing ack (docs/benchmarks.md, session 7). No
-- index names the column, so the flag keeps FinishTurns a HOT update.
ALTER TABLE instances ADD COLUMN has_children boolean NOT NULL DEFAULT false;
UPDATE instances p SET has_children = true
WHERE EXISTS (SELECT 1 FROM instances c
              WHERE c.parent_namespace = p.namespace AND c.parent_instance_id = p.instance_id);

-- +goose Down
ALTER TABLE instances DROP COLUMN has_children;
