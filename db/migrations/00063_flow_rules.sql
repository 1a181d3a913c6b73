-- +goose Up
-- Flow control's rules (migration 00042), written once for the statements
-- that enqueue keyed work (StartInstances, StartChildren, InsertAttempts,
-- InsertAttemptsClaiming), as plain SQL expressions PostgreSQL inlines
-- (as migration 00062's). Each takes the work's priority (a jsonb object
-- with priority_key, fairness_key, fairness_weight).
--
-- tether_priority_key: its priority key, 3 when none (or 0) is given.
CREATE FUNCTION tether_priority_key(priority jsonb) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT COALESCE(NULLIF((priority->>'priority_key')::int, 0), 3)::smallint $$;

-- tether_fairness_key: its fairness key, '' when none.
CREATE FUNCTION tether_fairness_key(priority jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT COALESCE(priority->>'fairness_key', '') $$;

-- tether_fairness_stride: how far one enqueue moves its key's clock,
-- 1 ms / weight (weight 1 when none, or 0, is given).
CREATE FUNCTION tether_fairness_stride(priority jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT interval '1 millisecond' / COALESCE(NULLIF((priority->>'fairness_weight')::float8, 0), 1) $$;

-- tether_flow_pass: a key's clock (pass) after it moves on by step, never
-- behind floor (the queue's current virtual time, where an idle key
-- restarts). Added in UTC (tether_add), so that it is immutable: Citus
-- takes no stable function in an ON CONFLICT's DO UPDATE SET.
CREATE FUNCTION tether_flow_pass(pass timestamptz, step interval, floor timestamptz) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT GREATEST(tether_add(pass, step), floor) $$;

-- +goose Down
DROP FUNCTION tether_flow_pass(timestamptz, interval, timestamptz);
DROP FUNCTION tether_fairness_stride(jsonb);
DROP FUNCTION tether_fairness_key(jsonb);
DROP FUNCTION tether_priority_key(jsonb);
