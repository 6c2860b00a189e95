package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
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
	rows, err := s.r.auditAfter.QueryContext(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
	}
	defer rows.Close()
	var out []task.AuditEntry
	for rows.Next() {
		var e task.AuditEntry
		var at int64
		var kind string
		var data []byte
		if err := rows.Scan(&e.Seq, &at, &kind, &e.TaskID, &e.Actor, &data, &e.PrevHash, &e.Hash); err != nil {
			return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
		}
		e.At, e.Kind = driver.FromMicros(at), task.AuditKind(kind)
		if len(data) > 0 {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: audit entries after %d: %w", after, err)
	}
	return out, nil
}

// seal appends entries to the audit chain at now, in order. The chain's head
// is read inside the transaction, so it is right even when another process
// wrote to the file.
func (x *txn) seal(now time.Time, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if !x.headLoaded {
		err := x.stmt(x.st.auditHead).QueryRowContext(x.ctx).Scan(&x.headSeq, &x.headHash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read audit head: %w", err)
		}
		x.headLoaded = true
	}
	n := len(entries)
	multi := n > 1 && n < multiRows
	args := make([]any, 0, 8*n)
	first := x.headSeq + 1
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
		args = append(args, e.Seq, e.At.UnixMicro(), string(e.Kind), e.TaskID, e.Actor, data, e.PrevHash, e.Hash)
		if !multi {
			if _, err := x.stmt(x.st.insertAudit).ExecContext(x.ctx, args...); err != nil {
				return fmt.Errorf("append audit entry %d: %w", e.Seq, err)
			}
			args = args[:0]
		}
		x.headSeq, x.headHash = e.Seq, e.Hash
	}
	if multi {
		if _, err := x.stmt(x.st.insertAuditN[n]).ExecContext(x.ctx, args...); err != nil {
			return fmt.Errorf("append audit entries %d–%d: %w", first, x.headSeq, err)
		}
	}
	return nil
}
