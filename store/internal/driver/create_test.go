package driver_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

func TestPlanCreate(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 3, 4, 5, 6, 7, 123456789, loc)
	stored := now.UTC().Truncate(time.Microsecond)
	in := &task.Task{ID: "t1", ContextID: "c", Agent: "echo", MaxAttempts: 3, Envelope: task.Envelope{
		TaskID: "t1", Actor: "alice", IdempotencyKey: "k",
		Input: task.Message{ID: "m", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
	}}
	in.History = []task.Message{in.Envelope.Input}
	submitted := task.AuditInput{Kind: task.AuditSubmitted, TaskID: "t1", Actor: "alice"}
	policy := task.AuditInput{Kind: task.AuditPolicy, TaskID: "t1", Data: json.RawMessage(`{"ok":true}`)}
	plan, err := driver.PlanCreate(task.CreateParams{
		Task:  in,
		Steps: []task.Step{{To: task.StateValidated, Audit: []task.AuditInput{policy}}, {To: task.StateQueued}},
		Audit: []task.AuditInput{submitted}, Node: "n1", Now: now, IdempotencyTTL: time.Hour,
		Claim: &task.ClaimParams{Owner: "w", Node: "n2", LeaseFor: time.Minute},
	})
	if err != nil {
		t.Fatalf("PlanCreate: %v", err)
	}
	tk := plan.Task
	if tk.State != task.StateInProgress || tk.Attempt != 1 || tk.Seq != 3 || tk.LeaseOwner != "w" ||
		tk.LeaseExpires != stored.Add(time.Minute) || tk.CreatedAt != stored || tk.UpdatedAt != stored || tk.History != nil {
		t.Errorf("planned task = %+v", tk)
	}
	if plan.Now != stored || !plan.Idempotent || plan.Actor != "alice" || plan.Key != "k" || plan.KeyExpires != stored.Add(time.Hour) {
		t.Errorf("plan = now %v, idempotent %v, (%q, %q) until %v", plan.Now, plan.Idempotent, plan.Actor, plan.Key, plan.KeyExpires)
	}
	var moves []string
	for _, r := range plan.Writes.Records {
		moves = append(moves, string(r.From)+">"+string(r.To))
		if r.At != stored {
			t.Errorf("record %d at %v, want %v", r.Seq, r.At, stored)
		}
	}
	if want := []string{"requested>validated", "validated>queued", "queued>in_progress"}; !reflect.DeepEqual(moves, want) {
		t.Errorf("records = %v, want %v", moves, want)
	}
	var kinds []task.AuditKind
	for _, a := range plan.Writes.Audit {
		kinds = append(kinds, a.Kind)
	}
	if want := []task.AuditKind{task.AuditSubmitted, task.AuditPolicy, task.AuditTransition, task.AuditTransition, task.AuditTransition}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("audit kinds = %v, want %v (p.Audit, then each step's audit before its own entry)", kinds, want)
	}
	var env task.Envelope
	if err := json.Unmarshal([]byte(plan.Envelope), &env); err != nil || env.TaskID != "t1" || env.IdempotencyKey != "k" {
		t.Errorf("Envelope = %s, %v", plan.Envelope, err)
	}
	if len(plan.History) != 1 || !strings.Contains(plan.History[0], `"hi"`) {
		t.Errorf("History = %q", plan.History)
	}

	// A claim is ignored when the steps leave the task elsewhere; no TTL
	// means no key.
	plan, err = driver.PlanCreate(task.CreateParams{Task: in, Steps: []task.Step{{To: task.StateCanceled}}, Now: now,
		Claim: &task.ClaimParams{Owner: "w", LeaseFor: time.Minute}})
	if err != nil || plan.Task.State != task.StateCanceled || plan.Task.Attempt != 0 || len(plan.Writes.Records) != 1 || plan.Idempotent {
		t.Errorf("PlanCreate to canceled with a claim = %+v, %v", plan, err)
	}
}

// TestPlanCreateFaults: every malformed input is refused, and the fault
// reported is the first in input order, whatever comes after it.
func TestPlanCreateFaults(t *testing.T) {
	now := time.Now()
	bad := []task.AuditInput{{Kind: "k", Data: json.RawMessage("{")}}
	tk := func() *task.Task { return &task.Task{ID: "t1"} }
	for _, tc := range []struct {
		name string
		p    task.CreateParams
		code task.Code
		msg  string
	}{
		{"nil task", task.CreateParams{Now: now}, task.CodeInvalidArgument, "CreateParams.Task with an ID"},
		{"no id", task.CreateParams{Task: &task.Task{}, Now: now}, task.CodeInvalidArgument, "CreateParams.Task with an ID"},
		{"zero now", task.CreateParams{Task: tk()}, task.CodeInvalidArgument, "Now is zero"},
		{"bad audit", task.CreateParams{Task: tk(), Now: now, Audit: bad}, task.CodeInvalidArgument, "not valid JSON"},
		{"bad step audit", task.CreateParams{Task: tk(), Now: now, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued, Audit: bad}}},
			task.CodeInvalidArgument, "step 1: audit entry"},
		{"rejected not failed", task.CreateParams{Task: tk(), Now: now, Steps: []task.Step{{To: task.StateValidated, Rejected: true}}},
			task.CodeInvalidArgument, "step 0: Rejected"},
		{"illegal step", task.CreateParams{Task: tk(), Now: now, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateSucceeded}}},
			task.CodeIllegalTransition, "step 1"},
		{"claim without owner", task.CreateParams{Task: tk(), Now: now, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Claim: &task.ClaimParams{LeaseFor: time.Second}}, task.CodeInvalidArgument, "Claim needs an Owner"},
		// The drift this planner ended: a driver that checked audit data
		// once, after the steps, reported the later illegal step instead.
		{"bad audit before an illegal step", task.CreateParams{Task: tk(), Now: now, Audit: bad, Steps: []task.Step{{To: task.StateSucceeded}}},
			task.CodeInvalidArgument, "not valid JSON"},
		{"bad step audit before an illegal step", task.CreateParams{Task: tk(), Now: now,
			Steps: []task.Step{{To: task.StateValidated, Audit: bad}, {To: task.StateSucceeded}}}, task.CodeInvalidArgument, "step 0: audit entry"},
		{"illegal step before a bad step audit", task.CreateParams{Task: tk(), Now: now,
			Steps: []task.Step{{To: task.StateSucceeded}, {To: task.StateFailed, Audit: bad}}}, task.CodeIllegalTransition, "step 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := driver.PlanCreate(tc.p)
			if plan != nil || task.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("PlanCreate = %v, %v (code %q); want code %q and %q in the message", plan, err, task.ErrorCode(err), tc.code, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "create task") {
				t.Errorf("error %q does not start with \"create task\"", err)
			}
			if illegal := errors.Is(err, task.ErrIllegalTransition); illegal != (tc.code == task.CodeIllegalTransition) {
				t.Errorf("errors.Is(%v, ErrIllegalTransition) = %v", err, illegal)
			}
		})
	}
}
