// Package storetest is the conformance suite every task.Store driver
// passes. A driver's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) task.Store {
//			s, err := sqlite.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "db"), nil)
//			...
//			return s
//		})
//	}
//
// The suite tests behaviour through the task.Store interface only, never a
// driver's storage, so SQLite and PostgreSQL run the same tests. Where the
// interface's doc leaves a choice open, the suite pins the one pactum relies
// on, and says so next to the test.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// Run runs the conformance suite. newStore must return a new, empty store
// each time it is called; Run closes it when the subtest ends (drivers must
// tolerate a second Close). Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) task.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"CreateTask/Steps", testCreateSteps},
		{"CreateTask/NoSteps", testCreateNoSteps},
		{"CreateTask/IllegalStep", testCreateIllegalStep},
		{"CreateTask/Rejected", testCreateRejected},
		{"CreateTask/RoundTrip", testCreateRoundTrip},
		{"CreateTask/DuplicateID", testCreateDuplicateID},
		{"CreateTask/Claim", testCreateClaim},
		{"Transition/Table", testTransitionTable},
		{"Transition/Conflict", testTransitionConflict},
		{"Transition/LeaseExpiredBefore", testTransitionLeaseExpiredBefore},
		{"Transition/NotFound", testTransitionNotFound},
		{"Transition/Effects", testTransitionEffects},
		{"Transition/ExtraAudit", testTransitionExtraAudit},
		{"Claim/Order", testClaimOrder},
		{"Claim/RunAfter", testClaimRunAfter},
		{"Claim/TaskID", testClaimTaskID},
		{"Claim/Attempts", testClaimAttempts},
		{"Transition/NewTurn", testTransitionNewTurn},
		{"Claim/Concurrent", testClaimConcurrent},
		{"Idempotency/Concurrent", testIdempotencyConcurrent},
		{"Idempotency/Expiry", testIdempotencyExpiry},
		{"Idempotency/Scope", testIdempotencyScope},
		{"Idempotency/Purge", testIdempotencyPurge},
		{"RenewLease", testRenewLease},
		{"ExpiredLeases", testExpiredLeases},
		{"NextRunAfter", testNextRunAfter},
		{"GetTask/History", testGetTaskHistory},
		{"GetTask/NotFound", testGetTaskNotFound},
		{"ListTasks/Filters", testListFilters},
		{"ListTasks/Rejected", testListRejected},
		{"ListTasks/Pagination", testListPagination},
		{"ListTasks/HistoryAndArtifacts", testListHistoryArtifacts},
		{"ListTasks/BadPageToken", testListBadToken},
		{"Records", testRecords},
		{"Audit/AppendAndPage", testAuditAppend},
		{"Audit/ConcurrentChain", testAuditConcurrent},
		{"Audit/InvalidData", testAuditInvalidData},
		{"Audit/HeadAndScan", testAuditHeadAndScan},
		{"Audit/ScanSnapshot", testAuditScanSnapshot},
		{"PushConfig", testPushConfig},
		{"PushConfig/Backlog", testPushBacklog},
		{"Times", testTimes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, &bundle{t: t, s: s, ctx: t.Context()})
		})
	}
}

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

// --- CreateTask -------------------------------------------------------------

func testCreateSteps(t *testing.T, b *bundle) {
	in := newTask(spec{id: "t1"})
	in.History = []task.Message{in.Envelope.Input}
	submitted := task.AuditInput{Kind: task.AuditSubmitted, TaskID: "t1", Actor: "alice", Data: json.RawMessage(`{"action":"echo"}`)}
	policy := task.AuditInput{Kind: task.AuditPolicy, TaskID: "t1", Actor: "policy", Data: json.RawMessage(`{"allow":true}`)}
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task: in,
		Steps: []task.Step{
			{To: task.StateValidated, PolicyVersion: "v7", Audit: []task.AuditInput{policy}},
			{To: task.StateQueued, Reason: "admitted"},
		},
		Audit: []task.AuditInput{submitted},
		Node:  "node-1",
		Now:   t0,
	})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if got.State != task.StateQueued || got.Seq != 2 || got.Attempt != 0 || got.ID != "t1" ||
		got.ContextID != in.ContextID || got.Agent != in.Agent || got.MaxAttempts != 3 ||
		!got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) || got.Reason != "admitted" {
		t.Errorf("CreateTask returned %s", dump(got))
	}
	if !reflect.DeepEqual(got.History, in.History) {
		t.Errorf("History = %s, want %s", dump(got.History), dump(in.History))
	}
	if stored := b.get("t1"); !reflect.DeepEqual(stored, got) {
		t.Errorf("GetTask = %s\nCreateTask returned %s", dump(stored), dump(got))
	}

	// Entering requested is not a transition: one record per step.
	recs := b.records("t1")
	want := []task.Record{
		{TaskID: "t1", Seq: 1, From: task.StateRequested, To: task.StateValidated, At: t0, Node: "node-1", PolicyVersion: "v7"},
		{TaskID: "t1", Seq: 2, From: task.StateValidated, To: task.StateQueued, At: t0, Node: "node-1", Reason: "admitted"},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("Records = %s\nwant %s", dump(recs), dump(want))
	}

	// The submission first, then each step's extra entries just before the
	// step's own.
	log := b.audit()
	checkChain(t, log)
	if len(log) != 4 {
		t.Fatalf("audit log has %d entries, want 4: %s", len(log), dump(log))
	}
	for i, in := range []task.AuditInput{submitted, policy, {}, {}} {
		if in.Kind == "" {
			continue
		}
		e := log[i]
		if e.Kind != in.Kind || e.TaskID != in.TaskID || e.Actor != in.Actor || string(e.Data) != string(in.Data) || !e.At.Equal(t0) {
			t.Errorf("audit entry %d = %s, want %s at %v", e.Seq, dump(e), dump(in), t0)
		}
	}
	transitionEntry(t, log[2], recs[0])
	transitionEntry(t, log[3], recs[1])
}

func testCreateNoSteps(t *testing.T, b *bundle) {
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task: newTask(spec{id: "t1"}), Now: t0,
		Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: "t1", Actor: "alice"}},
	})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if got.State != task.StateRequested || got.Seq != 0 || !got.UpdatedAt.Equal(t0) {
		t.Errorf("CreateTask returned %s, want requested, seq 0", dump(got))
	}
	// No transition yet: no record; the submission's audit entry only.
	if recs := b.records("t1"); len(recs) != 0 {
		t.Errorf("Records = %s, want none", dump(recs))
	}
	log := b.audit()
	checkChain(t, log)
	if len(log) != 1 || log[0].Kind != task.AuditSubmitted || log[0].TaskID != "t1" {
		t.Fatalf("audit log = %s, want the submission only", dump(log))
	}
}

func testCreateIllegalStep(t *testing.T, b *bundle) {
	in := newTask(spec{id: "t1", key: "k1"})
	_, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task:           in,
		Steps:          steps(task.StateValidated, task.StateSucceeded),
		Audit:          []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: "t1"}},
		Now:            t0,
		IdempotencyTTL: time.Hour,
	})
	wantErr(t, "CreateTask with validated → succeeded", err, task.ErrIllegalTransition)
	_, err = b.s.GetTask(b.ctx, "t1", -1)
	wantErr(t, "GetTask after refused create", err, task.ErrNotFound)
	if recs, err := b.s.Records(b.ctx, "t1"); len(recs) != 0 || (err != nil && !errors.Is(err, task.ErrNotFound)) {
		t.Errorf("Records after refused create = %v, %v; want none", recs, err)
	}
	if log := b.audit(); len(log) != 0 {
		t.Errorf("audit log has %d entries after refused create", len(log))
	}
	// The idempotency key was not taken either.
	in2 := newTask(spec{id: "t2", key: "k1"})
	if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in2, Now: t0, IdempotencyTTL: time.Hour}); err != nil {
		t.Errorf("CreateTask reusing the key of a refused create: %v", err)
	}
}

func testCreateRejected(t *testing.T, b *bundle) {
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task:  newTask(spec{id: "t1"}),
		Steps: []task.Step{{To: task.StateFailed, Rejected: true, ErrorCode: task.CodeInvalidArgument, Reason: "no input"}},
		Now:   t0,
	})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	stored := b.get("t1")
	for _, tk := range []*task.Task{got, stored} {
		if tk.State != task.StateFailed || !tk.Rejected || tk.ErrorCode != task.CodeInvalidArgument || tk.Reason != "no input" {
			t.Errorf("task = %s, want failed, rejected, invalid_argument, \"no input\"", dump(tk))
		}
	}
	recs := b.records("t1")
	if last := recs[len(recs)-1]; last.To != task.StateFailed || last.ErrorCode != task.CodeInvalidArgument || last.Reason != "no input" {
		t.Errorf("last record = %s", dump(last))
	}
}

func testCreateRoundTrip(t *testing.T, b *bundle) {
	in := newTask(spec{id: "t1", key: "key-1"})
	in.RunAfter = at(90*time.Second + 3*time.Microsecond)
	in.Envelope.PolicyRef, in.Envelope.ApprovalRef = "policy-1", "approval-1"
	in.Envelope.CreatedAt = at(-time.Second + time.Microsecond)
	in.History = []task.Message{in.Envelope.Input, {ID: "m2", Role: task.RoleAgent, Parts: []task.Part{{Kind: task.PartURL, URL: "https://example.com/f", Filename: "f", MediaType: "text/plain"}}}}
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: t0, IdempotencyTTL: time.Hour})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	stored := b.get("t1")
	if !reflect.DeepEqual(stored, got) {
		t.Errorf("GetTask = %s\nCreateTask returned %s", dump(stored), dump(got))
	}
	if !reflect.DeepEqual(stored.Envelope, in.Envelope) {
		t.Errorf("Envelope = %s\nwant %s", dump(stored.Envelope), dump(in.Envelope))
	}
	if stored.PayloadHash != in.PayloadHash || stored.RunAfter != in.RunAfter || stored.MaxAttempts != in.MaxAttempts {
		t.Errorf("PayloadHash, RunAfter, MaxAttempts = %q, %v, %d; want %q, %v, %d",
			stored.PayloadHash, stored.RunAfter, stored.MaxAttempts, in.PayloadHash, in.RunAfter, in.MaxAttempts)
	}
	if !reflect.DeepEqual(stored.History, in.History) {
		t.Errorf("History = %s\nwant %s", dump(stored.History), dump(in.History))
	}
}

func testCreateDuplicateID(t *testing.T, b *bundle) {
	b.create(spec{id: "t1"})
	before := b.snap("t1")
	_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Now: at(time.Second)})
	if err == nil {
		t.Fatal("CreateTask with an existing task ID succeeded")
	}
	b.unchanged("t1", before)
}

// --- Transition -------------------------------------------------------------

// testTransitionTable walks every pair of states: legal pairs are applied
// with one record and one audit entry, illegal ones refused with nothing
// written.
func testTransitionTable(t *testing.T, b *bundle) {
	for _, from := range task.States() {
		for _, to := range task.States() {
			id := fmt.Sprintf("%s-%s", from, to)
			b.reach(id, from)
			before := b.snap(id)
			now := at(time.Hour)
			got, err := b.s.Transition(b.ctx, task.TransitionParams{
				TaskID: id, From: from, To: to, Reason: "r", Node: "node-2", Now: now,
			})
			if !task.CanTransition(from, to) {
				if !errors.Is(err, task.ErrIllegalTransition) {
					t.Errorf("%s → %s: error %v, want ErrIllegalTransition", from, to, err)
				}
				b.unchanged(id, before)
				continue
			}
			if err != nil {
				t.Errorf("%s → %s: %v", from, to, err)
				continue
			}
			if got.State != to || got.Seq != before.task.Seq+1 || !got.UpdatedAt.Equal(now) || got.Reason != "r" {
				t.Errorf("%s → %s returned %s", from, to, dump(got))
			}
			after := b.snap(id)
			if after.task.State != to || after.task.Seq != got.Seq {
				t.Errorf("%s → %s: stored task %s", from, to, dump(after.task))
			}
			if len(after.records) != len(before.records)+1 {
				t.Fatalf("%s → %s: %d records, want %d", from, to, len(after.records), len(before.records)+1)
			}
			rec := after.records[len(after.records)-1]
			// Only a claim starts an attempt; whether a bare Transition to
			// in_progress counts one is left to the driver.
			want := task.Record{TaskID: id, Seq: got.Seq, From: from, To: to, At: now, Attempt: before.task.Attempt, Node: "node-2", Reason: "r"}
			if to == task.StateInProgress {
				want.Attempt = rec.Attempt
			}
			if !reflect.DeepEqual(rec, want) {
				t.Errorf("%s → %s: record %s, want %s", from, to, dump(rec), dump(want))
			}
			if len(after.audit) != len(before.audit)+1 {
				t.Fatalf("%s → %s: audit grew by %d, want 1", from, to, len(after.audit)-len(before.audit))
			}
			transitionEntry(t, after.audit[len(after.audit)-1], rec)
		}
	}
	checkChain(t, b.audit())
}

func testTransitionConflict(t *testing.T, b *bundle) {
	b.reach("q", task.StateQueued)
	before := b.snap("q")
	_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: "q", From: task.StateValidated, To: task.StateQueued, Now: at(time.Second)})
	wantErr(t, "Transition from a state the task is not in", err, task.ErrStateConflict)
	b.unchanged("q", before)

	b.reach("p", task.StateInProgress) // leased to worker-1
	before = b.snap("p")
	_, err = b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-2", Now: at(time.Second),
	})
	wantErr(t, "Transition by a worker not holding the lease", err, task.ErrStateConflict)
	b.unchanged("p", before)

	b.transition(task.TransitionParams{TaskID: "p", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-1", Now: at(time.Second)})
	before = b.snap("p")
	_, err = b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateFailed, LeaseOwner: "worker-1", Now: at(2 * time.Second),
	})
	wantErr(t, "second Transition from in_progress", err, task.ErrStateConflict)
	b.unchanged("p", before)
}

func testTransitionLeaseExpiredBefore(t *testing.T, b *bundle) {
	b.queued("p", t0)
	claimed := b.claim("p", "worker-1", t0, time.Minute)
	if want := at(time.Minute); !claimed.LeaseExpires.Equal(want) {
		t.Fatalf("LeaseExpires = %v, want %v", claimed.LeaseExpires, want)
	}
	for _, before := range []time.Time{at(30 * time.Second), at(time.Minute)} {
		snap := b.snap("p")
		_, err := b.s.Transition(b.ctx, task.TransitionParams{
			TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: before, Now: before,
		})
		wantErr(t, fmt.Sprintf("reap with LeaseExpiredBefore %v, lease until %v", before, claimed.LeaseExpires), err, task.ErrStateConflict)
		b.unchanged("p", snap)
	}
	// A renewed lease is left alone.
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "p", Owner: "worker-1", Now: at(50 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	_, err := b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: at(61 * time.Second), Now: at(61 * time.Second),
	})
	wantErr(t, "reap a renewed lease", err, task.ErrStateConflict)

	got := b.transition(task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: at(111 * time.Second),
		Now: at(111 * time.Second), ErrorCode: task.CodeLeaseExpired, Reason: "lease expired",
	})
	if got.State != task.StateQueued || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.ErrorCode != task.CodeLeaseExpired {
		t.Errorf("reaped task = %s, want queued without lease", dump(got))
	}
}

func testTransitionNotFound(t *testing.T, b *bundle) {
	_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: "nope", From: task.StateQueued, To: task.StateInProgress, Now: t0})
	wantErr(t, "Transition of a missing task", err, task.ErrNotFound)
}

func testTransitionEffects(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	b.claim("t1", "worker-1", t0, time.Minute)
	question := &task.Message{ID: "q1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("which file?")}}
	a1 := task.Artifact{ID: "a1", Name: "first", Parts: []task.Part{task.TextPart("one")}}
	a2 := task.Artifact{ID: "a2", Parts: []task.Part{task.DataPart(json.RawMessage(`{"x":2}`))}, Metadata: map[string]any{"m": "x"}}
	got := b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInProgress, To: task.StateInputRequired, LeaseOwner: "worker-1",
		StatusMessage: question, Messages: []task.Message{*question}, Artifacts: []task.Artifact{a1, a2},
		Now: at(time.Second),
	})
	if got.State != task.StateInputRequired || !reflect.DeepEqual(got.StatusMessage, question) ||
		got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.Attempt != 1 {
		t.Errorf("after in_progress → input_required: %s", dump(got))
	}
	stored := b.get("t1")
	if !reflect.DeepEqual(stored.StatusMessage, question) {
		t.Errorf("stored StatusMessage = %s", dump(stored.StatusMessage))
	}
	if len(stored.History) != 2 || !reflect.DeepEqual(stored.History[1], *question) {
		t.Errorf("History = %s, want input then question", dump(stored.History))
	}
	if !reflect.DeepEqual(stored.Artifacts, []task.Artifact{a1, a2}) {
		t.Errorf("Artifacts = %s", dump(stored.Artifacts))
	}

	answer := task.Message{ID: "u2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("main.go")}}
	got = b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInputRequired, To: task.StateQueued, Messages: []task.Message{answer},
		RunAfter: at(5 * time.Second), Now: at(2 * time.Second),
	})
	if got.StatusMessage != nil || !got.RunAfter.Equal(at(5*time.Second)) {
		t.Errorf("after input_required → queued: StatusMessage %s, RunAfter %v", dump(got.StatusMessage), got.RunAfter)
	}

	b.claim("t1", "worker-2", at(5*time.Second), time.Minute)
	a1b := task.Artifact{ID: "a1", Name: "first, again", Parts: []task.Part{task.TextPart("uno")}}
	a3 := task.Artifact{ID: "a3", Parts: []task.Part{task.TextPart("three")}}
	got = b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInProgress, To: task.StateFailed, LeaseOwner: "worker-2",
		Artifacts: []task.Artifact{a1b, a3}, ErrorCode: task.CodeAgentFailed, Reason: "boom", Now: at(6 * time.Second),
	})
	if got.ErrorCode != task.CodeAgentFailed || got.Reason != "boom" || got.Attempt != 2 || !got.UpdatedAt.Equal(at(6*time.Second)) {
		t.Errorf("after in_progress → failed: %s", dump(got))
	}
	stored = b.get("t1")
	// An artifact stored again under its ID replaces the old one in place.
	if want := []task.Artifact{a1b, a2, a3}; !reflect.DeepEqual(stored.Artifacts, want) {
		t.Errorf("Artifacts = %s\nwant %s", dump(stored.Artifacts), dump(want))
	}
	if len(stored.History) != 3 || !reflect.DeepEqual(stored.History[2], answer) {
		t.Errorf("History = %s, want input, question, answer", dump(stored.History))
	}
	if stored.ErrorCode != task.CodeAgentFailed || stored.Reason != "boom" || stored.Seq != got.Seq {
		t.Errorf("stored task = %s", dump(stored))
	}
}

func testTransitionExtraAudit(t *testing.T, b *bundle) {
	b.reach("t1", task.StateQueued)
	n := len(b.audit())
	extra := []task.AuditInput{
		{Kind: task.AuditPolicy, TaskID: "t1", Actor: "bob", Data: json.RawMessage(`{"cancel":"ok"}`)},
		{Kind: "custom.kind", Actor: "bob"},
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateQueued, To: task.StateCanceled, Audit: extra, Now: at(time.Minute)})
	log := b.audit()
	checkChain(t, log)
	if len(log) != n+3 {
		t.Fatalf("audit grew by %d entries, want 3", len(log)-n)
	}
	for i, in := range extra {
		e := log[n+i]
		if e.Kind != in.Kind || e.TaskID != in.TaskID || e.Actor != in.Actor || string(e.Data) != string(in.Data) || !e.At.Equal(at(time.Minute)) {
			t.Errorf("audit entry %d = %s, want %s", e.Seq, dump(e), dump(in))
		}
	}
	recs := b.records("t1")
	transitionEntry(t, log[n+2], recs[len(recs)-1])
}

// --- Claim ------------------------------------------------------------------

// testClaimOrder pins "oldest first" as CreatedAt, then ID.
func testClaimOrder(t *testing.T, b *bundle) {
	b.queued("c", at(3*time.Second))
	b.queued("b", at(2*time.Second))
	b.queued("a2", at(time.Second))
	b.queued("a1", at(time.Second))
	b.reach("v", task.StateValidated) // not queued: never claimed
	now := at(time.Minute)
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Node: "node-9", Now: now, LeaseFor: 30 * time.Second, Limit: 3})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if want := []string{"a1", "a2", "b"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Claim = %v, want %v", ids(got), want)
	}
	for _, tk := range got {
		if tk.State != task.StateInProgress || tk.Attempt != 1 || tk.LeaseOwner != "w" ||
			!tk.LeaseExpires.Equal(now.Add(30*time.Second)) || !tk.UpdatedAt.Equal(now) || tk.Seq != 3 {
			t.Errorf("claimed %s", dump(tk))
		}
		if len(tk.History) != 1 || tk.History[0].ID != "m-"+tk.ID {
			t.Errorf("claimed %s: History %s, want the input message", tk.ID, dump(tk.History))
		}
		if stored := b.get(tk.ID); stored.State != task.StateInProgress || stored.LeaseOwner != "w" || stored.Attempt != 1 {
			t.Errorf("stored %s", dump(stored))
		}
		recs := b.records(tk.ID)
		want := task.Record{TaskID: tk.ID, Seq: 3, From: task.StateQueued, To: task.StateInProgress, At: now, Attempt: 1, Node: "node-9"}
		if last := recs[len(recs)-1]; !reflect.DeepEqual(last, want) {
			t.Errorf("record %s, want %s", dump(last), dump(want))
		}
	}
	log := b.audit()
	checkChain(t, log)
	for i, tk := range got {
		recs := b.records(tk.ID)
		transitionEntry(t, log[len(log)-3+i], recs[len(recs)-1])
	}

	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Second, Limit: 3})
	if err != nil || !slices.Equal(ids(got), []string{"c"}) {
		t.Fatalf("second Claim = %v, %v; want [c]", ids(got), err)
	}
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Second, Limit: 3})
	if err != nil || len(got) != 0 {
		t.Fatalf("Claim with nothing queued = %v, %v; want none", ids(got), err)
	}
}

func testClaimRunAfter(t *testing.T, b *bundle) {
	in := newTask(spec{id: "later"})
	in.RunAfter = at(time.Minute)
	if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: t0}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	for _, now := range []time.Time{t0, at(time.Minute - time.Microsecond)} {
		got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 10})
		if err != nil || len(got) != 0 {
			t.Fatalf("Claim at %v before RunAfter %v = %v, %v; want none", now, in.RunAfter, ids(got), err)
		}
	}
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 10})
	if err != nil || !slices.Equal(ids(got), []string{"later"}) {
		t.Fatalf("Claim at RunAfter = %v, %v; want [later]", ids(got), err)
	}

	// A retry's RunAfter holds it back the same way.
	b.transition(task.TransitionParams{TaskID: "later", From: task.StateInProgress, To: task.StateQueued, RunAfter: at(2 * time.Minute), Now: at(time.Minute)})
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(90 * time.Second), LeaseFor: time.Minute, Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("Claim before the retry's RunAfter = %v, %v; want none", ids(got), err)
	}
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(2 * time.Minute), LeaseFor: time.Minute, Limit: 10, TaskID: "later"})
	if err != nil || !slices.Equal(ids(got), []string{"later"}) {
		t.Fatalf("Claim at the retry's RunAfter = %v, %v; want [later]", ids(got), err)
	}
}

func testClaimTaskID(t *testing.T, b *bundle) {
	b.queued("old", t0)
	b.queued("new", at(time.Second))
	b.reach("val", task.StateValidated)
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 5, TaskID: "new"})
	if err != nil || !slices.Equal(ids(got), []string{"new"}) {
		t.Fatalf("Claim(TaskID new) = %v, %v; want [new]", ids(got), err)
	}
	for _, id := range []string{"new", "val", "missing"} {
		got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 5, TaskID: id})
		if err != nil || len(got) != 0 {
			t.Errorf("Claim(TaskID %s), not queued = %v, %v; want none", id, ids(got), err)
		}
	}
	if tk := b.get("old"); tk.State != task.StateQueued {
		t.Errorf("old is %s, want still queued", tk.State)
	}
}

func testClaimAttempts(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	for attempt := 1; attempt <= 3; attempt++ {
		now := at(time.Duration(attempt) * time.Minute)
		tk := b.claim("t1", "w", now, time.Minute)
		if tk.Attempt != attempt {
			t.Fatalf("claim %d: Attempt %d", attempt, tk.Attempt)
		}
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Now: now, Reason: "retry"})
	}
	var attempts []int
	for _, r := range b.records("t1") {
		if r.To == task.StateInProgress || r.From == task.StateInProgress {
			attempts = append(attempts, r.Attempt)
		}
	}
	if want := []int{1, 1, 2, 2, 3, 3}; !slices.Equal(attempts, want) {
		t.Errorf("attempts on records into and out of in_progress = %v, want %v", attempts, want)
	}
	if tk := b.get("t1"); tk.Attempt != 3 {
		t.Errorf("Attempt = %d, want 3", tk.Attempt)
	}
}

// testTransitionNewTurn: a transition with NewTurn sets TurnStart to the
// task's Attempt and stores it; other transitions and claims leave it.
func testTransitionNewTurn(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	for attempt := 1; attempt <= 2; attempt++ {
		b.claim("t1", "w", at(time.Duration(attempt)*time.Minute), time.Minute)
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Reason: "retry"})
	}
	b.claim("t1", "w", at(3*time.Minute), time.Minute)
	tk := b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateDeadLetter, LeaseOwner: "w"})
	if tk.Attempt != 3 || tk.TurnStart != 0 {
		t.Fatalf("dead-lettered: Attempt %d, TurnStart %d; want 3, 0", tk.Attempt, tk.TurnStart)
	}
	tk = b.transition(task.TransitionParams{TaskID: "t1", From: task.StateDeadLetter, To: task.StateQueued, Reason: "manual retry", NewTurn: true})
	if tk.Attempt != 3 || tk.TurnStart != 3 || tk.TurnAttempt() != 0 {
		t.Fatalf("Transition with NewTurn returned Attempt %d, TurnStart %d; want 3, 3", tk.Attempt, tk.TurnStart)
	}
	if got := b.get("t1"); got.TurnStart != 3 {
		t.Fatalf("stored TurnStart %d after NewTurn, want 3", got.TurnStart)
	}
	tk = b.claim("t1", "w", at(4*time.Minute), time.Minute)
	if tk.Attempt != 4 || tk.TurnStart != 3 || tk.TurnAttempt() != 1 {
		t.Fatalf("claim after the new turn: Attempt %d, TurnStart %d; want 4, 3 (attempt 1 of the turn)", tk.Attempt, tk.TurnStart)
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Reason: "retry"})
	if got := b.get("t1"); got.Attempt != 4 || got.TurnStart != 3 {
		t.Fatalf("after a retry within the turn: Attempt %d, TurnStart %d; want 4, 3", got.Attempt, got.TurnStart)
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].TurnStart != 3 {
		t.Fatalf("ListTasks: %s, %v; want t1 with TurnStart 3", dump(page), err)
	}
}

// testClaimConcurrent: 8 claimers drain 200 queued tasks; each task is
// claimed exactly once.
func testClaimConcurrent(t *testing.T, b *bundle) {
	const tasks, workers = 200, 8
	for i := range tasks {
		b.queued(fmt.Sprintf("t%03d", i), at(time.Duration(i)*time.Microsecond))
	}
	claimed := ClaimAll(t, []task.Store{b.s}, workers, tasks, func(_, w, i int) task.ClaimParams {
		return task.ClaimParams{Owner: fmt.Sprintf("worker-%d", w), Now: at(time.Hour), LeaseFor: time.Minute, Limit: 1 + (w+i)%4}
	})
	for id, owner := range claimed {
		if tk := b.get(id); tk.Attempt != 1 || tk.LeaseOwner != owner || tk.State != task.StateInProgress {
			t.Errorf("%s: attempt %d, owner %q, state %s; want 1, %q, in_progress", id, tk.Attempt, tk.LeaseOwner, tk.State, owner)
		}
	}
	checkChain(t, b.audit())
}

// --- Idempotency ------------------------------------------------------------

// testIdempotencyConcurrent: 100 concurrent submits under one (actor, key)
// create exactly one task; the 99 others get it back with ErrDuplicate.
func testIdempotencyConcurrent(t *testing.T, b *bundle) {
	const n = 100
	type result struct {
		id  string
		got *task.Task
		err error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("t%03d", i)
			in := newTask(spec{id: id, key: "same-key", context: "ctx"})
			in.History = []task.Message{in.Envelope.Input}
			got, err := b.s.CreateTask(b.ctx, task.CreateParams{
				Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: t0, IdempotencyTTL: time.Hour,
			})
			results[i] = result{id, got, err}
		})
	}
	wg.Wait()
	var winner string
	for _, r := range results {
		if r.err == nil {
			if winner != "" {
				t.Fatalf("both %s and %s were created under one key", winner, r.id)
			}
			winner = r.id
		}
	}
	if winner == "" {
		t.Fatal("no submit created a task")
	}
	for _, r := range results {
		if r.id == winner {
			continue
		}
		if !errors.Is(r.err, task.ErrDuplicate) {
			t.Errorf("%s: error %v, want ErrDuplicate", r.id, r.err)
			continue
		}
		if r.got == nil || r.got.ID != winner || r.got.State != task.StateQueued || len(r.got.History) != 1 {
			t.Errorf("%s: duplicate returned %s, want task %s with its history", r.id, dump(r.got), winner)
		}
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: n})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if page.TotalSize != 1 || len(page.Tasks) != 1 || page.Tasks[0].ID != winner {
		t.Errorf("ListTasks = %v (total %d), want only %s", ids(page.Tasks), page.TotalSize, winner)
	}
	log := b.audit()
	checkChain(t, log)
	for _, e := range log {
		if e.TaskID != winner {
			t.Errorf("audit entry %d names task %q, want only %q", e.Seq, e.TaskID, winner)
		}
	}
}

// testIdempotencyExpiry pins the key's life: it names its task while
// Now < creation + TTL; afterwards a submit replaces it.
func testIdempotencyExpiry(t *testing.T, b *bundle) {
	submit := func(id string, now time.Time) (*task.Task, error) {
		t.Helper()
		return b.s.CreateTask(b.ctx, task.CreateParams{
			Task: newTask(spec{id: id, key: "k"}), Steps: steps(task.StateValidated), Now: now, IdempotencyTTL: time.Minute,
		})
	}
	if _, err := submit("a", t0); err != nil {
		t.Fatalf("first submit: %v", err)
	}
	b.transition(task.TransitionParams{
		TaskID: "a", From: task.StateValidated, To: task.StateQueued, Now: at(time.Second),
		Artifacts: []task.Artifact{{ID: "x", Parts: []task.Part{task.TextPart("x")}}},
	})
	before := b.audit()
	got, err := submit("b", at(time.Minute-time.Microsecond))
	wantErr(t, "submit before the key expired", err, task.ErrDuplicate)
	// The duplicate returns the task in full: state, history, artifacts.
	if want := b.get("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("duplicate returned %s\nwant %s", dump(got), dump(want))
	}
	if _, err := b.s.GetTask(b.ctx, "b", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask(b) after a duplicate submit: %v, want ErrNotFound", err)
	}
	if after := b.audit(); len(after) != len(before) {
		t.Errorf("duplicate submit wrote %d audit entries", len(after)-len(before))
	}

	if got, err := submit("c", at(time.Minute)); err != nil || got.ID != "c" {
		t.Fatalf("submit once the key expired = %v, %v; want task c", got, err)
	}
	got, err = submit("d", at(time.Minute+time.Second))
	wantErr(t, "submit under the replaced key", err, task.ErrDuplicate)
	if got == nil || got.ID != "c" {
		t.Errorf("replaced key names %v, want c", got)
	}
}

func testIdempotencyScope(t *testing.T, b *bundle) {
	create := func(id, actor, key string, ttl time.Duration) error {
		_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: id, actor: actor, key: key}), Now: t0, IdempotencyTTL: ttl})
		return err
	}
	if err := create("a1", "alice", "k", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := create("b1", "bob", "k", time.Hour); err != nil {
		t.Errorf("same key, other actor: %v", err)
	}
	if err := create("a2", "alice", "k", 0); err != nil {
		t.Errorf("same key without IdempotencyTTL: %v", err)
	}
	if err := create("e1", "alice", "", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := create("e2", "alice", "", time.Hour); err != nil {
		t.Errorf("second submit with an empty key: %v", err)
	}
	if err := create("a3", "alice", "k", time.Hour); !errors.Is(err, task.ErrDuplicate) {
		t.Errorf("same actor and key: %v, want ErrDuplicate", err)
	}
}

// --- Leases -----------------------------------------------------------------

func testRenewLease(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	b.claim("t1", "w1", t0, time.Minute)
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w1", Now: at(30 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	if tk := b.get("t1"); !tk.LeaseExpires.Equal(at(90*time.Second)) || tk.LeaseOwner != "w1" {
		t.Errorf("after renew: lease %q until %v, want w1 until %v", tk.LeaseOwner, tk.LeaseExpires, at(90*time.Second))
	}
	err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w2", Now: at(40 * time.Second), LeaseFor: time.Hour})
	wantErr(t, "RenewLease by another owner", err, task.ErrStateConflict)
	if tk := b.get("t1"); !tk.LeaseExpires.Equal(at(90 * time.Second)) {
		t.Errorf("refused renew changed the lease to %v", tk.LeaseExpires)
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(time.Minute)})
	err = b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w1", Now: at(time.Minute), LeaseFor: time.Minute})
	wantErr(t, "RenewLease after the task finished", err, task.ErrStateConflict)
	err = b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "missing", Owner: "w1", Now: at(time.Minute), LeaseFor: time.Minute})
	wantErr(t, "RenewLease of a missing task", err, task.ErrNotFound)
}

func testExpiredLeases(t *testing.T, b *bundle) {
	for i, id := range []string{"a", "b", "c", "d"} {
		b.queued(id, t0)
		b.claim(id, "w", t0, time.Duration(i+1)*10*time.Second) // a 10s, b 20s, c 30s, d 40s
	}
	b.transition(task.TransitionParams{TaskID: "b", From: task.StateInProgress, To: task.StateSucceeded, Now: at(time.Second)})
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "c", Owner: "w", Now: at(25 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	b.queued("q", t0)

	got, err := b.s.ExpiredLeases(b.ctx, at(45*time.Second), 10)
	if err != nil {
		t.Fatalf("ExpiredLeases: %v", err)
	}
	gotIDs := ids(got)
	slices.Sort(gotIDs)
	if want := []string{"a", "d"}; !slices.Equal(gotIDs, want) {
		t.Errorf("ExpiredLeases(+45s) = %v, want %v", gotIDs, want)
	}
	for _, tk := range got {
		if tk.State != task.StateInProgress || tk.LeaseOwner != "w" || !tk.LeaseExpires.Before(at(45*time.Second)) {
			t.Errorf("expired task %s", dump(tk))
		}
	}
	if got, err := b.s.ExpiredLeases(b.ctx, at(45*time.Second), 1); err != nil || len(got) != 1 {
		t.Errorf("ExpiredLeases(limit 1) = %v, %v; want one task", ids(got), err)
	}
	if got, err := b.s.ExpiredLeases(b.ctx, at(5*time.Second), 10); err != nil || len(got) != 0 {
		t.Errorf("ExpiredLeases(+5s) = %v, %v; want none", ids(got), err)
	}
}

// testNextRunAfter: the earliest RunAfter among queued tasks only. A queued
// task without RunAfter is due already: the answer is then non-zero and no
// later than when it was queued.
func testNextRunAfter(t *testing.T, b *bundle) {
	next := func() time.Time {
		t.Helper()
		got, err := b.s.NextRunAfter(b.ctx)
		if err != nil {
			t.Fatalf("NextRunAfter: %v", err)
		}
		return got
	}
	if got := next(); !got.IsZero() {
		t.Fatalf("NextRunAfter on an empty store = %v, want zero", got)
	}
	mk := func(id string, runAfter time.Time, path ...task.State) {
		in := newTask(spec{id: id})
		in.RunAfter = runAfter
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(path...), Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	mk("validated", at(time.Second), task.StateValidated)
	if got := next(); !got.IsZero() {
		t.Fatalf("NextRunAfter with nothing queued = %v, want zero", got)
	}
	mk("x", at(2*time.Minute), task.StateValidated, task.StateQueued)
	mk("y", at(time.Minute), task.StateValidated, task.StateQueued)
	if got := next(); !got.Equal(at(time.Minute)) {
		t.Fatalf("NextRunAfter = %v, want %v", got, at(time.Minute))
	}
	b.claim("y", "w", at(time.Minute), time.Minute)
	if got := next(); !got.Equal(at(2 * time.Minute)) {
		t.Fatalf("NextRunAfter after y was claimed = %v, want %v", got, at(2*time.Minute))
	}
	mk("now", time.Time{}, task.StateValidated, task.StateQueued)
	if got := next(); got.IsZero() || got.After(t0) {
		t.Fatalf("NextRunAfter with a task queued at %v without RunAfter = %v", t0, got)
	}
}

// --- Reads ------------------------------------------------------------------

func testGetTaskHistory(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	var want []task.Message
	want = append(want, b.get("t1").History...)
	for i := range 4 {
		m := task.Message{ID: fmt.Sprintf("m%d", i), Role: task.RoleAgent, Parts: []task.Part{task.TextPart(fmt.Sprint(i))}}
		want = append(want, m)
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateInputRequired, Messages: []task.Message{m}, Now: t0})
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInputRequired, To: task.StateQueued, Now: t0})
		b.claim("t1", "w", t0, time.Minute)
	}
	if len(want) != 5 {
		t.Fatalf("setup: %d messages", len(want))
	}
	for _, tc := range []struct {
		n    int
		want []task.Message
	}{{-1, want}, {0, nil}, {1, want[4:]}, {2, want[3:]}, {5, want}, {10, want}} {
		got, err := b.s.GetTask(b.ctx, "t1", tc.n)
		if err != nil {
			t.Fatalf("GetTask(%d): %v", tc.n, err)
		}
		if len(got.History) != len(tc.want) || (len(tc.want) > 0 && !reflect.DeepEqual(got.History, tc.want)) {
			t.Errorf("GetTask(historyLength %d).History = %s\nwant %s", tc.n, dump(got.History), dump(tc.want))
		}
	}
}

func testGetTaskNotFound(t *testing.T, b *bundle) {
	_, err := b.s.GetTask(b.ctx, "missing", -1)
	wantErr(t, "GetTask of a missing task", err, task.ErrNotFound)
}

func testListFilters(t *testing.T, b *bundle) {
	type row struct {
		id, ctx, agent, actor string
		state                 task.State
	}
	rows := []row{
		{"t1", "c1", "echo", "alice", task.StateQueued},
		{"t2", "c1", "echo", "bob", task.StateRequested},
		{"t3", "c2", "code", "alice", task.StateQueued},
		{"t4", "c2", "code", "bob", task.StateCanceled},
		{"t5", "c2", "echo", "alice", task.StateValidated},
	}
	for i, r := range rows {
		path := map[task.State][]task.State{
			task.StateQueued:    {task.StateValidated, task.StateQueued},
			task.StateRequested: nil,
			task.StateCanceled:  {task.StateCanceled},
			task.StateValidated: {task.StateValidated},
		}[r.state]
		b.create(spec{id: r.id, context: r.ctx, agent: r.agent, actor: r.actor, steps: path, now: at(time.Duration(i) * time.Second)})
	}
	// t1 moves later: UpdatedAfter finds it.
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateQueued, To: task.StateCanceled, Now: at(time.Hour)})

	for _, tc := range []struct {
		name string
		p    task.ListParams
		want []string
	}{
		{"all", task.ListParams{}, []string{"t5", "t4", "t3", "t2", "t1"}},
		{"context", task.ListParams{ContextID: "c1"}, []string{"t2", "t1"}},
		{"agent", task.ListParams{Agent: "code"}, []string{"t4", "t3"}},
		{"actor", task.ListParams{Actor: "alice"}, []string{"t5", "t3", "t1"}},
		{"states", task.ListParams{States: []task.State{task.StateQueued, task.StateCanceled}}, []string{"t4", "t3", "t1"}},
		{"one state", task.ListParams{States: []task.State{task.StateValidated}}, []string{"t5"}},
		{"updated after", task.ListParams{UpdatedAfter: at(3 * time.Second)}, []string{"t5", "t4", "t1"}},
		{"combined", task.ListParams{ContextID: "c2", Actor: "alice", States: []task.State{task.StateQueued}}, []string{"t3"}},
		{"no match", task.ListParams{ContextID: "c3"}, nil},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil {
			t.Errorf("%s: ListTasks: %v", tc.name, err)
			continue
		}
		if got := ids(page.Tasks); !slices.Equal(got, tc.want) || page.TotalSize != len(tc.want) || page.NextPageToken != "" {
			t.Errorf("%s: ListTasks = %v (total %d, next %q), want %v", tc.name, got, page.TotalSize, page.NextPageToken, tc.want)
		}
	}
}

// testListPagination walks pages, with creation times shared between tasks
// (ties are ordered by ID, descending), and checks no task is repeated or
// missed.
func testListPagination(t *testing.T, b *bundle) {
	const n = 23
	var want, queued []string
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		steps := []task.State{task.StateValidated}
		if i%3 == 0 {
			steps = append(steps, task.StateQueued)
			queued = append(queued, id)
		}
		b.create(spec{id: id, steps: steps, now: at(time.Duration(i/4) * time.Second)})
		want = append(want, id)
	}
	// Newest first: t22 … t00, tasks created in the same microsecond by ID,
	// descending.
	slices.Reverse(want)
	slices.Reverse(queued)
	walk := func(p task.ListParams, want []string) {
		t.Helper()
		var got []string
		pages := 0
		for {
			page, err := b.s.ListTasks(b.ctx, p)
			if err != nil {
				t.Fatalf("ListTasks page %d: %v", pages, err)
			}
			pages++
			if page.TotalSize != len(want) {
				t.Errorf("page %d: TotalSize %d, want %d", pages, page.TotalSize, len(want))
			}
			if len(page.Tasks) > p.PageSize {
				t.Fatalf("page %d has %d tasks, page size %d", pages, len(page.Tasks), p.PageSize)
			}
			got = append(got, ids(page.Tasks)...)
			if page.NextPageToken == "" {
				break
			}
			if pages > len(want) {
				t.Fatalf("more than %d pages", len(want))
			}
			p.PageToken = page.NextPageToken
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages gave %v\nwant %v", got, want)
		}
		if wantPages := max(1, (len(want)+p.PageSize-1)/p.PageSize); pages != wantPages {
			t.Errorf("%d pages, want %d", pages, wantPages)
		}
	}
	walk(task.ListParams{PageSize: 5}, want)
	walk(task.ListParams{PageSize: 1}, want)
	walk(task.ListParams{PageSize: n}, want)
	walk(task.ListParams{PageSize: 3, States: []task.State{task.StateQueued}}, queued)

	// A page token stays valid while tasks are added in front of it.
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	b.create(spec{id: "newest", now: at(time.Hour)})
	page, err = b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10, PageToken: page.NextPageToken})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(page.Tasks); !slices.Equal(got, want[10:20]) {
		t.Errorf("second page after an insert = %v, want %v", got, want[10:20])
	}
}

func testListHistoryArtifacts(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	m := task.Message{ID: "reply", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("done")}}
	art := task.Artifact{ID: "a1", Parts: []task.Part{task.TextPart("result")}}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Messages: []task.Message{m}, Artifacts: []task.Artifact{art}, Now: t0})
	for _, tc := range []struct {
		p        task.ListParams
		history  []string
		artifact bool
	}{
		{task.ListParams{HistoryLength: 0}, nil, false},
		{task.ListParams{HistoryLength: -1}, []string{"m-t1", "reply"}, false},
		{task.ListParams{HistoryLength: 1, IncludeArtifacts: true}, []string{"reply"}, true},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil || len(page.Tasks) != 1 {
			t.Fatalf("ListTasks(%+v) = %v, %v", tc.p, page, err)
		}
		tk := page.Tasks[0]
		var got []string
		for _, m := range tk.History {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, tc.history) {
			t.Errorf("HistoryLength %d: history %v, want %v", tc.p.HistoryLength, got, tc.history)
		}
		if tc.artifact != (len(tk.Artifacts) == 1) || (tc.artifact && !reflect.DeepEqual(tk.Artifacts[0], art)) {
			t.Errorf("IncludeArtifacts %v: artifacts %s", tc.p.IncludeArtifacts, dump(tk.Artifacts))
		}
	}
}

func testListBadToken(t *testing.T, b *bundle) {
	b.create(spec{id: "t1"})
	for _, tok := range []string{"not a token!", "%%%", "bm8tc2xhc2g", "LTEv"} {
		_, err := b.s.ListTasks(b.ctx, task.ListParams{PageToken: tok})
		if err == nil {
			t.Errorf("ListTasks with the malformed page token %q succeeded", tok)
			continue
		}
		// The caller sees this message: a domain error that names no driver.
		if !errors.Is(err, task.ErrBadPageToken) || task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("ListTasks with the malformed page token %q: err = %v, want task.ErrBadPageToken", tok, err)
		}
	}
}

func testRecords(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, Now: at(time.Second), Reason: "retry", ErrorCode: task.CodeTimeout})
	b.claim("t1", "w", at(2*time.Second), time.Minute)
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(3 * time.Second), PolicyVersion: "p2"})
	recs := b.records("t1")
	want := []struct {
		from, to task.State
		attempt  int
		at       time.Time
	}{
		{task.StateRequested, task.StateValidated, 0, t0},
		{task.StateValidated, task.StateQueued, 0, t0},
		{task.StateQueued, task.StateInProgress, 1, t0},
		{task.StateInProgress, task.StateQueued, 1, at(time.Second)},
		{task.StateQueued, task.StateInProgress, 2, at(2 * time.Second)},
		{task.StateInProgress, task.StateSucceeded, 2, at(3 * time.Second)},
	}
	if len(recs) != len(want) {
		t.Fatalf("Records = %s, want %d records", dump(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.TaskID != "t1" || r.Seq != i+1 || r.From != w.from || r.To != w.to || r.Attempt != w.attempt || !r.At.Equal(w.at) {
			t.Errorf("record %d = %s, want %+v", i, dump(r), w)
		}
	}
	if r := recs[3]; r.Reason != "retry" || r.ErrorCode != task.CodeTimeout {
		t.Errorf("retry record = %s", dump(r))
	}
	if r := recs[5]; r.PolicyVersion != "p2" {
		t.Errorf("last record = %s", dump(r))
	}
	if tk := b.get("t1"); tk.Seq != len(recs) {
		t.Errorf("Task.Seq = %d, want the last record's %d", tk.Seq, len(recs))
	}
}

// --- Audit ------------------------------------------------------------------

// testAuditInvalidData: audit Data must be JSON; a write carrying anything
// else is refused as invalid_argument and writes nothing, whichever method
// carries it.
func testAuditInvalidData(t *testing.T, b *bundle) {
	bad := []task.AuditInput{{Kind: "custom", Data: json.RawMessage(`{not json`)}}
	check := func(op string, err error) {
		t.Helper()
		if task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s with invalid audit Data: err = %v, want invalid_argument", op, err)
		}
	}
	check("AppendAudit", b.s.AppendAudit(b.ctx, bad))
	_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Audit: bad, Now: t0})
	check("CreateTask", err)
	_, err = b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Steps: []task.Step{{To: task.StateValidated, Audit: bad}}, Now: t0})
	check("CreateTask step", err)
	if _, err := b.s.GetTask(b.ctx, "t1", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask after refused creates: err = %v, want ErrNotFound", err)
	}
	b.create(spec{id: "t2", steps: []task.State{task.StateValidated}})
	_, err = b.s.Transition(b.ctx, task.TransitionParams{TaskID: "t2", From: task.StateValidated, To: task.StateQueued, Now: t0, Audit: bad})
	check("Transition", err)
	if got := b.get("t2"); got.State != task.StateValidated {
		t.Errorf("state after a refused transition = %s, want validated", got.State)
	}
	check("PutPushConfig", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t2", ID: "p1", URL: "https://example.com/hook", CreatedAt: t0}, bad))
	if _, err := b.s.GetPushConfig(b.ctx, "t2", "p1"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetPushConfig after a refused put: err = %v, want ErrNotFound", err)
	}
	before, err := b.s.AuditEntries(b.ctx, 0, 1000)
	if err != nil {
		t.Fatalf("AuditEntries: %v", err)
	}
	for _, e := range before {
		if e.Kind == "custom" {
			t.Errorf("refused entry was written: %s", dump(e))
		}
	}
	checkChain(t, before)
}

func testAuditAppend(t *testing.T, b *bundle) {
	if err := b.s.AppendAudit(b.ctx, nil); err != nil {
		t.Fatalf("AppendAudit(nil): %v", err)
	}
	if got, err := b.s.AuditEntries(b.ctx, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("AuditEntries on an empty log = %v, %v", got, err)
	}
	in := []task.AuditInput{
		// Data is kept byte for byte: the hash covers it.
		{Kind: task.AuditPushConfig, TaskID: "t9", Actor: "alice", Data: json.RawMessage(`{ "b": 1,  "a": [1, 2] }`)},
		{Kind: task.AuditPolicy, Actor: "ops"},
		{Kind: "custom", Data: json.RawMessage(`"ünïcode ✓"`)},
	}
	if err := b.s.AppendAudit(b.ctx, in[:2]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	if err := b.s.AppendAudit(b.ctx, in[2:]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	all, err := b.s.AuditEntries(b.ctx, 0, 100)
	if err != nil {
		t.Fatalf("AuditEntries: %v", err)
	}
	checkChain(t, all)
	if len(all) != 3 {
		t.Fatalf("AuditEntries = %d entries, want 3", len(all))
	}
	for i, e := range all {
		if e.Kind != in[i].Kind || e.TaskID != in[i].TaskID || e.Actor != in[i].Actor || string(e.Data) != string(in[i].Data) {
			t.Errorf("entry %d = %s, want %s", e.Seq, dump(e), dump(in[i]))
		}
		if e.At.IsZero() || e.At.Location() != time.UTC || e.At.Nanosecond()%1000 != 0 {
			t.Errorf("entry %d: At %v, want a UTC time in whole microseconds", e.Seq, e.At)
		}
	}
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{{0, 1, []int64{1}}, {1, 1, []int64{2}}, {1, 5, []int64{2, 3}}, {3, 5, nil}, {99, 5, nil}} {
		got, err := b.s.AuditEntries(b.ctx, tc.after, tc.limit)
		if err != nil {
			t.Fatalf("AuditEntries(%d, %d): %v", tc.after, tc.limit, err)
		}
		var seqs []int64
		for _, e := range got {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(seqs, tc.want) {
			t.Errorf("AuditEntries(%d, %d) = %v, want %v", tc.after, tc.limit, seqs, tc.want)
		}
	}
	if !reflect.DeepEqual(b.audit(), all) {
		t.Error("paged reads differ from one read")
	}
}

// testAuditConcurrent: writers of every kind at once still build one linear
// chain with no gap.
func testAuditConcurrent(t *testing.T, b *bundle) {
	const writers, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("w%d-r%d", w, r)
				_, err := b.s.CreateTask(b.ctx, task.CreateParams{
					Task: newTask(spec{id: id}), Steps: steps(task.StateValidated, task.StateQueued),
					Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: t0,
				}) // 3 entries
				if err == nil {
					_, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: id, Now: t0, LeaseFor: time.Minute, Limit: 1, TaskID: id}) // 1
				}
				if err == nil {
					err = b.s.AppendAudit(b.ctx, []task.AuditInput{{Kind: "a", TaskID: id}, {Kind: "b", TaskID: id}}) // 2
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	log := b.audit()
	checkChain(t, log)
	if want := writers * rounds * 6; len(log) != want {
		t.Errorf("audit log has %d entries, want %d", len(log), want)
	}
	last := log[len(log)-1]
	if seq, hash, err := auditReaderOf(t, b.s).AuditHead(b.ctx); err != nil || seq != last.Seq || hash != last.Hash {
		t.Errorf("AuditHead = %d, %s, %v; want the last entry %d, %s", seq, hash, err, last.Seq, last.Hash)
	}
}

// auditReader is what audit.Verify and the anchor publisher need beyond
// task.Store (audit.Scanner and audit.HeadReader); every driver has it.
type auditReader interface {
	AuditHead(ctx context.Context) (int64, string, error)
	ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
		entry func(*task.AuditEntry) error, record func(*task.Record) error) error
}

func auditReaderOf(t *testing.T, s task.Store) auditReader {
	t.Helper()
	r, ok := s.(auditReader)
	if !ok {
		t.Fatalf("%T has no AuditHead and ScanAudit", s)
	}
	return r
}

// scanned is one ScanAudit's result.
type scanned struct {
	headSeq  int64
	headHash string
	found    bool
	entries  []task.AuditEntry
	records  []task.Record
}

func scanAll(ctx context.Context, r auditReader) (scanned, error) {
	var sc scanned
	err := r.ScanAudit(ctx, func(seq int64, hash string, found bool) error {
		sc.headSeq, sc.headHash, sc.found = seq, hash, found
		return nil
	}, func(e *task.AuditEntry) error {
		sc.entries = append(sc.entries, *e)
		return nil
	}, func(rec *task.Record) error {
		sc.records = append(sc.records, *rec)
		return nil
	})
	return sc, err
}

// testAuditHeadAndScan: the head record follows every seal; ScanAudit
// reads the head, every entry as AuditEntries returns it and every record
// as Records returns it, and stops at a callback's error.
func testAuditHeadAndScan(t *testing.T, b *bundle) {
	r := auditReaderOf(t, b.s)
	if seq, hash, err := r.AuditHead(b.ctx); err != nil || seq != 0 || hash != "" {
		t.Fatalf("AuditHead of an empty store = %d, %q, %v; want 0, \"\"", seq, hash, err)
	}
	sc, err := scanAll(b.ctx, r)
	if err != nil || !sc.found || sc.headSeq != 0 || len(sc.entries) != 0 || len(sc.records) != 0 {
		t.Fatalf("ScanAudit of an empty store = %+v, %v", sc, err)
	}
	b.reach("b", task.StateSucceeded)
	b.reach("a", task.StateQueued)
	if err := b.s.AppendAudit(b.ctx, []task.AuditInput{{Kind: task.AuditPushConfig, TaskID: "a"}}); err != nil {
		t.Fatal(err)
	}
	log := b.audit()
	last := log[len(log)-1]
	if seq, hash, err := r.AuditHead(b.ctx); err != nil || seq != last.Seq || hash != last.Hash {
		t.Fatalf("AuditHead = %d, %s, %v; want %d, %s", seq, hash, err, last.Seq, last.Hash)
	}
	sc, err = scanAll(b.ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.found || sc.headSeq != last.Seq || sc.headHash != last.Hash {
		t.Errorf("ScanAudit head = %d, %s, %v; want %d, %s", sc.headSeq, sc.headHash, sc.found, last.Seq, last.Hash)
	}
	if !reflect.DeepEqual(sc.entries, log) {
		t.Errorf("ScanAudit entries:\n%s\nwant\n%s", dump(sc.entries), dump(log))
	}
	// Records in (task id, seq) order: task a's, then b's.
	want := append(b.records("a"), b.records("b")...)
	if !reflect.DeepEqual(sc.records, want) {
		t.Errorf("ScanAudit records:\n%s\nwant\n%s", dump(sc.records), dump(want))
	}
	stop := errors.New("stop")
	n := 0
	err = r.ScanAudit(b.ctx, func(int64, string, bool) error { return nil }, func(*task.AuditEntry) error {
		n++
		return stop
	}, func(*task.Record) error { t.Error("ScanAudit read records after an entry callback failed"); return nil })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("ScanAudit with a failing callback = %v after %d entries, want the callback's error after 1", err, n)
	}
}

// testAuditScanSnapshot: ScanAudit reads one snapshot while writers seal:
// its head record is its last entry, and every transition entry it sees
// has its record and the other way round.
func testAuditScanSnapshot(t *testing.T, b *bundle) {
	r := auditReaderOf(t, b.s)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < 200; i++ {
				id := fmt.Sprintf("s%d-%d", w, i)
				if _, err := b.s.CreateTask(ctx, task.CreateParams{
					Task: newTask(spec{id: id}), Steps: steps(task.StateValidated, task.StateQueued),
					Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: t0,
				}); err != nil && ctx.Err() == nil {
					t.Errorf("CreateTask(%s): %v", id, err)
					return
				}
			}
		})
	}
	for range 20 {
		sc, err := scanAll(b.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		var endSeq int64
		endHash := ""
		if n := len(sc.entries); n > 0 {
			endSeq, endHash = sc.entries[n-1].Seq, sc.entries[n-1].Hash
		}
		if sc.headSeq != endSeq || sc.headHash != endHash {
			t.Fatalf("ScanAudit head %d/%s, but its entries end at %d/%s: not one snapshot", sc.headSeq, sc.headHash, endSeq, endHash)
		}
		transitions := 0
		for _, e := range sc.entries {
			if e.Kind == task.AuditTransition {
				transitions++
			}
		}
		if transitions != len(sc.records) {
			t.Fatalf("ScanAudit saw %d transition entries and %d records: not one snapshot", transitions, len(sc.records))
		}
	}
	cancel()
	wg.Wait()
}

// --- Push configs -----------------------------------------------------------

func testPushConfig(t *testing.T, b *bundle) {
	b.create(spec{id: "t1"})
	hasConfigs := func(when string, want bool) {
		t.Helper()
		if got, err := b.s.HasPushConfigs(b.ctx); err != nil || got != want {
			t.Errorf("HasPushConfigs %s = %v, %v; want %v", when, got, err, want)
		}
	}
	hasConfigs("before any was set", false)
	c1 := task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/hook", Token: "tok", Auth: json.RawMessage(`{"schemes":["Bearer"]}`), CreatedAt: at(time.Microsecond)}
	c2 := task.PushConfig{TaskID: "t1", ID: "c2", URL: "https://example.com/other", CreatedAt: at(time.Second)}
	for _, c := range []task.PushConfig{c1, c2} {
		if err := b.s.PutPushConfig(b.ctx, c, nil); err != nil {
			t.Fatalf("PutPushConfig(%s): %v", c.ID, err)
		}
	}
	hasConfigs("with two", true)
	got, err := b.s.GetPushConfig(b.ctx, "t1", "c1")
	if err != nil || !reflect.DeepEqual(*got, c1) {
		t.Fatalf("GetPushConfig = %s, %v; want %s", dump(got), err, dump(c1))
	}
	list, err := b.s.ListPushConfigs(b.ctx, "t1")
	if err != nil {
		t.Fatalf("ListPushConfigs: %v", err)
	}
	slices.SortFunc(list, func(a, b task.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	if !reflect.DeepEqual(list, []task.PushConfig{c1, c2}) {
		t.Errorf("ListPushConfigs = %s", dump(list))
	}

	c1b := c1
	c1b.URL, c1b.Token, c1b.Auth = "https://example.com/new", "", nil
	if err := b.s.PutPushConfig(b.ctx, c1b, nil); err != nil {
		t.Fatalf("PutPushConfig(replace): %v", err)
	}
	if got, err := b.s.GetPushConfig(b.ctx, "t1", "c1"); err != nil || !reflect.DeepEqual(*got, c1b) {
		t.Errorf("after replace: GetPushConfig = %s, %v; want %s", dump(got), err, dump(c1b))
	}
	if list, err := b.s.ListPushConfigs(b.ctx, "t1"); err != nil || len(list) != 2 {
		t.Errorf("after replace: ListPushConfigs = %s, %v; want 2 configs", dump(list), err)
	}

	// Audit entries given with a change commit with it; a refused change
	// writes none.
	before := len(b.audit())
	del := task.AuditInput{Kind: task.AuditPushConfig, TaskID: "t1", Actor: "alice", Data: json.RawMessage(`{"op":"delete"}`)}
	if err := b.s.DeletePushConfig(b.ctx, "t1", "c1", []task.AuditInput{del}); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	_, err = b.s.GetPushConfig(b.ctx, "t1", "c1")
	wantErr(t, "GetPushConfig after delete", err, task.ErrNotFound)
	wantErr(t, "second DeletePushConfig", b.s.DeletePushConfig(b.ctx, "t1", "c1", []task.AuditInput{del}), task.ErrNotFound)
	set := task.AuditInput{Kind: task.AuditPushConfig, TaskID: "missing", Actor: "alice", Data: json.RawMessage(`{"op":"set"}`)}
	wantErr(t, "PutPushConfig with audit for a missing task", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "missing", ID: "c", URL: "https://x", CreatedAt: t0}, []task.AuditInput{set}), task.ErrNotFound)
	log := b.audit()
	checkChain(t, log)
	if len(log) != before+1 || log[len(log)-1].Kind != task.AuditPushConfig || string(log[len(log)-1].Data) != `{"op":"delete"}` {
		t.Fatalf("audit after push config changes: %s", dump(log[before:]))
	}
	if list, err := b.s.ListPushConfigs(b.ctx, "t1"); err != nil || len(list) != 1 || list[0].ID != "c2" {
		t.Errorf("after delete: ListPushConfigs = %s, %v; want [c2]", dump(list), err)
	}

	wantErr(t, "PutPushConfig for a missing task", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "missing", ID: "c", URL: "https://x", CreatedAt: t0}, nil), task.ErrNotFound)
	if err := b.s.DeletePushConfig(b.ctx, "t1", "c2", nil); err != nil {
		t.Fatalf("DeletePushConfig(c2): %v", err)
	}
	hasConfigs("after the last was deleted", false)
	_, err = b.s.GetPushConfig(b.ctx, "missing", "c1")
	wantErr(t, "GetPushConfig for a missing task", err, task.ErrNotFound)
	if list, err := b.s.ListPushConfigs(b.ctx, "missing"); len(list) != 0 || (err != nil && !errors.Is(err, task.ErrNotFound)) {
		t.Errorf("ListPushConfigs for a missing task = %v, %v; want none", list, err)
	}
}

// testPushBacklog: a new config is owed nothing; a config whose task moves
// on is in the backlog (unless the task changed too recently) until it is
// marked delivered at the task's seq; marks never go back; replacing a
// config makes it current again; pages follow (task id, id).
func testPushBacklog(t *testing.T, b *bundle) {
	backlog := func(before time.Time, afterTask, afterID string, limit int) []task.PushBacklogItem {
		t.Helper()
		got, err := b.s.PushBacklog(b.ctx, task.PushBacklogParams{UpdatedBefore: before, AfterTaskID: afterTask, AfterID: afterID, Limit: limit})
		if err != nil {
			t.Fatalf("PushBacklog: %v", err)
		}
		return got
	}
	mark := func(taskID, id string, seq int) {
		t.Helper()
		if err := b.s.MarkPushDelivered(b.ctx, task.MarkPushParams{TaskID: taskID, ID: id, Seq: seq}); err != nil {
			t.Fatalf("MarkPushDelivered(%s/%s, %d): %v", taskID, id, seq, err)
		}
	}
	later := at(time.Hour)
	queued := b.queued("t1", t0)
	c1 := task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/hook", Token: "tok", Auth: json.RawMessage(`{"scheme":"Bearer"}`), CreatedAt: at(time.Microsecond)}
	if err := b.s.PutPushConfig(b.ctx, c1, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Fatalf("a new config is owed nothing; backlog = %s", dump(got))
	}
	running := b.claim("t1", "w", at(time.Minute), time.Minute)
	if running.Seq <= queued.Seq {
		t.Fatalf("claim did not advance the seq: %d → %d", queued.Seq, running.Seq)
	}
	got := backlog(later, "", "", 10)
	want := []task.PushBacklogItem{{Config: c1, DeliveredSeq: queued.Seq, TaskSeq: running.Seq}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backlog = %s, want %s", dump(got), dump(want))
	}
	if got := backlog(at(time.Minute), "", "", 10); len(got) != 0 {
		t.Errorf("a task updated at UpdatedBefore is left out; backlog = %s", dump(got))
	}
	mark("t1", "c1", running.Seq)
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Errorf("after marking: backlog = %s", dump(got))
	}
	mark("t1", "c1", queued.Seq) // never goes back
	mark("t1", "gone", 99)       // a deleted config is no error
	mark("missing", "c1", 99)
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Errorf("a lower mark went back: backlog = %s", dump(got))
	}

	done := b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(2 * time.Minute)})
	b.queued("t2", t0)
	for _, id := range []string{"b", "a"} {
		if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t2", ID: id, URL: "https://example.com/" + id, CreatedAt: t0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	b.claim("t2", "w", at(time.Minute), time.Minute)
	var pages [][2]string
	after := [2]string{}
	for {
		page := backlog(later, after[0], after[1], 1)
		if len(page) == 0 {
			break
		}
		if len(page) != 1 || len(pages) > 5 {
			t.Fatalf("page = %s", dump(page))
		}
		after = [2]string{page[0].Config.TaskID, page[0].Config.ID}
		pages = append(pages, after)
	}
	if want := [][2]string{{"t1", "c1"}, {"t2", "a"}, {"t2", "b"}}; !reflect.DeepEqual(pages, want) {
		t.Errorf("pages = %v, want %v", pages, want)
	}

	// Replacing a config makes it current: it is owed the task's changes
	// from then on.
	if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/new", CreatedAt: at(3 * time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 10); len(got) != 2 || got[0].Config.TaskID != "t2" {
		t.Errorf("after replacing t1/c1 (task at seq %d): backlog = %s", done.Seq, dump(got))
	}

	// An owed config (one sent with a message) is owed the task's latest
	// state at once, even of a task that is finished, until it is marked;
	// so is one that replaces a config as owed.
	owed := task.PushConfig{TaskID: "t1", ID: "o", URL: "https://example.com/owed", CreatedAt: at(4 * time.Minute), Owed: true}
	if err := b.s.PutPushConfig(b.ctx, owed, nil); err != nil {
		t.Fatal(err)
	}
	owed.Owed = false // not stored
	got = backlog(later, "t1", "c1", 1)
	if want := []task.PushBacklogItem{{Config: owed, DeliveredSeq: 0, TaskSeq: done.Seq}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("an owed config of a finished task: backlog = %s, want %s", dump(got), dump(want))
	}
	mark("t1", "o", done.Seq)
	for _, it := range backlog(later, "", "", 10) {
		if it.Config.TaskID == "t1" && it.Config.ID == "o" {
			t.Errorf("after marking the owed config it is still owed: %s", dump(it))
		}
	}
	if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/c1", CreatedAt: at(5 * time.Minute), Owed: true}, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 1); len(got) != 1 || got[0].Config.ID != "c1" || got[0].DeliveredSeq != 0 {
		t.Errorf("after replacing t1/c1 as owed: backlog = %s", dump(got))
	}
}

// --- Times ------------------------------------------------------------------

// testTimes checks that every stored time comes back exactly, location
// included (== on time.Time, not Equal).
func testTimes(t *testing.T, b *bundle) {
	created := time.Date(2031, 12, 31, 23, 59, 59, 999999000, time.UTC)
	runAfter := time.Date(1969, 7, 20, 20, 17, 40, 1000, time.UTC) // before the Unix epoch
	in := newTask(spec{id: "t1"})
	in.RunAfter = runAfter
	in.Envelope.CreatedAt = created.Add(-time.Microsecond)
	if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: created}); err != nil {
		t.Fatal(err)
	}
	claimNow := created.Add(7 * time.Microsecond)
	b.claim("t1", "w", claimNow, 1500*time.Millisecond+3*time.Microsecond)
	tk := b.get("t1")
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", tk.CreatedAt, created},
		{"UpdatedAt", tk.UpdatedAt, claimNow},
		{"RunAfter", tk.RunAfter, runAfter},
		{"LeaseExpires", tk.LeaseExpires, claimNow.Add(1500*time.Millisecond + 3*time.Microsecond)},
		{"Envelope.CreatedAt", tk.Envelope.CreatedAt, in.Envelope.CreatedAt},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	recs := b.records("t1")
	if recs[0].At != created || recs[len(recs)-1].At != claimNow {
		t.Errorf("record times %v … %v, want %v … %v", recs[0].At, recs[len(recs)-1].At, created, claimNow)
	}
	log := b.audit()
	if log[0].At != created || log[len(log)-1].At != claimNow {
		t.Errorf("audit times %v … %v, want %v … %v", log[0].At, log[len(log)-1].At, created, claimNow)
	}
	checkChain(t, log)
	pc := task.PushConfig{TaskID: "t1", ID: "c", URL: "https://x", CreatedAt: created.Add(11 * time.Microsecond)}
	if err := b.s.PutPushConfig(b.ctx, pc, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := b.s.GetPushConfig(b.ctx, "t1", "c"); err != nil || got.CreatedAt != pc.CreatedAt {
		t.Errorf("PushConfig.CreatedAt = %v, %v; want %v", got, err, pc.CreatedAt)
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{UpdatedAfter: claimNow})
	if err != nil || len(page.Tasks) != 1 {
		t.Errorf("ListTasks(UpdatedAfter = UpdatedAt) = %v, %v; want the task", page, err)
	}
	page, err = b.s.ListTasks(b.ctx, task.ListParams{UpdatedAfter: claimNow.Add(time.Microsecond)})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("ListTasks(UpdatedAfter = UpdatedAt+1µs) = %v, %v; want none", page, err)
	}
}

// testCreateClaim: CreateParams.Claim claims the new task in the same
// transaction, exactly as Claim would; a task the steps leave elsewhere is
// not claimed, and a claimed task is not claimed again.
func testCreateClaim(t *testing.T, b *bundle) {
	claim := &task.ClaimParams{Owner: "n1/1", Node: "n1", LeaseFor: time.Minute}
	in := newTask(spec{id: "c1"})
	in.History = []task.Message{in.Envelope.Input}
	got, err := b.s.CreateTask(b.ctx, task.CreateParams{
		Task: in, Now: t0, Node: "n1", Claim: claim,
		Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
	})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if got.State != task.StateInProgress || got.Attempt != 1 || got.LeaseOwner != "n1/1" ||
		!got.LeaseExpires.Equal(t0.Add(time.Minute)) || got.Seq != 3 {
		t.Fatalf("CreateTask with Claim returned %s", dump(got))
	}
	if stored := b.get("c1"); stored.State != task.StateInProgress || stored.Attempt != 1 || stored.LeaseOwner != "n1/1" {
		t.Fatalf("stored %s", dump(stored))
	}
	recs := b.records("c1")
	if len(recs) != 3 || recs[2].From != task.StateQueued || recs[2].To != task.StateInProgress || recs[2].Attempt != 1 || recs[2].Node != "n1" {
		t.Fatalf("records %s", dump(recs))
	}
	checkChain(t, b.audit())
	if again, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "n2/1", Now: t0.Add(time.Hour), LeaseFor: time.Minute, Limit: 10}); err != nil || len(again) != 0 {
		t.Fatalf("Claim after a claimed create = %d tasks, %v", len(again), err)
	}
	// A rejected task is not claimed.
	rej := newTask(spec{id: "c2"})
	got, err = b.s.CreateTask(b.ctx, task.CreateParams{
		Task: rej, Now: t0, Claim: claim,
		Steps: []task.Step{{To: task.StateFailed, Rejected: true, ErrorCode: task.CodeForbidden}},
	})
	if err != nil || got.State != task.StateFailed || got.Attempt != 0 || got.LeaseOwner != "" {
		t.Fatalf("rejected create with Claim: %s, %v", dump(got), err)
	}
}

// testListRejected: the Rejected filter tells refused tasks from failed ones
// in the store, so pages and TotalSize are exact.
func testListRejected(t *testing.T, b *bundle) {
	for i, id := range []string{"r1", "f1", "r2", "q1"} {
		in := newTask(spec{id: id})
		steps := []task.Step{{To: task.StateValidated}, {To: task.StateQueued}}
		switch id[0] {
		case 'r':
			steps = []task.Step{{To: task.StateFailed, Rejected: true, ErrorCode: task.CodeForbidden}}
		case 'f':
			steps = []task.Step{{To: task.StateValidated}, {To: task.StateFailed, ErrorCode: task.CodePolicyDenied}}
		}
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps, Now: at(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	for _, tc := range []struct {
		p    task.ListParams
		want []string
	}{
		{task.ListParams{Rejected: &yes}, []string{"r2", "r1"}},
		{task.ListParams{Rejected: &no, States: []task.State{task.StateFailed}}, []string{"f1"}},
		{task.ListParams{Rejected: &no}, []string{"q1", "f1"}},
		{task.ListParams{Rejected: &yes, PageSize: 1}, []string{"r2"}},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tk := range page.Tasks {
			got = append(got, tk.ID)
		}
		wantTotal := 2
		if tc.p.States != nil {
			wantTotal = 1
		}
		if !slices.Equal(got, tc.want) || page.TotalSize != wantTotal {
			t.Errorf("ListTasks(rejected=%v states=%v size=%d) = %v total %d; want %v total %d", *tc.p.Rejected, tc.p.States, tc.p.PageSize, got, page.TotalSize, tc.want, wantTotal)
		}
	}
}

// testIdempotencyPurge: purging forgets expired keys only; the tasks stay,
// and a key that is still live keeps deduplicating.
func testIdempotencyPurge(t *testing.T, b *bundle) {
	for i, id := range []string{"p1", "p2"} {
		in := newTask(spec{id: id, key: "k-" + id})
		ttl := time.Minute * time.Duration(i+1) // p1 expires at t0+1m, p2 at t0+2m
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated), Now: t0, IdempotencyTTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.s.PurgeIdempotencyKeys(b.ctx, at(90*time.Second))
	if err != nil || n != 1 {
		t.Fatalf("PurgeIdempotencyKeys = %d, %v; want 1", n, err)
	}
	if got := b.get("p1"); got.ID != "p1" {
		t.Fatalf("purging a key removed its task")
	}
	// p2's key is live: a duplicate is still refused.
	_, err = b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "p3", key: "k-p2"}), Steps: steps(task.StateValidated), Now: at(100 * time.Second), IdempotencyTTL: time.Minute})
	wantErr(t, "duplicate of a live key after a purge", err, task.ErrDuplicate)
	if n, err := b.s.PurgeIdempotencyKeys(b.ctx, at(90*time.Second)); err != nil || n != 0 {
		t.Fatalf("second purge = %d, %v; want 0", n, err)
	}
}
