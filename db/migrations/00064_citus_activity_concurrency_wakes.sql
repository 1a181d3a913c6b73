-- +goose Up
-- The admission of waiting activity attempts (migration 00059) by the
-- triggers of worker_queue wakes their queues' pollers with pg_notify. On
-- Citus those triggers run on the worker node holding the shard of
-- worker_queue, where that NOTIFY is heard by no server's LISTEN and makes
-- a two-phase commit fail, as for the workflows' keys (migration 00057).
-- There the triggers (they fire on a shard: its table is not named
-- worker_queue) write each admitted attempt's queue to
-- activity_concurrency_wakes instead, a table of the namespace's shard
-- group, and the server on the coordinator takes them out in the
-- transaction that ended or inserted the attempts and wakes the queues
-- after its commit (store.Options.Citus; docs/operations.md, "Running on
-- Citus"). On a single PostgreSQL the table stays empty and the triggers
-- notify as before.
CREATE TABLE activity_concurrency_wakes (
    namespace  text   NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    id         bigint NOT NULL,
    task_queue text   NOT NULL,
    PRIMARY KEY (namespace, id)
);

-- +goose StatementBegin
-- tether_activity_concurrency_admit(p_ns, p_key, p_record_wakes) is
-- 00059's admission; each admitted attempt's queue is woken by pg_notify,
-- or, with p_record_wakes, written to activity_concurrency_wakes (ON
-- CONFLICT DO NOTHING: a row the server has not taken yet already names
-- the attempt). The attempt's visible time is computed into a variable,
-- not in the UPDATE: Citus runs no GREATEST(now(), …) in an UPDATE of a
-- distributed table.
CREATE FUNCTION tether_activity_concurrency_admit(p_ns text, p_key text, p_record_wakes boolean) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    h record;
    n integer;
    v_at timestamptz;
BEGIN
    SELECT c.running, c.max_running INTO k FROM activity_concurrency_keys c
    WHERE c.namespace = p_ns AND c.key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    n := k.running;
    WHILE n < k.max_running LOOP
        SELECT w.id, w.task_queue, (w.options ->> 'concurrency_wait')::timestamptz AS wait INTO h FROM worker_queue w
        WHERE w.namespace = p_ns AND (w.options -> 'concurrency' ->> 'key') = p_key AND w.options ? 'concurrency_wait'
        ORDER BY w.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
        EXIT WHEN NOT FOUND;
        v_at := GREATEST(now(), h.wait);
        UPDATE worker_queue SET visible_at = v_at, options = options - 'concurrency_wait'
        WHERE namespace = p_ns AND id = h.id;
        IF p_record_wakes THEN
            INSERT INTO activity_concurrency_wakes (namespace, id, task_queue)
            VALUES (p_ns, h.id, h.task_queue)
            ON CONFLICT DO NOTHING;
        ELSE
            PERFORM pg_notify('tether', 'a|' || p_ns || '|' || h.task_queue);
        END IF;
        n := n + 1;
    END LOOP;
    IF n <> k.running THEN
        UPDATE activity_concurrency_keys SET running = n WHERE namespace = p_ns AND key = p_key;
    END IF;
    RETURN n - k.running;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_activity_concurrency_admit(p_ns, p_key): the admission that
-- notifies (the sweeper's, run where the statement that called it runs:
-- the coordinator on Citus).
CREATE OR REPLACE FUNCTION tether_activity_concurrency_admit(p_ns text, p_key text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RETURN tether_activity_concurrency_admit(p_ns, p_key, false);
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_activity_concurrency_insert: as in 00059; on a Citus shard (the
-- trigger's table is a shard of worker_queue, worker_queue_<shard id>) the
-- admitted attempts' queues go to activity_concurrency_wakes.
CREATE OR REPLACE FUNCTION tether_activity_concurrency_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    v_key text := NEW.options -> 'concurrency' ->> 'key';
BEGIN
    INSERT INTO activity_concurrency_keys AS c (namespace, key, max_running)
    VALUES (NEW.namespace, v_key, GREATEST(COALESCE((NEW.options -> 'concurrency' ->> 'limit')::integer, 1), 1))
    ON CONFLICT (namespace, key) DO UPDATE SET max_running = excluded.max_running;
    PERFORM tether_activity_concurrency_admit(NEW.namespace, v_key, TG_TABLE_NAME <> 'worker_queue');
    SELECT c.running, c.max_running INTO k FROM activity_concurrency_keys c
    WHERE c.namespace = NEW.namespace AND c.key = v_key;
    NEW.options := NEW.options - 'concurrency_wait';
    IF k.running < k.max_running AND NOT EXISTS (
        SELECT 1 FROM worker_queue w
        WHERE w.namespace = NEW.namespace AND (w.options -> 'concurrency' ->> 'key') = v_key
          AND w.options ? 'concurrency_wait') THEN
        UPDATE activity_concurrency_keys SET running = running + 1
        WHERE namespace = NEW.namespace AND key = v_key;
    ELSE
        NEW.options := NEW.options || jsonb_build_object('concurrency_wait', NEW.visible_at);
        NEW.visible_at := '9999-12-31 00:00:00+00';
        NEW.lock_token := NULL;
        NEW.locked_until := NULL;
        NEW.worker_id := NULL;
        NEW.delivery_count := 0;
        NEW.started_at := NULL;
        NEW.start_to_close_deadline := NULL;
        NEW.heartbeat_deadline := NULL;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- tether_activity_concurrency_ended: as in 00059; on a Citus shard the
-- admitted attempts' queues go to activity_concurrency_wakes.
CREATE OR REPLACE FUNCTION tether_activity_concurrency_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT OLD.options ? 'concurrency_wait' THEN
        UPDATE activity_concurrency_keys SET running = GREATEST(running - 1, 0)
        WHERE namespace = OLD.namespace AND key = (OLD.options -> 'concurrency' ->> 'key');
        PERFORM tether_activity_concurrency_admit(OLD.namespace, OLD.options -> 'concurrency' ->> 'key', TG_TABLE_NAME <> 'worker_queue');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_activity_concurrency_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT OLD.options ? 'concurrency_wait' THEN
        UPDATE activity_concurrency_keys SET running = GREATEST(running - 1, 0)
        WHERE namespace = OLD.namespace AND key = (OLD.options -> 'concurrency' ->> 'key');
        PERFORM tether_activity_concurrency_admit(OLD.namespace, OLD.options -> 'concurrency' ->> 'key');
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_activity_concurrency_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    v_key text := NEW.options -> 'concurrency' ->> 'key';
BEGIN
    INSERT INTO activity_concurrency_keys AS c (namespace, key, max_running)
    VALUES (NEW.namespace, v_key, GREATEST(COALESCE((NEW.options -> 'concurrency' ->> 'limit')::integer, 1), 1))
    ON CONFLICT (namespace, key) DO UPDATE SET max_running = excluded.max_running;
    PERFORM tether_activity_concurrency_admit(NEW.namespace, v_key);
    SELECT c.running, c.max_running INTO k FROM activity_concurrency_keys c
    WHERE c.namespace = NEW.namespace AND c.key = v_key;
    NEW.options := NEW.options - 'concurrency_wait';
    IF k.running < k.max_running AND NOT EXISTS (
        SELECT 1 FROM worker_queue w
        WHERE w.namespace = NEW.namespace AND (w.options -> 'concurrency' ->> 'key') = v_key
          AND w.options ? 'concurrency_wait') THEN
        UPDATE activity_concurrency_keys SET running = running + 1
        WHERE namespace = NEW.namespace AND key = v_key;
    ELSE
        NEW.options := NEW.options || jsonb_build_object('concurrency_wait', NEW.visible_at);
        NEW.visible_at := '9999-12-31 00:00:00+00';
        NEW.lock_token := NULL;
        NEW.locked_until := NULL;
        NEW.worker_id := NULL;
        NEW.delivery_count := 0;
        NEW.started_at := NULL;
        NEW.start_to_close_deadline := NULL;
        NEW.heartbeat_deadline := NULL;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_activity_concurrency_admit(p_ns text, p_key text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    k record;
    h record;
    n integer;
BEGIN
    SELECT c.running, c.max_running INTO k FROM activity_concurrency_keys c
    WHERE c.namespace = p_ns AND c.key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    n := k.running;
    WHILE n < k.max_running LOOP
        SELECT w.id, w.task_queue, (w.options ->> 'concurrency_wait')::timestamptz AS wait INTO h FROM worker_queue w
        WHERE w.namespace = p_ns AND (w.options -> 'concurrency' ->> 'key') = p_key AND w.options ? 'concurrency_wait'
        ORDER BY w.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
        EXIT WHEN NOT FOUND;
        UPDATE worker_queue SET visible_at = GREATEST(now(), h.wait), options = options - 'concurrency_wait'
        WHERE namespace = p_ns AND id = h.id;
        PERFORM pg_notify('tether', 'a|' || p_ns || '|' || h.task_queue);
        n := n + 1;
    END LOOP;
    IF n <> k.running THEN
        UPDATE activity_concurrency_keys SET running = n WHERE namespace = p_ns AND key = p_key;
    END IF;
    RETURN n - k.running;
END
$$;
-- +goose StatementEnd

DROP FUNCTION tether_activity_concurrency_admit(text, text, boolean);
DROP TABLE activity_concurrency_wakes;
