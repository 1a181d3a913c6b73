-- +goose Up
-- A report (an activity attempt's complete or fail, a turn's ack) whose
-- answer was lost — the server or its database went down after the commit
-- — is sent again by the worker. Its lock token is gone by then; the
-- receipt remembers the answer by token, so that the retry gets the same
-- answer instead of 409 (docs/api.md, "Retried reports"). The sweeper
-- deletes receipts after 15 minutes.
CREATE TABLE report_receipts (
    lock_token uuid PRIMARY KEY,
    namespace  text NOT NULL,
    kind       text NOT NULL,
    answer     jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX report_receipts_created ON report_receipts (created_at);

-- +goose Down
DROP TABLE report_receipts;
