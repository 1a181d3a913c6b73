-- +goose Up
-- Rate limits per fairness key (docs/api.md, "Flow control"): at most rate
-- dispatches per second of each fairness key's workflow turns (work 'w')
-- or activity attempts (work 'a') on a task queue, across every server
-- replica. fairness_key_limits holds the rate every key of the queue gets
-- (Temporal's fairness_key_rate_limit_default); fairness_key_buckets one
-- token bucket per key that was dispatched from, which the fetch itself
-- reads (locked) and spends: tokens as of refilled_at, refilled at the
-- limit's rate per second up to its burst (rate and burst copied from the
-- limit at each spend). A key without a bucket row has a full bucket.
-- Work without a fairness key is not bound by these limits.
CREATE TABLE fairness_key_limits (
    namespace  text             NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    task_queue text             NOT NULL,
    work       text             NOT NULL CHECK (work IN ('w', 'a')),
    rate       double precision NOT NULL CHECK (rate > 0),
    burst      double precision NOT NULL CHECK (burst >= 1),
    PRIMARY KEY (namespace, task_queue, work)
);
CREATE TABLE fairness_key_buckets (
    namespace    text             NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    task_queue   text             NOT NULL,
    work         text             NOT NULL CHECK (work IN ('w', 'a')),
    fairness_key text             NOT NULL,
    rate         double precision NOT NULL,
    burst        double precision NOT NULL,
    tokens       double precision NOT NULL,
    refilled_at  timestamptz      NOT NULL,
    PRIMARY KEY (namespace, task_queue, work, fairness_key)
);

-- +goose Down
DROP TABLE fairness_key_buckets;
DROP TABLE fairness_key_limits;
