package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pactum/pactum/task"
)

// Group commit. SQLite has one writer; with many concurrent callers most of
// a commit's cost is writing the same hot pages (the task table's newest
// leaf, the record and audit indexes) to the WAL again for every caller.
// The write functions that queued up while the previous commit was under
// way run in ONE transaction: a function that fails is undone alone (see
// runGroup), the others commit together, and every caller is answered
// only after the commit (or with the commit's error). A lone caller gets a
// transaction of its own.
//
// There is no writer goroutine: the writer is whichever caller holds the
// lead (writer.leading). A caller that finds nobody leading leads: it runs
// the queued functions, its own among them, on the write connection, then
// hands the lead to the first caller still queued, or gives it up when the
// queue is empty. A lone caller thus writes on its own goroutine, without
// a hand-off to another and back (two thread wake-ups per write); under
// load the lead moves from batch to batch, so no caller writes for others
// for long.
//
// Speculative creations (task.CreateParams.Speculative) are answered as
// soon as their function ran, before the commit, and the transaction is
// then held open (up to Config.SpeculativeHold) for the next write of each
// such task: a blocking request's task is created, run and settled in one
// commit. The transaction stays open between leads; the next lead runs its
// writes in it, and a timer commits it when the hold ends with nobody
// writing. Writes that join meanwhile are answered after the commit, as
// any other, so nothing that depends on a speculative creation is
// answered before it is durable.

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
	// transition marks a Transition of task: it may use the row a
	// speculative creation of the task left in the transaction (rows).
	transition bool
}

var errClosed = errors.New("sqlite: store is closed")

// errLead, sent on a queued request's done, hands its caller the lead.
var errLead = errors.New("sqlite: lead the writer")

// writer is the single writer's state.
type writer struct {
	mu sync.Mutex
	// queue holds the requests no lead has taken yet. It is empty
	// whenever nobody leads.
	queue   []*writeReq
	leading bool
	closed  bool
	// idle is signaled when the lead is given up.
	idle *sync.Cond
	// expired names the held transaction whose hold ended while someone
	// led: that lead commits it.
	expired uint64

	// Owned by the lead:

	// open is the transaction held open for speculative creations' next
	// writes; nil when none is.
	open *held
	// txs counts the transactions begun (their ids).
	txs uint64
}

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
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), writeOpts: o}
	w := &s.wr
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.queue = append(w.queue, req)
	lead := !w.leading
	w.leading = true
	w.mu.Unlock()
	if lead {
		s.lead()
	}
	// Once queued the request runs (or is refused because its ctx ended),
	// so wait for the answer: returning early could report failure for a
	// write that commits.
	for {
		err := <-req.done
		if err != errLead {
			return err
		}
		s.lead()
	}
}

// lead runs one batch of the queue as the writer (the caller holds the
// lead), then passes the lead on.
func (s *Store) lead() {
	w := &s.wr
	w.mu.Lock()
	limit := maxBatch
	if w.open != nil {
		limit = min(maxBatch, maxHeld-len(w.open.reqs))
	}
	n := min(len(w.queue), limit)
	batch := make([]*writeReq, n)
	copy(batch, w.queue)
	w.queue = w.queue[n:]
	w.mu.Unlock()
	if ran, err := s.onConn(func() { s.runBatch(batch) }); !ran {
		err = fmt.Errorf("writer's connection: %w", err)
		for _, r := range batch {
			r.done <- err
		}
	}
	s.passLead()
}

// passLead hands the lead to the first request still queued, or gives it
// up when there is none. A held transaction whose hold ended while this
// lead ran is committed first: its timer left the commit to the lead
// (holdEnded), and nobody else would commit it before the next write.
func (s *Store) passLead() {
	w := &s.wr
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			next := w.queue[0]
			w.mu.Unlock()
			next.done <- errLead
			return
		}
		if b := w.open; b != nil && w.expired == b.id {
			w.mu.Unlock()
			s.commitHeld(b)
			continue
		}
		w.queue = nil
		w.leading = false
		w.mu.Unlock()
		w.idle.Broadcast()
		return
	}
}

// takeLead waits until nobody leads and takes the lead; closing also
// refuses every write that would queue after it.
func (s *Store) takeLead(closing bool) {
	w := &s.wr
	w.mu.Lock()
	w.closed = w.closed || closing
	for w.leading {
		w.idle.Wait()
	}
	w.leading = true
	w.mu.Unlock()
}

// stopWriter commits a transaction held open and refuses every later
// write. Every write queued before has been answered when it returns.
func (s *Store) stopWriter() {
	s.takeLead(true)
	if b := s.wr.open; b != nil {
		s.commitHeld(b)
	}
}

// holdEnded commits the held transaction id once its hold has passed,
// unless it was committed meanwhile; when someone leads, that lead does.
func (s *Store) holdEnded(id uint64) {
	w := &s.wr
	w.mu.Lock()
	if w.leading {
		w.expired = id
		w.mu.Unlock()
		return
	}
	w.leading = true
	w.mu.Unlock()
	if b := w.open; b != nil && b.id == id {
		s.commitHeld(b)
	}
	s.passLead()
}

// runBatch runs batch (the lead's) in the transaction held open, or a new
// one, and commits it unless speculative creations in it wait for their
// tasks' next writes, which then find it open.
func (s *Store) runBatch(batch []*writeReq) {
	ctx := context.Background()
	b := s.wr.open
	if b == nil {
		if len(batch) == 0 {
			return
		}
		if _, err := s.w.exec(ctx, s.w.begin, nil); err != nil {
			err = fmt.Errorf("begin: %w", err)
			for _, r := range batch {
				r.done <- err
			}
			return
		}
		s.wr.txs++
		b = &held{id: s.wr.txs}
		if err := s.runGroup(ctx, b, batch, true); err != nil {
			s.abort(b, err)
			return
		}
		if len(b.reqs) == 1 && b.errs[0] != nil {
			// A lone function that failed (or undid itself): nothing to
			// commit.
			if errors.Is(b.errs[0], errRollback) {
				b.errs[0] = nil
			}
			s.abort(b, nil)
			return
		}
	} else if len(batch) > 0 {
		if err := s.runGroup(ctx, b, batch, false); err != nil {
			s.abort(b, err)
			return
		}
	}
	s.wr.mu.Lock()
	expired := s.wr.expired == b.id
	closed := s.wr.closed
	s.wr.mu.Unlock()
	if len(b.pending) > 0 && s.cfg.SpeculativeHold > 0 && len(b.reqs) < maxHeld && !expired && !closed {
		s.wr.open = b
		if b.timer == nil {
			id := b.id
			b.timer = time.AfterFunc(s.cfg.SpeculativeHold, func() { s.holdEnded(id) })
		}
		return
	}
	s.commit(b)
}

// commitHeld commits b, the transaction held open, from outside a lead's
// batch (which runs on the writer's connection already).
func (s *Store) commitHeld(b *held) {
	if ran, err := s.onConn(func() { s.commit(b) }); !ran {
		s.wr.open = nil
		if b.timer != nil {
			b.timer.Stop()
		}
		b.finish(fmt.Errorf("commit: writer's connection: %w", err))
	}
}

// commit commits b and answers its requests; a transaction that cannot
// commit is rolled back and every request learns why.
func (s *Store) commit(b *held) {
	s.wr.open = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	ctx := context.Background()
	if err := s.batchTxn(ctx, &b.head).moveHead(); err != nil {
		s.abort(b, err)
		return
	}
	if _, err := s.w.exec(ctx, s.w.commit, nil); err != nil {
		// A failed COMMIT may leave the transaction open.
		s.abort(b, fmt.Errorf("commit: %w", err))
		return
	}
	s.commits.Add(1)
	s.committed(len(b.reqs))
	b.finish(nil)
}

// abort rolls b back and answers its requests: err for those whose
// function succeeded (nil when none did: a lone function's own failure).
func (s *Store) abort(b *held, err error) {
	s.wr.open = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	// SQLite's error when no transaction is open (a failed COMMIT may
	// have ended it) is of no interest.
	_, _ = s.w.exec(context.Background(), s.w.rollback, nil)
	b.finish(err)
}

// held is one write transaction and the requests it ran.
type held struct {
	id   uint64
	head txn // the audit head as the last function left it
	reqs []*writeReq
	errs []error
	// answered marks the requests answered before the commit.
	answered []bool
	// pending holds the tasks created speculatively in the transaction
	// whose next write has not run in it yet.
	pending map[string]bool
	// timer ends the hold (holdEnded), once the transaction is held.
	timer *time.Timer
	// rows holds the task rows speculative creations wrote in the
	// transaction, as a read would return them, until something could
	// have changed them: a Transition of the task starts from its row
	// here instead of reading it (rowCache).
	rows map[string]*task.Task
}

// passState is what the functions of one run of a group (runGroup) tell
// each other about the rows of held.rows: a function that may have
// changed rows other than its own task's (dirty), and the tasks whose rows
// a function of the run has changed (touched).
type passState struct {
	dirty   bool
	touched map[string]bool
}

// rowCache reports whether a run of reqs starts dirty (passState): its
// functions may use b.rows only when each is a speculative creation
// (which inserts new rows) or a Transition (which says what it changed).
// Any other write could change any row, the rows creations of the group
// write included, so b.rows is dropped and nothing the run keeps
// survives it.
func rowCache(b *held, reqs []*writeReq) (dirty bool) {
	for _, r := range reqs {
		if !r.early && !r.transition {
			b.rows = nil
			return true
		}
	}
	return false
}

// keepRows records in b.rows what r's function did, once it succeeded for
// good: the row a speculative creation wrote, and the end of a
// transitioned task's cached row.
func keepRows(b *held, r *writeReq, x *txn) {
	if x.created != nil {
		if b.rows == nil {
			b.rows = map[string]*task.Task{}
		}
		b.rows[x.created.ID] = x.created
	}
	if r.transition {
		delete(b.rows, r.task)
	}
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
	dirty := rowCache(b, reqs)
	cache, ps := b.rows, &passState{dirty: dirty}
	if first && len(reqs) == 1 {
		r := reqs[0]
		if errs[0] = r.ctx.Err(); errs[0] == nil {
			x := s.groupTxn(ctx, &b.head, cache, ps)
			if errs[0] = s.call(r, x); errs[0] == nil {
				b.head = *x
				keepRows(b, r, x)
			}
		}
	} else {
		if _, err := s.w.exec(ctx, s.w.savepointG, nil); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		if !s.runBare(ctx, b, reqs, errs, cache, ps) {
			if _, err := s.w.exec(ctx, s.w.rollbackToG, nil); err != nil {
				return fmt.Errorf("roll back to savepoint: %w", err)
			}
			ps = &passState{dirty: dirty}
			if err := s.runIsolated(ctx, b, reqs, errs, undone, cache, ps); err != nil {
				return err
			}
		}
		if _, err := s.w.exec(ctx, s.w.releaseG, nil); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	if ps.dirty {
		b.rows = nil
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
func (s *Store) runBare(ctx context.Context, b *held, reqs []*writeReq, errs []error, cache map[string]*task.Task, ps *passState) bool {
	head := b.head
	xs := make([]*txn, len(reqs))
	for i, r := range reqs {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		x := s.groupTxn(ctx, &head, cache, ps)
		if err := s.call(r, x); err != nil {
			errs[i] = nil
			return false
		}
		head = *x
		xs[i] = x
	}
	b.head = head
	for i, r := range reqs {
		if xs[i] != nil {
			keepRows(b, r, xs[i])
		}
	}
	return true
}

// runIsolated runs reqs each inside its own savepoint, so that one that
// fails is undone alone; undone marks those that undid themselves
// (errRollback, reported as success).
func (s *Store) runIsolated(ctx context.Context, b *held, reqs []*writeReq, errs []error, undone []bool, cache map[string]*task.Task, ps *passState) error {
	// b.head is where the chain stood at the group's savepoint (runBare
	// keeps its moves to itself until all succeeded), and each function's
	// rollback below puts it back where that function found it.
	for i, r := range reqs {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		if _, err := s.w.exec(ctx, s.w.savepoint, nil); err != nil {
			errs[i] = fmt.Errorf("savepoint: %w", err)
			continue
		}
		x := s.groupTxn(ctx, &b.head, cache, ps)
		ferr := s.call(r, x)
		if ferr != nil {
			if _, err := s.w.exec(ctx, s.w.rollbackTo, nil); err != nil {
				// The transaction is unusable; fail everything.
				return fmt.Errorf("roll back to savepoint after %v: %w", ferr, err)
			}
			if errors.Is(ferr, errRollback) {
				ferr, undone[i] = nil, true
			}
			errs[i] = ferr
		} else {
			b.head = *x
			keepRows(b, r, x)
		}
		if _, err := s.w.exec(ctx, s.w.release, nil); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
	}
	return nil
}

// call runs r's write function in x. A function that panics (a bug) fails
// with an error, logged with its stack, and is undone as any failing one:
// the caller's goroutine holds the writer's turn, and a panic unwinding it
// would leave the turn taken and the transaction open, every later write
// waiting.
func (s *Store) call(r *writeReq, x *txn) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("sqlite: a write function panicked; it is undone and fails", slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("sqlite: write function panicked: %v", p)
		}
	}()
	return r.fn(x)
}

// groupTxn is batchTxn for a function of a group run: it may use cache
// (held.rows), and tells the run's other functions what it changed (ps).
func (s *Store) groupTxn(ctx context.Context, head *txn, cache map[string]*task.Task, ps *passState) *txn {
	x := s.batchTxn(ctx, head)
	x.rows, x.pass = cache, ps
	return x
}

// batchTxn returns the txn of the next function of a batch in the
// writer's transaction, carrying the audit head the previous one left
// (head).
func (s *Store) batchTxn(ctx context.Context, head *txn) *txn {
	return &txn{ctx: ctx, st: &s.w, headLoaded: head.headLoaded, headMoved: head.headMoved,
		headSeq: head.headSeq, headHash: head.headHash}
}
