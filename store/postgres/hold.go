package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// A speculative creation (task.CreateParams.Speculative: a blocking
// submission that tells nobody of its task before the task's next write
// returns) is written and checked on a connection of the pool, and its
// transaction is then left open for up to Options.SpeculativeHold instead
// of being committed. The task's next write (Transition) joins it: the
// transition's statements, both sets of audit entries and COMMIT go in one
// round trip, so an echo agent's task costs one commit and two round
// trips instead of two commits and four. When nothing writes the task in
// time, a timer commits the creation alone, as CreateTask would have.
//
// Until that commit the task is seen only by its own next write, as with
// the SQLite writer's held transaction. Any other write of the task by
// this store (RenewLease, push configurations) first commits the creation
// alone (settleHeld); nobody else knows the task's ID yet.

// DefaultSpeculativeHold is Options.SpeculativeHold's default.
const DefaultSpeculativeHold = time.Millisecond

// heldCommitTimeout bounds the commit of a held creation that no caller's
// context covers (the timer's, Close's).
const heldCommitTimeout = 30 * time.Second

// errTaskExists is a held creation's refusal of a task ID that is
// taken.
var errTaskExists = errors.New("a task with this ID exists")

// errKeyTaken is a creation's refusal of an idempotency key that names
// another live task.
var errKeyTaken = errors.New("idempotency key names another task")

// held is a speculative creation whose transaction is open.
type held struct {
	id   string
	conn *pgxpool.Conn
	x    *txn
	// row is the task's row as the creation will write it (heldRow):
	// what a transition would lock and read.
	row taskRow
	// now and audit are the creation's audit entries, pended with the
	// commit.
	now       time.Time
	audit     []task.AuditInput
	committed func(error)
	timer     *time.Timer
	// taken is set, under Store.heldMu, by whoever ends the transaction:
	// the task's next write, the timer, or Close.
	taken bool
	// done is closed once the transaction ended.
	done chan struct{}
}

// createHeld writes plan's task in a transaction that it leaves open and
// registers for the task's next write (or its timer); committed learns
// how that transaction ended. A key that names another task fails with
// errKeyTaken, having written nothing.
func (s *Store) createHeld(ctx context.Context, plan *driver.NewTask, committed func(error)) error {
	id := plan.Task.ID
	var h *held
	err := s.retry(ctx, func() (bool, error) {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return false, err
		}
		x := &txn{ctx: ctx, conn: conn.Conn(), batch: &pgx.Batch{}, write: true}
		hd := &held{id: id, conn: conn, x: x, now: plan.Now, audit: plan.Writes.Audit, committed: committed, done: make(chan struct{})}
		x.queue("BEGIN")
		var took, exists bool
		var expires any
		if plan.Idempotent {
			expires = plan.KeyExpires
		}
		x.queue(sqlHoldKey, plan.Actor, plan.Key, id, expires, plan.Now, plan.Idempotent).QueryRow(func(r pgx.Row) error {
			return r.Scan(&took, &exists)
		})
		err = x.flush()
		switch {
		case err != nil:
		case !took:
			err = errKeyTaken
		case exists:
			err = errTaskExists
		default:
			hd.row = heldRow(plan)
			x.fresh = plan
		}
		if err != nil {
			s.endTx(x)
			conn.Release()
			return false, err
		}
		h = hd
		return false, nil
	})
	if err != nil {
		return err
	}
	s.heldMu.Lock()
	if s.holdClosed {
		// Close ran meanwhile: nothing will end the hold.
		h.taken = true
		s.heldMu.Unlock()
		_ = s.commitHeld(h)
		return nil
	}
	h.timer = time.AfterFunc(s.hold, func() { s.holdEnded(h) })
	s.held[id] = h
	s.heldMu.Unlock()
	return nil
}

// takeHeld returns the held creation of task id for its caller to end, or
// nil when there is none; when another caller is ending it, takeHeld waits
// until it has.
func (s *Store) takeHeld(id string) *held {
	s.heldMu.Lock()
	h := s.held[id]
	if h == nil {
		s.heldMu.Unlock()
		return nil
	}
	if !h.taken {
		h.taken = true
		s.heldMu.Unlock()
		h.timer.Stop()
		return h
	}
	s.heldMu.Unlock()
	<-h.done
	return nil
}

// settleHeld commits task id's held creation alone, if there is one, so
// that a write that does not join it finds the task stored.
func (s *Store) settleHeld(id string) {
	if h := s.takeHeld(id); h != nil {
		_ = s.commitHeld(h)
	}
}

// holdEnded is the timer's: nothing wrote the task in time.
func (s *Store) holdEnded(h *held) {
	s.heldMu.Lock()
	mine := !h.taken
	h.taken = true
	s.heldMu.Unlock()
	if mine {
		_ = s.commitHeld(h)
	}
}

// commitHeld commits a taken held creation alone.
func (s *Store) commitHeld(h *held) error {
	ctx, cancel := context.WithTimeout(context.Background(), heldCommitTimeout)
	defer cancel()
	h.x.ctx = ctx
	if plan := h.x.fresh; plan != nil {
		h.x.insertHeld(plan)
	}
	h.x.sealAudit(h.now, h.audit)
	return s.endHeld(h, h.x.commit())
}

// endHeld ends a taken held creation whose COMMIT returned err: it
// releases the connection, tells the creator (Committed) and then anyone
// waiting for it. It returns err, marked as of unknown outcome when the
// connection broke after COMMIT was sent.
func (s *Store) endHeld(h *held, err error) error {
	x := h.x
	if err != nil {
		if _, lost := classify(err, x.commitSent); lost {
			s.pool.Reset()
			if x.commitSent {
				err = fmt.Errorf("%w: %w", errCommitUnknown, err)
			}
		}
		err = fmt.Errorf("commit the creation of task %q: %w", h.id, err)
	}
	s.endTx(x)
	h.conn.Release()
	if err == nil && x.pended {
		s.wakeSealer()
	}
	s.heldMu.Lock()
	delete(s.held, h.id)
	s.heldMu.Unlock()
	h.committed(err)
	close(h.done)
	return err
}

// transitionHeld runs p in h's transaction and commits both; joined is
// false when p does not join it (a move that reads or writes other tasks:
// the creation was committed alone, and p is for the usual path to run).
func (s *Store) transitionHeld(ctx context.Context, h *held, p task.TransitionParams, prep *driver.Transition) (t *task.Task, joined bool, err error) {
	x := h.x
	x.ctx = ctx
	t, err = h.row.task()
	if err == nil && (inFamily(t, p) || len(prep.Spawn) > 0) {
		if err := s.commitHeld(h); err != nil {
			return nil, true, err
		}
		return nil, false, nil
	}
	if err == nil {
		queued := x.batch.Len()
		// The creation's entries go before the transition's, under the
		// same batch number: the creation comes first in the chain.
		x.sealAudit(h.now, h.audit)
		if err = x.transition(t, p, prep); err != nil {
			// A refused transition: the creation commits alone, without
			// whatever the transition had queued (commitHeld collects the
			// creation's entries again).
			x.batch.QueuedQueries = x.batch.QueuedQueries[:queued]
			x.audit, x.pended = pendBuf{}, false
		}
	}
	if err != nil {
		if cerr := s.commitHeld(h); cerr != nil {
			return nil, true, cerr
		}
		return nil, true, err
	}
	if err := s.endHeld(h, x.commit()); err != nil {
		return nil, true, err
	}
	return t, true, nil
}

// commitAllHeld commits every held creation no one else is ending, and
// makes later speculative creations commit at once (Close).
func (s *Store) commitAllHeld() {
	s.heldMu.Lock()
	s.holdClosed = true
	var mine []*held
	for _, h := range s.held {
		if !h.taken {
			h.taken = true
			mine = append(mine, h)
		}
	}
	s.heldMu.Unlock()
	for _, h := range mine {
		h.timer.Stop()
		_ = s.commitHeld(h)
	}
}

// heldRow is the row plan's task would have once inserted, as sqlCreate
// writes it (no status message, turn_start and children 0).
func heldRow(plan *driver.NewTask) taskRow {
	t := plan.Task
	ts := func(v time.Time) *time.Time {
		if v.IsZero() {
			return nil
		}
		return &v
	}
	return taskRow{found: true, id: t.ID, contextID: t.ContextID, agent: t.Agent, env: plan.Envelope,
		payloadHash: t.PayloadHash, state: string(t.State), code: string(t.ErrorCode), attempt: t.Attempt,
		maxAtt: t.MaxAttempts, runAfter: ts(t.RunAfter), leaseExp: ts(t.LeaseExpires), leaseOwner: t.LeaseOwner,
		reason: t.Reason, rejected: t.Rejected, seq: t.Seq, created: t.CreatedAt, updated: t.UpdatedAt}
}
