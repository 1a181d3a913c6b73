-- +goose Up
-- The reader role: a key that reads workflows, their histories, workers
-- and task queues, and changes nothing (docs/security.md).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('worker', 'client', 'admin', 'reader'));

-- +goose Down
DELETE FROM api_keys WHERE role = 'reader';
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('worker', 'client', 'admin'));
