package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// AppendAudit implements task.Store. Entries are sealed at the store's
// clock (Options.Now), since the caller passes no time. Data, when set,
// must be valid JSON. The entries are sealed before AppendAudit returns, in
// the transaction that writes them, after every entry committed before it
// began (see sealPending).
func (s *Store) AppendAudit(ctx context.Context, entries []task.AuditInput) error {
	if len(entries) == 0 {
		return nil
	}
	if err := driver.CheckAudit(entries); err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	now := driver.Norm(s.now())
	err := s.inTx(ctx, func(x *txn) error {
		var p pendBuf
		p.add(now, entries)
		x.queue(sqlPend, p.args()...)
		_, _, err := x.sealPending(false, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: append audit: %w", err)
	}
	return nil
}

// AuditEntries implements task.Store. A limit below 1 means 100. Entries
// become visible in sequence order: a reader never sees an entry before
// the one it follows. Entries committed but not sealed yet are sealed
// first (Seal), so that every entry committed before the call is read; a
// read-only store cannot seal, and reads the entries sealed so far.
func (s *Store) AuditEntries(ctx context.Context, after int64, limit int) ([]task.AuditEntry, error) {
	if limit < 1 {
		limit = driver.DefaultAuditLimit
	}
	if err := s.sealBeforeRead(ctx); err != nil {
		return nil, fmt.Errorf("postgres: audit entries after %d: %w", after, err)
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

// sealAudit has the transaction write entries, at now, to
// audit_pending_batches (sqlPend) after its other statements, just before
// COMMIT: a sealer hashes them into the chain after the commit
// (sealPending). They take no lock another writer needs. Entries of
// several calls are written in call order under one batch number, as one
// row; a transition's statement (sqlMove) takes them in the same
// statement as its writes (takeAudit), otherwise they are sent with COMMIT
// (txn.commit).
func (x *txn) sealAudit(now time.Time, entries []task.AuditInput) {
	x.audit.add(now, entries)
}

// takeAudit returns sqlPend's arguments for the entries sealAudit
// collected, for a statement that writes them, and forgets the entries.
func (x *txn) takeAudit() []any {
	if x.audit.len() > 0 {
		x.pended = true
	}
	args := x.audit.args()
	x.audit = pendBuf{}
	return args
}

// pendBuf collects audit entries for audit_pending_batches: sqlPend's
// arrays, one element per entry.
type pendBuf struct {
	ats                    []time.Time
	kinds, taskIDs, actors []string
	datas                  [][]byte
}

func (p *pendBuf) len() int { return len(p.kinds) }

// add appends entries, all at now.
func (p *pendBuf) add(now time.Time, entries []task.AuditInput) {
	for _, in := range entries {
		var data []byte
		if len(in.Data) > 0 {
			data = []byte(in.Data)
		}
		p.ats = append(p.ats, now)
		p.kinds = append(p.kinds, string(in.Kind))
		p.taskIDs = append(p.taskIDs, in.TaskID)
		p.actors = append(p.actors, in.Actor)
		p.datas = append(p.datas, data)
	}
}

// args are sqlPend's arguments (and sqlMove's last five).
func (p *pendBuf) args() []any {
	return []any{p.ats, p.kinds, p.taskIDs, p.actors, p.datas}
}

// sealLockClass is the first key of the advisory lock a sealer holds for
// its transaction; the second is the schema name's hash, so that schemas
// seal independently.
const sealLockClass = 0x7365616c // "seal"

// sealBatch bounds how many pending entries one background seal takes, so
// that a backlog is sealed in transactions of bounded size: batches are
// taken until they hold sealBatch entries (see sqlTakePending).
const sealBatch = 4096

// pendingBatch is one row sqlTakePending returns: a transaction's pending
// entries (a row of audit_pending_batches, ord 0), or one pending entry
// written by a node of an earlier version (a row of audit_pending).
type pendingBatch struct {
	batch                  int64
	ord                    int32
	ats                    []time.Time
	kinds, taskIDs, actors []string
	datas                  [][]byte
}

// sealPending seals committed pending entries into the chain in the
// transaction x, and returns how many. It takes the sealer's advisory lock
// (with try, only if it is free: busy reports that another session holds
// it), then the head row, then deletes the first pending batches, of both
// tables, in batch order (up to about limit entries, see sqlTakePending;
// all when limit < 1), and appends their entries to the chain from the
// head in (batch, ord, position in the batch) order, hashing them as
// task.AuditEntry.ComputeHash does; the insert and the head's move are
// queued for the commit. The statement that reads the pending rows starts
// after the head is locked, so it sees every transaction committed before,
// and no other sealer can have taken any of them.
func (x *txn) sealPending(try bool, limit int) (n int, busy bool, err error) {
	if try {
		got := false
		x.queue(`SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema()))`, int32(sealLockClass)).
			QueryRow(func(r pgx.Row) error { return r.Scan(&got) })
		if err := x.flush(); err != nil {
			return 0, false, fmt.Errorf("seal: lock: %w", err)
		}
		if !got {
			return 0, true, nil
		}
	} else {
		x.queue(`SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, int32(sealLockClass))
	}
	var headSeq int64
	var headHash string
	x.queue(`SELECT seq, hash FROM audit_head FOR UPDATE`).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&headSeq, &headHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return errors.New("audit_head has no row: the schema is damaged (was the table emptied?)")
		}
		return err
	})
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	var rows []pendingBatch
	x.queue(sqlTakePending, lim).Query(func(r pgx.Rows) error {
		for r.Next() {
			var p pendingBatch
			if err := r.Scan(&p.batch, &p.ord, &p.ats, &p.kinds, &p.taskIDs, &p.actors, &p.datas); err != nil {
				return err
			}
			if k := len(p.kinds); len(p.ats) != k || len(p.taskIDs) != k || len(p.actors) != k || len(p.datas) != k {
				return fmt.Errorf("pending batch %d: arrays of %d, %d, %d, %d and %d entries",
					p.batch, len(p.ats), k, len(p.taskIDs), len(p.actors), len(p.datas))
			}
			n += len(p.kinds)
			rows = append(rows, p)
		}
		return r.Err()
	})
	if err := x.flush(); err != nil {
		return 0, false, fmt.Errorf("seal: %w", err)
	}
	if n == 0 {
		return 0, false, nil
	}
	slices.SortFunc(rows, func(a, b pendingBatch) int {
		if c := cmp.Compare(a.batch, b.batch); c != 0 {
			return c
		}
		return cmp.Compare(a.ord, b.ord)
	})
	seqs, ats := make([]int64, 0, n), make([]time.Time, 0, n)
	kinds, taskIDs, actors := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	prevs, hashes := make([]string, 0, n), make([]string, 0, n)
	datas := make([][]byte, 0, n)
	for i := range rows {
		p := &rows[i]
		for j := range p.kinds {
			e := task.AuditEntry{At: p.ats[j].UTC(), Kind: task.AuditKind(p.kinds[j]), TaskID: p.taskIDs[j], Actor: p.actors[j]}
			var data []byte
			if len(p.datas[j]) > 0 {
				data = p.datas[j]
				e.Data = json.RawMessage(data)
			}
			headSeq++
			e.Seq, e.PrevHash = headSeq, headHash
			e.Hash = e.ComputeHash()
			headHash = e.Hash
			seqs, ats, kinds = append(seqs, e.Seq), append(ats, e.At), append(kinds, p.kinds[j])
			taskIDs, actors, datas = append(taskIDs, e.TaskID), append(actors, e.Actor), append(datas, data)
			prevs, hashes = append(prevs, e.PrevHash), append(hashes, e.Hash)
		}
	}
	x.queue(sqlInsertSealed, seqs, ats, kinds, taskIDs, actors, datas, prevs, hashes)
	x.queue(`UPDATE audit_head SET seq = $1, hash = $2`, headSeq, headHash)
	return n, false, nil
}

// Seal seals every audit entry committed before the call and not sealed
// yet, waiting for a sealer that is at work, and returns how many it
// sealed. Writers leave their entries pending and the store's background
// sealer seals them within moments (Options.SealEvery); Seal is for
// readers that must see every committed entry in the chain (AuditEntries,
// AuditHead and ScanAudit call it first) and for tests.
func (s *Store) Seal(ctx context.Context) (int, error) {
	total := 0
	for {
		n := 0
		err := s.inTx(ctx, func(x *txn) error {
			var err error
			n, _, err = x.sealPending(false, sealBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("postgres: seal: %w", err)
		}
		total += n
		if n < sealBatch {
			return total, nil
		}
	}
}

// pendingExists reports whether an entry is pending, in either table.
func (s *Store) pendingExists(ctx context.Context) (bool, error) {
	var any bool
	err := s.retry(ctx, func() (bool, error) {
		any = false
		return false, noRows(s.pool.QueryRow(ctx, sqlAnyPending).Scan(&any))
	})
	return any, err
}

// sealBeforeRead seals what is pending before a read that must see every
// committed entry. A read-only store does not seal: it reads what the
// writers' sealers sealed.
func (s *Store) sealBeforeRead(ctx context.Context) error {
	if s.readOnly {
		return nil
	}
	pending, err := s.pendingExists(ctx)
	if err != nil || !pending {
		return err
	}
	_, err = s.Seal(ctx)
	return err
}

// AuditHead returns the head record, audit_head: the sequence number and
// hash of the last sealed entry (0 and "" before the first entry), which
// the sealer moves in the transaction that seals; entries committed before
// the call are sealed first (see AuditEntries). audit.Verify compares the
// chain's end with it; an anchor publisher reads it at an interval.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	if err := s.sealBeforeRead(ctx); err != nil {
		return 0, "", fmt.Errorf("postgres: audit head: %w", err)
	}
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
//
// Entries committed before the call are sealed first, when the store can
// write; a failure to seal (a damaged head, say) is logged and the scan
// goes on, so that Verify reports the damage. The entries of transactions
// that committed since, or that a read-only store could not seal, are
// still pending in the snapshot: the records of those transactions are
// left out with them (pendingRecords), so that the snapshot's sealed
// entries and records match; the next scan covers them.
func (s *Store) ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
	entry func(*task.AuditEntry) error, record func(*task.Record) error) error {
	if err := s.sealBeforeRead(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("postgres: scan audit: %w", err)
		}
		s.log.Warn("postgres: scan audit: could not seal pending entries first", slog.Any("err", err))
	}
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
	skip, err := pendingRecords(ctx, tx)
	if err != nil {
		return err
	}
	if len(skip) > 0 {
		s.log.Info("postgres: scan audit: transitions still pending; their records are left out of this scan",
			slog.Int("records", len(skip)))
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
		if _, pending := skip[recordKey{r.TaskID, r.Seq}]; pending {
			return nil
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

// recordKey names an execution record.
type recordKey struct {
	taskID string
	seq    int
}

// pendingRecords returns the records whose transition entries are pending
// in tx's snapshot: a transition entry's data is its record (task id and
// seq). A pending entry whose data does not parse names no record.
func pendingRecords(ctx context.Context, tx pgx.Tx) (map[recordKey]struct{}, error) {
	skip := map[recordKey]struct{}{}
	err := scanRows(ctx, tx, `SELECT u.task_id, u.data FROM audit_pending_batches AS b,
		unnest(b.kind, b.task_id, b.data) AS u (kind, task_id, data) WHERE u.kind = '`+string(task.AuditTransition)+`'
		UNION ALL SELECT task_id, data FROM audit_pending WHERE kind = '`+string(task.AuditTransition)+`'`,
		func(rows pgx.Rows) error {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				return fmt.Errorf("postgres: scan audit: pending: %w", err)
			}
			var r struct {
				TaskID string `json:"taskId"`
				Seq    int    `json:"seq"`
			}
			if json.Unmarshal(data, &r) == nil && r.TaskID == id {
				skip[recordKey{r.TaskID, r.Seq}] = struct{}{}
			}
			return nil
		})
	return skip, err
}
