-- +goose Up
-- schedule_actions no longer references schedules: Citus distributes
-- neither table while the other is a plain table holding a foreign key
-- between them (docs/architecture.md, "Distributed by namespace"). What
-- the key gave is kept by the statements: an action is only inserted under
-- its schedule's lock (LockSchedule, the scheduler's claim), and the
-- deletion of a schedule, or of a namespace's schedules, deletes their
-- actions in the same statement.
ALTER TABLE schedule_actions DROP CONSTRAINT schedule_actions_namespace_schedule_id_fkey;

-- +goose Down
DELETE FROM schedule_actions a
WHERE NOT EXISTS (SELECT 1 FROM schedules s WHERE s.namespace = a.namespace AND s.schedule_id = a.schedule_id);
ALTER TABLE schedule_actions ADD CONSTRAINT schedule_actions_namespace_schedule_id_fkey
    FOREIGN KEY (namespace, schedule_id) REFERENCES schedules (namespace, schedule_id) ON DELETE CASCADE;
