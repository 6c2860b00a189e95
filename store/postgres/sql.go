package postgres

import (
	"strconv"

	"github.com/pactum/pactum/store/internal/driver"
)

// The statements the store runs. pgx prepares each one once per connection
// (its statement cache) and reuses it.

// taskCols is the column list every task query selects, in scanTask order.
const taskCols = `id, context_id, agent, envelope, payload_hash, state, attempt,
	max_attempts, run_after, lease_owner, lease_expires, error_code, reason,
	rejected, status_message, seq, created_at, updated_at, turn_start, children`

// unsettled is the condition on a parent's ($1) children that are not
// Terminal. Its term excluding the empty parent lets every plan, generic ones
// too, use the partial index tasks_parent.
const unsettled = `parent_task_id = $1 AND parent_task_id <> ''
	AND state NOT IN ('succeeded', 'failed', 'canceled', 'dead_letter')`

const (
	sqlTaskByID = `SELECT ` + taskCols + ` FROM tasks WHERE id = $1`
	// sqlTaskForUpdate locks the row for a transition. NO KEY UPDATE, the
	// lock an UPDATE that changes no key takes, does not conflict with the
	// KEY SHARE locks that inserting rows referring to the task take.
	sqlTaskForUpdate = `SELECT ` + taskCols + ` FROM tasks WHERE id = $1 FOR NO KEY UPDATE`
	sqlTaskExists    = `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1)`

	sqlInsertTask = `INSERT INTO tasks (id, context_id, agent, actor, envelope, payload_hash, state, attempt,
		max_attempts, run_after, lease_owner, lease_expires, error_code, reason,
		rejected, status_message, seq, created_at, updated_at, parent_task_id, step)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`
	// sqlUpdateTask writes a task's mutable columns, on the condition that
	// the task is still in the state the change started from ($13).
	sqlUpdateTask = `UPDATE tasks SET state = $2, attempt = $3, run_after = $4, lease_owner = $5,
		lease_expires = $6, error_code = $7, reason = $8, rejected = $9, status_message = $10,
		seq = $11, updated_at = $12, turn_start = $14, children = $15 WHERE id = $1 AND state = $13`

	// sqlUnsettled locks a parent's children that are not Terminal, in
	// the order a cascade cancels them; sqlCountUnsettled counts them.
	sqlUnsettled      = `SELECT ` + taskCols + ` FROM tasks WHERE ` + unsettled + ` ORDER BY created_at, id FOR NO KEY UPDATE`
	sqlCountUnsettled = `SELECT count(*) FROM tasks WHERE ` + unsettled

	// sqlInsertRecords inserts records, one array per column; "" evidence
	// is NULL.
	sqlInsertRecords = `INSERT INTO task_records (` + driver.RecordCols + `)
		SELECT t, s, f, o, a, n, nd, r, c, p, nullif(e, '') FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[],
			$5::timestamptz[], $6::integer[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
			AS u (t, s, f, o, a, n, nd, r, c, p, e)`
	sqlRecords = `SELECT ` + driver.RecordCols + ` FROM task_records WHERE task_id = $1 ORDER BY seq`

	// sqlAppendMessages appends $2's messages to task $1's history, in order.
	sqlAppendMessages = `INSERT INTO task_messages (task_id, seq, message)
		SELECT $1, coalesce((SELECT max(seq) FROM task_messages WHERE task_id = $1), 0) + m.ord, m.message
		FROM unnest($2::text[]) WITH ORDINALITY AS m (message, ord)`
	sqlHistoryAll  = `SELECT message FROM task_messages WHERE task_id = $1 ORDER BY seq`
	sqlHistoryLast = `SELECT message FROM (
		SELECT seq, message FROM task_messages WHERE task_id = $1 ORDER BY seq DESC LIMIT $2
	) AS last ORDER BY seq`

	// sqlUpsertArtifact stores an artifact at the end, or replaces the one
	// with its ID in place.
	sqlUpsertArtifact = `INSERT INTO task_artifacts (task_id, artifact_id, position, artifact)
		VALUES ($1, $2, (SELECT coalesce(max(position), 0) + 1 FROM task_artifacts WHERE task_id = $1), $3)
		ON CONFLICT (task_id, artifact_id) DO UPDATE SET artifact = excluded.artifact`
	sqlArtifacts = `SELECT artifact FROM task_artifacts WHERE task_id = $1 ORDER BY position`

	// sqlAsyncCommit lets the transaction it runs in commit without
	// waiting for its WAL flush (synchronous_commit, for this transaction
	// only). Only for transactions whose loss in a crash loses nothing.
	sqlAsyncCommit = `SELECT set_config('synchronous_commit', 'off', true)`

	// sqlIdemPut takes the key unless a live one holds it: an expired key
	// (expiry at or before $5, now) is replaced; a live one is left as it
	// is, and the statement writes no row (insertNew). A key another
	// transaction is taking makes it wait for that transaction, then see
	// its outcome.
	sqlIdemPut = `INSERT INTO idempotency_keys (actor, key, task_id, expires_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (actor, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= $5`
	sqlIdemGet   = `SELECT task_id FROM idempotency_keys WHERE actor = $1 AND key = $2`
	sqlIdemPurge = `DELETE FROM idempotency_keys WHERE expires_at <= $1`

	// Claims skip rows another transaction holds: concurrent claimers take
	// different tasks and never wait for each other.
	sqlClaimNext = `SELECT ` + taskCols + ` FROM tasks
		WHERE state = 'queued' AND (run_after IS NULL OR run_after <= $1)
		ORDER BY created_at, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED`
	// sqlClaimNextOf is sqlClaimNext with ClaimParams.Agents ($3) and
	// Except ($4), NULL for no filter.
	sqlClaimNextOf = `SELECT ` + taskCols + ` FROM tasks
		WHERE state = 'queued' AND (run_after IS NULL OR run_after <= $1)
		AND ($3::text[] IS NULL OR agent = ANY($3::text[]))
		AND ($4::text[] IS NULL OR NOT agent = ANY($4::text[]))
		ORDER BY created_at, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED`
	sqlClaimOne = `SELECT ` + taskCols + ` FROM tasks
		WHERE id = $1 AND state = 'queued' AND (run_after IS NULL OR run_after <= $2)
		FOR NO KEY UPDATE SKIP LOCKED`
	sqlRenewLease = `UPDATE tasks SET lease_expires = $1
		WHERE id = $2 AND state = 'in_progress' AND lease_owner = $3`
	sqlExpiredLeases = `SELECT ` + taskCols + ` FROM tasks
		WHERE state = 'in_progress' AND lease_expires < $1 ORDER BY lease_expires, id LIMIT $2`
	sqlNextRunAfter = `SELECT min(coalesce(run_after, updated_at)) FROM tasks WHERE state = 'queued'`

	// sqlPend writes audit entries to audit_pending_batches (see
	// sealAudit) as one row under one new batch number, one array element
	// per entry, each at its time in $1 and in array order: what migration
	// 0007's pactum_pend does (one audit_pending row per entry), as one
	// row, which is one heap tuple, one index tuple and, when sealed, one
	// delete whatever the number of entries (issue 31). pactum_pend and
	// pactum_pend_new_task stay in the schema for nodes of earlier
	// versions, and the sealer takes their rows too.
	sqlPend = `INSERT INTO audit_pending_batches (batch, at, kind, task_id, actor, data)
		VALUES (nextval('audit_pending_batch'), $1, $2, $3, $4, $5)`
	// sqlTakePending deletes and returns the first pending batches (all
	// when $1 is NULL) of both tables merged in batch order, one row per
	// batch: an audit_pending_batches row (ord 0) or an audit_pending row
	// (its ord, its columns as one-element arrays); the caller sorts them
	// by (batch, ord). It takes batches of audit_pending_batches until
	// they hold $1 entries (the last may take it past $1), and up to $1
	// audit_pending rows; when one table may hold more than it took (it
	// reached $1), nothing of the other past the last batch taken from
	// this one is taken, so that no batch is sealed before one with a
	// smaller number that is still pending. Whenever something is left so,
	// $1 entries or more are returned. pactum.seal lets the rows of
	// audit_pending go (pactum_pending_wait, migration 0008).
	// The rows are found through the primary keys and deleted by their
	// ctid (pending rows are never updated, so a ctid names one row): a
	// queue table whose rows all die soon after they are written holds
	// far more dead rows than live ones until it is vacuumed, and the
	// (batch, ord) IN (…) form that issue 31 replaced joined them by a
	// sequential scan of all of them, at every seal.
	sqlTakePending = `WITH f AS MATERIALIZED (
			SELECT ctid, batch, cardinality(kind) AS k FROM audit_pending_batches ORDER BY batch LIMIT $1
		), n AS MATERIALIZED (
			SELECT ctid, batch, k FROM (SELECT ctid, batch, k, sum(k) OVER (ORDER BY batch) - k AS before FROM f) AS w
			WHERE $1::integer IS NULL OR before < $1
		), o AS MATERIALIZED (
			SELECT ctid, batch FROM audit_pending ORDER BY batch, ord LIMIT $1
		), c AS MATERIALIZED (
			SELECT least(
				(SELECT max(batch) FROM n HAVING sum(k) >= $1),
				(SELECT max(batch) FROM o HAVING count(*) >= $1)) AS cut
		), dn AS (
			DELETE FROM audit_pending_batches WHERE ctid = ANY (ARRAY (
				SELECT n.ctid FROM n, c WHERE c.cut IS NULL OR n.batch <= c.cut))
			RETURNING batch, 0 AS ord, at, kind, task_id, actor, data
		), dold AS (
			DELETE FROM audit_pending WHERE set_config('pactum.seal', 'batches', true) IS NOT NULL
				AND ctid = ANY (ARRAY (SELECT o.ctid FROM o, c WHERE c.cut IS NULL OR o.batch <= c.cut))
			RETURNING batch, ord, ARRAY[at], ARRAY[kind], ARRAY[task_id], ARRAY[actor], ARRAY[data]
		)
		SELECT * FROM dn UNION ALL SELECT * FROM dold`
	// sqlInsertSealed appends sealed entries to the chain (see
	// sealPending).
	sqlInsertSealed = `INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::text[])`
	// sqlAnyPending finds whether a pending entry exists, in either table,
	// through the primary keys: EXISTS (SELECT 1 FROM audit_pending)
	// scanned the table, dead rows and all (see sqlTakePending).
	sqlAnyPending = `(SELECT true FROM audit_pending_batches ORDER BY batch LIMIT 1)
		UNION ALL (SELECT true FROM audit_pending ORDER BY batch, ord LIMIT 1) LIMIT 1`
	sqlAuditAfter = `SELECT seq, at, kind, task_id, actor, data, prev_hash, hash
		FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2`

	sqlPutPush = `INSERT INTO push_configs (task_id, id, url, token, auth, created_at, delivered_seq)
		VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::boolean THEN 0 ELSE (SELECT seq FROM tasks WHERE id = $1) END)
		ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,
		auth = excluded.auth, created_at = excluded.created_at, delivered_seq = excluded.delivered_seq`
	sqlMarkPush    = `UPDATE push_configs SET delivered_seq = $3 WHERE task_id = $1 AND id = $2 AND delivered_seq < $3`
	sqlPushBacklog = `SELECT p.task_id, p.id, p.url, p.token, p.auth, p.created_at, p.delivered_seq, t.seq
		FROM push_configs p JOIN tasks t ON t.id = p.task_id
		WHERE p.delivered_seq < t.seq AND t.updated_at < $1 AND (p.task_id, p.id) > ($2, $3)
		ORDER BY p.task_id, p.id LIMIT $4`
	sqlAnyPush    = `SELECT EXISTS (SELECT 1 FROM push_configs)`
	sqlGetPush    = `SELECT task_id, id, url, token, auth, created_at FROM push_configs WHERE task_id = $1 AND id = $2`
	sqlListPush   = `SELECT task_id, id, url, token, auth, created_at FROM push_configs WHERE task_id = $1 ORDER BY created_at, id`
	sqlDeletePush = `DELETE FROM push_configs WHERE task_id = $1 AND id = $2`
)

// recordsFrom is the SELECT of sqlInsertRecords: its eleven arrays, from
// parameter $first on, as task_records rows ("" evidence is NULL).
func recordsFrom(first int) string {
	p := func(i int, typ string) string { return "$" + strconv.Itoa(first+i) + "::" + typ + "[]" }
	return `SELECT t, s, f, o, a, n, nd, r, c, p, nullif(e, '') FROM unnest(` +
		p(0, "text") + `, ` + p(1, "integer") + `, ` + p(2, "text") + `, ` + p(3, "text") + `, ` +
		p(4, "timestamptz") + `, ` + p(5, "integer") + `, ` + p(6, "text") + `, ` + p(7, "text") + `, ` +
		p(8, "text") + `, ` + p(9, "text") + `, ` + p(10, "text") + `) AS u (t, s, f, o, a, n, nd, r, c, p, e)`
}

// sqlCreate creates a task in one statement (createArgs): it takes the
// idempotency key when $22 says there is one (as sqlIdemPut: an expired
// key, expiry at or before $25, is replaced; a live one is left as it is,
// and a key another transaction is taking makes it wait for that
// transaction, then see its outcome), then, only if the key is the
// task's, inserts the task ($1–$21, sqlInsertTask's, with turn_start $38
// and children $39), its history ($26, in order), its records ($27–$37),
// its artifacts ($40 IDs, distinct, and $41 JSON, in order) and the
// transaction's audit entries, pending as one row under one new batch
// number ($42–$46, sqlPend's). It returns a row when it wrote the task; none
// means a live key of another task holds the key, and nothing was
// written. Before issue 31 these were four statements and a read-back.
var sqlCreate = `WITH k AS (
		INSERT INTO idempotency_keys (actor, key, task_id, expires_at)
		SELECT $4::text, $23::text, $1::text, $24::timestamptz WHERE $22::boolean
		ON CONFLICT (actor, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= $25::timestamptz
		RETURNING 1
	), t AS (
		INSERT INTO tasks (id, context_id, agent, actor, envelope, payload_hash, state, attempt,
			max_attempts, run_after, lease_owner, lease_expires, error_code, reason,
			rejected, status_message, seq, created_at, updated_at, parent_task_id, step, turn_start, children)
		SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::integer, $9::integer,
			$10::timestamptz, $11::text, $12::timestamptz, $13::text, $14::text, $15::boolean, $16::text,
			$17::integer, $18::timestamptz, $19::timestamptz, $20::text, $21::text, $38::integer, $39::integer
		WHERE NOT $22::boolean OR EXISTS (SELECT 1 FROM k)
		RETURNING id
	), h AS (
		INSERT INTO task_messages (task_id, seq, message)
		SELECT t.id, m.ord, m.message FROM t, unnest($26::text[]) WITH ORDINALITY AS m (message, ord)
	), r AS (
		INSERT INTO task_records (` + driver.RecordCols + `)
		` + recordsFrom(27) + ` WHERE EXISTS (SELECT 1 FROM t)
	), a AS (
		INSERT INTO task_artifacts (task_id, artifact_id, position, artifact)
		SELECT t.id, a.id, a.ord, a.artifact FROM t, unnest($40::text[], $41::text[]) WITH ORDINALITY AS a (id, artifact, ord)
	), p AS (
		INSERT INTO audit_pending_batches (batch, at, kind, task_id, actor, data)
		SELECT nextval('audit_pending_batch'), $42::timestamptz[], $43::text[], $44::text[], $45::text[], $46::bytea[]
		WHERE cardinality($43::text[]) > 0 AND EXISTS (SELECT 1 FROM t)
	)
	SELECT true FROM t`

// sqlHoldKey is the first statement of a held creation (hold.go), which
// writes the task itself with its next write: it takes the idempotency key
// $2 of actor $1 for task $3 until $4 when $6 says there is one, as
// sqlCreate does (an expired key, expiry at or before $5, is replaced),
// unless a task $3 exists, and returns whether the key is the task's
// (true without a key), whether a task $3 exists already and, when it
// does, whether a live key (actor $1, key $2) exists. A creation whose
// task ID is taken thus takes no key: in a group of creations (one
// transaction) the others commit, and must not commit its key.
const sqlHoldKey = `WITH k AS (
		INSERT INTO idempotency_keys (actor, key, task_id, expires_at)
		SELECT $1::text, $2::text, $3::text, $4::timestamptz WHERE $6::boolean
			AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = $3::text)
		ON CONFLICT (actor, key) DO UPDATE SET task_id = excluded.task_id, expires_at = excluded.expires_at
		WHERE idempotency_keys.expires_at <= $5::timestamptz
		RETURNING 1
	), e AS (
		SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $3::text) AS exists
	)
	SELECT NOT $6::boolean OR EXISTS (SELECT 1 FROM k), e.exists,
		e.exists AND $6::boolean AND EXISTS (SELECT 1 FROM idempotency_keys
			WHERE actor = $1::text AND key = $2::text AND expires_at > $5::timestamptz)
	FROM e`

// sqlMove writes a transition of one task in one statement (moveArgs):
// the task's mutable columns ($1–$15, sqlUpdateTask's, on the same
// condition that it is still in state $13), the records ($16–$26), the
// messages appended to its history ($27), its artifacts ($28 IDs, $29
// JSON: each stored at the end, or replacing the one with its ID in place;
// the IDs must be distinct) and the transaction's audit entries, pending
// as one row under one new batch number ($30–$34, sqlPend's). It returns
// how many task rows it updated. Before issue 31 these were four statements and one
// more per artifact.
var sqlMove = `WITH u AS (
		UPDATE tasks SET state = $2, attempt = $3, run_after = $4, lease_owner = $5,
			lease_expires = $6, error_code = $7, reason = $8, rejected = $9, status_message = $10,
			seq = $11, updated_at = $12, turn_start = $14, children = $15 WHERE id = $1 AND state = $13
		RETURNING 1
	), r AS (
		INSERT INTO task_records (` + driver.RecordCols + `)
		` + recordsFrom(16) + `
	), m AS (
		INSERT INTO task_messages (task_id, seq, message)
		SELECT $1, coalesce((SELECT max(seq) FROM task_messages WHERE task_id = $1), 0) + m.ord, m.message
		FROM unnest($27::text[]) WITH ORDINALITY AS m (message, ord)
	), a AS (
		INSERT INTO task_artifacts (task_id, artifact_id, position, artifact)
		SELECT $1, a.id, (SELECT coalesce(max(position), 0) FROM task_artifacts WHERE task_id = $1) + a.ord, a.artifact
		FROM unnest($28::text[], $29::text[]) WITH ORDINALITY AS a (id, artifact, ord)
		ON CONFLICT (task_id, artifact_id) DO UPDATE SET artifact = excluded.artifact
	), p AS (
		INSERT INTO audit_pending_batches (batch, at, kind, task_id, actor, data)
		SELECT nextval('audit_pending_batch'), $30::timestamptz[], $31::text[], $32::text[], $33::text[], $34::bytea[]
		WHERE cardinality($31::text[]) > 0
	)
	SELECT count(*) FROM u`
