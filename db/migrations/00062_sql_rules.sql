-- +goose Up
-- The rules several statements share, each written once as a plain SQL
-- expression that PostgreSQL inlines into the statement (LANGUAGE sql, not
-- STRICT, one SELECT without FROM: the planner replaces the call by its
-- body), so that plans and costs are those of the expression written out.
-- docs/architecture.md, "All SQL is in db/queries/".
--
-- "This activity is done": completed, failed or canceled, or
-- cancel-requested without wait_for_cancellation (one with it is done only
-- once its outcome is in). A statement folds an activity's history events
-- with bit_or(tether_activity_event(kind, payload)) and asks
-- tether_activity_done of the result:
--   1: a closing event (ActivityCompleted, ActivityFailed, ActivityCanceled)
--   2: ActivityCancelRequested
--   4: ActivityScheduled with wait_for_cancellation
CREATE FUNCTION tether_activity_event(kind text, payload jsonb) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN kind IN ('ActivityCompleted', 'ActivityFailed', 'ActivityCanceled') THEN 1
                      WHEN kind = 'ActivityCancelRequested' THEN 2
                      WHEN kind = 'ActivityScheduled'
                           AND (payload->'options'->>'wait_for_cancellation') = 'true' THEN 4
                      ELSE 0 END $$;

CREATE FUNCTION tether_activity_done(events integer) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT (events & 1) <> 0 OR (events & 6) = 2 $$;

-- "This instance's turn may be taken now" (by a worker of build id build):
-- no live turn holds it — unlocked, or its lock expired and expired locks
-- are not held (hold_expired: the outage grace) — and it is not pinned to
-- another build id (an execution takes the build id of the worker that
-- fetches its first turn; '' or none pins nothing). STABLE: now().
CREATE FUNCTION tether_turn_open(locked_until timestamptz, pinned_build text, hold_expired boolean, build text)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT (locked_until IS NULL OR (locked_until < now() AND NOT hold_expired))
             AND (pinned_build IS NULL OR pinned_build IN ('', build)) $$;

-- +goose Down
DROP FUNCTION tether_turn_open(timestamptz, text, boolean, text);
DROP FUNCTION tether_activity_done(integer);
DROP FUNCTION tether_activity_event(text, jsonb);
