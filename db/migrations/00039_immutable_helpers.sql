-- +goose Up
-- Two IMMUTABLE helpers for the statements that write a time computed from
-- a row (a deadline: now plus a column's milliseconds) or chosen by a
-- condition. On Citus, an UPDATE may call a STABLE function (now(), and
-- the timestamptz + interval operator) only where the coordinator can
-- evaluate it before routing the statement: not with a column as its
-- argument, and not inside CASE or COALESCE (docs/architecture.md,
-- "Distributed by namespace"). With these, now() is an argument of its
-- own and the rest is immutable. Both are plain SQL expressions that
-- PostgreSQL inlines into the statement, so that their plans and costs
-- are those of the expressions they stand for.
--
-- tether_add(ts, d): ts plus d, added in UTC (a duration: a day is 24
-- hours whatever the session's time zone), hence immutable.
CREATE FUNCTION tether_add(ts timestamptz, d interval) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ((ts AT TIME ZONE 'UTC') + d) AT TIME ZONE 'UTC' $$;

-- tether_pick(cond, a, b): a when cond holds, else b (CASE WHEN cond THEN
-- a ELSE b END, with now() allowed as a or b).
CREATE FUNCTION tether_pick(cond boolean, a anyelement, b anyelement) RETURNS anyelement
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN cond THEN a ELSE b END $$;

-- +goose Down
DROP FUNCTION tether_pick(boolean, anyelement, anyelement);
DROP FUNCTION tether_add(timestamptz, interval);
