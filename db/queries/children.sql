-- name: StartChildren :exec
-- Starts the child workflows of one or more acknowledged turns, in the
-- ack's transaction (children: one object per child). Each child instance
-- is created — or a finished instance with its id starts again as its
-- next execution, as StartInstances does — with its parent recorded and its
-- start message; its parent gets ChildWorkflowStarted, or
-- StartChildWorkflowFailed when a running instance holds the id (nothing
-- is written for that child then). A child with a cron_schedule keeps it,
-- and its start message is visible after delay_ms (its first run). The
-- caller wakes the queues of both
-- (a notification of its own). No answer to wait for: the statement
-- travels with the next one.
WITH c AS (
    SELECT (x ->> 'instance_id')::text AS instance_id, (x ->> 'workflow_type')::text AS workflow_type,
           (x ->> 'task_queue')::text AS task_queue, (x -> 'input')::jsonb AS input,
           (x ->> 'timeout_ms')::bigint AS timeout_ms, (x ->> 'parent_instance_id')::text AS parent_instance_id,
           (x ->> 'parent_execution_id')::bigint AS parent_execution_id,
           (x ->> 'parent_run_id')::uuid AS parent_run_id,
           (x ->> 'parent_task_queue')::text AS parent_task_queue, (x ->> 'child_id')::bigint AS child_id,
           (x ->> 'parent_close_policy')::text AS parent_close_policy, (x -> 'retry_policy')::jsonb AS retry_policy,
           (x -> 'search_attributes')::jsonb AS search_attributes, (x -> 'memo')::jsonb AS memo,
           (x -> 'header')::jsonb AS header, (x -> 'priority')::jsonb AS priority,
           (x -> 'parent_priority')::jsonb AS parent_priority,
           (x ->> 'cron_schedule')::text AS cron_schedule, COALESCE((x ->> 'delay_ms')::bigint, 0) AS delay_ms
    FROM jsonb_array_elements(sqlc.arg(children)::jsonb) x
), d AS (
    -- A finished instance with a child's id is replaced by a fresh row
    -- (as in StartInstances): nothing of its last execution carries over.
    -- As there, the finished instances are locked in key order, each by a
    -- key probe from its child (LATERAL … FOR UPDATE, never flattened into
    -- a join), and deleted by the ctids locked (a TID scan): as a join of
    -- the instances with the children a generic plan made without
    -- statistics read the namespace, and the rows were locked in whatever
    -- order the join met them.
    -- The ids are read from the parameter again, not from c (see
    -- StartInstances).
    DELETE FROM instances x
    USING (
        SELECT f.tid
        FROM (SELECT DISTINCT x ->> 'instance_id' AS instance_id
              FROM jsonb_array_elements(sqlc.arg(children)::jsonb) x ORDER BY 1) o
        CROSS JOIN LATERAL (
            SELECT (y).ctid AS tid FROM instances y
            WHERE y.namespace = sqlc.arg(namespace) AND y.instance_id = o.instance_id AND y.status <> 'running'
            FOR UPDATE OF y
        ) f
    ) t
    WHERE x.namespace = sqlc.arg(namespace) AND x.ctid = t.tid
    RETURNING x.instance_id, x.execution_id
), i AS (
    INSERT INTO instances AS i (namespace, instance_id, execution_id, workflow_type, task_queue, input, execution_deadline,
                                parent_namespace, parent_instance_id, parent_execution_id, parent_child_id,
                                parent_close_policy, retry_policy, retry_attempt, search_attributes, parent_run_id, memo,
                                priority, cron_schedule)
    SELECT sqlc.arg(namespace), c.instance_id, COALESCE(d.execution_id, 0) + 1, c.workflow_type, c.task_queue, c.input,
           CASE WHEN c.timeout_ms > 0 THEN now() + c.timeout_ms * interval '1 millisecond' END,
           sqlc.arg(namespace), c.parent_instance_id, c.parent_execution_id, c.child_id, c.parent_close_policy,
           c.retry_policy, 1, c.search_attributes, c.parent_run_id, c.memo, c.priority, c.cron_schedule
    FROM c LEFT JOIN d ON d.instance_id = c.instance_id
    ORDER BY c.instance_id
    ON CONFLICT (namespace, instance_id) DO NOTHING
    RETURNING i.instance_id, i.execution_id, i.run_id
), f AS (
    -- Flow control, as in StartInstances: each child with a priority, its
    -- priority key, fairness key and stride.
    SELECT i.instance_id, c.task_queue,
           tether_priority_key(c.priority) AS pk,
           tether_fairness_key(c.priority) AS fk,
           tether_fairness_stride(c.priority) AS stride
    FROM i JOIN c ON c.instance_id = i.instance_id
    WHERE c.priority IS NOT NULL
), k AS (
    INSERT INTO flow_keys AS fk (namespace, task_queue, kind, fairness_key, pass, step)
    SELECT sqlc.arg(namespace), f.task_queue, 'w', f.fk,
           LEAST(now(), (SELECT q.pass FROM orchestrator_queue q
                         WHERE q.namespace = sqlc.arg(namespace) AND q.task_queue = f.task_queue
                           AND q.priority = min(f.pk) AND q.pass IS NOT NULL
                         ORDER BY q.pass LIMIT 1)) + sum(f.stride),
           sum(f.stride)
    FROM f GROUP BY f.task_queue, f.fk
    ORDER BY f.task_queue, f.fk
    ON CONFLICT (namespace, task_queue, kind, fairness_key) DO UPDATE
    SET pass = tether_flow_pass(fk.pass, excluded.step, excluded.pass),
        step = excluded.step
    RETURNING fk.task_queue, fk.fairness_key, fk.pass - fk.step AS base
), p AS (
    SELECT f.instance_id, f.pk,
           k.base + sum(f.stride) OVER (PARTITION BY f.task_queue, f.fk ORDER BY f.instance_id) AS pass
    FROM f JOIN k ON k.task_queue = f.task_queue AND k.fairness_key = f.fk
), starts AS (
    INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass,
                                    visible_at)
    SELECT sqlc.arg(namespace), c.instance_id, i.execution_id, c.task_queue, 'WorkflowStarted',
           jsonb_build_object('workflow_type', c.workflow_type, 'task_queue', c.task_queue,
                              'parent_workflow_id', c.parent_instance_id,
                              'parent_execution_id', c.parent_execution_id,
                              'run_id', i.run_id, 'parent_run_id', c.parent_run_id)
           || CASE WHEN c.input IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('input', c.input) END
           || CASE WHEN c.search_attributes IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('search_attributes', c.search_attributes) END
           || CASE WHEN c.memo IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('memo', c.memo) END
           || CASE WHEN c.header IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('header', c.header) END
           || CASE WHEN c.priority IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('priority', c.priority) END,
           COALESCE(p.pk, 3), p.pass, now() + c.delay_ms * interval '1 millisecond'
    FROM i JOIN c ON c.instance_id = i.instance_id LEFT JOIN p ON p.instance_id = i.instance_id
), parents AS (
    -- With the parent's priority (parent_priority: its stored one, absent
    -- for none), as EnqueueMessages gives a workflow's later turns.
    INSERT INTO orchestrator_queue (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass)
    SELECT sqlc.arg(namespace), c.parent_instance_id, c.parent_execution_id, c.parent_task_queue,
           CASE WHEN i.instance_id IS NULL THEN 'StartChildWorkflowFailed' ELSE 'ChildWorkflowStarted' END,
           jsonb_build_object('child_id', c.child_id, 'child_workflow_id', c.instance_id,
                              'workflow_type', c.workflow_type)
           || CASE WHEN i.instance_id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('child_execution_id', i.execution_id, 'child_run_id', i.run_id) END,
           tether_priority_key(c.parent_priority),
           -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN c.parent_priority IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = c.parent_task_queue
                          AND vq.priority = tether_priority_key(c.parent_priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
    FROM c LEFT JOIN i ON i.instance_id = c.instance_id
)
SELECT count(*) FROM i;

-- name: NotifyParents :many
-- Delivers the close of child workflows to their parents, in the
-- transaction that closed them: for each instance of instance_ids that
-- has a parent and is no longer running, a ChildWorkflowCompleted,
-- ChildWorkflowFailed, ChildWorkflowCanceled or ChildWorkflowTerminated
-- message to the parent's execution that started it, if it still runs.
-- A child lives in its parent's namespace (StartChildren), so that the
-- parent is found in the namespace too. The message has the parent's
-- priority (as EnqueueMessages). Returns the parents' task queues, whose
-- pollers the caller wakes, and whether each message is flow-controlled.
-- On Citus, NotifyParentsJoin.
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass)
SELECT p.namespace, p.instance_id, p.execution_id, p.task_queue,
       CASE c.status WHEN 'completed' THEN 'ChildWorkflowCompleted' WHEN 'failed' THEN 'ChildWorkflowFailed'
                     WHEN 'canceled' THEN 'ChildWorkflowCanceled' ELSE 'ChildWorkflowTerminated' END,
       jsonb_build_object('child_id', c.parent_child_id, 'child_workflow_id', c.instance_id,
                          'child_execution_id', c.execution_id, 'workflow_type', c.workflow_type)
       || CASE WHEN c.result IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('result', c.result) END
       || CASE WHEN c.error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('error', c.error) END,
       tether_priority_key(p.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN p.priority IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = p.namespace AND vq.task_queue = p.task_queue
                          AND vq.priority = tether_priority_key(p.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
FROM unnest(sqlc.arg(instance_ids)::text[]) AS k(id)
CROSS JOIN LATERAL (
    -- A key probe per id (LIMIT: never flattened into a join, which a
    -- generic plan made without statistics ran as a scan of the
    -- namespace).
    SELECT cx.instance_id, cx.execution_id, cx.workflow_type, cx.status, cx.result, cx.error,
           cx.parent_namespace, cx.parent_instance_id, cx.parent_execution_id, cx.parent_child_id
    FROM instances cx
    WHERE cx.namespace = sqlc.arg(namespace) AND cx.instance_id = k.id
      AND cx.parent_namespace = sqlc.arg(namespace)
      AND cx.parent_instance_id IS NOT NULL AND cx.status <> 'running'
    LIMIT 1
) c
CROSS JOIN LATERAL (
    SELECT px.namespace, px.instance_id, px.execution_id, px.task_queue, px.priority
    FROM instances px
    WHERE px.namespace = sqlc.arg(namespace) AND px.instance_id = c.parent_instance_id
      AND px.execution_id = c.parent_execution_id AND px.status = 'running'
    LIMIT 1
) p
RETURNING o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: NotifyParentsJoin :many
-- NotifyParents as plain joins, for Citus (Options.Citus), which pushes
-- down no LIMIT in a LATERAL over unnest; on plain PostgreSQL a generic
-- plan made without statistics runs it as a walk of the namespace.
-- Delivers the close of child workflows to their parents, in the
-- transaction that closed them: for each instance of instance_ids that
-- has a parent and is no longer running, a ChildWorkflowCompleted,
-- ChildWorkflowFailed, ChildWorkflowCanceled or ChildWorkflowTerminated
-- message to the parent's execution that started it, if it still runs.
-- A child lives in its parent's namespace (StartChildren), so that the
-- parent is found in the namespace too. Returns the parents' task queues,
-- whose pollers the caller wakes, and whether each message is
-- flow-controlled (the parent's priority, as in NotifyParents).
INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass)
SELECT p.namespace, p.instance_id, p.execution_id, p.task_queue,
       CASE c.status WHEN 'completed' THEN 'ChildWorkflowCompleted' WHEN 'failed' THEN 'ChildWorkflowFailed'
                     WHEN 'canceled' THEN 'ChildWorkflowCanceled' ELSE 'ChildWorkflowTerminated' END,
       jsonb_build_object('child_id', c.parent_child_id, 'child_workflow_id', c.instance_id,
                          'child_execution_id', c.execution_id, 'workflow_type', c.workflow_type)
       || CASE WHEN c.result IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('result', c.result) END
       || CASE WHEN c.error IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('error', c.error) END,
       tether_priority_key(p.priority),
       -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN p.priority IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = p.namespace AND vq.task_queue = p.task_queue
                          AND vq.priority = tether_priority_key(p.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
-- The children by primary key (= ANY of the ids), each parent by its key:
-- plain joins on the namespace too, which Citus pushes down to the
-- namespace's node (it pushes down no LIMIT in a LATERAL over unnest).
FROM instances c
JOIN instances p ON p.namespace = c.namespace AND p.instance_id = c.parent_instance_id
                AND p.execution_id = c.parent_execution_id AND p.status = 'running'
WHERE c.namespace = sqlc.arg(namespace) AND c.instance_id = ANY(sqlc.arg(instance_ids)::text[])
  AND c.parent_namespace = sqlc.arg(namespace)
  AND c.parent_instance_id IS NOT NULL AND c.status <> 'running'
RETURNING o.task_queue, (o.pass IS NOT NULL)::boolean AS flow;

-- name: CancelChildren :many
-- Asks running child workflows to cancel, in the ack's transaction of
-- their parent (parents: one object per parent execution, with the reason
-- of the cancel). With workflow_ids (a JSON array), the children so named
-- (the parent's request_cancel_child_workflow commands); without, every
-- child of the execution whose parent close policy is not abandon (the
-- parent closed or was canceled; ApplyClosePolicy does that now). A child
-- already asked keeps its first reason. Each gets a CancelRequested message, as from the cancel
-- endpoint, with the child's priority (as EnqueueMessages). Returns the
-- children's task queues, whose pollers the caller wakes, and whether a
-- message to each is flow-controlled.
WITH p AS (
    SELECT (x ->> 'instance_id')::text AS instance_id, (x ->> 'execution_id')::bigint AS execution_id,
           (x ->> 'reason')::text AS reason, (x -> 'workflow_ids')::jsonb AS workflow_ids
    FROM jsonb_array_elements(sqlc.arg(parents)::jsonb) x
), c AS (
    UPDATE instances c SET cancel_requested = true, cancel_reason = p.reason, updated_at = now()
    FROM p
    WHERE c.namespace = sqlc.arg(namespace) AND c.parent_namespace = sqlc.arg(parent_namespace)::text
      AND c.parent_instance_id = p.instance_id
      AND c.parent_execution_id = p.execution_id AND c.parent_instance_id IS NOT NULL
      AND c.status = 'running' AND NOT c.cancel_requested
      AND CASE WHEN p.workflow_ids IS NULL THEN c.parent_close_policy <> 'abandon'
               ELSE p.workflow_ids ? c.instance_id END
    RETURNING c.instance_id, c.task_queue, p.reason, c.priority
), m AS (
    -- execution_id named (NULL, as its default): Citus runs this INSERT
    -- through the coordinator and its copy wants every column it sends.
    INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass)
    SELECT sqlc.arg(namespace), c.instance_id, NULL::bigint, c.task_queue, 'CancelRequested', jsonb_build_object('reason', c.reason),
           tether_priority_key(c.priority),
           -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN c.priority IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = c.task_queue
                          AND vq.priority = tether_priority_key(c.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
    FROM c
    RETURNING o.task_queue, o.pass
)
SELECT m.task_queue, bool_or(m.pass IS NOT NULL)::boolean AS flow FROM m GROUP BY m.task_queue;

-- name: ApplyClosePolicy :many
-- Applies the parent close policy of parent executions that closed or
-- were canceled, in the ack's transaction (parents: one object per parent
-- execution, with the reason, parent_closed or parent_canceled). Running
-- request_cancel children are asked to cancel, as CancelChildren does:
-- one row each of kind 'wake' names the task queue to wake (flow: a
-- message to it is flow-controlled). Running
-- terminate children are locked and returned, one row each of kind
-- 'terminate', for the terminate writes (terminateInstances) with the
-- parent's reason. One statement, so that a parent without children
-- costs no more than before.
WITH rc AS (
    UPDATE instances c SET cancel_requested = true, cancel_reason = p.reason, updated_at = now()
    FROM (SELECT (x ->> 'instance_id')::text AS instance_id, (x ->> 'execution_id')::bigint AS execution_id,
                 (x ->> 'reason')::text AS reason
          FROM jsonb_array_elements(sqlc.arg(parents)::jsonb) x) p
    WHERE c.namespace = sqlc.arg(namespace) AND c.parent_namespace = sqlc.arg(parent_namespace)::text
      AND c.parent_instance_id = p.instance_id AND c.parent_execution_id = p.execution_id
      AND c.parent_instance_id IS NOT NULL AND c.status = 'running' AND NOT c.cancel_requested
      AND c.parent_close_policy = 'request_cancel'
    RETURNING c.instance_id, c.task_queue, p.reason, c.priority
), m AS (
    -- execution_id named (NULL, as its default): as in CancelChildren,
    -- with the child's priority.
    INSERT INTO orchestrator_queue AS o (namespace, instance_id, execution_id, task_queue, kind, payload, priority, pass)
    SELECT sqlc.arg(namespace), rc.instance_id, NULL::bigint, rc.task_queue, 'CancelRequested', jsonb_build_object('reason', rc.reason),
           tether_priority_key(rc.priority),
           -- Later message: LEAST(visible time, queue's virtual time) (see EnqueueMessages).
       CASE WHEN rc.priority IS NOT NULL
            THEN LEAST(now(),
                       (SELECT vq.pass - interval '1 microsecond' FROM orchestrator_queue vq
                        WHERE vq.namespace = sqlc.arg(namespace) AND vq.task_queue = rc.task_queue
                          AND vq.priority = tether_priority_key(rc.priority) AND vq.pass IS NOT NULL
                        ORDER BY vq.pass LIMIT 1)) END
    FROM rc
    RETURNING o.task_queue, o.pass
), term AS (
    -- The parents' children by a containment test and each one's reason
    -- by a JSON path, not by a join with the parents: Citus runs this CTE
    -- apart, and a join in it beside FOR UPDATE made it lose a column.
    SELECT c.instance_id, c.execution_id, c.workflow_type, c.input, c.next_event_id, c.next_activity_id,
           c.next_timer_id, c.last_event_at,
           (jsonb_path_query_first(sqlc.arg(parents)::jsonb, '$[*] ? (@.instance_id == $i && @.execution_id == $e)',
                                   jsonb_build_object('i', c.parent_instance_id, 'e', c.parent_execution_id)) ->> 'reason')::text AS reason
    FROM instances c
    WHERE c.namespace = sqlc.arg(namespace) AND c.parent_namespace = sqlc.arg(parent_namespace)::text
      AND c.parent_instance_id = ANY(ARRAY(SELECT x ->> 'instance_id' FROM jsonb_array_elements(sqlc.arg(parents)::jsonb) x))
      AND sqlc.arg(parents)::jsonb @> jsonb_build_array(jsonb_build_object('instance_id', c.parent_instance_id,
                                                                           'execution_id', c.parent_execution_id))
      AND c.parent_instance_id IS NOT NULL AND c.status = 'running' AND c.parent_close_policy = 'terminate'
    FOR UPDATE OF c
)
SELECT 'terminate'::text AS kind, term.instance_id, term.execution_id, term.workflow_type, term.input,
       term.next_event_id, term.next_activity_id, term.next_timer_id, term.last_event_at, term.reason,
       ''::text AS task_queue, false AS flow
FROM term
UNION ALL
SELECT 'wake'::text, '', 0::bigint, '', NULL::jsonb, 0::bigint, 0::bigint, 0::bigint, NULL::timestamptz,
       '', m.task_queue, bool_or(m.pass IS NOT NULL)
FROM m
GROUP BY m.task_queue;

-- name: NextRetryAttempt :exec
-- Counts the next execution of a child workflow retried by its retry
-- policy (in the ack's transaction that planned the retry).
UPDATE instances SET retry_attempt = retry_attempt + 1
WHERE namespace = sqlc.arg(namespace) AND instance_id = sqlc.arg(instance_id);
