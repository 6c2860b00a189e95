-- 0001_init: the first schema of the pactum SQLite store.
--
-- Times are INTEGER unix microseconds (UTC), so they round-trip exactly;
-- NULL stands for the zero time. JSON documents are TEXT, audit data is BLOB
-- so its bytes (which the hash covers) come back unchanged.

-- tasks holds each task's current state: an index over task_records, kept in
-- the same transaction as the record that produced it.
CREATE TABLE tasks (
    id             TEXT    NOT NULL PRIMARY KEY,
    context_id     TEXT    NOT NULL,
    agent          TEXT    NOT NULL,
    actor          TEXT    NOT NULL,          -- envelope.actor, for filters
    envelope       TEXT    NOT NULL,          -- task.Envelope JSON, immutable
    payload_hash   TEXT    NOT NULL,
    state          TEXT    NOT NULL,
    attempt        INTEGER NOT NULL,
    max_attempts   INTEGER NOT NULL,
    run_after      INTEGER,                   -- NULL: claimable once queued
    lease_owner    TEXT    NOT NULL DEFAULT '',
    lease_expires  INTEGER,                   -- NULL: no lease
    error_code     TEXT    NOT NULL DEFAULT '',
    reason         TEXT    NOT NULL DEFAULT '',
    rejected       INTEGER NOT NULL DEFAULT 0,
    status_message TEXT,                      -- task.Message JSON or NULL
    seq            INTEGER NOT NULL,          -- last task_records.seq
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT;

-- ListTasks: newest first, optionally within a context, an actor or an agent.
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_context ON tasks (context_id, created_at, id);
CREATE INDEX tasks_actor   ON tasks (actor, created_at, id);
CREATE INDEX tasks_agent   ON tasks (agent, created_at, id);
-- Claim: queued tasks, oldest first.
CREATE INDEX tasks_queued ON tasks (created_at, id) WHERE state = 'queued';
-- NextRunAfter: the earliest time a queued task becomes claimable.
CREATE INDEX tasks_queued_due ON tasks (coalesce(run_after, updated_at)) WHERE state = 'queued';
-- ExpiredLeases.
CREATE INDEX tasks_leased ON tasks (lease_expires) WHERE state = 'in_progress';

-- task_messages is a task's conversation history, appended in seq order.
CREATE TABLE task_messages (
    task_id TEXT    NOT NULL REFERENCES tasks (id),
    seq     INTEGER NOT NULL,
    message TEXT    NOT NULL,                 -- task.Message JSON
    PRIMARY KEY (task_id, seq)
) STRICT;

-- task_artifacts holds what agents produced; an artifact stored again under
-- the same id replaces the old one and keeps its position.
CREATE TABLE task_artifacts (
    task_id     TEXT    NOT NULL REFERENCES tasks (id),
    artifact_id TEXT    NOT NULL,
    position    INTEGER NOT NULL,
    artifact    TEXT    NOT NULL,             -- task.Artifact JSON
    PRIMARY KEY (task_id, artifact_id)
) STRICT;

-- task_records is the append-only execution record: one row per transition.
CREATE TABLE task_records (
    task_id        TEXT    NOT NULL REFERENCES tasks (id),
    seq            INTEGER NOT NULL,
    from_state     TEXT    NOT NULL,
    to_state       TEXT    NOT NULL,
    at             INTEGER NOT NULL,
    attempt        INTEGER NOT NULL,
    node           TEXT    NOT NULL DEFAULT '',
    reason         TEXT    NOT NULL DEFAULT '',
    error_code     TEXT    NOT NULL DEFAULT '',
    policy_version TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;                      -- small rows: one b-tree, not two

CREATE TRIGGER task_records_no_update BEFORE UPDATE ON task_records
BEGIN SELECT RAISE(ABORT, 'task_records is append-only'); END;
CREATE TRIGGER task_records_no_delete BEFORE DELETE ON task_records
BEGIN SELECT RAISE(ABORT, 'task_records is append-only'); END;

-- audit_log is the hash-chained audit trail: one global sequence.
CREATE TABLE audit_log (
    seq       INTEGER NOT NULL PRIMARY KEY,
    at        INTEGER NOT NULL,
    kind      TEXT    NOT NULL,
    task_id   TEXT    NOT NULL DEFAULT '',
    actor     TEXT    NOT NULL DEFAULT '',
    data      BLOB,
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL
) STRICT;

-- The triggers catch bugs, not attackers: whoever can write the file can drop
-- them. audit.Verify catches the attackers.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- idempotency_keys maps (actor, key) to the task it created until expires_at.
CREATE TABLE idempotency_keys (
    actor      TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    task_id    TEXT    NOT NULL REFERENCES tasks (id),
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (actor, key)
) STRICT, WITHOUT ROWID;

-- push_configs are callers' webhook subscriptions to a task's events.
CREATE TABLE push_configs (
    task_id    TEXT    NOT NULL REFERENCES tasks (id),
    id         TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    token      TEXT    NOT NULL DEFAULT '',
    auth       BLOB,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, id)
) STRICT;
