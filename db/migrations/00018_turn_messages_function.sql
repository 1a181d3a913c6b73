-- +goose Up
-- The part of a turn's fetch that LockTurn (the eager turn of an activity
-- result) and LockNextTurn (the queue's poll) share, written once: mark up
-- to max_messages of the instance's visible messages with the turn's lock
-- token, and answer {"messages": [...], "activity_states": {...}} — the
-- messages in id order, and for each activity they name (of the
-- execution) whether it is done (completed, failed or cancel-requested).
--
-- PL/pgSQL rather than SQL: the statement inside is prepared once per
-- connection and keeps its plan (a SQL function is planned at every call),
-- and the two callers' plans lose the message update and the history
-- aggregate (their executor start-up was a measurable part of the turn
-- fetch's CPU, docs/benchmarks.md, session 7). The messages are found
-- through orchestrator_queue_instance (TestTurnMessagesFunctionUsesIndexes);
-- their lock is a HOT update (migration 00005).
-- +goose StatementBegin
CREATE FUNCTION lock_turn_messages(p_namespace text, p_instance_id text, p_execution_id bigint,
                                   p_lock_token uuid, p_max_messages bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
AS $fn$
DECLARE
    result jsonb;
BEGIN
    WITH msgs AS (
        UPDATE orchestrator_queue m SET lock_token = p_lock_token
        WHERE m.id IN (
            SELECT q.id FROM orchestrator_queue q
            WHERE q.namespace = p_namespace AND q.instance_id = p_instance_id AND q.visible_at <= now()
            ORDER BY q.id
            LIMIT p_max_messages
        )
        RETURNING m.id, m.execution_id, m.kind, m.payload, m.visible_at
    )
    SELECT jsonb_build_object(
        'messages',
        COALESCE((SELECT jsonb_agg(jsonb_build_object('id', msgs.id, 'execution_id', msgs.execution_id, 'kind', msgs.kind,
                                                      'payload', msgs.payload, 'visible_at', msgs.visible_at) ORDER BY msgs.id)
                  FROM msgs), '[]'::jsonb),
        'activity_states',
        COALESCE((SELECT jsonb_object_agg(s.activity_id, s.done)
                  FROM (SELECT h.activity_id,
                               bool_or(h.kind IN ('ActivityCompleted', 'ActivityFailed', 'ActivityCancelRequested')) AS done
                        FROM history h
                        WHERE h.namespace = p_namespace AND h.instance_id = p_instance_id
                          AND h.execution_id = p_execution_id
                          AND h.activity_id IN (SELECT (msgs.payload->>'activity_id')::bigint FROM msgs
                                                WHERE msgs.payload ? 'activity_id')
                        GROUP BY h.activity_id) s), '{}'::jsonb))
    INTO result;
    RETURN result;
END
$fn$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION lock_turn_messages(text, text, bigint, uuid, bigint);
