package postgres

import (
	"context"
	"encoding/json"
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
		h := x.lockHead(sqlLockHead)
		if err := x.flush(); err != nil {
			return err
		}
		return x.seal(h, now, entries)
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

// head is the audit chain's head as a transaction locked it.
type head struct {
	found bool
	seq   int64
	hash  string
}

// lockHead queues the statement that locks the chain's head (sqlLockHead,
// or sqlLockHeadIfKey with its arguments) into the returned head. Callers
// queue it last before a flush, so the lock is taken as late as possible;
// it is held until the transaction ends.
func (x *txn) lockHead(sql string, args ...any) *head {
	h := &head{}
	x.queue(sql, args...).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&h.seq, &h.hash)
		h.found = err == nil
		return noRows(err)
	})
	return h
}

var errNoHead = errors.New("audit_head has no row: the schema is damaged (was the table emptied?)")

// seal queues the insert of entries, chained from h at now, and the move of
// the head. h must have been locked and flushed in this transaction.
func (x *txn) seal(h *head, now time.Time, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if h == nil || !h.found {
		return errNoHead
	}
	n := len(entries)
	var (
		seqs                                 = make([]int64, n)
		ats                                  = make([]time.Time, n)
		kinds, taskIDs, actors, prevs, hashs = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		datas                                = make([][]byte, n)
	)
	seq, prev := h.seq, h.hash
	for i, in := range entries {
		e := task.AuditEntry{
			Seq: seq + 1, At: now, Kind: in.Kind, TaskID: in.TaskID, Actor: in.Actor,
			Data: in.Data, PrevHash: prev,
		}
		e.Hash = e.ComputeHash()
		seqs[i], ats[i], kinds[i], taskIDs[i], actors[i], prevs[i], hashs[i] = e.Seq, e.At, string(e.Kind), e.TaskID, e.Actor, e.PrevHash, e.Hash
		if len(e.Data) > 0 {
			datas[i] = []byte(e.Data)
		}
		seq, prev = e.Seq, e.Hash
	}
	x.queue(sqlInsertAudit, seqs, ats, kinds, taskIDs, actors, datas, prevs, hashs)
	x.queue(sqlMoveHead, seq, prev)
	h.seq, h.hash = seq, prev
	return nil
}
