package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// AppendAudit implements task.Store. Entries are sealed at the store's
// clock (Config.Now), since the caller passes no time. Data, when set, must
// be valid JSON.
func (s *Store) AppendAudit(ctx context.Context, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if err := driver.CheckAudit(entries); err != nil {
		return fmt.Errorf("sqlite: append audit: %w", err)
	}
	now := driver.Norm(s.now())
	err := s.inWriteTx(ctx, func(x *txn) error { return x.seal(now, entries) })
	if err != nil {
		return fmt.Errorf("sqlite: append audit: %w", err)
	}
	return nil
}

// AuditEntries implements task.Store. A limit below 1 means 100.
func (s *Store) AuditEntries(ctx context.Context, after int64, limit int) ([]task.AuditEntry, error) {
	if limit < 1 {
		limit = driver.DefaultAuditLimit
	}
	rows, err := s.r.auditAfter.db.QueryContext(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
	}
	defer rows.Close()
	var out []task.AuditEntry
	for rows.Next() {
		e, err := driver.ScanAuditEntry(rows, driver.FromMicros)
		if err != nil {
			return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
	}
	return out, nil
}

// seal appends entries to the audit chain at now, in order; the head
// record (audit_head) follows them when the transaction commits (moveHead).
// The head is read inside the transaction, so it is right even when
// another process wrote to the file.
func (x *txn) seal(now time.Time, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if !x.headLoaded {
		err := x.queryRow(x.st.auditHead).Scan(&x.headSeq, &x.headHash)
		if errors.Is(err, sql.ErrNoRows) {
			return errors.New("read audit head: audit_head has no row: the schema is damaged (was the table emptied?)")
		}
		if err != nil {
			return fmt.Errorf("read audit head: %w", err)
		}
		x.headLoaded = true
	}
	n := len(entries)
	multi := n > 1 && n < multiRows
	args := make([]any, 0, 8*n)
	first := x.headSeq + 1
	// Values the entries share (the time, the task and actor of one
	// operation's entries, each hash as the next entry's prev_hash) are
	// boxed once: database/sql takes []any, and every string or large
	// integer put in an interface is an allocation.
	var b boxes
	at := now.UnixMicro()
	prev := any(x.headHash)
	for _, in := range entries {
		e := task.AuditEntry{
			Seq: x.headSeq + 1, At: now, Kind: in.Kind, TaskID: in.TaskID, Actor: in.Actor,
			Data: in.Data, PrevHash: x.headHash,
		}
		e.Hash = e.ComputeHash()
		var data any
		if len(e.Data) > 0 {
			data = []byte(e.Data)
		}
		hash := any(e.Hash)
		args = append(args, e.Seq, b.int(at), b.str(0, string(e.Kind)), b.str(1, e.TaskID), b.str(2, e.Actor), data, prev, hash)
		prev = hash
		if !multi {
			if _, err := x.exec(x.st.insertAudit, args...); err != nil {
				return fmt.Errorf("append audit entry %d: %w", e.Seq, err)
			}
			args = args[:0]
		}
		x.headSeq, x.headHash = e.Seq, e.Hash
	}
	if multi {
		if _, err := x.exec(x.st.insertAuditN[n], args...); err != nil {
			return fmt.Errorf("append audit entries %d–%d: %w", first, x.headSeq, err)
		}
	}
	// The head record is written once per transaction, just before the
	// commit (runBatch), not once per operation of a group commit.
	x.headMoved = true
	return nil
}

// boxes holds the values last put in interfaces for a statement's
// arguments, to put a repeated one in its interface only once.
type boxes struct {
	strs  [4]string
	sboxd [4]any
	n     int64
	nboxd any
}

// str returns s in an interface, the one of slot i's last call when s is
// the same.
func (b *boxes) str(i int, s string) any {
	if b.sboxd[i] == nil || b.strs[i] != s {
		b.strs[i], b.sboxd[i] = s, s
	}
	return b.sboxd[i]
}

// stateBoxes holds every state's name in an interface.
var stateBoxes = func() map[task.State]any {
	m := map[task.State]any{}
	for _, st := range task.States() {
		m[st] = string(st)
	}
	return m
}()

// state returns st's name in an interface.
func state(st task.State) any {
	if v, ok := stateBoxes[st]; ok {
		return v
	}
	return string(st)
}

// int returns n in an interface, the last one when n is the same.
func (b *boxes) int(n int64) any {
	if b.nboxd == nil || b.n != n {
		b.n, b.nboxd = n, n
	}
	return b.nboxd
}

// moveHead writes the head record (audit_head) where x's seals left the
// chain, if they moved it.
func (x *txn) moveHead() error {
	if !x.headMoved {
		return nil
	}
	if _, err := x.exec(x.st.moveHead, x.headSeq, x.headHash); err != nil {
		return fmt.Errorf("move audit head to %d: %w", x.headSeq, err)
	}
	return nil
}

// AuditHead returns the head record: the sequence number and hash of the
// last sealed entry, as the store keeps them beside the chain (0 and ""
// before the first entry). audit.Verify compares the chain's end with it;
// an anchor publisher reads it at an interval.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	var seq int64
	var hash string
	err := s.r.headRecord.db.QueryRowContext(ctx).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", errors.New("sqlite: audit head: audit_head has no row: the schema is damaged")
	}
	if err != nil {
		return 0, "", fmt.Errorf("sqlite: audit head: %w", err)
	}
	return seq, hash, nil
}

// ScanAudit reads, in one read-only snapshot, the head record, then every
// row of the audit table in (seq, rowid) order, whatever its seq (zero,
// negative, duplicated), then every execution record in (task id, seq)
// order. head is called once, with found false when the head record is
// missing. An error from a callback stops the scan and is returned as is.
// audit.Verify reads the store through it.
func (s *Store) ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
	entry func(*task.AuditEntry) error, record func(*task.Record) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite: scan audit: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var seq int64
	var hash string
	found := true
	err = tx.StmtContext(ctx, s.r.headRecord.db).QueryRowContext(ctx).Scan(&seq, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		found, err = false, nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: scan audit: head: %w", err)
	}
	if err := head(seq, hash, found); err != nil {
		return err
	}
	if err := scanRows(ctx, tx, `SELECT seq, at, kind, task_id, actor, data, prev_hash, hash
		FROM audit_log ORDER BY seq, rowid`, func(rows *sql.Rows) error {
		e, err := driver.ScanAuditEntry(rows, driver.FromMicros)
		if err != nil {
			return fmt.Errorf("sqlite: scan audit: %w", err)
		}
		return entry(&e)
	}); err != nil {
		return err
	}
	return scanRows(ctx, tx, `SELECT `+driver.RecordCols+` FROM task_records ORDER BY task_id, seq`, func(rows *sql.Rows) error {
		r, err := driver.ScanRecord(rows, driver.FromMicros)
		if err != nil {
			return fmt.Errorf("sqlite: scan records: %w", err)
		}
		return record(&r)
	})
}

// scanRows runs query in tx and calls fn for each row; fn's error stops
// the scan and is returned as is.
func scanRows(ctx context.Context, tx *sql.Tx, query string, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("sqlite: scan audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: scan audit: %w", err)
	}
	return nil
}
