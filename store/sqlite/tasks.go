package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

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
// artifacts) with an error wrapping task.ErrDuplicate.
func (s *Store) CreateTask(ctx context.Context, p task.CreateParams) (*task.Task, error) {
	plan, err := driver.PlanCreate(p)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	t, now, id := plan.Task, plan.Now, plan.Task.ID
	actor, key, idem := plan.Actor, plan.Key, plan.Idempotent

	var dup *task.Task
	o := writeOpts{task: id, early: p.Speculative, committed: p.Committed}
	err = s.inWriteTxOpts(ctx, o, func(x *txn) error {
		if err := x.insertTask(plan); err != nil {
			return err
		}
		if idem {
			// One statement in the common case: take the key, or learn
			// that a live one holds it. Then the task inserted above is
			// undone with everything else (errRollback).
			n, err := x.exec(x.st.idemPut, actor, key, id, plan.KeyExpires.UnixMicro(), now.UnixMicro())
			if err != nil {
				return fmt.Errorf("store idempotency key: %w", err)
			}
			if n == 0 {
				var owner string
				var expires int64
				if err := x.queryRow(x.st.idemGet, actor, key).Scan(&owner, &expires); err != nil {
					return fmt.Errorf("read idempotency key: %w", err)
				}
				d, err := x.fullTask(owner, -1)
				if err != nil {
					return fmt.Errorf("load task %q named by idempotency key: %w", owner, err)
				}
				dup = d
				return errRollback
			}
		}
		if err := x.insertHistory(plan); err != nil {
			return err
		}
		if p.Speculative {
			// The task's next write, in this transaction, starts from
			// this row instead of reading it (held.rows).
			x.created = insertedRow(plan)
		}
		return x.flush(&plan.Writes, now)
	})
	if dup != nil {
		return dup, fmt.Errorf("sqlite: create task %q: (actor %q, key %q) already names task %q: %w", id, actor, key, dup.ID, task.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: create task %q: %w", id, err)
	}
	t.History = driver.CloneMessages(p.Task.History)
	t.MarkComplete()
	return t, nil
}

// Transition implements task.Store. The returned task is the new state
// without History and Artifacts (GetTask loads them). A task whose lease
// never started (LeaseExpires zero) does not satisfy LeaseExpiredBefore.
// Leaving in_progress ends the lease; every transition sets Reason,
// ErrorCode and StatusMessage from p and clears Rejected.
func (s *Store) Transition(ctx context.Context, p task.TransitionParams) (*task.Task, error) {
	prep, err := driver.PrepareTransition(p)
	if err != nil {
		return nil, fmt.Errorf("sqlite: transition task %q: %w", p.TaskID, err)
	}
	now, msgs, arts, status := prep.Now, prep.Messages, prep.Artifacts, prep.Status
	var t *task.Task
	var env []byte
	err = s.inWriteTxOpts(ctx, writeOpts{task: p.TaskID, transition: true}, func(x *txn) error {
		// A read, the preconditions checked here, then an update on the
		// condition that the row is still as read: cheaper for SQLite than
		// one conditional UPDATE … RETURNING, which materialises the row
		// it returns (docs/benchmarks.md). In the writer's transaction
		// nothing can change the row in between; the condition states the
		// rule (docs/lifecycle.md) rather than relying on that. The
		// envelope is read only when p does not carry it. A task created
		// speculatively in this transaction starts from the row its
		// creation wrote (held.rows), which nothing can have changed
		// since; should the update find the row otherwise all the same,
		// the transition starts over from a read.
		var cached *task.Task
		if p.Envelope != nil {
			cached = x.cachedRow(p.TaskID)
		}
		var rec task.Record
		for {
			var err error
			if t = cached; t == nil {
				t, env, err = scanForUpdate(x.queryRow(x.st.taskForTransition, p.TaskID, p.Envelope == nil), p.TaskID)
				if err != nil {
					return err
				}
			}
			err = driver.CheckPreconditions(t, p)
			was, owner, seq := t.State, t.LeaseOwner, t.Seq
			if err == nil {
				rec, err = driver.Advance(t, driver.TransitionChange(p, now))
			}
			if err != nil {
				if cached != nil {
					cached = nil
					continue
				}
				return err
			}
			t.Children += len(prep.Spawn)
			n, err := x.exec(x.st.advanceTask, state(t.State), t.Attempt, nullMicros(t.RunAfter),
				t.LeaseOwner, nullMicros(t.LeaseExpires), string(t.ErrorCode), t.Reason, t.Rejected, status,
				t.Seq, now.UnixMicro(), t.TurnStart, t.Children, t.ID, state(was), owner, seq)
			if err != nil {
				return fmt.Errorf("update task %q: %w", t.ID, err)
			}
			if n != 1 {
				if cached != nil {
					cached = nil
					continue
				}
				return driver.Conflict("task %q changed while it was read (%d rows updated)", t.ID, n)
			}
			break
		}
		hot := len(prep.Spawn) == 0 && t.Children == 0 && t.Envelope.ParentTaskID == "" && p.To != task.StateWaiting
		x.changed(t.ID, hot)
		var w driver.Writes
		w.Audit = append(w.Audit, p.Audit...)
		w.Add(t, rec)
		for _, m := range msgs {
			if _, err := x.exec(x.st.appendMessage, t.ID, m); err != nil {
				return fmt.Errorf("append history: %w", err)
			}
		}
		for i, a := range arts {
			if _, err := x.exec(x.st.upsertArtifact, t.ID, p.Artifacts[i].ID, a); err != nil {
				return fmt.Errorf("store artifact %q: %w", p.Artifacts[i].ID, err)
			}
		}
		if hot {
			// The hot path: a task outside any family, and not waiting.
			return x.flush(&w, now)
		}
		for _, ch := range prep.Spawn {
			if err := x.insertTask(ch); err != nil {
				return err
			}
			if err := x.insertHistory(ch); err != nil {
				return err
			}
			w.Records = append(w.Records, ch.Writes.Records...)
			w.Evidence = append(w.Evidence, ch.Writes.Evidence...)
			w.Audit = append(w.Audit, ch.Writes.Audit...)
		}
		requeued, moved, err := driver.Follow(x, t, p.Node, now, &w)
		if err != nil {
			return err
		}
		if requeued {
			if err := x.update(t); err != nil {
				return err
			}
		}
		for _, m := range moved {
			if err := x.update(m.Task); err != nil {
				return err
			}
		}
		return x.flush(&w, now)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: transition task %q %s → %s: %w", p.TaskID, p.From, p.To, err)
	}
	if p.Envelope != nil {
		t.Envelope = *p.Envelope
		return t, nil
	}
	// Decoded here, outside the single writer.
	if err := json.Unmarshal(env, &t.Envelope); err != nil {
		return nil, fmt.Errorf("sqlite: transition task %q: decode envelope: %w", p.TaskID, err)
	}
	return t, nil
}

// insertTask inserts the row of a planned new task (CreateTask, or a child
// a transition spawns) in x.
func (x *txn) insertTask(plan *driver.NewTask) error {
	t := plan.Task
	if _, err := x.exec(x.st.insertTask, t.ID, t.ContextID, t.Agent, plan.Actor, plan.Envelope,
		t.PayloadHash, state(t.State), t.Attempt, t.MaxAttempts, nullMicros(t.RunAfter), t.LeaseOwner,
		nullMicros(t.LeaseExpires), string(t.ErrorCode), t.Reason, t.Rejected, nil,
		t.Seq, t.CreatedAt.UnixMicro(), t.UpdatedAt.UnixMicro(), t.Envelope.ParentTaskID, t.Envelope.Step); err != nil {
		switch {
		case isConstraint(err, errConstraintPrimaryKey):
			return task.Errorf(task.CodeConflict, "task %q already exists", t.ID)
		case isConstraint(err, errConstraintUnique) && t.Envelope.ParentTaskID != "":
			return fmt.Errorf("child %q: %w", t.ID, driver.DuplicateStep(t.Envelope.ParentTaskID, t.Envelope.Step))
		}
		return fmt.Errorf("insert task %q: %w", t.ID, err)
	}
	return nil
}

// insertHistory inserts a planned new task's initial history.
func (x *txn) insertHistory(plan *driver.NewTask) error {
	for i, m := range plan.History {
		if _, err := x.exec(x.st.insertMessage, plan.Task.ID, i+1, m); err != nil {
			return fmt.Errorf("append history of task %q: %w", plan.Task.ID, err)
		}
	}
	return nil
}

// Lock implements driver.Family. SQLite has one writer: the transaction
// sees every row as it stays until it commits.
func (x *txn) Lock(id string) (*task.Task, error) {
	t, _, err := scanForUpdate(x.queryRow(x.st.taskForUpdate, id), id)
	if errors.Is(err, task.ErrNotFound) {
		return nil, nil
	}
	return t, err
}

// Unsettled implements driver.Family.
func (x *txn) Unsettled(id string) ([]*task.Task, error) {
	rows, err := x.query(x.st.unsettledKids, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*task.Task
	for rows.Next() {
		t, _, err := scanForUpdate(rows, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CountUnsettled implements driver.Family.
func (x *txn) CountUnsettled(id string) (int, error) {
	var n int
	err := x.queryRow(x.st.countUnsettled, id).Scan(&n)
	return n, err
}

// Claim implements task.Store. Oldest first means by CreatedAt, then ID. A
// Limit below 1 claims one task.
func (s *Store) Claim(ctx context.Context, p task.ClaimParams) ([]*task.Task, error) {
	if err := driver.CheckClaim(p); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	now := driver.Norm(p.Now)
	limit := max(p.Limit, 1)
	var out []*task.Task
	err := s.inWriteTx(ctx, func(x *txn) error {
		var rows rowIter
		var err error
		switch {
		case p.TaskID != "":
			rows, err = x.query(x.st.claimOne, p.TaskID, now.UnixMicro())
		case p.Agents != nil || p.Except != nil:
			rows, err = x.query(x.st.claimNextOf, now.UnixMicro(), limit, jsonList(p.Agents), jsonList(p.Except))
		default:
			rows, err = x.query(x.st.claimNext, now.UnixMicro(), limit)
		}
		if err != nil {
			return fmt.Errorf("select queued tasks: %w", err)
		}
		out, err = scanTasks(rows)
		if err != nil {
			return fmt.Errorf("select queued tasks: %w", err)
		}
		for _, t := range out {
			rec, err := driver.Claim(t, p.Owner, p.Node, now, p.LeaseFor)
			if err != nil {
				return err
			}
			var w driver.Writes
			w.Add(t, rec)
			if err := x.update(t); err != nil {
				return err
			}
			if err := x.flush(&w, now); err != nil {
				return err
			}
			if t.History, err = x.history(t.ID, -1); err != nil {
				return err
			}
			if t.Artifacts, err = x.artifacts(t.ID); err != nil {
				return err
			}
			t.MarkComplete()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim for %q: %w", p.Owner, err)
	}
	return out, nil
}

// jsonList is names as a JSON array for json_each, or nil (NULL) for a
// nil slice: no filter.
func jsonList(names []string) any {
	if names == nil {
		return nil
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// RenewLease implements task.Store. A lease that ran out but was not yet
// taken over can still be renewed by its owner.
func (s *Store) RenewLease(ctx context.Context, p task.RenewParams) error {
	if err := driver.CheckRenew(p); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if s.cfg.ReadOnly {
		return errReadOnly
	}
	until := driver.LeaseUntil(p.Now, p.LeaseFor).UnixMicro()
	var n int64
	err := s.inWriteTx(ctx, func(x *txn) error {
		var err error
		n, err = x.exec(x.st.renewLease, until, p.TaskID, p.Owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: renew lease of task %q: %w", p.TaskID, err)
	}
	if n == 1 {
		return nil
	}
	if err := s.exists(ctx, p.TaskID); err != nil {
		return fmt.Errorf("sqlite: renew lease: %w", err)
	}
	return fmt.Errorf("sqlite: renew lease of task %q: %w", p.TaskID, driver.Conflict("%q no longer holds the lease", p.Owner))
}

// ExpiredLeases implements task.Store: tasks ordered by lease expiry, then
// ID, without History. A limit below 1 means no limit.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*task.Task, error) {
	if limit < 1 {
		limit = -1
	}
	rows, err := s.r.expiredLeases.db.QueryContext(ctx, driver.Norm(now).UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expired leases: %w", err)
	}
	ts, err := scanTasks(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expired leases: %w", err)
	}
	return ts, nil
}

// NextRunAfter implements task.Store. A queued task without RunAfter counts
// as due since it was queued (its UpdatedAt).
func (s *Store) NextRunAfter(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	if err := s.r.nextRunAfter.db.QueryRowContext(ctx).Scan(&v); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: next run after: %w", err)
	}
	return fromNull(v), nil
}

// GetTask implements task.Store.
func (s *Store) GetTask(ctx context.Context, id string, historyLength int) (*task.Task, error) {
	var t *task.Task
	err := s.inReadTx(ctx, func(x *txn) error {
		var err error
		t, err = x.fullTask(id, historyLength)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: get task: %w", err)
	}
	return t, nil
}

// ListTasks implements task.Store. Tasks are ordered by CreatedAt, then ID,
// newest first; the children of p.ParentTaskID oldest first. A PageSize below 1 means 50. HistoryLength < 0 loads the
// whole history, 0 none, n the newest n messages. TotalSize counts every
// task matching the filters, on all pages.
func (s *Store) ListTasks(ctx context.Context, p task.ListParams) (*task.TaskPage, error) {
	var where []string
	var args []any
	if p.ContextID != "" {
		where, args = append(where, "context_id = ?"), append(args, p.ContextID)
	}
	if p.Agent != "" {
		where, args = append(where, "agent = ?"), append(args, p.Agent)
	}
	if p.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, p.Actor)
	}
	// Children are listed oldest first, in the order they were spawned.
	children := p.ParentTaskID != ""
	if children {
		// The second term lets SQLite use the partial index tasks_parent.
		where, args = append(where, "parent_task_id = ? AND parent_task_id <> ''"), append(args, p.ParentTaskID)
	}
	if p.Rejected != nil {
		where = append(where, "rejected = ?")
		args = append(args, *p.Rejected)
	}
	if len(p.States) > 0 {
		where = append(where, "state IN (?"+strings.Repeat(", ?", len(p.States)-1)+")")
		for _, st := range p.States {
			args = append(args, string(st))
		}
	}
	if !p.UpdatedAfter.IsZero() {
		where, args = append(where, "updated_at >= ?"), append(args, driver.Norm(p.UpdatedAfter).UnixMicro())
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}
	size := p.PageSize
	if size < 1 {
		size = driver.DefaultPageSize
	}
	pageWhere, pageArgs := where, append([]any(nil), args...)
	if p.PageToken != "" {
		c, id, err := decodeToken(p.PageToken)
		if err != nil {
			return nil, err
		}
		after := "(created_at < ? OR (created_at = ? AND id < ?))"
		if children {
			after = "(created_at > ? OR (created_at = ? AND id > ?))"
		}
		pageWhere = append(append([]string(nil), where...), after)
		pageArgs = append(pageArgs, c, c, id)
	}
	order := " ORDER BY created_at DESC, id DESC"
	if children {
		order = " ORDER BY created_at, id"
	}
	pageFilter := ""
	if len(pageWhere) > 0 {
		pageFilter = " WHERE " + strings.Join(pageWhere, " AND ")
	}
	page := &task.TaskPage{}
	err := s.inReadTx(ctx, func(x *txn) error {
		if err := x.tx.QueryRowContext(ctx, "SELECT count(*) FROM tasks"+filter, args...).Scan(&page.TotalSize); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		rows, err := x.tx.QueryContext(ctx, "SELECT "+taskCols+" FROM tasks"+pageFilter+order+" LIMIT ?", append(pageArgs, size+1)...)
		if err != nil {
			return fmt.Errorf("select: %w", err)
		}
		ts, err := scanTasks(rows)
		if err != nil {
			return fmt.Errorf("select: %w", err)
		}
		if len(ts) > size {
			ts = ts[:size]
			last := ts[size-1]
			page.NextPageToken = driver.EncodeToken(last.CreatedAt.UnixMicro(), last.ID)
		}
		for _, t := range ts {
			if t.History, err = x.history(t.ID, p.HistoryLength); err != nil {
				return err
			}
			if p.IncludeArtifacts {
				if t.Artifacts, err = x.artifacts(t.ID); err != nil {
					return err
				}
			}
		}
		page.Tasks = ts
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tasks: %w", err)
	}
	return page, nil
}

// Records implements task.Store. A task that does not exist is
// ErrNotFound; one created without steps has no records yet.
func (s *Store) Records(ctx context.Context, taskID string) ([]task.Record, error) {
	rows, err := s.r.records.db.QueryContext(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: records of task %q: %w", taskID, err)
	}
	defer rows.Close()
	var out []task.Record
	for rows.Next() {
		r, err := driver.ScanRecord(rows, driver.FromMicros)
		if err != nil {
			return nil, fmt.Errorf("sqlite: records of task %q: %w", taskID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: records of task %q: %w", taskID, err)
	}
	if len(out) == 0 {
		if err := s.exists(ctx, taskID); err != nil {
			return nil, fmt.Errorf("sqlite: records: %w", err)
		}
	}
	return out, nil
}

// txn is one transaction and the statements prepared for it: a read
// transaction of the read pool (tx), or the writer's transaction on
// its connection (tx nil).
type txn struct {
	ctx context.Context
	tx  *sql.Tx
	st  *stmts
	// head of the audit chain, loaded on the first seal.
	headLoaded bool
	// headMoved: entries were sealed after the head record was last
	// written; moveHead writes it.
	headMoved bool
	headSeq   int64
	headHash  string

	// In the writer's group runs (runGroup): rows are the task rows
	// speculative creations left in the transaction (held.rows), nil when
	// they may not be used; pass is what the run's functions changed;
	// created is the row this function's speculative creation wrote.
	rows    map[string]*task.Task
	pass    *passState
	created *task.Task
}

// cachedRow returns a copy of task id's row as a speculative creation in
// this transaction wrote it, when nothing since can have changed it; nil
// when the row must be read.
func (x *txn) cachedRow(id string) *task.Task {
	if x.rows == nil || x.pass == nil || x.pass.dirty || x.pass.touched[id] {
		return nil
	}
	r := x.rows[id]
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// changed tells the run that this function changed task id's row, and,
// unless only, others' too.
func (x *txn) changed(id string, only bool) {
	if x.pass == nil {
		return
	}
	if x.pass.touched == nil {
		x.pass.touched = map[string]bool{}
	}
	x.pass.touched[id] = true
	if !only {
		x.pass.dirty = true
	}
}

// insertedRow is the row insertTask writes for plan, as scanForUpdate
// reads it back (without the envelope's JSON).
func insertedRow(plan *driver.NewTask) *task.Task {
	t := plan.Task
	r := &task.Task{
		ID: t.ID, ContextID: t.ContextID, Agent: t.Agent, PayloadHash: t.PayloadHash,
		State: t.State, Attempt: t.Attempt, MaxAttempts: t.MaxAttempts, LeaseOwner: t.LeaseOwner,
		ErrorCode: t.ErrorCode, Reason: t.Reason, Rejected: t.Rejected, Seq: t.Seq,
		CreatedAt: driver.FromMicros(t.CreatedAt.UnixMicro()), UpdatedAt: driver.FromMicros(t.UpdatedAt.UnixMicro()),
	}
	r.Envelope.Actor, r.Envelope.ParentTaskID, r.Envelope.Step = plan.Actor, t.Envelope.ParentTaskID, t.Envelope.Step
	if !t.RunAfter.IsZero() {
		r.RunAfter = driver.FromMicros(t.RunAfter.UnixMicro())
	}
	if !t.LeaseExpires.IsZero() {
		r.LeaseExpires = driver.FromMicros(t.LeaseExpires.UnixMicro())
	}
	return r
}

// errRollback ends a write transaction without committing and without
// reporting an error.
var errRollback = errors.New("rollback")

func (s *Store) inReadTx(ctx context.Context, fn func(*txn) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return fn(&txn{ctx: ctx, tx: tx, st: &s.r})
}

// exec runs s in x and returns how many rows it changed: in a read
// transaction through database/sql, in the writer's on its driver
// connection (conn.go).
func (x *txn) exec(s *stmt, args ...any) (int64, error) {
	if x.tx == nil {
		return x.st.exec(x.ctx, s, args)
	}
	res, err := x.tx.StmtContext(x.ctx, s.db).ExecContext(x.ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryRow runs s in x for its first row; no row is sql.ErrNoRows.
func (x *txn) queryRow(s *stmt, args ...any) scanner {
	if x.tx == nil {
		r, err := x.st.query(x.ctx, s, args)
		return driverRow{rows: r, err: err}
	}
	return x.tx.StmtContext(x.ctx, s.db).QueryRowContext(x.ctx, args...)
}

// query runs s in x for its rows.
func (x *txn) query(s *stmt, args ...any) (rowIter, error) {
	if x.tx == nil {
		r, err := x.st.query(x.ctx, s, args)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r, err := x.tx.StmtContext(x.ctx, s.db).QueryContext(x.ctx, args...)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// task loads a task's row: no history, no artifacts.
func (x *txn) task(id string) (*task.Task, error) {
	t, err := scanTask(x.queryRow(x.st.taskByID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("task %q: %w", id, task.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load task %q: %w", id, err)
	}
	return t, nil
}

// scanForUpdate scans a task row selected or returned with forUpdateCols,
// leaving the envelope undecoded (returned raw; only its actor is
// set, and its parent and step) and the status message unread: a transition replaces the one and
// does not need the other, so JSON decoding stays out of the single writer.
// No row is ErrNotFound.
func scanForUpdate(row scanner, id string) (*task.Task, []byte, error) {
	var (
		t                  task.Task
		env                []byte
		state, code        string
		runAfter, leaseExp sql.NullInt64
		status             sql.NullString
		rejected           bool
		created, updated   int64
	)
	err := row.Scan(&t.ID, &t.ContextID, &t.Agent, &env,
		&t.PayloadHash, &state, &t.Attempt, &t.MaxAttempts, &runAfter, &t.LeaseOwner, &leaseExp, &code,
		&t.Reason, &rejected, &status, &t.Seq, &created, &updated, &t.TurnStart, &t.Children,
		&t.Envelope.Actor, &t.Envelope.ParentTaskID, &t.Envelope.Step)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("task %q: %w", id, task.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load task %q: %w", id, err)
	}
	t.State, t.ErrorCode, t.Rejected = task.State(state), task.Code(code), rejected
	t.RunAfter, t.LeaseExpires = fromNull(runAfter), fromNull(leaseExp)
	t.CreatedAt, t.UpdatedAt = driver.FromMicros(created), driver.FromMicros(updated)
	return &t, env, nil
}

// fullTask loads a task with its artifacts and history (n < 0: all).
func (x *txn) fullTask(id string, n int) (*task.Task, error) {
	t, err := x.task(id)
	if err != nil {
		return nil, err
	}
	if t.History, err = x.history(id, n); err != nil {
		return nil, err
	}
	if t.Artifacts, err = x.artifacts(id); err != nil {
		return nil, err
	}
	if n < 0 {
		t.MarkComplete()
	}
	return t, nil
}

// history loads the newest n messages, oldest first; all when n < 0.
func (x *txn) history(id string, n int) ([]task.Message, error) {
	if n == 0 {
		return nil, nil
	}
	var rows rowIter
	var err error
	if n < 0 {
		rows, err = x.query(x.st.historyAll, id)
	} else {
		rows, err = x.query(x.st.historyLast, id, n)
	}
	if err != nil {
		return nil, fmt.Errorf("load history of %q: %w", id, err)
	}
	out, err := scanJSON[task.Message](rows)
	if err != nil {
		return nil, fmt.Errorf("load history of %q: %w", id, err)
	}
	return out, nil
}

func (x *txn) artifacts(id string) ([]task.Artifact, error) {
	rows, err := x.query(x.st.artifacts, id)
	if err != nil {
		return nil, fmt.Errorf("load artifacts of %q: %w", id, err)
	}
	out, err := scanJSON[task.Artifact](rows)
	if err != nil {
		return nil, fmt.Errorf("load artifacts of %q: %w", id, err)
	}
	return out, nil
}

// update writes a task's mutable columns.
func (x *txn) update(t *task.Task) error {
	status, err := driver.StatusJSON(t)
	if err != nil {
		return err
	}
	if _, err := x.exec(x.st.updateTask, state(t.State), t.Attempt, nullMicros(t.RunAfter),
		t.LeaseOwner, nullMicros(t.LeaseExpires), string(t.ErrorCode), t.Reason, t.Rejected, status,
		t.Seq, t.UpdatedAt.UnixMicro(), t.TurnStart, t.Children, t.ID); err != nil {
		return fmt.Errorf("update task %q: %w", t.ID, err)
	}
	return nil
}

// flush inserts w's records and seals its audit entries at now.
func (x *txn) flush(w *driver.Writes, now time.Time) error {
	if w.Err != nil {
		return w.Err
	}
	if n := len(w.Records); n > 1 && n < multiRows {
		args := make([]any, 0, n*11)
		var b boxes // the records of one operation share most values
		for i, r := range w.Records {
			args = append(args, b.str(0, r.TaskID), r.Seq, state(r.From), state(r.To),
				b.int(r.At.UnixMicro()), r.Attempt, b.str(1, r.Node), b.str(2, r.Reason), string(r.ErrorCode),
				b.str(3, r.PolicyVersion), nullText(w.Evidence[i]))
		}
		if _, err := x.exec(x.st.insertRecordsN[n], args...); err != nil {
			return fmt.Errorf("append records %d–%d of task %q: %w", w.Records[0].Seq, w.Records[n-1].Seq, w.Records[0].TaskID, err)
		}
	} else {
		for i, r := range w.Records {
			if _, err := x.exec(x.st.insertRecord, r.TaskID, r.Seq, string(r.From), string(r.To),
				r.At.UnixMicro(), r.Attempt, r.Node, r.Reason, string(r.ErrorCode), r.PolicyVersion, nullText(w.Evidence[i])); err != nil {
				return fmt.Errorf("append record %d of task %q: %w", r.Seq, r.TaskID, err)
			}
		}
	}
	return x.seal(now, w.Audit)
}

type scanner interface{ Scan(dest ...any) error }

func scanTask(sc scanner) (*task.Task, error) {
	var (
		t                  task.Task
		env, state, code   string
		runAfter, leaseExp sql.NullInt64
		status             sql.NullString
		rejected           bool
		created, updated   int64
	)
	if err := sc.Scan(&t.ID, &t.ContextID, &t.Agent, &env, &t.PayloadHash, &state, &t.Attempt,
		&t.MaxAttempts, &runAfter, &t.LeaseOwner, &leaseExp, &code, &t.Reason,
		&rejected, &status, &t.Seq, &created, &updated, &t.TurnStart, &t.Children); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(env), &t.Envelope); err != nil {
		return nil, fmt.Errorf("decode envelope of task %q: %w", t.ID, err)
	}
	if status.Valid {
		t.StatusMessage = new(task.Message)
		if err := json.Unmarshal([]byte(status.String), t.StatusMessage); err != nil {
			return nil, fmt.Errorf("decode status message of task %q: %w", t.ID, err)
		}
	}
	t.State, t.ErrorCode, t.Rejected = task.State(state), task.Code(code), rejected
	t.RunAfter, t.LeaseExpires = fromNull(runAfter), fromNull(leaseExp)
	t.CreatedAt, t.UpdatedAt = driver.FromMicros(created), driver.FromMicros(updated)
	return &t, nil
}

func scanTasks(rows rowIter) ([]*task.Task, error) {
	defer rows.Close()
	var out []*task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanJSON[T any](rows rowIter) ([]T, error) {
	defer rows.Close()
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

func (s *Store) exists(ctx context.Context, id string) error {
	var one int
	err := s.r.taskExists.db.QueryRowContext(ctx, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("task %q: %w", id, task.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("task %q: %w", id, err)
	}
	return nil
}

// decodeToken reads a page token of driver.EncodeToken: the created_at
// micros and ID of the last task of the previous page.
func decodeToken(tok string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		c, id, ok := strings.Cut(string(b), "/")
		var created int64
		if _, serr := fmt.Sscanf(c, "%d", &created); ok && serr == nil && id != "" {
			return created, id, nil
		}
	}
	return 0, "", task.ErrBadPageToken
}

// nullText is s as a column value, NULL when it is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Times are stored as unix microseconds; NULL is the zero time.

func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromNull(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return driver.FromMicros(v.Int64)
}

// PurgeIdempotencyKeys implements task.Store: keys whose expiry is at or
// before before are deleted (a key is no longer live from its expiry on).
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.inWriteTx(ctx, func(x *txn) error {
		var err error
		n, err = x.exec(x.st.idemPurge, driver.Norm(before).UnixMicro())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: purge idempotency keys: %w", err)
	}
	return int(n), nil
}

// CountByState returns how many tasks are in each state, in one scan (the
// metrics' task gauge); states without tasks are absent.
func (s *Store) CountByState(ctx context.Context) (map[task.State]int, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT state, count(*) FROM tasks GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: count tasks by state: %w", err)
	}
	defer rows.Close()
	out := map[task.State]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("sqlite: count tasks by state: %w", err)
		}
		out[task.State(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: count tasks by state: %w", err)
	}
	return out, nil
}
