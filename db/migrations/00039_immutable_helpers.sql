-- +goose Up
-- An IMMUTABLE helper for the statements that write a time computed from
-- a row (a deadline: now plus a column's milliseconds) or chosen by a
-- condition. On Citus, an UPDATE may call a STABLE function (now(), and
-- the timestamptz + interval operator) only where the coordinator can
-- evaluate it before routing the statement: not with a column as its
-- argument, and not inside CASE or COALESCE (docs/architecture.md,
-- "Distributed by namespace"). With it, now() is an argument of its own
-- and the rest is immutable: a deadline is tether_add(now(), ms * interval
-- '1 millisecond'), a time set only when a condition holds is
-- tether_add(now(), CASE WHEN cond THEN interval '0' END) (NULL
-- otherwise). It is a plain SQL expression that PostgreSQL inlines into
-- the statement, so that plans and costs are those of the expression it
-- stands for.
--
-- tether_add(ts, d): ts plus d, added in UTC (a duration: a day is 24
-- hours whatever the session's time zone), hence immutable.
CREATE FUNCTION tether_add(ts timestamptz, d interval) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ((ts AT TIME ZONE 'UTC') + d) AT TIME ZONE 'UTC' $$;

-- +goose Down
DROP FUNCTION tether_add(timestamptz, interval);
