package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Group commit. SQLite has one writer; with many concurrent callers most of
// a commit's cost is writing the same hot pages (the task table's newest
// leaf, the record and audit indexes) to the WAL again for every caller.
// The batcher runs the write functions that queued up while the previous
// commit was under way in ONE transaction, each inside its own SAVEPOINT:
// a function that fails is rolled back to its savepoint alone, the others
// commit together, and every caller is answered only after the commit (or
// with the commit's error). A lone caller gets a transaction of its own.

// maxBatch bounds how many write functions share one transaction.
const maxBatch = 64

type writeReq struct {
	ctx  context.Context
	fn   func(*txn) error
	done chan error
}

var errClosed = errors.New("sqlite: store is closed")

// inWriteTx runs fn in a write transaction (possibly shared with other
// callers' functions, each isolated by a savepoint) and returns once the
// transaction committed. fn returning errRollback undoes its own writes and
// reports success.
func (s *Store) inWriteTx(ctx context.Context, fn func(*txn) error) error {
	if s.cfg.ReadOnly {
		return errReadOnly
	}
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.writes <- req:
	case <-s.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued the request runs (or is refused by the batcher because
	// its ctx ended), so wait for the answer: returning early could report
	// failure for a write that commits.
	return <-req.done
}

// batcher owns the write connection until stop is closed.
func (s *Store) batcher() {
	defer close(s.batcherDone)
	batch := make([]*writeReq, 0, maxBatch)
	for {
		var first *writeReq
		select {
		case first = <-s.writes:
		case <-s.stop:
			// Refuse what is still queued.
			for {
				select {
				case r := <-s.writes:
					r.done <- errClosed
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < maxBatch {
			select {
			case r := <-s.writes:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.runBatch(batch)
	}
}

// runBatch runs batch in one transaction. Several functions first run
// without savepoints, which spares each two statements and SQLite's
// statement journal; if one of them fails (or undoes itself with
// errRollback) the transaction is rolled back and the batch runs again with
// a savepoint around each function. Write functions are safe to run twice:
// they only read the transaction and assign their results.
func (s *Store) runBatch(batch []*writeReq) {
	if len(batch) > 1 && s.runOptimistic(batch) {
		return
	}
	s.runIsolated(batch)
}

// runOptimistic runs batch in one transaction without savepoints and
// commits it if every function succeeded. It reports false, having written
// nothing and answered no one, when a function failed.
func (s *Store) runOptimistic(batch []*writeReq) bool {
	ctx := context.Background()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return false // runIsolated tries again and answers
	}
	defer func() { _ = tx.Rollback() }()
	errs := make([]error, len(batch))
	var head txn
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err // skipped: it wrote nothing
			continue
		}
		x := s.batchTxn(ctx, tx, &head)
		if err := r.fn(x); err != nil {
			return false
		}
		head = *x
	}
	commitErr := tx.Commit()
	for i, r := range batch {
		if errs[i] == nil && commitErr != nil {
			errs[i] = fmt.Errorf("commit: %w", commitErr)
		}
		r.done <- errs[i]
	}
	return true
}

// runIsolated runs batch in one transaction, each function of several
// inside its own savepoint, so that one that fails is undone alone.
func (s *Store) runIsolated(batch []*writeReq) {
	errs := make([]error, len(batch))
	answer := func(commitErr error) {
		for i, r := range batch {
			if errs[i] == nil && commitErr != nil {
				errs[i] = commitErr
			}
			r.done <- errs[i]
		}
	}
	// The transaction must not die with one caller's context: a canceled
	// statement inside an explicit transaction makes SQLite roll the whole
	// transaction back. Callers' contexts are checked before their turn.
	ctx := context.Background()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		answer(fmt.Errorf("begin: %w", err))
		return
	}
	defer func() { _ = tx.Rollback() }()
	single := len(batch) == 1
	var head txn // carries the audit head from one function to the next
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		x := s.batchTxn(ctx, tx, &head)
		if single {
			errs[i] = r.fn(x)
			if errors.Is(errs[i], errRollback) {
				errs[i] = nil
				_ = tx.Rollback()
				answer(nil)
				return
			}
			if errs[i] != nil {
				_ = tx.Rollback()
				answer(nil)
				return
			}
			head = *x
			continue
		}
		if _, err := tx.StmtContext(ctx, s.w.savepoint).ExecContext(ctx); err != nil {
			errs[i] = fmt.Errorf("savepoint: %w", err)
			continue
		}
		ferr := r.fn(x)
		if ferr != nil {
			if _, err := tx.StmtContext(ctx, s.w.rollbackTo).ExecContext(ctx); err != nil {
				// The transaction is unusable; fail everything.
				answer(fmt.Errorf("roll back to savepoint after %v: %w", ferr, err))
				return
			}
			// The audit head may have moved inside the rolled-back part.
			head.headLoaded = false
			if errors.Is(ferr, errRollback) {
				ferr = nil
			}
			errs[i] = ferr
		} else {
			head = *x
		}
		if _, err := tx.StmtContext(ctx, s.w.release).ExecContext(ctx); err != nil {
			answer(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		answer(fmt.Errorf("commit: %w", err))
		return
	}
	answer(nil)
}

// batchTxn returns the txn of the next function of a batch in tx, carrying
// the audit head the previous one left (head).
func (s *Store) batchTxn(ctx context.Context, tx *sql.Tx, head *txn) *txn {
	return &txn{ctx: ctx, tx: tx, st: &s.w, headLoaded: head.headLoaded, headSeq: head.headSeq, headHash: head.headHash}
}
