-- +goose Up
-- Worker build ids (docs/architecture.md, "Build ids"): the build id of the
-- worker that fetched an execution's first turn ('' for a worker without
-- one); NULL until then. Later turns go to workers of that build id only,
-- or to any worker when it is ''.
ALTER TABLE instances ADD COLUMN build_id text;

-- +goose Down
ALTER TABLE instances DROP COLUMN build_id;
