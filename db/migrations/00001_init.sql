-- +goose Up
-- Tether's schema. Every table carries a namespace; the namespace "default"
-- always exists. See docs/architecture.md for what each table holds.

CREATE TABLE namespaces (
    name        text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO namespaces (name) VALUES ('default');

-- One row per workflow instance. The instance lock (lock_token, locked_until)
-- is held by the worker running a workflow turn.
CREATE TABLE instances (
    namespace          text        NOT NULL,
    instance_id        text        NOT NULL,
    workflow_type      text        NOT NULL,
    task_queue         text        NOT NULL,
    status             text        NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running','completed','failed','canceled','terminated')),
    execution_id       bigint      NOT NULL DEFAULT 1,
    input              jsonb,
    result             jsonb,
    error              jsonb,
    -- next event id, activity id and timer id of the current execution
    next_event_id      bigint      NOT NULL DEFAULT 1,
    next_activity_id   bigint      NOT NULL DEFAULT 1,
    next_timer_id      bigint      NOT NULL DEFAULT 1,
    cancel_requested   boolean     NOT NULL DEFAULT false,
    cancel_reason      text,
    execution_timeout  interval,
    execution_deadline timestamptz,
    lock_token         uuid,
    locked_until       timestamptz,
    locked_by          text,
    -- the worker that acknowledged the last turn: it is expected to hold
    -- the execution's state, so its next turn carries no old history
    sticky_worker_id   text,
    task_failures      integer     NOT NULL DEFAULT 0,
    last_task_error    jsonb,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    completed_at       timestamptz,
    PRIMARY KEY (namespace, instance_id)
);
CREATE UNIQUE INDEX instances_lock_token ON instances (lock_token) WHERE lock_token IS NOT NULL;
CREATE INDEX instances_list ON instances (namespace, created_at DESC, instance_id DESC);
CREATE INDEX instances_execution_deadline ON instances (execution_deadline)
    WHERE status = 'running' AND execution_deadline IS NOT NULL;

-- Append-only history, per execution. activity_id / timer_id are copied out
-- of the payload so that turns can look them up by index.
CREATE TABLE history (
    namespace     text        NOT NULL,
    instance_id   text        NOT NULL,
    execution_id  bigint      NOT NULL,
    event_id      bigint      NOT NULL,
    kind          text        NOT NULL,
    activity_id   bigint,
    timer_id      bigint,
    payload       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, instance_id, execution_id, event_id)
);
CREATE INDEX history_activity ON history (namespace, instance_id, execution_id, activity_id)
    WHERE activity_id IS NOT NULL;

-- Messages to a workflow instance: start, activity results, timers, signals,
-- cancel requests. A timer is a message whose visible_at lies in the future.
-- execution_id NULL means "whatever execution is current" (signals, cancel).
-- task_queue is the instance's workflow task queue, copied so that a poll can
-- find work by index. lock_token marks the messages handed to a turn.
CREATE TABLE orchestrator_queue (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace     text        NOT NULL,
    instance_id   text        NOT NULL,
    execution_id  bigint,
    task_queue    text        NOT NULL,
    kind          text        NOT NULL,
    payload       jsonb       NOT NULL DEFAULT '{}',
    visible_at    timestamptz NOT NULL DEFAULT now(),
    lock_token    uuid,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orchestrator_queue_dequeue ON orchestrator_queue (namespace, task_queue, visible_at);
CREATE INDEX orchestrator_queue_instance ON orchestrator_queue (namespace, instance_id, visible_at);
CREATE INDEX orchestrator_queue_lock ON orchestrator_queue (lock_token) WHERE lock_token IS NOT NULL;

-- One row per activity attempt. The identity columns (instance_id,
-- execution_id, activity_id) let a turn flag cancellation without reading
-- payloads; worker_id is the binding written at fetch.
CREATE TABLE worker_queue (
    id                          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace                   text        NOT NULL,
    task_queue                  text        NOT NULL,
    instance_id                 text        NOT NULL,
    execution_id                bigint      NOT NULL,
    activity_id                 bigint      NOT NULL,
    attempt                     integer     NOT NULL DEFAULT 1,
    activity_type               text        NOT NULL,
    workflow_type               text        NOT NULL,
    workflow_task_queue         text        NOT NULL,
    input                       jsonb,
    options                     jsonb       NOT NULL DEFAULT '{}',
    -- per-attempt timeouts in milliseconds (0 = none), applied at fetch
    start_to_close_ms           bigint      NOT NULL DEFAULT 0,
    heartbeat_timeout_ms        bigint      NOT NULL DEFAULT 0,
    scheduled_at                timestamptz NOT NULL DEFAULT now(),
    visible_at                  timestamptz NOT NULL DEFAULT now(),
    schedule_to_start_deadline  timestamptz,
    schedule_to_close_deadline  timestamptz,
    start_to_close_deadline     timestamptz,
    heartbeat_deadline          timestamptz,
    started_at                  timestamptz,
    lock_token                  uuid,
    locked_until                timestamptz,
    worker_id                   text,
    delivery_count              integer     NOT NULL DEFAULT 0,
    heartbeat_details           jsonb,
    last_heartbeat_at           timestamptz,
    cancel_requested            boolean     NOT NULL DEFAULT false,
    cancel_reason               text,
    cancel_requested_at         timestamptz,
    last_error                  jsonb
);
-- The dequeue index covers only rows nobody holds.
CREATE INDEX worker_queue_dequeue ON worker_queue (namespace, task_queue, visible_at, id)
    WHERE lock_token IS NULL;
CREATE INDEX worker_queue_activity ON worker_queue (namespace, instance_id, execution_id, activity_id);
CREATE UNIQUE INDEX worker_queue_lock_token ON worker_queue (lock_token) WHERE lock_token IS NOT NULL;
CREATE INDEX worker_queue_worker ON worker_queue (worker_id) WHERE worker_id IS NOT NULL;
-- Sweeper indexes: each deadline the sweeper scans, only where it can fire.
CREATE INDEX worker_queue_locked_until ON worker_queue (locked_until) WHERE lock_token IS NOT NULL;
CREATE INDEX worker_queue_s2s ON worker_queue (schedule_to_start_deadline)
    WHERE lock_token IS NULL AND started_at IS NULL AND schedule_to_start_deadline IS NOT NULL;
CREATE INDEX worker_queue_s2c ON worker_queue (schedule_to_close_deadline)
    WHERE schedule_to_close_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_st2c ON worker_queue (start_to_close_deadline)
    WHERE start_to_close_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_heartbeat ON worker_queue (heartbeat_deadline)
    WHERE heartbeat_deadline IS NOT NULL AND NOT cancel_requested;
CREATE INDEX worker_queue_cancelled_unlocked ON worker_queue (cancel_requested_at)
    WHERE cancel_requested AND lock_token IS NULL;

-- Worker sessions (see docs/liveness.md).
CREATE TABLE workers (
    namespace          text        NOT NULL,
    worker_id          text        NOT NULL,
    identity           text        NOT NULL DEFAULT '',
    host               text        NOT NULL DEFAULT '',
    build_id           text        NOT NULL DEFAULT '',
    task_queues        text[]      NOT NULL DEFAULT '{}',
    host_task_queue    text,
    metadata           jsonb       NOT NULL DEFAULT '{}',
    state              text        NOT NULL DEFAULT 'active'
                       CHECK (state IN ('active','inactive','cleaned_up')),
    lease_duration     interval    NOT NULL,
    lease_expires_at   timestamptz NOT NULL,
    last_heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    state_changed_at   timestamptz NOT NULL DEFAULT now(),
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, worker_id)
);
CREATE INDEX workers_lease ON workers (lease_expires_at) WHERE state = 'active';
CREATE INDEX workers_inactive ON workers (state_changed_at) WHERE state = 'inactive';
CREATE INDEX workers_host_queue ON workers (namespace, host_task_queue) WHERE host_task_queue IS NOT NULL;

-- +goose Down
DROP TABLE workers;
DROP TABLE worker_queue;
DROP TABLE orchestrator_queue;
DROP TABLE history;
DROP TABLE instances;
DROP TABLE namespaces;
