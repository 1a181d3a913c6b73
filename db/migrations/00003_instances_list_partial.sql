-- +goose Up
-- instances_list serves only the keyset listing. As a plain index on
-- (namespace, created_at, instance_id) it also matched every lookup of one
-- instance by (namespace, instance_id), at exactly the primary key's cost
-- while the table is new and small, and PostgreSQL chose it. Prepared
-- statements keep such a generic plan until the next ANALYZE, and the list
-- index finds one instance by walking the whole namespace: at 1 000
-- instances, a turn's lookups read about 700 pages each.
--
-- The predicate "created_at IS NOT NULL" holds for every row (the column is
-- NOT NULL) but PostgreSQL uses a partial index only for a query that
-- states its predicate, and only ListInstances does: key lookups can no
-- longer pick it, whatever the statistics say.
DROP INDEX IF EXISTS instances_list;
CREATE INDEX instances_list ON instances (namespace, created_at DESC, instance_id DESC)
    WHERE created_at IS NOT NULL;

-- +goose Down
DROP INDEX IF EXISTS instances_list;
CREATE INDEX instances_list ON instances (namespace, created_at DESC, instance_id DESC);
