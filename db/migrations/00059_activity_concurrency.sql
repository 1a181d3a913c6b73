-- +goose Up
-- Concurrency limits of activities per key (docs/api.md, "Concurrency
-- limits of activities"): at most max_running attempts of activities
-- scheduled with a key (options.concurrency: {key, limit}) hold a slot at
-- once in a namespace, across every server replica.
--
-- An attempt holds a slot from its admission until its row is deleted
-- (it completed, failed, timed out, was cancelled or its workflow
-- closed; a retry is a new attempt, admitted again). An attempt past the
-- limit waits: its visible_at is moved to the end of time, so that no
-- fetch — plain, flow or keyed — offers it, and the visible time it had is
-- kept in its options (concurrency_wait). It is nobody's (no lock), so a
-- cancel drops it and its ScheduleToStart timeout runs as for any attempt
-- not started. The key and the wait live in the options, not in columns of
-- their own, so that worker_queue's rows (and every statement returning
-- them) keep their shape.
-- The insert of a keyed attempt locks its key's row (a trigger: every
-- path that inserts attempts, on any replica), and so does the delete of
-- one that held a slot, which admits the oldest waiting attempts of the
-- key up to its limit and wakes their queues' pollers. Attempts without a
-- key fire nothing: the triggers' WHEN clauses test the options, the
-- fetch statements are unchanged, and no index entry is written for them.

-- running: how many attempts of the key hold a slot; max_running: the
-- latest attempt's limit.
CREATE TABLE activity_concurrency_keys (
    namespace   text    NOT NULL REFERENCES namespaces (name) ON DELETE CASCADE,
    key         text    NOT NULL,
    max_running integer NOT NULL CHECK (max_running > 0),
    running     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, key)
);

-- The waiting attempts of a key, oldest first.
CREATE INDEX worker_queue_concurrency_waiting ON worker_queue (namespace, (options -> 'concurrency' ->> 'key'), id)
    WHERE options ? 'concurrency_wait';

-- +goose StatementBegin
-- tether_activity_concurrency_admit admits the oldest waiting attempts of
-- key while fewer than its limit hold a slot: each becomes visible (at the
-- time it had, or now) and its queue's pollers are woken (on commit). A
-- waiting attempt another transaction holds is skipped, never waited for
-- (the sweeper admits it later). Returns how many were admitted.
CREATE FUNCTION tether_activity_concurrency_admit(p_ns text, p_key text) RETURNS integer
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

-- +goose StatementBegin
-- tether_activity_concurrency_insert puts a new attempt with a key under
-- it: the key's row is created or locked and takes the attempt's limit,
-- the waiting attempts are admitted up to it (oldest first), and the new
-- one holds a slot when one is left and none waits, else it waits. A
-- waiting attempt is never claimed at its insert (eager dispatch).
CREATE FUNCTION tether_activity_concurrency_insert() RETURNS trigger
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
-- tether_activity_concurrency_ended frees the slot of an attempt that held
-- one and admits the next waiting ones. A waiting attempt held none.
CREATE FUNCTION tether_activity_concurrency_ended() RETURNS trigger
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

CREATE TRIGGER worker_queue_concurrency_insert BEFORE INSERT ON worker_queue
    FOR EACH ROW WHEN (NEW.options ? 'concurrency')
    EXECUTE FUNCTION tether_activity_concurrency_insert();
CREATE TRIGGER worker_queue_concurrency_ended AFTER DELETE ON worker_queue
    FOR EACH ROW WHEN (OLD.options ? 'concurrency')
    EXECUTE FUNCTION tether_activity_concurrency_ended();

-- +goose Down
DROP TRIGGER worker_queue_concurrency_ended ON worker_queue;
DROP TRIGGER worker_queue_concurrency_insert ON worker_queue;
DROP FUNCTION tether_activity_concurrency_ended();
DROP FUNCTION tether_activity_concurrency_insert();
DROP FUNCTION tether_activity_concurrency_admit(text, text);
DROP INDEX worker_queue_concurrency_waiting;
DROP TABLE activity_concurrency_keys;
