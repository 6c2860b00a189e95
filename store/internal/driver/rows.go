package driver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pactum/pactum/task"
)

// Row is one result row: *sql.Rows, *sql.Row, pgx.Rows and pgx.Row all
// are.
type Row interface{ Scan(dest ...any) error }

// ScanAuditEntry reads an audit row whose columns are seq, at, kind,
// task_id, actor, data, prev_hash, hash. The at column is scanned into a
// T (the driver's time column) and turned into the entry's time by at.
// Empty data is nil.
func ScanAuditEntry[T any](row Row, at func(T) time.Time) (task.AuditEntry, error) {
	var e task.AuditEntry
	var when T
	var kind string
	var data []byte
	if err := row.Scan(&e.Seq, &when, &kind, &e.TaskID, &e.Actor, &data, &e.PrevHash, &e.Hash); err != nil {
		return task.AuditEntry{}, err
	}
	e.At, e.Kind = at(when), task.AuditKind(kind)
	if len(data) > 0 {
		e.Data = json.RawMessage(data)
	}
	return e, nil
}

// RecordCols is the column list ScanRecord reads, in its order.
const RecordCols = `task_id, seq, from_state, to_state, at, attempt, node, reason, error_code, policy_version, evidence`

// ScanRecord reads an execution record row whose columns are RecordCols,
// with at as in ScanAuditEntry. NULL or empty evidence is none.
func ScanRecord[T any](row Row, at func(T) time.Time) (task.Record, error) {
	var r task.Record
	var when T
	var from, to, code string
	var ev []byte
	if err := row.Scan(&r.TaskID, &r.Seq, &from, &to, &when, &r.Attempt, &r.Node, &r.Reason, &code, &r.PolicyVersion, &ev); err != nil {
		return task.Record{}, err
	}
	r.From, r.To, r.ErrorCode, r.At = task.State(from), task.State(to), task.Code(code), at(when)
	if len(ev) > 0 {
		if err := json.Unmarshal(ev, &r.Evidence); err != nil {
			return task.Record{}, fmt.Errorf("decode evidence of record %d of task %q: %w", r.Seq, r.TaskID, err)
		}
	}
	return r, nil
}
