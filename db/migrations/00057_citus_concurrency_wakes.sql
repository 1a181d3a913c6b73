-- +goose Up
-- The admission of a waiting workflow by the close of one that held a
-- slot (the trigger of 00051) wakes its queue's pollers with pg_notify.
-- On Citus the trigger runs on the worker node holding the shard of
-- instances, where that NOTIFY is heard by no server's LISTEN and makes a
-- two-phase commit fail (cannot PREPARE a transaction that has executed
-- NOTIFY). There the trigger (it fires on a shard: its table is not named
-- instances) writes each admitted workflow's queue to concurrency_wakes
-- instead, a table of the namespace's shard group, and the server on the
-- coordinator takes them out in the closing transaction and wakes the
-- queues after its commit (store.Options.Citus; docs/operations.md,
-- "Running on Citus"). On a single PostgreSQL the table stays empty and the
-- trigger notifies as before.
CREATE TABLE concurrency_wakes (
    namespace   text NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    instance_id text NOT NULL,
    task_queue  text NOT NULL,
    PRIMARY KEY (namespace, instance_id)
);

-- +goose StatementBegin
-- tether_concurrency_admit(p_ns, p_key, p_record_wakes) is 00051's
-- admission; each admitted workflow's queue is woken by pg_notify, or,
-- with p_record_wakes, written to concurrency_wakes (ON CONFLICT DO
-- NOTHING: a row the server has not taken yet already names the
-- workflow).
CREATE FUNCTION tether_concurrency_admit(p_ns text, p_key text, p_record_wakes boolean) RETURNS SETOF text
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
        IF p_record_wakes THEN
            INSERT INTO concurrency_wakes (namespace, instance_id, task_queue)
            VALUES (p_ns, h.instance_id, h.task_queue)
            ON CONFLICT DO NOTHING;
        ELSE
            PERFORM pg_notify('tether', 'w|' || p_ns || '|' || h.task_queue);
        END IF;
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
-- tether_concurrency_admit(p_ns, p_key): the admission that notifies (a
-- start's, run where the statement that called it runs: the coordinator
-- on Citus).
CREATE OR REPLACE FUNCTION tether_concurrency_admit(p_ns text, p_key text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT a FROM tether_concurrency_admit(p_ns, p_key, false) a;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_concurrency_closed: as in 00051; on a Citus shard (the trigger's
-- table is a shard of instances, instances_<shard id>) the admitted
-- workflows' queues go to concurrency_wakes.
CREATE OR REPLACE FUNCTION tether_concurrency_closed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.locked_by IS DISTINCT FROM 'tether:concurrency' THEN
        UPDATE concurrency_keys SET running = GREATEST(running - 1, 0)
        WHERE namespace = OLD.namespace AND key = (OLD.concurrency ->> 'key');
        PERFORM tether_concurrency_admit(OLD.namespace, OLD.concurrency ->> 'key', TG_TABLE_NAME <> 'instances');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_concurrency_closed() RETURNS trigger
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
CREATE OR REPLACE FUNCTION tether_concurrency_admit(p_ns text, p_key text) RETURNS SETOF text
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

DROP FUNCTION tether_concurrency_admit(text, text, boolean);
DROP TABLE concurrency_wakes;
