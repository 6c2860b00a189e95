-- 0006_children: parent and child tasks, and evidence on records.
--
-- A parent task spawns children inside one of its transitions; each child's
-- envelope names its parent and its step (also kept in the envelope JSON:
-- these columns are for queries). children counts what a task spawned, so
-- that a transition of a task without children needs no query to know it.
-- A step names one child of a parent: the unique index refuses a step used
-- twice. Tasks without a parent (parent_task_id '') stay out of both
-- indexes. Tasks written before this migration have no parent.
--
-- evidence is what the execution pipeline recorded about the attempt a
-- transition ended: a JSON array of task.Evidence as text (never jsonb: it
-- comes back as sealed), NULL for none.
ALTER TABLE tasks ADD COLUMN parent_task_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN step text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN children integer NOT NULL DEFAULT 0;
ALTER TABLE task_records ADD COLUMN evidence text;

-- ListTasks of one parent's children, oldest first; the unsettled children
-- of a parent (its wake-up and its cancel).
CREATE INDEX tasks_parent ON tasks (parent_task_id, created_at, id) WHERE parent_task_id <> '';
CREATE UNIQUE INDEX tasks_parent_step ON tasks (parent_task_id, step) WHERE parent_task_id <> '';
