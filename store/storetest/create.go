package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

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
	in.Envelope.ReplayOf = "t0" // a replay's link to the task it replays
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

// testCreateFirstFault: a create with several faults is refused for the
// first in input order (p.Audit, then each step's audit data, Rejected and
// transition), the same on every driver: audit data that is not JSON
// before an illegal step is invalid_argument, not an illegal transition.
func testCreateFirstFault(t *testing.T, b *bundle) {
	bad := []task.AuditInput{{Kind: "custom", Data: json.RawMessage(`{not json`)}}
	for name, p := range map[string]task.CreateParams{
		"create audit": {Task: newTask(spec{id: "t1"}), Audit: bad, Steps: steps(task.StateSucceeded), Now: t0},
		"step 0 audit": {Task: newTask(spec{id: "t1"}), Now: t0,
			Steps: []task.Step{{To: task.StateValidated, Audit: bad}, {To: task.StateSucceeded}}},
	} {
		_, err := b.s.CreateTask(b.ctx, p)
		if task.ErrorCode(err) != task.CodeInvalidArgument || errors.Is(err, task.ErrIllegalTransition) {
			t.Errorf("CreateTask with bad %s data, then an illegal step: err = %v (code %q), want invalid_argument",
				name, err, task.ErrorCode(err))
		}
	}
	_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Now: t0,
		Steps: []task.Step{{To: task.StateSucceeded}, {To: task.StateFailed, Audit: bad}}})
	wantErr(t, "CreateTask with an illegal step, then bad audit data", err, task.ErrIllegalTransition)
	_, err = b.s.GetTask(b.ctx, "t1", -1)
	wantErr(t, "GetTask after refused creates", err, task.ErrNotFound)
	if log := b.audit(); len(log) != 0 {
		t.Errorf("audit log has %d entries after refused creates", len(log))
	}
}
