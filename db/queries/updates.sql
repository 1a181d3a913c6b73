-- name: InsertUpdate :one
-- Records a new update id of an instance; no row comes back when the id
-- is known already (the request then reads it with GetUpdate).
INSERT INTO updates (namespace, instance_id, update_id, update_name)
VALUES (sqlc.arg(namespace), sqlc.arg(instance_id), sqlc.arg(update_id), sqlc.arg(update_name))
ON CONFLICT DO NOTHING
RETURNING update_id;

-- name: EnqueueUpdate :one
-- Enqueues an update to a running instance as a WorkflowUpdateAccepted
-- message (the event its turn records when the validator accepts it) and
-- returns the task queue and whether it is flow-controlled; no row: not running, or unknown. Locked as
-- EnqueueSignal is: an update either commits before the ack that would
-- end the workflow, which then refuses to (PendingSignals), or finds the
-- workflow over.
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, payload_bytes,
                                     priority, pass)
SELECT i.namespace, i.instance_id, NULL, i.task_queue, 'WorkflowUpdateAccepted', sqlc.arg(payload)::jsonb,
       sqlc.arg(payload_bytes)::integer,
       -- The workflow's priority (see EnqueueMessages).
       tether_priority_key(i.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see
       -- EnqueueMessages); the virtual time is looked up beside the
       -- instance (Citus takes no subquery here correlated with a subquery).
       CASE WHEN i.priority IS NOT NULL THEN LEAST(now(), i.vt) END
FROM (
    SELECT ix.namespace, ix.instance_id, ix.task_queue, ix.priority,
           CASE WHEN ix.priority IS NOT NULL
                THEN (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                      WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = ix.task_queue
                        AND vq.priority = tether_priority_key(ix.priority) AND vq.pass IS NOT NULL
                      ORDER BY vq.pass LIMIT 1) END AS vt
    FROM instances ix
    WHERE ix.namespace = sqlc.arg(namespace) AND ix.instance_id = sqlc.arg(instance_id)
      AND ix.status = 'running'
    FOR KEY SHARE
) i
RETURNING o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: GetUpdate :one
-- An update with the status of its instance.
SELECT u.stage, u.result, u.error, i.status
FROM updates u JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = u.instance_id
WHERE u.namespace = sqlc.arg(namespace) AND u.instance_id = sqlc.arg(instance_id) AND u.update_id = sqlc.arg(update_id);

-- name: SetUpdateStages :exec
-- The stages a turn's ack reached for its instances' updates (outcomes: a
-- jsonb array of {instance_id, update_id, stage, result, error}).
UPDATE updates u SET stage = o.stage, result = o.result, error = o.error
FROM jsonb_to_recordset(sqlc.arg(outcomes)::jsonb) AS o(instance_id text, update_id text, stage text, result jsonb, error jsonb)
WHERE u.namespace = sqlc.arg(namespace) AND u.instance_id = o.instance_id AND u.update_id = o.update_id;

-- name: DeleteInstanceUpdates :exec
-- A deleted instance's update ids go with it.
DELETE FROM updates WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);

-- name: DeleteInstancesUpdates :exec
-- The update ids of instances the retention purge deletes.
DELETE FROM updates WHERE namespace = sqlc.arg(namespace) AND instance_id = ANY(sqlc.arg(instance_ids)::text[]);
