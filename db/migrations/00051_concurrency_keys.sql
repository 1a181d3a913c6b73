-- +goose Up
-- Concurrency limits per key (docs/api.md, "Concurrency limits"): at most
-- max_running workflows started with a key run at once in a namespace.
--
-- A workflow started with a key has its limit in instances.concurrency
-- ({key, limit, strategy}). Past the limit it waits: its row is held by a
-- lock of its own (locked_by 'tether:concurrency', locked_until far in
-- the future), so that no fetch offers its turn, and it keeps its place
-- by created_at. A start locks its key's row (concurrency_keys) in its
-- transaction; so does the close of a workflow that held a slot (a
-- trigger on instances: every path that closes a workflow, in its own
-- transaction, on any replica), which admits the oldest waiting
-- workflows up to the limit and wakes their queues' pollers. Workflows
-- without a key fire nothing: the triggers' WHEN clauses test the NULL
-- column, and no index entry is written for them.
ALTER TABLE instances ADD COLUMN concurrency jsonb;

-- running: how many workflows of the key hold a slot; max_running: the
-- latest start's limit.
CREATE TABLE concurrency_keys (
    namespace   text    NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    key         text    NOT NULL,
    max_running integer NOT NULL CHECK (max_running > 0),
    running     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, key)
);

-- The running workflows of a key, oldest first: the waiting ones to
-- admit, the running ones to cancel (cancel_oldest), the counts.
CREATE INDEX instances_concurrency ON instances (namespace, (concurrency ->> 'key'), created_at, instance_id)
    WHERE concurrency IS NOT NULL AND status = 'running';

-- +goose StatementBegin
-- tether_concurrency_admit admits the oldest waiting workflows of key
-- while fewer than its limit run: each loses its waiting lock and its
-- queue's pollers are woken (on commit). A waiting workflow another
-- transaction holds is skipped, never waited for (it is being closed or
-- changed: the lock order puts instances before concurrency_keys). Returns
-- the ids admitted.
CREATE FUNCTION tether_concurrency_admit(p_ns text, p_key text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    h record;
    n integer;
BEGIN
    SELECT c.running, c.max_running INTO k FROM concurrency_keys c
    WHERE c.namespace = p_ns AND c.key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    n := k.running;
    WHILE n < k.max_running LOOP
        SELECT i.instance_id, i.task_queue INTO h FROM instances i
        WHERE i.namespace = p_ns AND i.concurrency IS NOT NULL AND i.status = 'running'
          AND (i.concurrency ->> 'key') = p_key AND i.locked_by = 'tether:concurrency'
        ORDER BY i.created_at, i.instance_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
        EXIT WHEN NOT FOUND;
        UPDATE instances SET lock_token = NULL, locked_until = NULL, locked_by = NULL, updated_at = now()
        WHERE namespace = p_ns AND instance_id = h.instance_id;
        PERFORM pg_notify('tether', 'w|' || p_ns || '|' || h.task_queue);
        n := n + 1;
        RETURN NEXT h.instance_id;
    END LOOP;
    IF n <> k.running THEN
        UPDATE concurrency_keys SET running = n WHERE namespace = p_ns AND key = p_key;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_concurrency_start puts the new instance p_instance (inserted by
-- the caller's transaction) under key p_key with limit p_limit: the key's
-- row is created or locked and takes the limit, the instance waits, and
-- the oldest waiting workflows are admitted up to the limit (the new one
-- among them when it is the oldest). Returns whether it was admitted, the
-- key's counts after it, and, for a cancel_oldest start left waiting, the
-- oldest running workflow of the key not yet asked to cancel (locked:
-- the caller asks it; NULL when every one was asked already or is held
-- by another transaction).
CREATE FUNCTION tether_concurrency_start(p_ns text, p_instance text, p_key text, p_limit integer, p_strategy text)
RETURNS TABLE (admitted boolean, running integer, waiting bigint, cancel text)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO concurrency_keys AS c (namespace, key, max_running) VALUES (p_ns, p_key, p_limit)
    ON CONFLICT (namespace, key) DO UPDATE SET max_running = excluded.max_running;
    UPDATE instances
    SET concurrency = jsonb_build_object('key', p_key, 'limit', p_limit, 'strategy', p_strategy),
        lock_token = gen_random_uuid(), locked_until = '9999-12-31 00:00:00+00', locked_by = 'tether:concurrency'
    WHERE namespace = p_ns AND instance_id = p_instance;
    admitted := EXISTS (SELECT 1 FROM tether_concurrency_admit(p_ns, p_key) a WHERE a = p_instance);
    IF NOT admitted AND p_strategy = 'cancel_oldest' THEN
        SELECT i.instance_id INTO cancel FROM instances i
        WHERE i.namespace = p_ns AND i.concurrency IS NOT NULL AND i.status = 'running'
          AND (i.concurrency ->> 'key') = p_key AND i.locked_by IS DISTINCT FROM 'tether:concurrency'
          AND NOT i.cancel_requested
        ORDER BY i.created_at, i.instance_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
    END IF;
    SELECT c.running INTO running FROM concurrency_keys c WHERE c.namespace = p_ns AND c.key = p_key;
    SELECT count(*) INTO waiting FROM instances i
    WHERE i.namespace = p_ns AND i.concurrency IS NOT NULL AND i.status = 'running'
      AND (i.concurrency ->> 'key') = p_key AND i.locked_by = 'tether:concurrency';
    RETURN NEXT;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_concurrency_closed frees the slot of a workflow that held one and
-- closed (or was deleted running), and admits the next waiting ones. A
-- workflow that closed while waiting held no slot.
CREATE FUNCTION tether_concurrency_closed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.locked_by IS DISTINCT FROM 'tether:concurrency' THEN
        UPDATE concurrency_keys SET running = GREATEST(running - 1, 0)
        WHERE namespace = OLD.namespace AND key = (OLD.concurrency ->> 'key');
        PERFORM tether_concurrency_admit(OLD.namespace, OLD.concurrency ->> 'key');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_concurrency_reopened drops the key of a closed workflow that runs
-- again (a reset): it runs without a limit.
CREATE FUNCTION tether_concurrency_reopened() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.concurrency := NULL;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER instances_concurrency_closed AFTER UPDATE OF status ON instances
    FOR EACH ROW WHEN (OLD.concurrency IS NOT NULL AND OLD.status = 'running' AND NEW.status <> 'running')
    EXECUTE FUNCTION tether_concurrency_closed();
CREATE TRIGGER instances_concurrency_deleted AFTER DELETE ON instances
    FOR EACH ROW WHEN (OLD.concurrency IS NOT NULL AND OLD.status = 'running')
    EXECUTE FUNCTION tether_concurrency_closed();
CREATE TRIGGER instances_concurrency_reopened BEFORE UPDATE OF status ON instances
    FOR EACH ROW WHEN (OLD.concurrency IS NOT NULL AND OLD.status <> 'running' AND NEW.status = 'running')
    EXECUTE FUNCTION tether_concurrency_reopened();

-- +goose Down
DROP TRIGGER instances_concurrency_reopened ON instances;
DROP TRIGGER instances_concurrency_deleted ON instances;
DROP TRIGGER instances_concurrency_closed ON instances;
DROP FUNCTION tether_concurrency_reopened();
DROP FUNCTION tether_concurrency_closed();
DROP FUNCTION tether_concurrency_start(text, text, text, integer, text);
DROP FUNCTION tether_concurrency_admit(text, text);
DROP INDEX instances_concurrency;
DROP TABLE concurrency_keys;
ALTER TABLE instances DROP COLUMN concurrency;
