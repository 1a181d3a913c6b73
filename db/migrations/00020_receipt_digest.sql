-- +goose Up
-- digest: the SHA-256 of what the report said (an activity result, an
-- error, a turn's commands). A report sent again with its lock token gone
-- gets the receipt's answer only when its digest is the receipt's: the
-- same report retried. A different report of the same token (a second
-- completion with another result, a fail after a complete, another turn
-- ack) is refused with 409 duplicate-report (docs/api.md, "Retried
-- reports"). Receipts written before the column have none and keep
-- answering any retry as before.
ALTER TABLE report_receipts ADD COLUMN digest bytea;

-- +goose Down
ALTER TABLE report_receipts DROP COLUMN digest;
