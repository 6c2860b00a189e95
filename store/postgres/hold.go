package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// A speculative creation (task.CreateParams.Speculative: a blocking
// submission that tells nobody of its task before the task's next write
// returns) takes its idempotency key in a transaction that is then left
// open for up to Options.SpeculativeHold instead of being committed. The
// task's next write (Transition) joins it: the task is inserted as that
// write leaves it, with both sets of audit entries, and committed with it.
// When nothing writes the task in time, the creation is committed alone,
// as CreateTask would have.
//
// Concurrent speculative creations of one store share that transaction and
// its connection: a group. One creation at a time sends keys (the lead);
// the creations that arrive while its round trip is in flight form the
// next group, and the next lead sends all their key statements (BEGIN and
// one sqlHoldKey each) in one pipelined round trip on one pooled
// connection, unless another group ends first: then they go in the round
// trip that commits it, after its COMMIT, on its connection (endGroup).
// Every member of the group is answered once the whole round trip
// returned: a statement's error aborts the whole transaction, and a key
// lock wait that ends in a deadlock (another node's group taking the same
// keys in the other order) must not take back a key whose task is already
// running, so nobody runs before every key of the group is held. A round
// trip that failed leaves nothing; its members then take their keys each
// in a transaction of its own (createAlone, the one-transaction-per-task
// way, retried as any transaction).
//
// A member's next write is queued for the group, not sent; the group ends
// when every member has written, or when SpeculativeHold passed since its
// keys were answered or its last member's write, and at the latest
// groupHoldMax holds after its keys were answered (members answered
// together reach their next write one after another, not at once), or when
// something needs a member's task stored (settleHeld, Close): then
// everything queued goes in one round trip with one COMMIT, the creations
// of the members that have not written are inserted as created, and every
// member's Committed and joined write are answered after that COMMIT
// returned. A slow member thus holds the others' answers for a hold after
// the last write, and at most groupHoldMax holds; its creation commits
// with the group, and its later writes go the usual way, as a held
// creation's whose hold ended. If the group's transaction fails in
// PostgreSQL (a statement error aborts it all), it is rolled back and each
// member is committed again alone, its key and its writes in a transaction
// of its own (commitAlone): one member's failure is not the others'.
// Between that rollback and a member's commit alone its key is free:
// another node's creation with the same key may take it then and run, and
// the member's commit alone then fails (its agent having run). Only a
// group PostgreSQL refused opens that window; a SAVEPOINT per member would
// close it, at two statements per member in every group. A
// lost connection, or one lost with COMMIT in flight, fails every member,
// as it fails a transaction of one task.
//
// A creation whose task ID or idempotency key is that of another open
// creation of this store (in a group or alone) waits for that one to end
// and then goes alone: inside one transaction it would see the other's
// uncommitted key as its own transaction's, and could find the task it
// names not inserted yet. Another store (node) taking the same key waits
// on the group's uncommitted key row until the group commits, as it would
// on any transaction.
//
// Until that commit the task is seen only by its own next write, as with
// the SQLite writer's held transaction. Any other write of the task by
// this store (RenewLease, push configurations) first commits the creation
// (settleHeld: the whole group); nobody else knows the task's ID yet.

// DefaultSpeculativeHold is Options.SpeculativeHold's default.
const DefaultSpeculativeHold = time.Millisecond

// heldCommitTimeout bounds the commit of a held creation that no caller's
// context covers (the timer's, Close's), and a group's statements.
const heldCommitTimeout = 30 * time.Second

// errTaskExists is a held creation's refusal of a task ID that is
// taken.
var errTaskExists = errors.New("a task with this ID exists")

// errKeyTaken is a creation's refusal of an idempotency key that names
// another live task.
var errKeyTaken = errors.New("idempotency key names another task")

// errAlone tells a group's member that the group's keys were not taken:
// it takes its own alone.
var errAlone = errors.New("the group's keys were not taken")

// heldKey is an idempotency key: actor and key.
type heldKey struct{ actor, key string }

// held is a speculative creation whose transaction is open: alone (conn,
// x and timer its own) or as a member of a group (g).
type held struct {
	id   string
	plan *driver.NewTask
	// key is the creation's idempotency key, when it has one (hasKey).
	key    heldKey
	hasKey bool
	// row is the task's row as the creation will write it (heldRow):
	// what a transition would lock and read.
	row taskRow
	// now and audit are the creation's audit entries, pended with the
	// commit.
	now       time.Time
	audit     []task.AuditInput
	committed func(error)
	// done is closed once the transaction ended (err, for a member, its
	// outcome).
	done chan struct{}
	err  error

	// Alone:
	conn  *pgxpool.Conn
	x     *txn
	timer *time.Timer
	// taken is set, under Store.heldMu, by whoever ends the transaction:
	// the task's next write, the timer, or Close.
	taken bool

	// In a group:
	g *group
	// ready wakes the member when its key's outcome (keyErr) is known, or
	// when it is to lead the group leadNext.
	ready    chan struct{}
	leadNext *group
	keyErr   error
	// took, exists and keyLive are sqlHoldKey's answer.
	took, exists, keyLive bool
	// queued is the member's joined write, once it wrote (under heldMu),
	// and pended whether it pends audit entries; redo queues that write
	// again on another transaction (commitAlone).
	queued []*pgx.QueuedQuery
	pended bool
	redo   func(x *txn) error
}

// group is speculative creations sharing one transaction.
type group struct {
	members []*held
	// conn and x are the group's, once its keys were taken (open).
	conn *pgxpool.Conn
	x    *txn
	// Under Store.heldMu: open, set once the keys were taken; waiting, the
	// members that have not written; ending, set by whoever ends the
	// group (endGroup), after which no member joins it a write.
	open    bool
	waiting int
	ending  bool
	timer   *time.Timer
	// lastWrite is when the keys were answered or a member last wrote,
	// and deadline when the group ends at the latest (groupHoldMax
	// holds after its keys were answered), under Store.heldMu.
	lastWrite, deadline time.Time
}

// groupHoldMax bounds, in holds (Options.SpeculativeHold), how long a group
// stays open after its keys were answered while its members keep writing.
const groupHoldMax = 5

// createHeld takes plan's idempotency key in a transaction that it
// leaves open, shared with other creations (a group), and registers the
// creation for the task's next write (or the end of the hold); committed
// learns how that transaction ended. A key that names another task fails
// with errKeyTaken, having written nothing.
func (s *Store) createHeld(ctx context.Context, plan *driver.NewTask, committed func(error)) error {
	h := &held{id: plan.Task.ID, plan: plan, row: heldRow(plan), now: plan.Now, audit: plan.Writes.Audit,
		committed: committed, done: make(chan struct{})}
	if plan.Idempotent {
		h.key, h.hasKey = heldKey{plan.Actor, plan.Key}, true
	}
	s.heldMu.Lock()
	if o := s.openWith(h); o != nil {
		done := o.done
		s.heldMu.Unlock()
		s.collisions.Add(1)
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		return s.createAlone(ctx, h)
	}
	if s.holdClosed {
		s.heldMu.Unlock()
		return s.createAlone(ctx, h)
	}
	h.ready = make(chan struct{}, 1)
	g := s.forming
	if g == nil {
		g = &group{}
		s.forming = g
	}
	g.members = append(g.members, h)
	h.g = g
	s.register(h)
	var lead *group
	if !s.keying {
		s.keying, s.forming, lead = true, nil, g
	}
	s.heldMu.Unlock()
	if lead != nil {
		s.takeKeys(lead)
	}
	for {
		<-h.ready
		next := h.leadNext
		if next == nil {
			break
		}
		h.leadNext = nil
		s.takeKeys(next)
	}
	if h.keyErr == errAlone {
		return s.createAlone(ctx, h)
	}
	return h.keyErr
}

// openWith returns the open creation, if any, whose task ID or
// idempotency key is h's. heldMu is held.
func (s *Store) openWith(h *held) *held {
	if o := s.held[h.id]; o != nil {
		return o
	}
	if h.hasKey {
		return s.byKey[h.key]
	}
	return nil
}

// register and unregister add h to, and remove it from, the open
// creations. heldMu is held.
func (s *Store) register(h *held) {
	s.held[h.id] = h
	if h.hasKey {
		s.byKey[h.key] = h
	}
}

func (s *Store) unregister(h *held) {
	if s.held[h.id] == h {
		delete(s.held, h.id)
	}
	if h.hasKey && s.byKey[h.key] == h {
		delete(s.byKey, h.key)
	}
}

// queueKey queues h's sqlHoldKey on x, its answer into *took, *exists
// and *keyLive (see keyOutcome).
func (h *held) queueKey(x *txn, took, exists, keyLive *bool) {
	plan := h.plan
	var expires any
	if plan.Idempotent {
		expires = plan.KeyExpires
	}
	x.queue(sqlHoldKey, plan.Actor, plan.Key, h.id, expires, plan.Now, plan.Idempotent).QueryRow(func(r pgx.Row) error {
		return r.Scan(took, exists, keyLive)
	})
}

// keyOutcome is a creation's refusal, from sqlHoldKey's answer: a live
// key of another task wins over a taken task ID, as in sqlCreate.
func keyOutcome(took, exists, keyLive bool) error {
	switch {
	case exists && !keyLive:
		return errTaskExists
	case !took || exists:
		return errKeyTaken
	}
	return nil
}

// takeKeys sends the keys of group g, which the caller leads, in one
// round trip on a connection of the pool, and settles their outcome
// (afterKeys).
func (s *Store) takeKeys(g *group) {
	s.afterKeys(g, s.sendKeys(g), true)
}

// sendKeys begins g's transaction on a connection of the pool and takes
// its members' keys (BEGIN and sqlHoldKey each, one round trip).
func (s *Store) sendKeys(g *group) error {
	ctx, cancel := context.WithTimeout(context.Background(), heldCommitTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	x := &txn{ctx: ctx, conn: conn.Conn(), batch: &pgx.Batch{}, write: true}
	queueKeys(x, g)
	if err := x.flush(); err != nil {
		if _, lost := classify(err, false); lost {
			s.pool.Reset()
		}
		s.endTx(x)
		conn.Release()
		return err
	}
	g.conn, g.x = conn, x
	return nil
}

// queueKeys queues BEGIN and the keys of g's members on x.
func queueKeys(x *txn, g *group) {
	x.queue("BEGIN")
	for _, m := range g.members {
		m.queueKey(x, &m.took, &m.exists, &m.keyLive)
	}
}

// afterKeys settles the outcome of group g's key round trip (err: it
// failed, and nothing of it holds): each member learns whether its key
// is its task's; a group in which some are stays open on its connection,
// or ends at once when Close ran; otherwise its connection goes back to
// the pool. When g's keys were sent by a lead (lead), the creations that
// arrived meanwhile, if any, get the lead next.
func (s *Store) afterKeys(g *group, err error, lead bool) {
	if err != nil {
		s.log.Warn("postgres: a group of creations could not take its keys; each takes its own",
			slog.Int("creations", len(g.members)), slog.Any("err", err))
	}
	s.heldMu.Lock()
	members := g.members
	var kept, refused []*held
	for _, m := range members {
		if err != nil {
			m.keyErr = errAlone
		} else {
			m.keyErr = keyOutcome(m.took, m.exists, m.keyLive)
		}
		if m.keyErr == nil {
			kept = append(kept, m)
			continue
		}
		s.unregister(m)
		refused = append(refused, m)
	}
	g.members = kept
	endNow := false
	var next *group
	if len(kept) > 0 {
		g.open, g.waiting = true, len(kept)
		if s.holdClosed {
			// Close ran meanwhile: nothing else will end the group.
			g.ending, endNow = true, true
		} else {
			g.lastWrite = time.Now()
			g.deadline = g.lastWrite.Add(groupHoldMax * s.hold)
			g.timer = time.AfterFunc(s.hold, func() { s.groupExpired(g) })
		}
	}
	if lead {
		next = s.forming
		s.forming = nil
		if next == nil {
			s.keying = false
		}
	}
	s.heldMu.Unlock()
	if len(kept) == 0 && g.conn != nil {
		s.endTx(g.x)
		g.conn.Release()
		g.conn, g.x = nil, nil
	}
	for _, m := range refused {
		close(m.done)
	}
	if next != nil {
		first := next.members[0]
		first.leadNext = next
		first.ready <- struct{}{}
	}
	for _, m := range members {
		m.ready <- struct{}{}
	}
	if endNow {
		s.endGroup(g)
	}
}

// startEnding makes the caller the one that ends the open group g
// (endGroup), unless someone already is. heldMu is held.
func (s *Store) startEnding(g *group) bool {
	if !g.open || g.ending {
		return false
	}
	g.ending = true
	return true
}

// groupExpired is g's timer's: a hold passed since its keys were
// answered, or since a member last wrote, and some have not written. It
// ends the group, unless a member wrote within the hold and the group's
// deadline has not passed: then it looks again a hold after that write.
func (s *Store) groupExpired(g *group) {
	s.heldMu.Lock()
	if g.open && !g.ending {
		if wait := min(time.Until(g.lastWrite.Add(s.hold)), time.Until(g.deadline)); wait > 0 {
			g.timer.Reset(wait)
			s.heldMu.Unlock()
			return
		}
	}
	mine := s.startEnding(g)
	s.heldMu.Unlock()
	if mine {
		s.endGroup(g)
	}
}

// endGroup commits the group g, which the caller is ending: the writes
// its members joined, the creations of those that did not write, and
// COMMIT, in one round trip, which also begins the next group's
// transaction on the same connection and takes its keys (the creations
// waiting for the lead's key round trip in flight, if any). A transaction that failed in PostgreSQL
// is rolled back and each member committed alone (commitAlone). Then
// every member learns the outcome (Committed, and its joined write), and
// the next group's members theirs (afterKeys).
func (s *Store) endGroup(g *group) {
	if g.timer != nil {
		g.timer.Stop()
	}
	// The creations waiting for the lead's round trip in flight go in
	// this one instead, if it is first.
	s.heldMu.Lock()
	next := s.forming
	s.forming = nil
	s.heldMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), heldCommitTimeout)
	defer cancel()
	x := g.x
	x.ctx = ctx
	for _, m := range g.members {
		if m.queued != nil {
			x.batch.QueuedQueries = append(x.batch.QueuedQueries, m.queued...)
			x.pended = x.pended || m.pended
			continue
		}
		x.insertHeld(m.plan)
		x.sealAudit(m.now, m.audit)
	}
	if x.audit.len() > 0 {
		x.queue(sqlPend, x.takeAudit()...)
	}
	committed := false
	x.queue("COMMIT").Exec(func(ct pgconn.CommandTag) error {
		// COMMIT of a failed transaction answers ROLLBACK, without error.
		if ct.String() != "COMMIT" {
			return errRolledBack
		}
		committed = true
		return nil
	})
	x.commitSent = true
	if next != nil {
		queueKeys(x, next)
	}
	err := x.flush()
	var nextErr error
	if next != nil && (err != nil || !committed) {
		nextErr = errAlone
		if committed {
			nextErr = err
		}
	}
	if committed {
		if _, lost := classify(err, false); err != nil && lost {
			s.pool.Reset()
		}
		err = nil
	}
	var pe *pgconn.PgError
	alone := false
	if err != nil {
		_, lost := classify(err, true)
		switch {
		case errors.As(err, &pe) && pe.Severity == "ERROR" && !lost:
			// PostgreSQL refused a statement, or COMMIT, and the
			// transaction did not commit: nothing of it is stored.
			alone = true
		case lost:
			s.pool.Reset()
			err = fmt.Errorf("%w: %w", errCommitUnknown, err)
		}
	}
	if nextErr == nil && next != nil {
		// The connection goes on with the next group's transaction.
		next.conn = g.conn
		next.x = &txn{ctx: context.Background(), conn: x.conn, batch: &pgx.Batch{}, write: true, flushed: true}
	} else {
		s.endTx(x)
		g.conn.Release()
	}
	if committed && x.pended {
		s.wakeSealer()
	}
	if alone {
		s.log.Warn("postgres: a group of creations failed; committing each alone",
			slog.Int("creations", len(g.members)), slog.Any("err", err))
	}
	for _, m := range g.members {
		switch {
		case alone:
			m.err = s.commitAlone(m)
		case err != nil:
			m.err = fmt.Errorf("commit the creation of task %q: %w", m.id, err)
		}
	}
	s.heldMu.Lock()
	for _, m := range g.members {
		s.unregister(m)
	}
	s.heldMu.Unlock()
	for _, m := range g.members {
		m.committed(m.err)
		close(m.done)
	}
	if next != nil {
		s.afterKeys(next, nextErr, false)
	}
}

// commitAlone commits m's creation, and its joined write if it wrote, in
// a transaction of its own, its key taken again (its group's transaction
// was rolled back).
func (s *Store) commitAlone(m *held) error {
	ctx, cancel := context.WithTimeout(context.Background(), heldCommitTimeout)
	defer cancel()
	err := s.inTx(ctx, func(x *txn) error {
		var took, exists, keyLive bool
		m.queueKey(x, &took, &exists, &keyLive)
		if err := x.flush(); err != nil {
			return err
		}
		if err := keyOutcome(took, exists, keyLive); err != nil {
			return err
		}
		if m.queued != nil {
			return m.redo(x)
		}
		x.insertHeld(m.plan)
		x.sealAudit(m.now, m.audit)
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit the creation of task %q alone: %w", m.id, err)
	}
	return nil
}

// transitionGrouped queues p, the next write of group member h's task, for
// h's group and returns once the group committed; joined is false when p
// does not join it (a move that reads or writes other tasks, or the
// group ended first: the creation was committed, and p is for the usual
// path to run).
func (s *Store) transitionGrouped(ctx context.Context, h *held, p task.TransitionParams, prep *driver.Transition) (*task.Task, bool, error) {
	settled := func(err error) (*task.Task, bool, error) {
		s.settleHeld(h.id)
		if h.err != nil {
			return nil, true, h.err
		}
		return nil, err != nil, err
	}
	t, err := h.row.task()
	if err != nil {
		return settled(err)
	}
	if inFamily(t, p) || len(prep.Spawn) > 0 {
		return settled(nil)
	}
	mx := &txn{ctx: ctx, batch: &pgx.Batch{}, write: true}
	if err := joinHeld(mx, h, t, p, prep); err != nil {
		// A refused transition: the creation commits (with its group),
		// without anything of the transition.
		return settled(err)
	}
	s.heldMu.Lock()
	g := h.g
	if g.ending || h.queued != nil {
		done := h.done
		s.heldMu.Unlock()
		<-done
		if h.err != nil {
			return nil, true, h.err
		}
		return nil, false, nil
	}
	h.queued, h.pended = mx.batch.QueuedQueries, mx.pended
	h.redo = func(x *txn) error {
		t, err := h.row.task()
		if err != nil {
			return err
		}
		return joinHeld(x, h, t, p, prep)
	}
	g.waiting--
	g.lastWrite = time.Now()
	mine := g.waiting == 0 && s.startEnding(g)
	s.heldMu.Unlock()
	if mine {
		s.endGroup(g)
	}
	<-h.done
	if h.err != nil {
		return nil, true, h.err
	}
	return t, true, nil
}

// joinHeld queues on x the insert of h's task as p's move of t leaves it,
// with the creation's and the move's audit entries (as transitionHeld
// does on a transaction of its own).
func joinHeld(x *txn, h *held, t *task.Task, p task.TransitionParams, prep *driver.Transition) error {
	x.fresh = h.plan
	x.sealAudit(h.now, h.audit)
	if err := x.transition(t, p, prep); err != nil {
		return err
	}
	if x.audit.len() > 0 {
		x.queue(sqlPend, x.takeAudit()...)
	}
	return nil
}

// createAlone takes h's key in a transaction of its own that it leaves
// open, and registers it for the task's next write (or its timer).
func (s *Store) createAlone(ctx context.Context, h *held) error {
	plan := h.plan
	h.g, h.ready, h.keyErr = nil, nil, nil
	h.done = make(chan struct{})
	err := s.retry(ctx, func() (bool, error) {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return false, err
		}
		x := &txn{ctx: ctx, conn: conn.Conn(), batch: &pgx.Batch{}, write: true}
		x.queue("BEGIN")
		var took, exists, keyLive bool
		h.queueKey(x, &took, &exists, &keyLive)
		err = x.flush()
		if err == nil {
			err = keyOutcome(took, exists, keyLive)
		}
		if err != nil {
			s.endTx(x)
			conn.Release()
			return false, err
		}
		x.fresh = plan
		h.conn, h.x = conn, x
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
	s.register(h)
	s.heldMu.Unlock()
	return nil
}

// takeHeld returns the held creation of task id for its caller to end, or
// nil when there is none; when another caller is ending it, takeHeld waits
// until it has. A group's member is returned without being taken: its
// write joins the group (transitionGrouped).
func (s *Store) takeHeld(id string) *held {
	s.heldMu.Lock()
	h := s.held[id]
	if h == nil {
		s.heldMu.Unlock()
		return nil
	}
	if g := h.g; g != nil {
		if g.open && !g.ending && h.queued == nil {
			s.heldMu.Unlock()
			return h
		}
	} else if !h.taken {
		h.taken = true
		s.heldMu.Unlock()
		h.timer.Stop()
		return h
	}
	done := h.done
	s.heldMu.Unlock()
	<-done
	return nil
}

// settleHeld commits task id's held creation, if there is one (with its
// group, if it is in one), so that a write that does not join it finds
// the task stored.
func (s *Store) settleHeld(id string) {
	s.heldMu.Lock()
	h := s.held[id]
	if h == nil {
		s.heldMu.Unlock()
		return
	}
	if g := h.g; g != nil {
		done := h.done
		mine := s.startEnding(g)
		s.heldMu.Unlock()
		if mine {
			s.endGroup(g)
		}
		<-done
		return
	}
	s.heldMu.Unlock()
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
	s.unregister(h)
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

// commitAllHeld commits every held creation and group no one else is
// ending, and makes later speculative creations commit at once (Close).
func (s *Store) commitAllHeld() {
	s.heldMu.Lock()
	s.holdClosed = true
	var mine []*held
	var groups []*group
	for _, h := range s.held {
		if g := h.g; g != nil {
			if s.startEnding(g) {
				groups = append(groups, g)
			}
			continue
		}
		if !h.taken {
			h.taken = true
			mine = append(mine, h)
		}
	}
	s.heldMu.Unlock()
	for _, g := range groups {
		s.endGroup(g)
	}
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
