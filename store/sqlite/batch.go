package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Group commit. SQLite has one writer; with many concurrent callers most of
// a commit's cost is writing the same hot pages (the task table's newest
// leaf, the record and audit indexes) to the WAL again for every caller.
// The batcher runs the write functions that queued up while the previous
// commit was under way in ONE transaction: a function that fails is undone
// alone (see runGroup), the others commit together, and every caller is
// answered only after the commit (or with the commit's error). A lone
// caller gets a transaction of its own.
//
// Speculative creations (task.CreateParams.Speculative) are answered as
// soon as their function ran, before the commit, and the transaction is
// then held open (up to Config.SpeculativeHold) for the next write of each
// such task: a blocking request's task is created, run and settled in one
// commit. Writes that arrive meanwhile join the transaction; each is
// answered after the commit, as any other, so nothing that depends on a
// speculative creation is answered before it is durable.

// maxBatch bounds how many write functions share one transaction.
const maxBatch = 64

// maxHeld bounds the write functions of a transaction held open for
// speculative creations' next writes.
const maxHeld = 4 * maxBatch

type writeReq struct {
	ctx  context.Context
	fn   func(*txn) error
	done chan error
	writeOpts
}

// writeOpts says what a write is about, for holding a transaction open.
type writeOpts struct {
	// task is the task the write changes ("" for none in particular).
	task string
	// early answers the caller once fn succeeded, before the commit (a
	// speculative creation); committed, when set, then learns the commit's
	// outcome.
	early     bool
	committed func(error)
}

var errClosed = errors.New("sqlite: store is closed")

// inWriteTx runs fn in a write transaction (possibly shared with other
// callers' functions, each isolated by a savepoint) and returns once the
// transaction committed. fn returning errRollback undoes its own writes and
// reports success.
func (s *Store) inWriteTx(ctx context.Context, fn func(*txn) error) error {
	return s.inWriteTxOpts(ctx, writeOpts{}, fn)
}

// inWriteTxOpts is inWriteTx for a write about o.task; with o.early it
// returns once fn ran, before the commit.
func (s *Store) inWriteTxOpts(ctx context.Context, o writeOpts, fn func(*txn) error) error {
	if s.cfg.ReadOnly {
		return errReadOnly
	}
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), writeOpts: o}
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
			s.refuseQueued()
			return
		}
		s.runBatch(s.fill(append(batch[:0], first), maxBatch))
	}
}

// refuseQueued answers every queued write with errClosed.
func (s *Store) refuseQueued() {
	for {
		select {
		case r := <-s.writes:
			r.done <- errClosed
		default:
			return
		}
	}
}

// fill adds the writes already queued to batch, up to limit in all.
func (s *Store) fill(batch []*writeReq, limit int) []*writeReq {
	for len(batch) < limit {
		select {
		case r := <-s.writes:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// runBatch runs batch in one transaction and answers every caller; with
// speculative creations in it, it holds the transaction open for their
// tasks' next writes first (hold).
func (s *Store) runBatch(batch []*writeReq) {
	// The transaction must not die with one caller's context: a canceled
	// statement inside an explicit transaction makes SQLite roll the whole
	// transaction back. Callers' contexts are checked before their turn.
	ctx := context.Background()
	if _, err := s.w.begin.ExecContext(ctx); err != nil {
		err = fmt.Errorf("begin: %w", err)
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	committed := false
	defer func() {
		if !committed {
			// Also after a failed COMMIT, which may leave the transaction
			// open; SQLite's error when it is not is of no interest.
			_, _ = s.w.rollback.ExecContext(ctx)
		}
	}()
	b := &held{}
	if err := s.runGroup(ctx, b, batch, true); err != nil {
		b.finish(err)
		return
	}
	if len(b.reqs) == 1 && b.errs[0] != nil {
		// A lone function that failed (or undid itself): nothing to
		// commit. The deferred ROLLBACK undoes it.
		if errors.Is(b.errs[0], errRollback) {
			b.errs[0] = nil
		}
		b.finish(nil)
		return
	}
	if len(b.pending) > 0 && s.cfg.SpeculativeHold > 0 {
		if err := s.hold(ctx, b); err != nil {
			b.finish(err)
			return
		}
	}
	if err := s.batchTxn(ctx, &b.head).moveHead(); err != nil {
		b.finish(err)
		return
	}
	if _, err := s.w.commit.ExecContext(ctx); err != nil {
		b.finish(fmt.Errorf("commit: %w", err))
		return
	}
	committed = true
	s.commits.Add(1)
	s.committed(len(b.reqs))
	b.finish(nil)
}

// held is one write transaction and the requests it ran.
type held struct {
	head txn // the audit head as the last function left it
	reqs []*writeReq
	errs []error
	// answered marks the requests answered before the commit.
	answered []bool
	// pending holds the tasks created speculatively in the transaction
	// whose next write has not run in it yet.
	pending map[string]bool
}

// hold keeps b's transaction open while it has speculative creations
// whose tasks have not been written again, running the writes that arrive
// meanwhile in it, until each such task was written again, maxHeld writes
// ran or Config.SpeculativeHold passed. An error means the transaction is
// unusable.
func (s *Store) hold(ctx context.Context, b *held) error {
	timer := time.NewTimer(s.cfg.SpeculativeHold)
	defer timer.Stop()
	next := make([]*writeReq, 0, maxBatch)
	for len(b.pending) > 0 && len(b.reqs) < maxHeld {
		var r *writeReq
		select {
		case r = <-s.writes:
		case <-timer.C:
			return nil
		case <-s.stop:
			return nil
		}
		more := s.fill(append(next[:0], r), min(maxBatch, maxHeld-len(b.reqs)))
		if err := s.runGroup(ctx, b, more, false); err != nil {
			return err
		}
	}
	return nil
}

// finish answers every request of b not answered yet: with its own error,
// or err (the commit's) when its function succeeded. Speculative
// creations answered before learn err through their committed function.
func (b *held) finish(err error) {
	for i, r := range b.reqs {
		if b.answered[i] {
			if r.committed != nil {
				r.committed(err)
			}
			continue
		}
		e := b.errs[i]
		if e == nil {
			e = err
		}
		r.done <- e
	}
}

// runGroup runs reqs in b's transaction after what it holds already, and
// answers the speculative creations among them that succeeded. Several
// functions first run together without savepoints of their own (which
// spares each two statements and SQLite's statement journal) inside one
// savepoint; if one of them fails (or undoes itself with errRollback) the
// group is rolled back to that savepoint and runs again with a savepoint
// around each function. Write functions are safe to run twice: they only
// read the transaction and assign their results. A lone function of a
// fresh transaction (first) runs bare: the caller rolls the transaction
// back if it fails. runGroup returns an error only when the transaction is
// unusable; every request of reqs has then been added to b.
func (s *Store) runGroup(ctx context.Context, b *held, reqs []*writeReq, first bool) error {
	base := len(b.reqs)
	b.reqs = append(b.reqs, reqs...)
	for range reqs {
		b.errs = append(b.errs, nil)
		b.answered = append(b.answered, false)
	}
	errs := b.errs[base:]
	undone := make([]bool, len(reqs))
	if first && len(reqs) == 1 {
		r := reqs[0]
		if errs[0] = r.ctx.Err(); errs[0] == nil {
			x := s.batchTxn(ctx, &b.head)
			if errs[0] = r.fn(x); errs[0] == nil {
				b.head = *x
			}
		}
	} else {
		if _, err := s.w.savepointG.ExecContext(ctx); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		if !s.runBare(ctx, b, reqs, errs) {
			if _, err := s.w.rollbackToG.ExecContext(ctx); err != nil {
				return fmt.Errorf("roll back to savepoint: %w", err)
			}
			if err := s.runIsolated(ctx, b, reqs, errs, undone); err != nil {
				return err
			}
		}
		if _, err := s.w.releaseG.ExecContext(ctx); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	// Every write about a task created speculatively in the transaction
	// ends its wait; then the new speculative creations are answered.
	for _, r := range reqs {
		if !r.early {
			delete(b.pending, r.task)
		}
	}
	for i, r := range reqs {
		if !r.early || errs[i] != nil || undone[i] {
			continue
		}
		if b.pending == nil {
			b.pending = map[string]bool{}
		}
		b.pending[r.task] = true
		b.answered[base+i] = true
		r.done <- nil
	}
	return nil
}

// runBare runs reqs one after the other without savepoints and reports
// whether every one succeeded; errs gets the contexts that had ended (those
// functions are skipped and write nothing).
func (s *Store) runBare(ctx context.Context, b *held, reqs []*writeReq, errs []error) bool {
	head := b.head
	for i, r := range reqs {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		x := s.batchTxn(ctx, &head)
		if err := r.fn(x); err != nil {
			errs[i] = nil
			return false
		}
		head = *x
	}
	b.head = head
	return true
}

// runIsolated runs reqs each inside its own savepoint, so that one that
// fails is undone alone; undone marks those that undid themselves
// (errRollback, reported as success).
func (s *Store) runIsolated(ctx context.Context, b *held, reqs []*writeReq, errs []error, undone []bool) error {
	// b.head is where the chain stood at the group's savepoint (runBare
	// keeps its moves to itself until all succeeded), and each function's
	// rollback below puts it back where that function found it.
	for i, r := range reqs {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := s.w.savepoint.ExecContext(ctx); err != nil {
			errs[i] = fmt.Errorf("savepoint: %w", err)
			continue
		}
		x := s.batchTxn(ctx, &b.head)
		ferr := r.fn(x)
		if ferr != nil {
			if _, err := s.w.rollbackTo.ExecContext(ctx); err != nil {
				// The transaction is unusable; fail everything.
				return fmt.Errorf("roll back to savepoint after %v: %w", ferr, err)
			}
			if errors.Is(ferr, errRollback) {
				ferr, undone[i] = nil, true
			}
			errs[i] = ferr
		} else {
			b.head = *x
		}
		if _, err := s.w.release.ExecContext(ctx); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	return nil
}

// batchTxn returns the txn of the next function of a batch in the
// batcher's transaction, carrying the audit head the previous one left
// (head).
func (s *Store) batchTxn(ctx context.Context, head *txn) *txn {
	return &txn{ctx: ctx, st: &s.w, headLoaded: head.headLoaded, headMoved: head.headMoved,
		headSeq: head.headSeq, headHash: head.headHash}
}
