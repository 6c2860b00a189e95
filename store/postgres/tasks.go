package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// taskByKey returns, whole, the task the idempotency key (actor, key) names.
func (s *Store) taskByKey(ctx context.Context, actor, key string) (*task.Task, error) {
	var t *task.Task
	err := s.inReadTx(ctx, func(x *txn) error {
		var owner string
		x.queue(sqlIdemGet, actor, key).QueryRow(func(r pgx.Row) error { return r.Scan(&owner) })
		if err := x.flush(); err != nil {
			return fmt.Errorf("read idempotency key: %w", err)
		}
		var err error
		t, err = x.fullTask(owner, -1)
		return err
	})
	return t, err
}

// CreateTask implements task.Store. It stores p.Task's ID, ContextID, Agent,
// Envelope, PayloadHash, MaxAttempts, RunAfter and History (the initial
// conversation, usually the envelope's input message); CreatedAt and
// UpdatedAt are p.Now. Entering requested is not a transition: the first
// record is the first step's (a task created without steps has Seq 0 and
// no records; p.Audit is its trace). p.Audit is sealed first, then each
// step's Audit just before that step's own entry.
// Malformed input is refused, before anything is written, for its first
// fault in that order (p.Audit, then each step's audit data, Rejected and
// transition, then the claim).
//
// The returned task carries its History but no artifacts. On a duplicate
// (actor, key) the existing task is returned in full (history and
// artifacts) with an error wrapping task.ErrDuplicate. A task ID that
// exists already is a task.CodeConflict error.
func (s *Store) CreateTask(ctx context.Context, p task.CreateParams) (*task.Task, error) {
	plan, err := driver.PlanCreate(p)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	t, id, actor, key := plan.Task, plan.Task.ID, plan.Actor, plan.Key
	held := p.Speculative && p.Committed != nil && s.hold > 0
	if held {
		// One round trip now; the transaction stays open for the task's
		// next write (hold.go).
		err = s.createHeld(ctx, plan, p.Committed)
	} else {
		err = s.createTask(ctx, plan)
	}
	switch {
	case errors.Is(err, errKeyTaken):
		dup, err := s.taskByKey(ctx, actor, key)
		if err != nil {
			return nil, fmt.Errorf("postgres: create task %q: load the task named by (actor %q, key %q): %w", id, actor, key, err)
		}
		return dup, fmt.Errorf("postgres: create task %q: (actor %q, key %q) already names task %q: %w", id, actor, key, dup.ID, task.ErrDuplicate)
	case isUniqueViolation(err, "tasks_pkey"), errors.Is(err, errTaskExists):
		return nil, fmt.Errorf("postgres: create task %q: %w", id, task.Errorf(task.CodeConflict, "task %q already exists", id))
	case err != nil:
		return nil, fmt.Errorf("postgres: create task %q: %w", id, err)
	}
	t.History = driver.CloneMessages(p.Task.History)
	t.MarkComplete()
	if p.Speculative && p.Committed != nil && !held {
		// Not held: the creation committed above.
		p.Committed(nil)
	}
	return t, nil
}

// createTask writes plan's task and commits. Two round trips: the
// statement (sqlCreate), then the audit entries and COMMIT (see
// txn.commit). A key another live task holds fails it with errKeyTaken,
// having written nothing; the caller then reads the task holding the key.
func (s *Store) createTask(ctx context.Context, plan *driver.NewTask) error {
	return s.inTx(ctx, func(x *txn) error {
		var wrote bool
		x.create(plan, &wrote)
		if err := x.flush(); err != nil {
			return err
		}
		if !wrote {
			return errKeyTaken
		}
		x.sealAudit(plan.Now, plan.Writes.Audit)
		return nil
	})
}

// create queues the statement that creates plan's task (sqlCreate): its
// idempotency key first, so that a duplicate waits there for the
// transaction taking the key before it writes anything, then the task,
// its history and its records. Once it is flushed, *wrote says whether it
// wrote them: false when a live key of another task holds the key (and
// nothing was written).
func (x *txn) create(plan *driver.NewTask, wrote *bool) {
	x.insertCreated(plan, newRow{t: plan.Task, w: &plan.Writes, history: plan.History, takeKey: plan.Idempotent}, wrote)
}

// insertHeld queues the insert of a held creation's task as created (its
// key is taken already).
func (x *txn) insertHeld(plan *driver.NewTask) {
	x.fresh = nil
	var wrote bool
	x.insertCreated(plan, newRow{t: plan.Task, w: &plan.Writes, history: plan.History}, &wrote)
}

// newRow is what sqlCreate writes of a task: t's columns (status the
// status message's JSON), w's records, the history, the artifacts (IDs
// distinct) and the audit entries (pend, sqlPend's arguments; none when
// nil). takeKey: take the plan's idempotency key first.
type newRow struct {
	t                  *task.Task
	status             any
	w                  *driver.Writes
	history, ids, arts []string
	pend               []any
	takeKey            bool
}

// insertCreated queues sqlCreate for plan's task as r describes it;
// *wrote says, once flushed, whether it was written.
func (x *txn) insertCreated(plan *driver.NewTask, r newRow, wrote *bool) {
	t := r.t
	var expires any
	if r.takeKey {
		expires = plan.KeyExpires
	}
	history := r.history
	if history == nil {
		history = []string{}
	}
	args := []any{t.ID, t.ContextID, t.Agent, plan.Actor, plan.Envelope, t.PayloadHash, string(t.State),
		t.Attempt, t.MaxAttempts, tsArg(t.RunAfter), t.LeaseOwner, tsArg(t.LeaseExpires), string(t.ErrorCode),
		t.Reason, t.Rejected, r.status, t.Seq, t.CreatedAt, t.UpdatedAt, t.Envelope.ParentTaskID, t.Envelope.Step,
		r.takeKey, plan.Key, expires, plan.Now, history}
	args = append(args, recordArgs(r.w)...)
	args = append(args, t.TurnStart, t.Children, r.ids, r.arts)
	if r.pend == nil {
		r.pend = (&pendBuf{}).args()
	}
	args = append(args, r.pend...)
	*wrote = false
	x.queue(sqlCreate, args...).QueryRow(func(row pgx.Row) error {
		err := row.Scan(wrote)
		return noRows(err)
	})
}

// Transition implements task.Store. The returned task is the new state
// without History and Artifacts (GetTask loads them). A task whose lease
// never started (LeaseExpires zero) does not satisfy LeaseExpiredBefore.
// Leaving in_progress ends the lease; every transition sets Reason,
// ErrorCode and StatusMessage from p and clears Rejected.
func (s *Store) Transition(ctx context.Context, p task.TransitionParams) (*task.Task, error) {
	prep, err := driver.PrepareTransition(p)
	if err != nil {
		return nil, fmt.Errorf("postgres: transition task %q: %w", p.TaskID, err)
	}
	if h := s.takeHeld(p.TaskID); h != nil {
		// The task's creation is still open on h's connection (or its
		// group's): this transition joins it, and both commit at once
		// (hold.go).
		var t *task.Task
		var joined bool
		if h.g != nil {
			t, joined, err = s.transitionGrouped(ctx, h, p, &prep)
		} else {
			t, joined, err = s.transitionHeld(ctx, h, p, &prep)
		}
		if err != nil {
			return nil, transitionError(p, err)
		}
		if joined {
			return t, nil
		}
	}
	var t *task.Task
	err = s.inTx(ctx, func(x *txn) error {
		var row taskRow
		x.queue(sqlTaskForUpdate, p.TaskID).QueryRow(row.scanFrom)
		if err := x.flush(); err != nil {
			return fmt.Errorf("load task %q: %w", p.TaskID, err)
		}
		if !row.found {
			return fmt.Errorf("task %q: %w", p.TaskID, task.ErrNotFound)
		}
		var err error
		if t, err = row.task(); err != nil {
			return err
		}
		return x.transition(t, p, &prep)
	})
	if err != nil {
		return nil, transitionError(p, err)
	}
	return t, nil
}

// transition queues p's writes of t, its row loaded and locked in x (so
// the transaction's own statements are the only ones that can change it),
// after checking p's preconditions against it. t becomes the new state.
// The audit entries are left to x's commit (sealAudit).
func (x *txn) transition(t *task.Task, p task.TransitionParams, prep *driver.Transition) error {
	now, msgs, arts := prep.Now, prep.Messages, prep.Artifacts
	if err := driver.CheckPreconditions(t, p); err != nil {
		return err
	}
	rec, err := driver.Advance(t, driver.TransitionChange(p, now))
	if err != nil {
		return err
	}
	status := prep.Status
	var w driver.Writes
	w.Audit = append(w.Audit, p.Audit...)
	w.Add(t, rec)
	// The children go in before Follow counts them; their records
	// after their rows.
	t.Children += len(prep.Spawn)
	for _, ch := range prep.Spawn {
		x.insertTask(ch)
		w.Records = append(w.Records, ch.Writes.Records...)
		w.Evidence = append(w.Evidence, ch.Writes.Evidence...)
		w.Audit = append(w.Audit, ch.Writes.Audit...)
	}
	var moved []driver.Moved
	if inFamily(t, p) {
		// Only tasks in a family, or moving to waiting, read more.
		var requeued bool
		if requeued, moved, err = driver.Follow(x, t, p.Node, now, &w); err != nil {
			return err
		}
		if requeued {
			status = nil // driver.Advance cleared it
		}
	}
	if err := w.Check(); err != nil {
		return err
	}
	ids := make([]string, len(arts))
	for i := range arts {
		ids[i] = p.Artifacts[i].ID
	}
	if plan := x.fresh; plan != nil {
		// t's creation is held and not written yet (hold.go).
		x.fresh = nil
		if len(moved) == 0 && len(prep.Spawn) == 0 && distinct(ids) {
			// One insert of the task as this move leaves it, with the
			// creation's records and history before the move's, and the
			// entries of both: no row to update.
			x.sealAudit(now, w.Audit)
			all := driver.Writes{
				Records:  append(slices.Clip(plan.Writes.Records), w.Records...),
				Evidence: append(slices.Clip(evidenceOf(&plan.Writes)), evidenceOf(&w)...),
			}
			history := append(slices.Clip(plan.History), msgs...)
			var wrote bool
			x.insertCreated(plan, newRow{t: t, status: status, w: &all, history: history, ids: ids, arts: arts,
				pend: x.takeAudit()}, &wrote)
			return nil
		}
		x.insertHeld(plan)
	}
	for _, m := range moved {
		x.update(m.Task, nil, m.From)
	}
	x.sealAudit(now, w.Audit)
	if distinct(ids) {
		// One statement for the task's row, records, history, artifacts
		// and the transaction's audit entries.
		x.move(t, status, p.From, &w, msgs, ids, arts)
		return nil
	}
	// An artifact stored twice in one move: one upsert each, in order.
	x.update(t, status, p.From)
	x.insertRecords(&w)
	if len(msgs) > 0 {
		x.queue(sqlAppendMessages, t.ID, msgs)
	}
	for i, a := range arts {
		x.queue(sqlUpsertArtifact, t.ID, ids[i], a)
	}
	return nil
}

// move queues sqlMove: t's mutable columns, on the condition that t is
// still in state from (as update), w's records, msgs appended to t's
// history, the artifacts arts (IDs ids, distinct) and the audit entries
// the transaction has collected (takeAudit).
func (x *txn) move(t *task.Task, status any, from task.State, w *driver.Writes, msgs, ids, arts []string) {
	args := []any{t.ID, string(t.State), t.Attempt, tsArg(t.RunAfter), t.LeaseOwner,
		tsArg(t.LeaseExpires), string(t.ErrorCode), t.Reason, t.Rejected, status, t.Seq, t.UpdatedAt,
		string(from), t.TurnStart, t.Children}
	args = append(args, recordArgs(w)...)
	args = append(args, msgs, ids, arts)
	args = append(args, x.takeAudit()...)
	x.queue(sqlMove, args...).QueryRow(func(r pgx.Row) error {
		var n int
		if err := r.Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return driver.Conflict("task %q is no longer %s", t.ID, from)
		}
		return nil
	})
}

// evidenceOf is w's Evidence, one per record ("" for none).
func evidenceOf(w *driver.Writes) []string {
	if len(w.Evidence) == len(w.Records) {
		return w.Evidence
	}
	ev := make([]string, len(w.Records))
	copy(ev, w.Evidence)
	return ev
}

// distinct reports whether no string appears twice in ids.
func distinct(ids []string) bool {
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ids[i] == ids[j] {
				return false
			}
		}
	}
	return true
}

// inFamily reports whether p's move of t reads or writes other tasks: t
// has children (or spawns some), has a parent, or waits for children.
func inFamily(t *task.Task, p task.TransitionParams) bool {
	return t.Children > 0 || t.Envelope.ParentTaskID != "" || p.To == task.StateWaiting
}

// transitionError wraps a failed transition's error with the task and
// the move, naming the constraint a spawn ran into.
func transitionError(p task.TransitionParams, err error) error {
	var pe *pgconn.PgError
	switch {
	case isUniqueViolation(err, "tasks_parent_step") && errors.As(err, &pe):
		return fmt.Errorf("postgres: transition task %q %s → %s: %s: %w", p.TaskID, p.From, p.To, pe.Detail,
			task.Errorf(task.CodeConflict, "a step of the spawn is already used among the children of task %q: %w", p.TaskID, task.ErrDuplicate))
	case isUniqueViolation(err, "tasks_pkey"):
		return fmt.Errorf("postgres: transition task %q %s → %s: %w", p.TaskID, p.From, p.To,
			task.Errorf(task.CodeConflict, "a spawned child's task ID already exists"))
	}
	return fmt.Errorf("postgres: transition task %q %s → %s: %w", p.TaskID, p.From, p.To, err)
}

// insertTask queues the insert of a planned new task (CreateTask, or a
// child a transition spawns) and its initial history.
func (x *txn) insertTask(plan *driver.NewTask) {
	t := plan.Task
	x.queue(sqlInsertTask, t.ID, t.ContextID, t.Agent, plan.Actor, plan.Envelope, t.PayloadHash, string(t.State),
		t.Attempt, t.MaxAttempts, tsArg(t.RunAfter), t.LeaseOwner, tsArg(t.LeaseExpires), string(t.ErrorCode),
		t.Reason, t.Rejected, nil, t.Seq, t.CreatedAt, t.UpdatedAt, t.Envelope.ParentTaskID, t.Envelope.Step)
	if len(plan.History) > 0 {
		x.queue(sqlAppendMessages, t.ID, plan.History)
	}
}

// Lock implements driver.Family: the row is locked FOR NO KEY UPDATE, as
// a transition locks its task. A child entering a Terminal state locks its
// parent here, so that its parent's concurrent move to waiting either
// commits first (and the child sees it waiting, and wakes it) or waits for
// the child's commit (and its count of unsettled children, a later
// statement, sees the child settled): no wake-up is lost. The lock order
// is child, then parent; a cascade's is parent, then child, so a parent
// ending while one of its children settles can deadlock: PostgreSQL
// aborts one of the two (40P01) and inTx runs it again.
func (x *txn) Lock(id string) (*task.Task, error) {
	var row taskRow
	x.queue(sqlTaskForUpdate, id).QueryRow(row.scanFrom)
	if err := x.flush(); err != nil {
		return nil, err
	}
	if !row.found {
		return nil, nil
	}
	return row.task()
}

// Unsettled implements driver.Family.
func (x *txn) Unsettled(id string) ([]*task.Task, error) {
	var out []*task.Task
	x.queue(sqlUnsettled, id).Query(func(rows pgx.Rows) error {
		var err error
		out, err = scanTasks(rows)
		return err
	})
	if err := x.flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// CountUnsettled implements driver.Family. In READ COMMITTED the count
// sees every commit before the statement started: with the parent's row
// locked first, that includes any child that locked the parent before.
func (x *txn) CountUnsettled(id string) (int, error) {
	var n int
	x.queue(sqlCountUnsettled, id).QueryRow(func(r pgx.Row) error { return r.Scan(&n) })
	if err := x.flush(); err != nil {
		return 0, err
	}
	return n, nil
}

// Claim implements task.Store. Oldest first means by CreatedAt, then ID. A
// Limit below 1 claims one task. Tasks that another transaction holds
// locked (being claimed, or moved, right now) are skipped, not waited for.
func (s *Store) Claim(ctx context.Context, p task.ClaimParams) ([]*task.Task, error) {
	if err := driver.CheckClaim(p); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	now := driver.Norm(p.Now)
	limit := max(p.Limit, 1)
	var out []*task.Task
	err := s.inTx(ctx, func(x *txn) error {
		out = nil
		var rows []taskRow
		collect := func(r pgx.Rows) error {
			for r.Next() {
				var row taskRow
				if err := row.scan(r); err != nil {
					return err
				}
				rows = append(rows, row)
			}
			return r.Err()
		}
		switch {
		case p.TaskID != "":
			x.queue(sqlClaimOne, p.TaskID, now).Query(collect)
		case p.Agents != nil || p.Except != nil:
			x.queue(sqlClaimNextOf, now, limit, p.Agents, p.Except).Query(collect)
		default:
			x.queue(sqlClaimNext, now, limit).Query(collect)
		}
		if err := x.flush(); err != nil {
			return fmt.Errorf("select queued tasks: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		var w driver.Writes
		for _, row := range rows {
			t, err := row.task()
			if err != nil {
				return err
			}
			rec, err := driver.Claim(t, p.Owner, p.Node, now, p.LeaseFor)
			if err != nil {
				return err
			}
			w.Add(t, rec)
			status, err := driver.StatusJSON(t)
			if err != nil {
				return err
			}
			x.update(t, status, task.StateQueued)
			out = append(out, t)
		}
		if err := w.Check(); err != nil {
			return err
		}
		x.insertRecords(&w)
		for _, t := range out {
			x.history(t, -1)
			x.artifacts(t)
			t.MarkComplete()
		}
		x.sealAudit(now, w.Audit)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: claim for %q: %w", p.Owner, err)
	}
	return out, nil
}

// RenewLease implements task.Store. A lease that ran out but was not yet
// taken over can still be renewed by its owner.
func (s *Store) RenewLease(ctx context.Context, p task.RenewParams) error {
	if err := driver.CheckRenew(p); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.settleHeld(p.TaskID)
	until := driver.LeaseUntil(p.Now, p.LeaseFor)
	var renewed, exists bool
	err := s.retry(ctx, func() (bool, error) {
		b := &pgx.Batch{}
		b.Queue(sqlRenewLease, until, p.TaskID, p.Owner).Exec(func(ct pgconn.CommandTag) error {
			renewed = ct.RowsAffected() == 1
			return nil
		})
		b.Queue(sqlTaskExists, p.TaskID).QueryRow(func(r pgx.Row) error { return r.Scan(&exists) })
		return false, s.pool.SendBatch(ctx, b).Close()
	})
	switch {
	case err != nil:
		return fmt.Errorf("postgres: renew lease of task %q: %w", p.TaskID, err)
	case renewed:
		return nil
	case !exists:
		return fmt.Errorf("postgres: renew lease: task %q: %w", p.TaskID, task.ErrNotFound)
	}
	return fmt.Errorf("postgres: renew lease of task %q: %w", p.TaskID, driver.Conflict("%q no longer holds the lease", p.Owner))
}

// ExpiredLeases implements task.Store: tasks ordered by lease expiry, then
// ID, without History. A limit below 1 means no limit.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*task.Task, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	var out []*task.Task
	err := s.retry(ctx, func() (bool, error) {
		rows, err := s.pool.Query(ctx, sqlExpiredLeases, driver.Norm(now), lim)
		if err != nil {
			return false, err
		}
		out, err = scanTasks(rows)
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: expired leases: %w", err)
	}
	return out, nil
}

// NextRunAfter implements task.Store. A queued task without RunAfter counts
// as due since it was queued (its UpdatedAt).
func (s *Store) NextRunAfter(ctx context.Context) (time.Time, error) {
	var v *time.Time
	err := s.retry(ctx, func() (bool, error) {
		return false, s.pool.QueryRow(ctx, sqlNextRunAfter).Scan(&v)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: next run after: %w", err)
	}
	return fromNull(v), nil
}

// GetTask implements task.Store.
func (s *Store) GetTask(ctx context.Context, id string, historyLength int) (*task.Task, error) {
	var row taskRow
	var t task.Task
	err := s.inReadTx(ctx, func(x *txn) error {
		row, t = taskRow{}, task.Task{ID: id}
		x.queue(sqlTaskByID, id).QueryRow(row.scanFrom)
		x.history(&t, historyLength)
		x.artifacts(&t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: get task %q: %w", id, err)
	}
	if !row.found {
		return nil, fmt.Errorf("postgres: get task: task %q: %w", id, task.ErrNotFound)
	}
	out, err := row.task()
	if err != nil {
		return nil, fmt.Errorf("postgres: get task: %w", err)
	}
	out.History, out.Artifacts = t.History, t.Artifacts
	if historyLength < 0 {
		out.MarkComplete()
	}
	return out, nil
}

// ListTasks implements task.Store. Tasks are ordered by CreatedAt, then ID,
// newest first; the children of p.ParentTaskID oldest first. A PageSize below 1 means 50. HistoryLength < 0 loads the
// whole history, 0 none, n the newest n messages. TotalSize counts every
// task matching the filters, on all pages. The page token holds the
// position after the page's last task, so it stays valid while tasks are
// added.
func (s *Store) ListTasks(ctx context.Context, p task.ListParams) (*task.TaskPage, error) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if p.ContextID != "" {
		arg("context_id = $?", p.ContextID)
	}
	if p.Agent != "" {
		arg("agent = $?", p.Agent)
	}
	if p.Actor != "" {
		arg("actor = $?", p.Actor)
	}
	// Children are listed oldest first, in the order they were spawned.
	children := p.ParentTaskID != ""
	if children {
		// The second term lets generic plans use the partial index
		// tasks_parent.
		arg("parent_task_id = $? AND parent_task_id <> ''", p.ParentTaskID)
	}
	if p.Rejected != nil {
		arg("rejected = $?", *p.Rejected)
	}
	if len(p.States) > 0 {
		states := make([]string, len(p.States))
		for i, st := range p.States {
			states[i] = string(st)
		}
		arg("state = ANY ($?::text[])", states)
	}
	if !p.UpdatedAfter.IsZero() {
		arg("updated_at >= $?", driver.Norm(p.UpdatedAfter))
	}
	countSQL := "SELECT count(*) FROM tasks" + whereClause(where)
	countArgs := append([]any(nil), args...)
	if p.PageToken != "" {
		created, id, err := decodeToken(p.PageToken)
		if err != nil {
			return nil, err
		}
		args = append(args, created, id)
		cmp := "<"
		if children {
			cmp = ">"
		}
		where = append(where, fmt.Sprintf("(created_at, id) %s ($%d, $%d)", cmp, len(args)-1, len(args)))
	}
	order := "created_at DESC, id DESC"
	if children {
		order = "created_at, id"
	}
	size := p.PageSize
	if size < 1 {
		size = driver.DefaultPageSize
	}
	args = append(args, size+1)
	pageSQL := "SELECT " + taskCols + " FROM tasks" + whereClause(where) +
		fmt.Sprintf(" ORDER BY %s LIMIT $%d", order, len(args))

	var page *task.TaskPage
	err := s.inReadTx(ctx, func(x *txn) error {
		page = &task.TaskPage{}
		var rows []taskRow
		x.queue(countSQL, countArgs...).QueryRow(func(r pgx.Row) error { return r.Scan(&page.TotalSize) })
		x.queue(pageSQL, args...).Query(func(r pgx.Rows) error {
			for r.Next() {
				var row taskRow
				if err := row.scan(r); err != nil {
					return err
				}
				rows = append(rows, row)
			}
			return r.Err()
		})
		if err := x.flush(); err != nil {
			return err
		}
		if len(rows) > size {
			rows = rows[:size]
			last := rows[size-1]
			page.NextPageToken = driver.EncodeToken(last.created.UnixMicro(), last.id)
		}
		for _, row := range rows {
			t, err := row.task()
			if err != nil {
				return err
			}
			x.history(t, p.HistoryLength)
			if p.IncludeArtifacts {
				x.artifacts(t)
			}
			page.Tasks = append(page.Tasks, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list tasks: %w", err)
	}
	return page, nil
}

func whereClause(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

// Records implements task.Store. A task that does not exist is
// ErrNotFound; one created without steps has no records yet.
func (s *Store) Records(ctx context.Context, taskID string) ([]task.Record, error) {
	var out []task.Record
	var exists bool
	err := s.inReadTx(ctx, func(x *txn) error {
		out = nil
		x.queue(sqlTaskExists, taskID).QueryRow(func(r pgx.Row) error { return r.Scan(&exists) })
		x.queue(sqlRecords, taskID).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				r, err := driver.ScanRecord(rows, time.Time.UTC)
				if err != nil {
					return err
				}
				out = append(out, r)
			}
			return rows.Err()
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: records of task %q: %w", taskID, err)
	}
	if !exists {
		return nil, fmt.Errorf("postgres: records: task %q: %w", taskID, task.ErrNotFound)
	}
	return out, nil
}

// PurgeIdempotencyKeys implements task.Store: keys whose expiry is at or
// before before are deleted (a key is no longer live from its expiry on).
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.retry(ctx, func() (bool, error) {
		ct, err := s.pool.Exec(ctx, sqlIdemPurge, driver.Norm(before))
		n = ct.RowsAffected()
		return false, err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: purge idempotency keys: %w", err)
	}
	return int(n), nil
}

// update queues the write of t's mutable columns, on the condition that t
// is still in state from; the transaction holds t's row locked, so a miss
// means a bug, reported as a conflict.
func (x *txn) update(t *task.Task, status any, from task.State) {
	x.queue(sqlUpdateTask, t.ID, string(t.State), t.Attempt, tsArg(t.RunAfter), t.LeaseOwner,
		tsArg(t.LeaseExpires), string(t.ErrorCode), t.Reason, t.Rejected, status, t.Seq, t.UpdatedAt,
		string(from), t.TurnStart, t.Children).Exec(func(ct pgconn.CommandTag) error {
		if ct.RowsAffected() != 1 {
			return driver.Conflict("task %q is no longer %s", t.ID, from)
		}
		return nil
	})
}

// insertRecords queues the insert of w's records, in one statement.
func (x *txn) insertRecords(w *driver.Writes) {
	if len(w.Records) == 0 {
		return
	}
	x.queue(sqlInsertRecords, recordArgs(w)...)
}

// recordArgs are sqlInsertRecords' arguments for w's records: one array
// per column.
func recordArgs(w *driver.Writes) []any {
	recs := w.Records
	n := len(recs)
	var (
		ids, from, to, nodes, reasons, codes, policies = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		seqs, attempts = make([]int32, n), make([]int32, n)
		ats            = make([]time.Time, n)
	)
	for i, r := range recs {
		ids[i], seqs[i], from[i], to[i], ats[i], attempts[i] = r.TaskID, int32(r.Seq), string(r.From), string(r.To), r.At, int32(r.Attempt)
		nodes[i], reasons[i], codes[i], policies[i] = r.Node, r.Reason, string(r.ErrorCode), r.PolicyVersion
	}
	evidence := w.Evidence
	if evidence == nil {
		evidence = []string{}
	}
	return []any{ids, seqs, from, to, ats, attempts, nodes, reasons, codes, policies, evidence}
}

// history queues the load of t's newest n messages, oldest first (all
// when n < 0, none when n is 0), into t.History.
func (x *txn) history(t *task.Task, n int) {
	if n == 0 {
		return
	}
	into := func(rows pgx.Rows) error {
		var err error
		t.History, err = scanJSON[task.Message](rows)
		return err
	}
	if n < 0 {
		x.queue(sqlHistoryAll, t.ID).Query(into)
	} else {
		x.queue(sqlHistoryLast, t.ID, n).Query(into)
	}
}

// artifacts queues the load of t's artifacts into t.Artifacts.
func (x *txn) artifacts(t *task.Task) {
	x.queue(sqlArtifacts, t.ID).Query(func(rows pgx.Rows) error {
		var err error
		t.Artifacts, err = scanJSON[task.Artifact](rows)
		return err
	})
}

// fullTask loads a task with its artifacts and history (n < 0: all).
func (x *txn) fullTask(id string, n int) (*task.Task, error) {
	var row taskRow
	var t task.Task
	x.queue(sqlTaskByID, id).QueryRow(row.scanFrom)
	t.ID = id
	x.history(&t, n)
	x.artifacts(&t)
	if err := x.flush(); err != nil {
		return nil, err
	}
	if !row.found {
		return nil, fmt.Errorf("task %q: %w", id, task.ErrNotFound)
	}
	out, err := row.task()
	if err != nil {
		return nil, err
	}
	out.History, out.Artifacts = t.History, t.Artifacts
	if n < 0 {
		out.MarkComplete()
	}
	return out, nil
}

// taskRow is a tasks row as scanned, decoded by task().
type taskRow struct {
	found              bool
	id, contextID      string
	agent, env         string
	payloadHash        string
	state, code        string
	attempt, maxAtt    int
	turnStart          int
	children           int
	runAfter, leaseExp *time.Time
	leaseOwner, reason string
	rejected           bool
	status             *string
	seq                int
	created, updated   time.Time
}

type scanner interface{ Scan(dest ...any) error }

func (r *taskRow) scan(sc scanner) error {
	err := sc.Scan(&r.id, &r.contextID, &r.agent, &r.env, &r.payloadHash, &r.state, &r.attempt,
		&r.maxAtt, &r.runAfter, &r.leaseOwner, &r.leaseExp, &r.code, &r.reason,
		&r.rejected, &r.status, &r.seq, &r.created, &r.updated, &r.turnStart, &r.children)
	r.found = err == nil
	return err
}

// scanFrom scans a single-row result; no row leaves found false.
func (r *taskRow) scanFrom(row pgx.Row) error { return noRows(r.scan(row)) }

// task decodes the row.
func (r *taskRow) task() (*task.Task, error) {
	t := &task.Task{
		ID: r.id, ContextID: r.contextID, Agent: r.agent, PayloadHash: r.payloadHash,
		State: task.State(r.state), Attempt: r.attempt, TurnStart: r.turnStart, MaxAttempts: r.maxAtt,
		RunAfter: fromNull(r.runAfter), LeaseOwner: r.leaseOwner, LeaseExpires: fromNull(r.leaseExp),
		ErrorCode: task.Code(r.code), Reason: r.reason, Rejected: r.rejected, Seq: r.seq, Children: r.children,
		CreatedAt: r.created.UTC(), UpdatedAt: r.updated.UTC(),
	}
	if err := json.Unmarshal([]byte(r.env), &t.Envelope); err != nil {
		return nil, fmt.Errorf("decode envelope of task %q: %w", r.id, err)
	}
	if r.status != nil {
		t.StatusMessage = new(task.Message)
		if err := json.Unmarshal([]byte(*r.status), t.StatusMessage); err != nil {
			return nil, fmt.Errorf("decode status message of task %q: %w", r.id, err)
		}
	}
	return t, nil
}

func scanTasks(rows pgx.Rows) ([]*task.Task, error) {
	defer rows.Close()
	var out []*task.Task
	for rows.Next() {
		var row taskRow
		if err := row.scan(rows); err != nil {
			return nil, err
		}
		t, err := row.task()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanJSON[T any](rows pgx.Rows) ([]T, error) {
	var out []T
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// noRows turns pgx.ErrNoRows into success: the caller's found flag, left
// unset, says so.
func noRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

func isUniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == constraint
}

// decodeToken reads a page token of driver.EncodeToken (the same format
// as the SQLite store's): the created_at and ID of the last task of the
// previous page.
func decodeToken(tok string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		c, id, ok := strings.Cut(string(b), "/")
		if micros, perr := strconv.ParseInt(c, 10, 64); ok && perr == nil && id != "" {
			return driver.FromMicros(micros), id, nil
		}
	}
	return time.Time{}, "", task.ErrBadPageToken
}

// Times are timestamptz, which holds microseconds; NULL is the zero time.

// tsArg is a time as a statement argument: NULL for the zero time.
func tsArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func fromNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// CountByState returns how many tasks are in each state, in one scan (the
// metrics' task gauge); states without tasks are absent.
func (s *Store) CountByState(ctx context.Context) (map[task.State]int, error) {
	var out map[task.State]int
	err := s.retry(ctx, func() (bool, error) {
		out = map[task.State]int{}
		rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM tasks GROUP BY state`)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		for rows.Next() {
			var st string
			var n int
			if err := rows.Scan(&st, &n); err != nil {
				return false, err
			}
			out[task.State(st)] = n
		}
		return false, rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: count tasks by state: %w", err)
	}
	return out, nil
}
