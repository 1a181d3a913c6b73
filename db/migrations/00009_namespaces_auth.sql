-- +goose Up
-- Namespaces become real: a request under a namespace that has no row in
-- namespaces is 404 (the server checks a cache of this table, not the
-- table, per request). The other tables keep their namespace as text
-- without a foreign key, so that no hot write pays a key check.
ALTER TABLE namespaces ADD COLUMN description text NOT NULL DEFAULT '';
-- Closed workflows of the namespace older than this are deleted by the
-- retention job (NULL: kept until deleted by hand).
ALTER TABLE namespaces ADD COLUMN retention interval;
INSERT INTO namespaces (name) VALUES ('default') ON CONFLICT DO NOTHING;
-- Every namespace that already holds data is kept.
INSERT INTO namespaces (name)
SELECT DISTINCT namespace FROM instances
UNION SELECT DISTINCT namespace FROM workers
ON CONFLICT DO NOTHING;

-- API keys. A key is "tk_<id>_<secret>"; only the SHA-256 of the secret
-- is stored. namespace NULL: the key holds its role in every namespace.
CREATE TABLE api_keys (
    id          text PRIMARY KEY,
    namespace   text REFERENCES namespaces (name) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('worker', 'client', 'admin')),
    secret_hash bytea NOT NULL,
    name        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_namespace ON api_keys (namespace, created_at);

-- The owner of a worker session: "key:<id>" when the session was created
-- with an API key, "secret:<sha256 hex>" of the session secret the server
-- returned at registration when authentication is off. A heartbeat, fetch
-- or completion for the session by anyone else is refused.
ALTER TABLE workers ADD COLUMN owner text;

-- The retention job's scan: closed instances by closing time. Only the
-- turn that closes an instance changes status and completed_at (an update
-- that was not HOT already, status being in instances_execution_deadline's
-- predicate); the lock and unlock of turns stay HOT.
CREATE INDEX instances_closed ON instances (completed_at) WHERE status <> 'running';

-- +goose Down
DROP INDEX instances_closed;
ALTER TABLE workers DROP COLUMN owner;
DROP TABLE api_keys;
ALTER TABLE namespaces DROP COLUMN description;
ALTER TABLE namespaces DROP COLUMN retention;
