package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
			var e task.AuditEntry
			var kind string
			var data []byte
			if err := rows.Scan(&e.Seq, &e.At, &kind, &e.TaskID, &e.Actor, &data, &e.PrevHash, &e.Hash); err != nil {
				return false, err
			}
			e.At, e.Kind = e.At.UTC(), task.AuditKind(kind)
			if len(data) > 0 {
				e.Data = json.RawMessage(data)
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
