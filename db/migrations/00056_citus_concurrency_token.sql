-- +goose Up
-- tether_concurrency_start takes the lock token of the workflow it puts
-- under its key from a variable, not from gen_random_uuid() in the UPDATE:
-- Citus runs no volatile function in an UPDATE of a distributed table
-- (docs/operations.md, "Running on Citus"); the variable is computed on
-- the coordinator and sent as a value. Otherwise as in 00051.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_concurrency_start(p_ns text, p_instance text, p_key text, p_limit integer, p_strategy text)
RETURNS TABLE (admitted boolean, running integer, waiting bigint, cancel text)
LANGUAGE plpgsql AS $$
DECLARE
    v_token uuid := gen_random_uuid();
BEGIN
    INSERT INTO concurrency_keys AS c (namespace, key, max_running) VALUES (p_ns, p_key, p_limit)
    ON CONFLICT (namespace, key) DO UPDATE SET max_running = excluded.max_running;
    UPDATE instances
    SET concurrency = jsonb_build_object('key', p_key, 'limit', p_limit, 'strategy', p_strategy),
        lock_token = v_token, locked_until = '9999-12-31 00:00:00+00', locked_by = 'tether:concurrency'
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tether_concurrency_start(p_ns text, p_instance text, p_key text, p_limit integer, p_strategy text)
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
