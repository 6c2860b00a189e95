package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"strings"

	"github.com/pactum/pactum/store/internal/driver"
)

// taskCols is the column list every task query selects, in scanTask order.
const taskCols = `id, context_id, agent, envelope, payload_hash, state, attempt,
	max_attempts, run_after, lease_owner, lease_expires, error_code, reason,
	rejected, status_message, seq, created_at, updated_at, turn_start, children`

// forUpdateCols is taskCols and what scanForUpdate reads besides: the
// envelope's actor, parent and step, kept in columns so that a transition
// need not decode the envelope in the single writer.
const forUpdateCols = taskCols + `, actor, parent_task_id, step`

// updateTaskSQL writes a task's mutable columns by id (updateTask);
// advanceTask adds the condition that the row is still as it was read.
const updateTaskSQL = `UPDATE tasks SET state = ?, attempt = ?, run_after = ?, lease_owner = ?,
	lease_expires = ?, error_code = ?, reason = ?, rejected = ?, status_message = ?,
	seq = ?, updated_at = ?, turn_start = ?, children = ? WHERE id = ?`

// unsettled is the condition on a parent's (?1) children that are not
// Terminal. Its term excluding the empty parent lets SQLite use the partial
// index tasks_parent.
const unsettled = `parent_task_id = ?1 AND parent_task_id <> ''
	AND state NOT IN ('succeeded', 'failed', 'canceled', 'dead_letter')`

// stmts holds the hot statements, prepared once per pool: the read
// statements on the read pool (database/sql prepares a statement again on
// each further connection of the pool that runs it), all of them on the
// writer's connection as the driver's own statements (conn.go).
type stmts struct {
	taskByID      *stmt
	taskForUpdate *stmt
	// taskForTransition is taskForUpdate with the envelope only when ?2
	// is true.
	taskForTransition *stmt
	taskExists        *stmt
	insertTask        *stmt
	updateTask        *stmt
	// advanceTask is updateTask on the condition that the task is still
	// as the writer read it (state, lease owner, seq): Transition's write.
	advanceTask  *stmt
	insertRecord *stmt
	// insertRecordsN[n] and insertAuditN[n] insert n rows in one statement
	// (2 ≤ n < multiRows): a submission writes several of each.
	insertRecordsN [multiRows]*stmt
	insertAuditN   [multiRows]*stmt
	records        *stmt
	// unsettledKids and countUnsettled read a parent's children that are
	// not Terminal (driver.Family).
	unsettledKids  *stmt
	countUnsettled *stmt
	auditHead      *stmt
	moveHead       *stmt
	insertAudit    *stmt
	auditAfter     *stmt
	headRecord     *stmt
	insertMessage  *stmt
	appendMessage  *stmt
	historyAll     *stmt
	historyLast    *stmt
	upsertArtifact *stmt
	artifacts      *stmt
	idemGet        *stmt
	idemPut        *stmt
	idemPurge      *stmt
	// begin, commit and rollback are the writer's transaction: it runs
	// them itself on its connection instead of through a *sql.Tx, whose
	// goroutines (one per transaction, one per query in it) are half of a
	// request's at one client.
	begin      *stmt
	commit     *stmt
	rollback   *stmt
	savepoint  *stmt
	rollbackTo *stmt
	release    *stmt
	// savepointG, rollbackToG and releaseG wrap a group of write
	// functions run without savepoints of their own (batch.go runGroup).
	savepointG    *stmt
	rollbackToG   *stmt
	releaseG      *stmt
	claimNext     *stmt
	claimNextOf   *stmt
	claimOne      *stmt
	renewLease    *stmt
	expiredLeases *stmt
	nextRunAfter  *stmt
	putPush       *stmt
	getPush       *stmt
	listPush      *stmt
	anyPush       *stmt
	deletePush    *stmt
	markPush      *stmt
	pushBacklog   *stmt

	// nv is the writer's argument buffer (conn.go args).
	nv []sqldriver.NamedValue
}

func (s *stmts) list(write bool) []struct {
	p   **stmt
	sql string
} {
	type def = struct {
		p   **stmt
		sql string
	}
	reads := []def{
		{&s.taskByID, `SELECT ` + taskCols + ` FROM tasks WHERE id = ?`},
		{&s.taskForUpdate, `SELECT ` + forUpdateCols + ` FROM tasks WHERE id = ?`},
		{&s.taskForTransition, `SELECT ` + strings.Replace(forUpdateCols, " envelope,", " CASE WHEN ?2 THEN envelope END,", 1) +
			` FROM tasks WHERE id = ?1`},
		{&s.taskExists, `SELECT 1 FROM tasks WHERE id = ?`},
		{&s.records, `SELECT ` + driver.RecordCols + ` FROM task_records WHERE task_id = ? ORDER BY seq`},
		{&s.auditAfter, `SELECT seq, at, kind, task_id, actor, data, prev_hash, hash
			FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`},
		{&s.headRecord, `SELECT seq, hash FROM audit_head`},
		{&s.historyAll, `SELECT message FROM task_messages WHERE task_id = ? ORDER BY seq`},
		{&s.historyLast, `SELECT message FROM (
			SELECT seq, message FROM task_messages WHERE task_id = ? ORDER BY seq DESC LIMIT ?
		) ORDER BY seq`},
		{&s.artifacts, `SELECT artifact FROM task_artifacts WHERE task_id = ? ORDER BY position`},
		{&s.expiredLeases, `SELECT ` + taskCols + ` FROM tasks
			WHERE state = 'in_progress' AND lease_expires < ? ORDER BY lease_expires, id LIMIT ?`},
		{&s.nextRunAfter, `SELECT min(coalesce(run_after, updated_at)) FROM tasks WHERE state = 'queued'`},
		{&s.getPush, `SELECT task_id, id, url, token, auth, created_at FROM push_configs WHERE task_id = ? AND id = ?`},
		{&s.anyPush, `SELECT EXISTS (SELECT 1 FROM push_configs)`},
		{&s.listPush, `SELECT task_id, id, url, token, auth, created_at FROM push_configs WHERE task_id = ? ORDER BY created_at, id`},
		{&s.pushBacklog, `SELECT p.task_id, p.id, p.url, p.token, p.auth, p.created_at, p.delivered_seq, t.seq
			FROM push_configs p JOIN tasks t ON t.id = p.task_id
			WHERE p.delivered_seq < t.seq AND t.updated_at < ? AND (p.task_id, p.id) > (?, ?)
			ORDER BY p.task_id, p.id LIMIT ?`},
	}
	if !write {
		return reads
	}
	defs := append(reads, []def{
		{&s.insertTask, `INSERT INTO tasks (id, context_id, agent, actor, envelope, payload_hash, state, attempt,
			max_attempts, run_after, lease_owner, lease_expires, error_code, reason,
			rejected, status_message, seq, created_at, updated_at, parent_task_id, step)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.updateTask, updateTaskSQL},
		{&s.advanceTask, updateTaskSQL + ` AND state = ? AND lease_owner = ? AND seq = ?`},
		{&s.insertRecord, `INSERT INTO task_records (` + driver.RecordCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.unsettledKids, `SELECT ` + forUpdateCols + ` FROM tasks WHERE ` + unsettled + ` ORDER BY created_at, id`},
		{&s.countUnsettled, `SELECT count(*) FROM tasks WHERE ` + unsettled},
		// The head record (migration 0002), not max(seq): entries cut off
		// the end must not let the chain continue as if they never were.
		{&s.auditHead, `SELECT seq, hash FROM audit_head`},
		{&s.moveHead, `UPDATE audit_head SET seq = ?, hash = ?`},
		{&s.insertAudit, `INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insertMessage, `INSERT INTO task_messages (task_id, seq, message) VALUES (?, ?, ?)`},
		// VALUES with a scalar subquery, not INSERT … SELECT: SQLite copies
		// the result of a SELECT from the table it inserts into to a
		// temporary table first (3.7 against 5.9 µs per message).
		{&s.appendMessage, `INSERT INTO task_messages (task_id, seq, message)
			VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM task_messages WHERE task_id = ?1), ?2)`},
		{&s.upsertArtifact, `INSERT INTO task_artifacts (task_id, artifact_id, position, artifact)
			VALUES (?1, ?2, (SELECT coalesce(max(position), 0) + 1 FROM task_artifacts WHERE task_id = ?1), ?3)
			ON CONFLICT (task_id, artifact_id) DO UPDATE SET artifact = excluded.artifact`},
		{&s.idemGet, `SELECT task_id, expires_at FROM idempotency_keys WHERE actor = ? AND key = ?`},
		{&s.idemPurge, `DELETE FROM idempotency_keys WHERE expires_at <= ?`},
		{&s.begin, `BEGIN IMMEDIATE`},
		{&s.commit, `COMMIT`},
		{&s.rollback, `ROLLBACK`},
		{&s.savepoint, `SAVEPOINT w`},
		{&s.rollbackTo, `ROLLBACK TO w`},
		{&s.release, `RELEASE w`},
		{&s.savepointG, `SAVEPOINT g`},
		{&s.rollbackToG, `ROLLBACK TO g`},
		{&s.releaseG, `RELEASE g`},
		// Takes the key unless a live one holds it: an expired key (expiry
		// at or before the last parameter, now) is replaced; a live one
		// leaves the statement with no row changed.
		{&s.idemPut, `INSERT INTO idempotency_keys (actor, key, task_id, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (actor, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
			WHERE idempotency_keys.expires_at <= ?`},
		{&s.claimNext, `SELECT ` + taskCols + ` FROM tasks
			WHERE state = 'queued' AND (run_after IS NULL OR run_after <= ?)
			ORDER BY created_at, id LIMIT ?`},
		// claimNext with ClaimParams.Agents (?3) and Except (?4) as JSON
		// arrays, NULL for no filter.
		{&s.claimNextOf, `SELECT ` + taskCols + ` FROM tasks
			WHERE state = 'queued' AND (run_after IS NULL OR run_after <= ?1)
			AND (?3 IS NULL OR agent IN (SELECT value FROM json_each(?3)))
			AND (?4 IS NULL OR agent NOT IN (SELECT value FROM json_each(?4)))
			ORDER BY created_at, id LIMIT ?2`},
		{&s.claimOne, `SELECT ` + taskCols + ` FROM tasks
			WHERE id = ? AND state = 'queued' AND (run_after IS NULL OR run_after <= ?)`},
		{&s.renewLease, `UPDATE tasks SET lease_expires = ?
			WHERE id = ? AND state = 'in_progress' AND lease_owner = ?`},
		{&s.putPush, `INSERT INTO push_configs (task_id, id, url, token, auth, created_at, delivered_seq)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?7 THEN 0 ELSE (SELECT seq FROM tasks WHERE id = ?1) END)
			ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,
			auth = excluded.auth, created_at = excluded.created_at, delivered_seq = excluded.delivered_seq`},
		{&s.markPush, `UPDATE push_configs SET delivered_seq = ? WHERE task_id = ? AND id = ? AND delivered_seq < ?`},
		{&s.deletePush, `DELETE FROM push_configs WHERE task_id = ? AND id = ?`},
	}...)
	for n := 2; n < multiRows; n++ {
		defs = append(defs,
			def{&s.insertRecordsN[n], `INSERT INTO task_records (` + driver.RecordCols + `) VALUES ` + rows(n, 11)},
			def{&s.insertAuditN[n], `INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash) VALUES ` + rows(n, 8)})
	}
	return defs
}

// multiRows bounds the multi-row insert statements kept prepared.
const multiRows = 7

// rows returns n parenthesised groups of cols placeholders.
func rows(n, cols int) string {
	group := "(" + strings.Repeat("?, ", cols-1) + "?)"
	return strings.Repeat(group+", ", n-1) + group
}

// prepare prepares the read-only statements on the read pool db (the
// writer's are prepared on its driver connection, prepareDriver).
func (s *stmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, d := range s.list(false) {
		st, err := db.PrepareContext(ctx, d.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", d.sql, err)
		}
		*d.p = &stmt{db: st}
	}
	return nil
}

// close closes the read pool's statements.
func (s *stmts) close() {
	for _, d := range s.list(false) {
		if p := *d.p; p != nil && p.db != nil {
			// Kept, closed: a use after Close gets database/sql's "statement
			// is closed" error instead of a nil dereference.
			_ = p.db.Close()
		}
	}
}
