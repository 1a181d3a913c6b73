-- +goose Up
-- Schedules (docs/api.md, "Schedules"): a spec of times (cron expressions
-- and intervals in a time zone, with jitter) and an action (start a
-- workflow), fired by the scheduler service (server/services/scheduler).
-- next_slot is the spec's next nominal time and next_fire_at when it fires
-- (the slot plus its jitter); the scheduler claims due rows with FOR UPDATE
-- SKIP LOCKED and, in the claim's transaction, starts the slot's workflow,
-- records the action and advances both, so that a slot fires once across
-- replicas and restarts.
CREATE TABLE schedules (
    namespace         text        NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    schedule_id       text        NOT NULL,
    spec              jsonb       NOT NULL,
    action            jsonb       NOT NULL,
    overlap_policy    text        NOT NULL DEFAULT 'skip',
    catchup_window_ms bigint      NOT NULL DEFAULT 60000,
    paused            boolean     NOT NULL DEFAULT false,
    note              text        NOT NULL DEFAULT '',
    remaining_actions integer,
    next_slot         timestamptz,
    next_fire_at      timestamptz,
    buffered_slot     timestamptz,
    actions_taken     bigint      NOT NULL DEFAULT 0,
    overlap_skipped   bigint      NOT NULL DEFAULT 0,
    missed_catchup    bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, schedule_id)
);

-- The scheduler's claim: due, unpaused schedules by fire time.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE NOT paused AND next_fire_at IS NOT NULL;
-- Schedules holding a buffered slot (overlap policy buffer_one).
CREATE INDEX schedules_buffered ON schedules (namespace, schedule_id) WHERE buffered_slot IS NOT NULL;

-- One row per slot a schedule fired (scheduled, triggered or backfilled):
-- the primary key refuses a second action for the same slot. The newest
-- 100 per schedule are kept.
CREATE TABLE schedule_actions (
    namespace   text        NOT NULL,
    schedule_id text        NOT NULL,
    slot_at     timestamptz NOT NULL,
    workflow_id text        NOT NULL,
    kind        text        NOT NULL,
    fired_at    timestamptz NOT NULL,
    PRIMARY KEY (namespace, schedule_id, slot_at),
    FOREIGN KEY (namespace, schedule_id) REFERENCES schedules (namespace, schedule_id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE schedule_actions;
DROP TABLE schedules;
