-- 0006_messages_without_rowid: task_messages and task_artifacts become
-- WITHOUT ROWID tables.
--
-- As rowid tables each was two b-trees, the rows and the index of their
-- primary key, so every task that gained a message and an artifact wrote
-- four pages to the write-ahead log where two do: at one client, one
-- commit per blocking request, each page is a log frame and two pwrites.
-- Clustered on their primary key the rows are read in the order the
-- queries want them (a task's messages by seq), and nothing reads their
-- rowid. A row of more than ~1,000 bytes keeps the rest in overflow
-- pages, as a row of more than ~4,000 did (docs/benchmarks.md, issue 31,
-- third session, measured both).
--
-- The tables are rebuilt as SQLite's documentation says for changes ALTER
-- TABLE cannot make (lang_altertable.html, "otheralter"): create the new
-- table, copy, drop the old one, rename the new one. The migration runs
-- in one transaction with foreign_keys on, which that procedure turns off
-- first; it need not here. Nothing references these two tables, so
-- dropping one deletes no row elsewhere and renaming rewrites no other
-- table's REFERENCES; they have no index, trigger or view of their own
-- to recreate. Their own REFERENCES tasks (id) is checked for each copied
-- row: a row whose task is missing (only possible in a file written with
-- foreign keys off) fails the migration, which then changes nothing.

CREATE TABLE task_messages_new (
    task_id TEXT    NOT NULL REFERENCES tasks (id),
    seq     INTEGER NOT NULL,
    message TEXT    NOT NULL,                 -- task.Message JSON
    PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO task_messages_new (task_id, seq, message)
SELECT task_id, seq, message FROM task_messages ORDER BY task_id, seq;
DROP TABLE task_messages;
ALTER TABLE task_messages_new RENAME TO task_messages;

CREATE TABLE task_artifacts_new (
    task_id     TEXT    NOT NULL REFERENCES tasks (id),
    artifact_id TEXT    NOT NULL,
    position    INTEGER NOT NULL,
    artifact    TEXT    NOT NULL,             -- task.Artifact JSON
    PRIMARY KEY (task_id, artifact_id)
) STRICT, WITHOUT ROWID;
INSERT INTO task_artifacts_new (task_id, artifact_id, position, artifact)
SELECT task_id, artifact_id, position, artifact FROM task_artifacts ORDER BY task_id, artifact_id;
DROP TABLE task_artifacts;
ALTER TABLE task_artifacts_new RENAME TO task_artifacts;
