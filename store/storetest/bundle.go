package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// t0 is the suite's clock origin: UTC, microsecond precision, with a
// fraction that a millisecond or second rounding would lose.
var t0 = time.Date(2026, 3, 4, 5, 6, 7, 123457000, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// bundle is what each test works with.
type bundle struct {
	t   *testing.T
	s   task.Store
	ctx context.Context
}

// spec describes a task to create.
type spec struct {
	id      string
	actor   string
	key     string
	context string
	agent   string
	steps   []task.State
	now     time.Time
	ttl     time.Duration
	history bool // store the envelope input as the first history message
}

func newTask(sp spec) *task.Task {
	if sp.actor == "" {
		sp.actor = "alice"
	}
	if sp.context == "" {
		sp.context = "ctx-" + sp.id
	}
	if sp.agent == "" {
		sp.agent = "echo"
	}
	input := task.Message{
		ID: "m-" + sp.id, Role: task.RoleUser, ContextID: sp.context, TaskID: sp.id,
		Parts: []task.Part{task.TextPart("hello " + sp.id), task.DataPart(json.RawMessage(`{"n":1}`))},
	}
	env := task.Envelope{
		TaskID: sp.id, IdempotencyKey: sp.key, Actor: sp.actor, Matter: "m-1", Resource: "r-1",
		Action: "echo", Input: input, ContextID: sp.context, CorrelationID: "corr-" + sp.id,
		Metadata: map[string]any{"k": "v"}, CreatedAt: t0,
	}
	t := &task.Task{
		ID: sp.id, ContextID: sp.context, Agent: sp.agent, Envelope: env,
		PayloadHash: env.PayloadHash(), MaxAttempts: 3,
	}
	if sp.history {
		t.History = []task.Message{input}
	}
	return t
}

func steps(states ...task.State) []task.Step {
	out := make([]task.Step, len(states))
	for i, s := range states {
		out[i] = task.Step{To: s}
	}
	return out
}

// create creates a task and fails the test on error.
func (b *bundle) create(sp spec) *task.Task {
	b.t.Helper()
	if sp.now.IsZero() {
		sp.now = t0
	}
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task: newTask(sp), Steps: steps(sp.steps...), Node: "node-1", Now: sp.now, IdempotencyTTL: sp.ttl,
	})
	if err != nil {
		b.t.Fatalf("CreateTask(%s): %v", sp.id, err)
	}
	return got
}

// queued creates a queued task created at now.
func (b *bundle) queued(id string, now time.Time) *task.Task {
	b.t.Helper()
	return b.create(spec{id: id, now: now, steps: []task.State{task.StateValidated, task.StateQueued}, history: true})
}

// claim claims one specific task and fails the test unless it gets it.
func (b *bundle) claim(id, owner string, now time.Time, lease time.Duration) *task.Task {
	b.t.Helper()
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: owner, Node: "node-1", Now: now, LeaseFor: lease, Limit: 1, TaskID: id})
	if err != nil {
		b.t.Fatalf("Claim(%s): %v", id, err)
	}
	if len(got) != 1 || got[0].ID != id {
		b.t.Fatalf("Claim(%s) = %v, want that task", id, ids(got))
	}
	return got[0]
}

func (b *bundle) transition(p task.TransitionParams) *task.Task {
	b.t.Helper()
	if p.Now.IsZero() {
		p.Now = t0
	}
	got, err := b.s.Transition(b.ctx, p)
	if err != nil {
		b.t.Fatalf("Transition(%s %s→%s): %v", p.TaskID, p.From, p.To, err)
	}
	return got
}

// reach creates task id and brings it to state by legal moves, all at t0.
func (b *bundle) reach(id string, state task.State) *task.Task {
	b.t.Helper()
	switch state {
	case task.StateRequested, task.StateValidated, task.StateQueued:
		path := map[task.State][]task.State{
			task.StateRequested: nil,
			task.StateValidated: {task.StateValidated},
			task.StateQueued:    {task.StateValidated, task.StateQueued},
		}[state]
		return b.create(spec{id: id, steps: path, history: true})
	case task.StateCanceled:
		return b.create(spec{id: id, steps: []task.State{task.StateCanceled}, history: true})
	case task.StateFailed:
		return b.create(spec{id: id, steps: []task.State{task.StateValidated, task.StateFailed}, history: true})
	}
	b.queued(id, t0)
	tk := b.claim(id, "worker-1", t0, time.Minute)
	if state == task.StateInProgress {
		return tk
	}
	if state == task.StateWaiting {
		// A parent waits only while a child is unsettled: one queued child,
		// id+"/kid".
		return b.transition(task.TransitionParams{TaskID: id, From: task.StateInProgress, To: state, Now: t0,
			Spawn: []task.CreateParams{b.child(id, id+"/kid", "kid", t0)}})
	}
	return b.transition(task.TransitionParams{TaskID: id, From: task.StateInProgress, To: state, Now: t0})
}

func (b *bundle) get(id string) *task.Task {
	b.t.Helper()
	got, err := b.s.GetTask(b.ctx, id, -1)
	if err != nil {
		b.t.Fatalf("GetTask(%s): %v", id, err)
	}
	return got
}

func (b *bundle) records(id string) []task.Record {
	b.t.Helper()
	got, err := b.s.Records(b.ctx, id)
	if err != nil {
		b.t.Fatalf("Records(%s): %v", id, err)
	}
	return got
}

// audit returns the whole audit log, read in small pages.
func (b *bundle) audit() []task.AuditEntry {
	b.t.Helper()
	var out []task.AuditEntry
	var after int64
	for {
		page, err := b.s.AuditEntries(b.ctx, after, 7)
		if err != nil {
			b.t.Fatalf("AuditEntries(%d, 7): %v", after, err)
		}
		if len(page) == 0 {
			return out
		}
		if len(page) > 7 {
			b.t.Fatalf("AuditEntries(%d, 7) returned %d entries", after, len(page))
		}
		out = append(out, page...)
		after = page[len(page)-1].Seq
	}
}

// checkChain fails the test unless entries form one valid linear chain
// starting at sequence 1.
func checkChain(t *testing.T, entries []task.AuditEntry) {
	t.Helper()
	prev := ""
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("audit entry %d has seq %d, want %d", i, e.Seq, i+1)
		}
		if e.PrevHash != prev {
			t.Fatalf("audit entry %d: prev hash %q, want %q", e.Seq, e.PrevHash, prev)
		}
		if h := e.ComputeHash(); e.Hash != h {
			t.Fatalf("audit entry %d: hash %q, computed %q", e.Seq, e.Hash, h)
		}
		prev = e.Hash
	}
}

// snapshot is everything a failed write must leave unchanged.
type snapshot struct {
	task    *task.Task
	records []task.Record
	audit   []task.AuditEntry
}

func (b *bundle) snap(id string) snapshot {
	b.t.Helper()
	return snapshot{task: b.get(id), records: b.records(id), audit: b.audit()}
}

func (b *bundle) unchanged(id string, before snapshot) {
	b.t.Helper()
	after := b.snap(id)
	if !reflect.DeepEqual(after.task, before.task) {
		b.t.Errorf("task %s changed:\nbefore %s\nafter  %s", id, dump(before.task), dump(after.task))
	}
	if !reflect.DeepEqual(after.records, before.records) {
		b.t.Errorf("records of %s changed:\nbefore %s\nafter  %s", id, dump(before.records), dump(after.records))
	}
	if len(after.audit) != len(before.audit) {
		b.t.Errorf("audit log grew from %d to %d entries", len(before.audit), len(after.audit))
	}
}

// transitionEntry checks that e is the audit entry of rec.
func transitionEntry(t *testing.T, e task.AuditEntry, rec task.Record) {
	t.Helper()
	if e.Kind != task.AuditTransition || e.TaskID != rec.TaskID || !e.At.Equal(rec.At) {
		t.Errorf("audit entry %d = {kind %s, task %s, at %v}, want {%s, %s, %v}",
			e.Seq, e.Kind, e.TaskID, e.At, task.AuditTransition, rec.TaskID, rec.At)
	}
	var got task.Record
	if err := json.Unmarshal(e.Data, &got); err != nil {
		t.Fatalf("audit entry %d: data %s: %v", e.Seq, e.Data, err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("audit entry %d: record %s, want %s", e.Seq, dump(got), dump(rec))
	}
}

func ids(ts []*task.Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one wrapping %q", what, err, target)
	}
}
