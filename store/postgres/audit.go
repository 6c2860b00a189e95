package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// AppendAudit implements task.Store. Entries are sealed at the store's
// clock (Options.Now), since the caller passes no time. Data, when set,
// must be valid JSON.
func (s *Store) AppendAudit(ctx context.Context, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if err := driver.CheckAudit(entries); err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	now := driver.Norm(s.now())
	err := s.inTx(ctx, func(x *txn) error {
		x.sealAudit(now, entries)
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	return nil
}

// AuditEntries implements task.Store. A limit below 1 means 100. Entries
// become visible in sequence order: a reader never sees an entry before
// the one it follows.
func (s *Store) AuditEntries(ctx context.Context, after int64, limit int) ([]task.AuditEntry, error) {
	if limit < 1 {
		limit = driver.DefaultAuditLimit
	}
	var out []task.AuditEntry
	err := s.retry(ctx, func() (bool, error) {
		out = nil
		rows, err := s.pool.Query(ctx, sqlAuditAfter, after, limit)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		for rows.Next() {
			e, err := driver.ScanAuditEntry(rows, time.Time.UTC)
			if err != nil {
				return false, err
			}
			out = append(out, e)
		}
		return false, rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: audit entries after %d: %w", after, err)
	}
	return out, nil
}

// sealAudit has the transaction append entries to the audit chain at now
// when it commits: pactum_seal (migration 0003) hashes and inserts them in
// the server and moves the chain's head, which it locks until the
// transaction ends. The statement travels with COMMIT (txn.commit), so the
// lock is held for that statement and the commit only. A transaction seals
// once.
func (x *txn) sealAudit(now time.Time, entries []task.AuditInput) {
	if len(entries) == 0 {
		return
	}
	x.seal, x.sealArgs = sqlSeal, sealArgs(now, entries)
}

// sealNewTask is sealAudit for the transaction that creates task id under
// the idempotency key (actor, key): it seals only if that key names the
// task, and otherwise fails the commit with PTDUP (isDuplicateKey).
func (x *txn) sealNewTask(now time.Time, entries []task.AuditInput, actor, key, id string) {
	x.seal, x.sealArgs = sqlSealNewTask, append(sealArgs(now, entries), actor, key, id)
}

// sealArgs are pactum_seal's arguments for entries sealed at now.
func sealArgs(now time.Time, entries []task.AuditInput) []any {
	n := len(entries)
	kinds, taskIDs, actors := make([]string, n), make([]string, n), make([]string, n)
	datas := make([][]byte, n)
	for i, in := range entries {
		kinds[i], taskIDs[i], actors[i] = string(in.Kind), in.TaskID, in.Actor
		if len(in.Data) > 0 {
			datas[i] = []byte(in.Data)
		}
	}
	// The time as task.AuditEntry.ComputeHash formats it, so that the
	// server hashes the same bytes.
	return []any{now, now.UTC().Format(time.RFC3339Nano), kinds, taskIDs, actors, datas}
}

// AuditHead returns the head record, audit_head: the sequence number and
// hash of the last sealed entry (0 and "" before the first entry), which
// pactum_seal moves in the transaction that seals. audit.Verify compares
// the chain's end with it; an anchor publisher reads it at an interval.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	var seq int64
	var hash string
	err := s.retry(ctx, func() (bool, error) {
		return false, s.pool.QueryRow(ctx, `SELECT seq, hash FROM audit_head`).Scan(&seq, &hash)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", errors.New("postgres: audit head: audit_head has no row: the schema is damaged")
	}
	if err != nil {
		return 0, "", fmt.Errorf("postgres: audit head: %w", err)
	}
	return seq, hash, nil
}

// ScanAudit reads, in one read-only repeatable-read snapshot, the head
// record, then every row of the audit table in (seq, ctid) order, whatever
// its seq (zero, negative, duplicated), then every execution record in
// (task id, seq) order. head is called once, with found false when the
// head record is missing. An error from a callback stops the scan and is
// returned as is. audit.Verify reads the store through it.
func (s *Store) ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
	entry func(*task.AuditEntry) error, record func(*task.Record) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: scan audit: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var seq int64
	var hash string
	found := true
	err = tx.QueryRow(ctx, `SELECT seq, hash FROM audit_head`).Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		found, err = false, nil
	}
	if err != nil {
		return fmt.Errorf("postgres: scan audit: head: %w", err)
	}
	if err := head(seq, hash, found); err != nil {
		return err
	}
	if err := scanRows(ctx, tx, `SELECT seq, at, kind, task_id, actor, data, prev_hash, hash
		FROM audit_log ORDER BY seq, ctid`, func(rows pgx.Rows) error {
		e, err := driver.ScanAuditEntry(rows, time.Time.UTC)
		if err != nil {
			return fmt.Errorf("postgres: scan audit: %w", err)
		}
		return entry(&e)
	}); err != nil {
		return err
	}
	return scanRows(ctx, tx, `SELECT `+driver.RecordCols+` FROM task_records ORDER BY task_id, seq`, func(rows pgx.Rows) error {
		r, err := driver.ScanRecord(rows, time.Time.UTC)
		if err != nil {
			return fmt.Errorf("postgres: scan records: %w", err)
		}
		return record(&r)
	})
}

// scanRows runs query in tx and calls fn for each row; fn's error stops
// the scan and is returned as is.
func scanRows(ctx context.Context, tx pgx.Tx, query string, fn func(pgx.Rows) error) error {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return fmt.Errorf("postgres: scan audit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: scan audit: %w", err)
	}
	return nil
}
