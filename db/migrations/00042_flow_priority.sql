-- +goose Up
-- Flow control on task queues (docs/api.md, "Flow control"): priority keys
-- and fairness keys with weights.
--
-- A message (orchestrator_queue) or an attempt (worker_queue) that uses
-- flow control — a priority other than the default, or a fairness key —
-- has a pass: its place in the virtual time of its task queue, given at
-- enqueue by stride scheduling (each fairness key's clock, flow_keys, moves
-- 1 ms / weight per task; a key that was idle starts at the queue's
-- current virtual time). A fetch orders the queue's visible work by
-- (priority, pass), where work without flow control is priority 3 with its
-- visible_at as its pass. Work without flow control has no pass and stays
-- out of the flow indexes, which are empty while flow control is unused.
ALTER TABLE instances ADD COLUMN priority jsonb;
ALTER TABLE orchestrator_queue ADD COLUMN priority smallint NOT NULL DEFAULT 3,
                               ADD COLUMN pass timestamptz;
ALTER TABLE worker_queue ADD COLUMN priority smallint NOT NULL DEFAULT 3,
                         ADD COLUMN pass timestamptz;
CREATE INDEX orchestrator_queue_flow ON orchestrator_queue (namespace, task_queue, priority, pass)
    WHERE pass IS NOT NULL;
CREATE INDEX worker_queue_flow ON worker_queue (namespace, task_queue, priority, pass, id)
    WHERE pass IS NOT NULL AND lock_token IS NULL;

-- One row per fairness key in use on a task queue (kind 'w': workflow
-- turns, 'a': activity attempts): pass is the key's clock, the pass of
-- its last task; step is what the last enqueue added to it.
CREATE TABLE flow_keys (
    namespace    text        NOT NULL,
    task_queue   text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('w', 'a')),
    fairness_key text        NOT NULL,
    pass         timestamptz NOT NULL,
    step         interval    NOT NULL,
    PRIMARY KEY (namespace, task_queue, kind, fairness_key)
);

-- +goose Down
DROP TABLE flow_keys;
DROP INDEX worker_queue_flow;
DROP INDEX orchestrator_queue_flow;
ALTER TABLE worker_queue DROP COLUMN pass, DROP COLUMN priority;
ALTER TABLE orchestrator_queue DROP COLUMN pass, DROP COLUMN priority;
ALTER TABLE instances DROP COLUMN priority;
