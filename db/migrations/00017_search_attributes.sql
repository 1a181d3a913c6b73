-- +goose Up
-- Visibility (docs/architecture.md, "Visibility"): search attributes,
-- registered per namespace with a type, set at start and by a workflow's
-- upsert_search_attributes command, and a memo (any JSON object, shown by
-- describe). Both columns are NULL for a workflow that has none: its start
-- writes no more than before, and the GIN index below, partial on
-- "search_attributes IS NOT NULL", holds no entry for it.
CREATE TABLE search_attributes (
    namespace  text NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    name       text NOT NULL,
    type       text NOT NULL CHECK (type IN ('keyword', 'text', 'int', 'double', 'bool', 'datetime', 'keyword_list')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);
ALTER TABLE instances ADD COLUMN search_attributes jsonb;
ALTER TABLE instances ADD COLUMN memo jsonb;
-- Equality (and keyword_list membership) on custom attributes:
-- search_attributes @> '{"CustomerId": "c-1"}'. A strict operator implies
-- "IS NOT NULL", so the planner matches the partial index without the
-- query stating it.
CREATE INDEX instances_search_attributes ON instances USING gin (search_attributes jsonb_path_ops)
    WHERE search_attributes IS NOT NULL;

-- +goose Down
DROP INDEX instances_search_attributes;
ALTER TABLE instances DROP COLUMN memo;
ALTER TABLE instances DROP COLUMN search_attributes;
DROP TABLE search_attributes;
