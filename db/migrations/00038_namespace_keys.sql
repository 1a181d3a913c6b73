-- +goose Up
-- Every primary key and unique index holds the namespace, so that the
-- tables can be distributed by namespace (Citus: a unique index of a
-- distributed table must contain its distribution column; see
-- docs/architecture.md, "Distributed by namespace"); ON CONFLICT targets
-- follow (InsertReceipts). Every statement names the namespace next to
-- the id or token, so that each lookup stays one index probe.
--
-- The keys of the two queues are (id, namespace), not (namespace, id):
-- with the namespace first, "namespace = $1" alone became an index
-- condition of the key, and on a fresh database (empty tables, every path
-- costing the same) the planner took the key over the index a statement
-- is written for (an eager turn's probe of its outstanding activities,
-- the lost workers' attempts), reading the whole namespace until the next
-- ANALYZE. The lock-token, receipt and query keys lead with the
-- namespace: every lookup names both.
ALTER TABLE orchestrator_queue DROP CONSTRAINT orchestrator_queue_pkey;
ALTER TABLE orchestrator_queue ADD CONSTRAINT orchestrator_queue_pkey PRIMARY KEY (id, namespace);

ALTER TABLE worker_queue DROP CONSTRAINT worker_queue_pkey;
ALTER TABLE worker_queue ADD CONSTRAINT worker_queue_pkey PRIMARY KEY (id, namespace);
DROP INDEX worker_queue_lock_token;
CREATE UNIQUE INDEX worker_queue_lock_token ON worker_queue (namespace, lock_token) WHERE lock_token IS NOT NULL;

ALTER TABLE report_receipts DROP CONSTRAINT report_receipts_pkey;
ALTER TABLE report_receipts ADD CONSTRAINT report_receipts_pkey PRIMARY KEY (namespace, lock_token);

ALTER TABLE queries DROP CONSTRAINT queries_pkey;
ALTER TABLE queries ADD CONSTRAINT queries_pkey PRIMARY KEY (namespace, query_id);

-- The sweeper works namespace by namespace (each statement that claims
-- rows names one): the indexes its deadline and lost-worker statements
-- read lead with the namespace, so that a namespace's sweep reads its own
-- due rows only. The namespace never changes, so that the updates that
-- were HOT stay so.
DROP INDEX worker_queue_deadline;
CREATE INDEX worker_queue_deadline ON worker_queue
    (namespace, (LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)))
    WHERE LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) IS NOT NULL;
DROP INDEX worker_queue_cancelled_unheld;
CREATE INDEX worker_queue_cancelled_unheld ON worker_queue (namespace, cancelled_unheld_at)
    WHERE cancelled_unheld_at IS NOT NULL AND lock_token IS NULL;
DROP INDEX worker_queue_worker;
CREATE INDEX worker_queue_worker ON worker_queue (namespace, worker_id) WHERE worker_id IS NOT NULL;

-- +goose Down
DROP INDEX worker_queue_worker;
CREATE INDEX worker_queue_worker ON worker_queue (worker_id) WHERE worker_id IS NOT NULL;
DROP INDEX worker_queue_cancelled_unheld;
CREATE INDEX worker_queue_cancelled_unheld ON worker_queue (cancelled_unheld_at)
    WHERE cancelled_unheld_at IS NOT NULL AND lock_token IS NULL;
DROP INDEX worker_queue_deadline;
CREATE INDEX worker_queue_deadline ON worker_queue
    ((LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline)))
    WHERE LEAST(schedule_to_close_deadline, start_to_close_deadline, heartbeat_deadline) IS NOT NULL;

ALTER TABLE queries DROP CONSTRAINT queries_pkey;
ALTER TABLE queries ADD CONSTRAINT queries_pkey PRIMARY KEY (query_id);

ALTER TABLE report_receipts DROP CONSTRAINT report_receipts_pkey;
ALTER TABLE report_receipts ADD CONSTRAINT report_receipts_pkey PRIMARY KEY (lock_token);

DROP INDEX worker_queue_lock_token;
CREATE UNIQUE INDEX worker_queue_lock_token ON worker_queue (lock_token) WHERE lock_token IS NOT NULL;
ALTER TABLE worker_queue DROP CONSTRAINT worker_queue_pkey;
ALTER TABLE worker_queue ADD CONSTRAINT worker_queue_pkey PRIMARY KEY (id);

ALTER TABLE orchestrator_queue DROP CONSTRAINT orchestrator_queue_pkey;
ALTER TABLE orchestrator_queue ADD CONSTRAINT orchestrator_queue_pkey PRIMARY KEY (id);
