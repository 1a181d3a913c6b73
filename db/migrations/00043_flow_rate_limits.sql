-- +goose Up
-- Rate limits of task queues (docs/api.md, "Flow control"): at most rate
-- dispatches per second of the queue's workflow turns (work 'w') or
-- activity attempts (work 'a'), across every server replica. The row is a
-- token bucket that the fetch itself reads (locked) and spends: tokens as
-- of refilled_at, refilled at rate per second up to burst. A queue without
-- a row is not limited.
CREATE TABLE task_queue_limits (
    namespace   text             NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    task_queue  text             NOT NULL,
    work        text             NOT NULL CHECK (work IN ('w', 'a')),
    rate        double precision NOT NULL CHECK (rate > 0),
    burst       double precision NOT NULL CHECK (burst >= 1),
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, task_queue, work)
);

-- +goose Down
DROP TABLE task_queue_limits;
