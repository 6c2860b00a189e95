-- 0003_push_delivered: what each push config has been sent.
--
-- delivered_seq is the task seq (tasks.seq) of the latest state a push
-- config's webhook was sent (or given up on). A config whose task moved past
-- it is owed the task's current state: the Pusher finds such configs
-- (PushBacklog) after a stop, a crash or dropped events and sends them the
-- task. Existing configs are taken as up to date, so that upgrading does not
-- push every old task again.
ALTER TABLE push_configs ADD COLUMN delivered_seq INTEGER NOT NULL DEFAULT 0;
UPDATE push_configs SET delivered_seq = coalesce((SELECT seq FROM tasks WHERE tasks.id = push_configs.task_id), 0);
