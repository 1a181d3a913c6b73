-- +goose Up
-- A workflow query in flight (docs/api.md, "Queries"): the request that
-- asked it inserts the row and waits; a worker of the instance's task
-- queue claims it with a query poll, answers from the workflow's state and
-- writes the answer, which wakes the request; the request deletes the row.
-- A query is never written to history. Rows whose request went away are
-- deleted by the sweeper.
CREATE TABLE queries (
    query_id     uuid PRIMARY KEY,
    namespace    text NOT NULL,
    instance_id  text NOT NULL,
    execution_id bigint NOT NULL,
    task_queue   text NOT NULL,
    query_name   text NOT NULL,
    input        jsonb,
    claimed_by   text,
    claimed_until timestamptz,
    answered     boolean NOT NULL DEFAULT false,
    result       jsonb,
    error        jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX queries_unanswered ON queries (namespace, task_queue, created_at) WHERE NOT answered;
CREATE INDEX queries_created ON queries (created_at);

-- +goose Down
DROP TABLE queries;
