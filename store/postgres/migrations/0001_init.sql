-- 0001_init: the first schema of the pactum PostgreSQL store.
--
-- Tables are created in the schema the store was opened with (the first
-- schema of search_path). Times are timestamptz, which keeps microseconds,
-- so the times callers pass (UTC, whole microseconds) round-trip exactly;
-- NULL stands for the zero time. JSON documents are text, never jsonb: jsonb
-- would reformat them, and the audit hash and the round-trip of raw JSON
-- parts need the bytes back unchanged. Audit data and push credentials are
-- bytea for the same reason. Identifiers use the "C" collation, so ordering
-- by id is by bytes, as in the SQLite store, whatever the database's locale.

-- tasks holds each task's current state: an index over task_records, kept in
-- the same transaction as the record that produced it.
CREATE TABLE tasks (
    id             text COLLATE "C" NOT NULL PRIMARY KEY,
    context_id     text COLLATE "C" NOT NULL,
    agent          text COLLATE "C" NOT NULL,
    actor          text COLLATE "C" NOT NULL,   -- envelope.actor, for filters
    envelope       text        NOT NULL,         -- task.Envelope JSON, immutable
    payload_hash   text        NOT NULL,
    state          text        NOT NULL,
    attempt        integer     NOT NULL,
    max_attempts   integer     NOT NULL,
    run_after      timestamptz,                  -- NULL: claimable once queued
    lease_owner    text        NOT NULL DEFAULT '',
    lease_expires  timestamptz,                  -- NULL: no lease
    error_code     text        NOT NULL DEFAULT '',
    reason         text        NOT NULL DEFAULT '',
    rejected       boolean     NOT NULL DEFAULT false,
    status_message text,                         -- task.Message JSON or NULL
    seq            integer     NOT NULL,         -- last task_records.seq
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

-- ListTasks: newest first, optionally within a context, an actor or an agent.
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_context ON tasks (context_id, created_at, id);
CREATE INDEX tasks_actor   ON tasks (actor, created_at, id);
CREATE INDEX tasks_agent   ON tasks (agent, created_at, id);
-- Claim: queued tasks, oldest first.
CREATE INDEX tasks_queued ON tasks (created_at, id) WHERE state = 'queued';
-- NextRunAfter: the earliest time a queued task becomes claimable.
CREATE INDEX tasks_queued_due ON tasks ((coalesce(run_after, updated_at))) WHERE state = 'queued';
-- ExpiredLeases.
CREATE INDEX tasks_leased ON tasks (lease_expires, id) WHERE state = 'in_progress';

-- task_messages is a task's conversation history, appended in seq order.
CREATE TABLE task_messages (
    task_id text COLLATE "C" NOT NULL REFERENCES tasks (id),
    seq     integer NOT NULL,
    message text    NOT NULL,                    -- task.Message JSON
    PRIMARY KEY (task_id, seq)
);

-- task_artifacts holds what agents produced; an artifact stored again under
-- the same id replaces the old one and keeps its position.
CREATE TABLE task_artifacts (
    task_id     text COLLATE "C" NOT NULL REFERENCES tasks (id),
    artifact_id text COLLATE "C" NOT NULL,
    position    integer NOT NULL,
    artifact    text    NOT NULL,                -- task.Artifact JSON
    PRIMARY KEY (task_id, artifact_id)
);

-- task_records is the append-only execution record: one row per transition.
CREATE TABLE task_records (
    task_id        text COLLATE "C" NOT NULL REFERENCES tasks (id),
    seq            integer     NOT NULL,
    from_state     text        NOT NULL,
    to_state       text        NOT NULL,
    at             timestamptz NOT NULL,
    attempt        integer     NOT NULL,
    node           text        NOT NULL DEFAULT '',
    reason         text        NOT NULL DEFAULT '',
    error_code     text        NOT NULL DEFAULT '',
    policy_version text        NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, seq)
);

-- audit_log is the hash-chained audit trail: one global sequence.
CREATE TABLE audit_log (
    seq       bigint      NOT NULL PRIMARY KEY,
    at        timestamptz NOT NULL,
    kind      text        NOT NULL,
    task_id   text        NOT NULL DEFAULT '',
    actor     text        NOT NULL DEFAULT '',
    data      bytea,                             -- exact bytes: the hash covers them
    prev_hash text        NOT NULL,
    hash      text        NOT NULL
);

-- audit_head is the chain's head: the last sealed entry's seq and hash. It
-- has exactly one row. Every transaction that seals entries locks it (SELECT
-- … FOR UPDATE) as its last step and updates it with the entries it
-- inserts, so concurrent writers, on any number of nodes, append one after
-- the other and the chain stays linear.
CREATE TABLE audit_head (
    singleton boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (singleton),
    seq       bigint  NOT NULL,
    hash      text    NOT NULL
);
INSERT INTO audit_head (singleton, seq, hash) VALUES (true, 0, '');

-- The triggers catch bugs, not attackers: whoever owns the tables can drop
-- them. audit.Verify catches the attackers.
CREATE FUNCTION pactum_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END
$$;
CREATE TRIGGER task_records_append_only BEFORE UPDATE OR DELETE ON task_records
    FOR EACH ROW EXECUTE FUNCTION pactum_append_only();
CREATE TRIGGER task_records_no_truncate BEFORE TRUNCATE ON task_records
    FOR EACH STATEMENT EXECUTE FUNCTION pactum_append_only();
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION pactum_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION pactum_append_only();

-- idempotency_keys maps (actor, key) to the task it created until
-- expires_at. The primary key is what makes duplicate submits racing on
-- several connections or nodes create one task: INSERT … ON CONFLICT waits
-- for the other transaction and then sees its key. The reference is checked
-- at commit, because the key is taken before the task row is written.
CREATE TABLE idempotency_keys (
    actor      text COLLATE "C" NOT NULL,
    key        text COLLATE "C" NOT NULL,
    task_id    text COLLATE "C" NOT NULL REFERENCES tasks (id) DEFERRABLE INITIALLY DEFERRED,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (actor, key)
);
-- PurgeIdempotencyKeys.
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- push_configs are callers' webhook subscriptions to a task's events.
CREATE TABLE push_configs (
    task_id    text COLLATE "C" NOT NULL REFERENCES tasks (id),
    id         text COLLATE "C" NOT NULL,
    url        text        NOT NULL,
    token      text        NOT NULL DEFAULT '',
    auth       bytea,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (task_id, id)
);
