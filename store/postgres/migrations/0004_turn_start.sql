-- 0004_turn_start: where the current turn of each task began.
--
-- A turn starts at submit and again when the caller answers input_required
-- or retries a failed or dead-lettered task by hand; the agent's
-- max_attempts bounds the attempts of each turn. turn_start is the task's
-- attempt count when its current turn began, so attempt - turn_start is the
-- attempt within the turn. Existing tasks take it from their record: the
-- last transition that queued them again at a caller's request.
ALTER TABLE tasks ADD COLUMN turn_start integer NOT NULL DEFAULT 0;

UPDATE tasks SET turn_start = coalesce((
    SELECT r.attempt FROM task_records r
    WHERE r.task_id = tasks.id AND r.to_state = 'queued'
      AND r.from_state IN ('input_required', 'failed', 'dead_letter')
    ORDER BY r.seq DESC LIMIT 1
), 0);
