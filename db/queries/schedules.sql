-- name: CreateSchedule :execrows
-- A new schedule; no row is written when the id is taken.
INSERT INTO schedules (namespace, schedule_id, spec, action, overlap_policy, catchup_window_ms, paused, note,
                       remaining_actions, next_slot, next_fire_at, created_at, updated_at)
VALUES (sqlc.arg(namespace), sqlc.arg(schedule_id), sqlc.arg(spec), sqlc.arg(action), sqlc.arg(overlap_policy),
        sqlc.arg(catchup_window_ms), sqlc.arg(paused), sqlc.arg(note), sqlc.narg(remaining_actions),
        sqlc.narg(next_slot), sqlc.narg(next_fire_at), sqlc.arg(now), sqlc.arg(now))
ON CONFLICT (namespace, schedule_id) DO NOTHING;

-- name: GetSchedule :one
SELECT * FROM schedules WHERE namespace = sqlc.arg(namespace) AND schedule_id = sqlc.arg(schedule_id);

-- name: LockSchedule :one
-- A schedule, locked for the transaction: the scheduler's claim and every
-- change take this lock first, so a slot is handled by one of them.
SELECT * FROM schedules WHERE namespace = sqlc.arg(namespace) AND schedule_id = sqlc.arg(schedule_id)
FOR UPDATE;

-- name: ClaimDueSchedule :one
-- The scheduler's claim: one due, unpaused schedule that no other
-- transaction holds (another replica skips it). One namespace per
-- statement.
SELECT * FROM schedules
WHERE namespace = sqlc.arg(namespace) AND NOT paused AND next_fire_at IS NOT NULL AND next_fire_at <= sqlc.arg(now)
ORDER BY next_fire_at
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: ClaimBufferedSchedule :one
-- A schedule whose buffered slot may start: none of its workflows runs
-- any more. One namespace per statement.
SELECT * FROM schedules s
WHERE s.namespace = sqlc.arg(namespace) AND s.buffered_slot IS NOT NULL AND NOT s.paused
  AND NOT EXISTS (
    SELECT 1 FROM schedule_actions a
    JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = a.workflow_id
    WHERE a.namespace = sqlc.arg(namespace) AND a.schedule_id = s.schedule_id AND i.status = 'running')
LIMIT 1
FOR UPDATE OF s SKIP LOCKED;

-- name: NextScheduleFire :one
-- The earliest fire time of the unpaused schedules (by the schedules_due
-- index; 9999-12-31 when none is due ever), and whether any holds a
-- buffered slot.
SELECT COALESCE((SELECT d.next_fire_at FROM schedules d
                 WHERE NOT d.paused AND d.next_fire_at IS NOT NULL
                 ORDER BY d.next_fire_at LIMIT 1), '9999-12-31T00:00:00Z')::timestamptz AS next_fire_at,
       EXISTS (SELECT 1 FROM schedules b WHERE b.buffered_slot IS NOT NULL AND NOT b.paused)::boolean AS buffered;

-- name: ListSchedules :many
-- A page of a namespace's schedules by id, after the page token's id.
SELECT * FROM schedules
WHERE namespace = sqlc.arg(namespace) AND schedule_id > sqlc.arg(after)
ORDER BY schedule_id
LIMIT sqlc.arg(max_rows);

-- name: ReplaceSchedule :exec
-- PUT: a new spec, action and policies, and the next slot they give.
UPDATE schedules
SET spec = sqlc.arg(spec), action = sqlc.arg(action), overlap_policy = sqlc.arg(overlap_policy),
    catchup_window_ms = sqlc.arg(catchup_window_ms), paused = sqlc.arg(paused), note = sqlc.arg(note),
    remaining_actions = sqlc.narg(remaining_actions), next_slot = sqlc.narg(next_slot),
    next_fire_at = sqlc.narg(next_fire_at), buffered_slot = NULL, updated_at = sqlc.arg(now)
WHERE namespace = sqlc.arg(namespace) AND schedule_id = sqlc.arg(schedule_id);

-- name: SetSchedulePaused :exec
UPDATE schedules
SET paused = sqlc.arg(paused), note = sqlc.arg(note), next_slot = sqlc.narg(next_slot),
    next_fire_at = sqlc.narg(next_fire_at), updated_at = sqlc.arg(now)
WHERE namespace = sqlc.arg(namespace) AND schedule_id = sqlc.arg(schedule_id);

-- name: AdvanceSchedule :exec
-- What a firing changed: the next slot, the buffered slot, the remaining
-- actions and the counters.
UPDATE schedules
SET next_slot = sqlc.narg(next_slot), next_fire_at = sqlc.narg(next_fire_at),
    buffered_slot = sqlc.narg(buffered_slot), remaining_actions = sqlc.narg(remaining_actions),
    actions_taken = sqlc.arg(actions_taken), overlap_skipped = sqlc.arg(overlap_skipped),
    missed_catchup = sqlc.arg(missed_catchup)
WHERE namespace = sqlc.arg(namespace) AND schedule_id = sqlc.arg(schedule_id);

-- name: DeleteSchedule :execrows
-- A schedule and its actions (schedule_actions has no foreign key to it:
-- migration 00040).
WITH a AS (
    DELETE FROM schedule_actions x WHERE x.namespace = sqlc.arg(namespace) AND x.schedule_id = sqlc.arg(schedule_id)
)
DELETE FROM schedules s WHERE s.namespace = sqlc.arg(namespace) AND s.schedule_id = sqlc.arg(schedule_id);

-- name: InsertScheduleAction :execrows
-- The action of a slot; no row when the slot fired already.
INSERT INTO schedule_actions (namespace, schedule_id, slot_at, workflow_id, kind, fired_at)
VALUES (sqlc.arg(namespace), sqlc.arg(schedule_id), sqlc.arg(slot_at), sqlc.arg(workflow_id), sqlc.arg(kind), sqlc.arg(fired_at))
ON CONFLICT DO NOTHING;

-- name: TrimScheduleActions :exec
-- Keeps the newest 100 actions of a schedule.
DELETE FROM schedule_actions d
WHERE d.namespace = sqlc.arg(namespace) AND d.schedule_id = sqlc.arg(schedule_id)
  AND d.slot_at < (SELECT k.slot_at FROM schedule_actions k
                   WHERE k.namespace = sqlc.arg(namespace) AND k.schedule_id = sqlc.arg(schedule_id)
                   ORDER BY k.slot_at DESC OFFSET 99 LIMIT 1);

-- name: RecentScheduleActions :many
-- The newest actions of a schedule with their workflows' status now.
SELECT a.slot_at, a.fired_at, a.workflow_id, a.kind, COALESCE(i.status, '')::text AS status
FROM schedule_actions a
LEFT JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = a.workflow_id
WHERE a.namespace = sqlc.arg(namespace) AND a.schedule_id = sqlc.arg(schedule_id)
ORDER BY a.fired_at DESC, a.slot_at DESC
LIMIT sqlc.arg(max_rows);

-- name: RunningScheduleWorkflows :many
-- The workflows a schedule started that still run.
SELECT a.workflow_id
FROM schedule_actions a
JOIN instances i ON i.namespace = sqlc.arg(namespace) AND i.instance_id = a.workflow_id
WHERE a.namespace = sqlc.arg(namespace) AND a.schedule_id = sqlc.arg(schedule_id) AND i.status = 'running'
ORDER BY a.slot_at
LIMIT sqlc.arg(max_rows);
