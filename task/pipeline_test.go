package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// trace records what the pipeline's steps and the runner did, in order.
type trace struct {
	mu  sync.Mutex
	log []string
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.log = append(tr.log, s)
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.log)
}

// traced is a step that logs before and after next and adds one piece of
// evidence on the way out.
func traced(tr *trace, name string) task.Middleware {
	return task.MiddlewareFunc(name, func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		tr.add(name + ":before")
		res, err := next(ctx)
		tr.add(name + ":after")
		a.AddEvidence(task.Evidence{Kind: task.EvidenceVerdict, Outcome: "pass", Message: "checked by " + name, Duration: time.Millisecond})
		return res, err
	})
}

func endRecord(t *testing.T, b *bundle, id string) task.Record {
	t.Helper()
	recs, err := b.coord.Timeline(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return recs[len(recs)-1]
}

func evidenceSteps(ev []task.Evidence) []string {
	var out []string
	for _, e := range ev {
		out = append(out, e.Step+"/"+e.Outcome)
	}
	return out
}

// TestPipelineOrder: the built-in steps, then the global steps in option
// order, then the agent's own, then the runner; the first step is the
// outermost. Evidence is recorded on the record ending the attempt in the
// order it was added, each piece named after the step that added it.
func TestPipelineOrder(t *testing.T) {
	t.Parallel()
	tr := &trace{}
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		tr.add("run")
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("ok")}}}}, nil
	})
	b := setup(t, task.Options{
		Agents: []task.AgentSpec{{Name: "echo", Runner: runner, Sensitive: true,
			Middleware: []task.Middleware{traced(tr, "a1"), traced(tr, "a2")}}},
		Middleware: []task.Middleware{traced(tr, "g1"), traced(tr, "g2")},
		Policy: task.PolicyFunc(func(ctx context.Context, in task.PolicyInput) (task.Decision, error) {
			tr.add("policy:" + string(in.Stage))
			return task.Decision{Allow: true, Version: "v7", Reason: "approved"}, nil
		}),
	})
	env := envelope("echo", "alice", "x")
	env.PolicyRef, env.ApprovalRef = "p", "a"
	// SubmitAndWait listens before the task exists, so it answers with the
	// task the Coordinator published at the attempt's end.
	res, err := b.coord.SubmitAndWait(context.Background(), task.SubmitRequest{Envelope: env})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Task
	if got.State != task.StateSucceeded {
		t.Fatalf("task %s: %s", got.State, got.Reason)
	}
	want := []string{"policy:submit", "policy:execute", "g1:before", "g2:before", "a1:before", "a2:before", "run",
		"a2:after", "a1:after", "g2:after", "g1:after"}
	if l := tr.get(); !slices.Equal(l, want) {
		t.Fatalf("order\n got %v\nwant %v", l, want)
	}
	rec := endRecord(t, b, got.ID)
	if rec.To != task.StateSucceeded || rec.PolicyVersion != "v7" {
		t.Fatalf("end record %+v", rec)
	}
	wantEv := []string{"policy/allow", "a2/pass", "a1/pass", "g2/pass", "g1/pass"}
	if s := evidenceSteps(rec.Evidence); !slices.Equal(s, wantEv) {
		t.Fatalf("evidence %v, want %v", s, wantEv)
	}
	if e := rec.Evidence[1]; e.Kind != task.EvidenceVerdict || e.Message != "checked by a2" || e.Duration != time.Millisecond {
		t.Fatalf("evidence as stored: %+v", e)
	}
	// The task the Coordinator published at the attempt's end carries the
	// same evidence, so transports need not read the record back.
	if s := evidenceSteps(got.LastEvidence); !slices.Equal(s, wantEv) {
		t.Fatalf("published task's LastEvidence %v, want %v", s, wantEv)
	}
	// Only the record ending the attempt carries evidence.
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	for _, r := range recs[:len(recs)-1] {
		if len(r.Evidence) > 0 {
			t.Fatalf("record %d (%s → %s) has evidence %v", r.Seq, r.From, r.To, r.Evidence)
		}
	}
	verifyAudit(t, b)
	// The evidence is inside the transition's audit entry: the hash chain
	// covers it.
	entries, err := b.store.AuditEntries(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.TaskID == got.ID && e.Kind == task.AuditTransition && strings.Contains(string(e.Data), `"checked by g1"`) {
			var r task.Record
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			found = r.To == task.StateSucceeded && len(r.Evidence) == len(wantEv)
		}
	}
	if !found {
		t.Fatal("no audit entry of the succeeded transition carries the evidence")
	}
}

// TestPipelineStepsShapeTheOutcome: a step may answer instead of the
// runner, change what the runner returned, or fail the attempt with an
// ordinary (retried) or permanent error; what it recorded is kept on the
// record of each outcome.
func TestPipelineStepsShapeTheOutcome(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	mode := map[string]func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error){
		"answer": func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceDecision, Outcome: "cached"})
			return &task.Result{Reason: "answered from cache", Artifacts: []task.Artifact{{ID: "cache", Parts: []task.Part{task.TextPart("cached")}}}}, nil
		},
		"change": func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
			a.Request.Message.Parts = []task.Part{task.TextPart("rewritten")}
			res, err := next(ctx)
			if err != nil {
				return nil, err
			}
			res.Artifacts = append(res.Artifacts, task.Artifact{ID: "verdict", Parts: []task.Part{task.TextPart("pass")}})
			return res, nil
		},
		"retry": func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceVerdict, Outcome: "fail"})
			if a.Number() < 2 {
				return nil, errors.New("flaky check")
			}
			return next(ctx)
		},
		"refuse": func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceVerdict, Outcome: "fail", Message: "input lacks a title"})
			return nil, task.Refuse("pre-gate: input lacks a title")
		},
	}
	var agents []task.AgentSpec
	for name, fn := range mode {
		agents = append(agents, task.AgentSpec{Name: name, Runner: echoRunner(&calls),
			Retry:      task.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond},
			Middleware: []task.Middleware{task.MiddlewareFunc("check", fn)}})
	}
	b := setup(t, task.Options{Agents: agents})
	run := func(agent string) *task.Task {
		res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope(agent, "alice", "original")})
		if err != nil {
			t.Fatal(err)
		}
		return wait(t, b, res.Task.ID)
	}

	got := run("answer")
	if got.State != task.StateSucceeded || got.Reason != "answered from cache" || len(got.Artifacts) != 1 || got.Artifacts[0].ID != "cache" || calls.Load() != 0 {
		t.Fatalf("answer: %+v (runner called %d times)", got, calls.Load())
	}
	if ev := endRecord(t, b, got.ID).Evidence; len(ev) != 1 || ev[0].Step != "check" || ev[0].Outcome != "cached" {
		t.Fatalf("answer evidence %+v", ev)
	}

	got = run("change")
	if got.State != task.StateSucceeded || len(got.Artifacts) != 2 || got.Artifacts[1].ID != "verdict" {
		t.Fatalf("change: %+v", got)
	}
	if txt := partsText(got.Artifacts[0].Parts); txt != "rewritten" {
		t.Fatalf("the runner saw %q, not the request the step rewrote", txt)
	}

	got = run("retry")
	if got.State != task.StateSucceeded || got.TurnAttempt() != 2 {
		t.Fatalf("retry: %s after attempt %d", got.State, got.TurnAttempt())
	}
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	var ends []string
	for _, r := range recs {
		if r.From == task.StateInProgress {
			ends = append(ends, string(r.To)+":"+strings.Join(evidenceSteps(r.Evidence), ","))
		}
	}
	if want := []string{"queued:check/fail", "succeeded:check/fail"}; !slices.Equal(ends, want) {
		t.Fatalf("attempt ends %v, want %v", ends, want)
	}

	n := calls.Load()
	got = run("refuse")
	if got.State != task.StateFailed || got.ErrorCode != task.CodeGateBlocked || got.Reason != "pre-gate: input lacks a title" || calls.Load() != n {
		t.Fatalf("refuse: %+v", got)
	}
	if ev := endRecord(t, b, got.ID).Evidence; len(ev) != 1 || ev[0].Message != "input lacks a title" {
		t.Fatalf("refuse evidence %+v", ev)
	}
	verifyAudit(t, b)
}

func partsText(parts []task.Part) string {
	var s []string
	for _, p := range parts {
		s = append(s, p.Text)
	}
	return strings.Join(s, "")
}

// failEndOnce makes the first transition that ends an attempt fail without
// writing anything, as a crash between the attempt and its record would.
type failEndOnce struct {
	task.Store
	done atomic.Bool
}

func (s *failEndOnce) Transition(ctx context.Context, p task.TransitionParams) (*task.Task, error) {
	if p.From == task.StateInProgress && !s.done.Swap(true) {
		return nil, errors.New("disk unplugged")
	}
	return s.Store.Transition(ctx, p)
}

// TestEvidenceOnlyWithItsTransition: evidence is part of the transition
// that ends the attempt, so an end that was never written leaves no
// evidence behind, and the attempt that runs after the lease expires
// records its own evidence only.
func TestEvidenceOnlyWithItsTransition(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	step := task.MiddlewareFunc("count", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		a.AddEvidence(task.Evidence{Kind: task.EvidenceTiming, Message: "run " + string(rune('0'+n.Add(1)))})
		return next(ctx)
	})
	var calls atomic.Int64
	b := setupWrapped(t, task.Options{
		Agents:   []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls), Middleware: []task.Middleware{step}}},
		LeaseFor: 300 * time.Millisecond,
	}, func(s task.Store) task.Store { return &failEndOnce{Store: s} })
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "alice", "x")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded {
		t.Fatalf("task %s: %s", got.State, got.Reason)
	}
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	var withEvidence []string
	for _, r := range recs {
		for _, e := range r.Evidence {
			withEvidence = append(withEvidence, string(r.To)+":"+e.Message)
		}
	}
	// Attempt 1's end was lost with its evidence; the reaper requeued the
	// task (no evidence: no attempt ended there) and attempt 2 recorded
	// its own.
	if want := []string{"succeeded:run 2"}; !slices.Equal(withEvidence, want) {
		t.Fatalf("evidence on records %v, want %v (records %+v)", withEvidence, want, recs)
	}
	verifyAudit(t, b)
}

// TestFeedbackReachesTheNextAttempt: a step's retried failure with
// feedback adds a user turn that the next attempt gets as its message;
// a failure that is not retried adds nothing.
func TestFeedbackReachesTheNextAttempt(t *testing.T) {
	t.Parallel()
	var seen trace
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		seen.add(req.Message.Text() + fmt.Sprintf("|%d", len(req.History)))
		return &task.Result{Artifacts: []task.Artifact{{Parts: req.Message.Parts}}}, nil
	})
	check := func(permanent bool) task.Middleware {
		return task.MiddlewareFunc("check", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
			res, err := next(ctx)
			if err != nil || a.Number() > 1 {
				return res, err
			}
			var fail error = errors.New("no title")
			if permanent {
				fail = task.Permanent(fail)
			}
			return nil, task.WithFeedback(fail, text("add a title"))
		})
	}
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "retry", Runner: runner, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}, Middleware: []task.Middleware{check(false)}},
		{Name: "final", Runner: runner, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}, Middleware: []task.Middleware{check(true)}},
	}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("retry", "alice", "write it")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := b.coord.Get(context.Background(), wait(t, b, res.Task.ID).ID, -1)
	if got.State != task.StateSucceeded || len(got.History) != 2 || got.History[1].Role != task.RoleUser || got.History[1].Text() != "add a title" {
		t.Fatalf("retried task %s, history %+v", got.State, got.History)
	}
	if l := seen.get(); !slices.Equal(l, []string{"write it|1", "add a title|2"}) {
		t.Fatalf("attempts saw %v", l)
	}
	res, err = b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("final", "alice", "write it")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = b.coord.Get(context.Background(), wait(t, b, res.Task.ID).ID, -1)
	if got.State != task.StateFailed || len(got.History) != 1 {
		t.Fatalf("permanent failure: %s, history %+v", got.State, got.History)
	}
}

// TestAnswerFeedbackReachesTheNextAttempt: a retried failure with the
// rejected answer and feedback adds the answer as an agent turn and then
// the feedback as a user turn; the next attempt's message is the
// feedback and its history the whole conversation.
func TestAnswerFeedbackReachesTheNextAttempt(t *testing.T) {
	t.Parallel()
	var seen trace
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		var roles []string
		for _, m := range req.History {
			roles = append(roles, string(m.Role)+":"+m.Text())
		}
		seen.add(req.Message.Text() + "|" + strings.Join(roles, ","))
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart(fmt.Sprintf("draft %d", req.Attempt))}}}}, nil
	})
	check := task.MiddlewareFunc("check", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		res, err := next(ctx)
		if err != nil || a.Number() > 1 {
			return res, err
		}
		ans := task.Message{Role: task.RoleUser, Parts: res.Artifacts[0].Parts} // the role is the coordinator's to set
		return nil, task.WithAnswerFeedback(errors.New("no title"), ans, text("add a title"))
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "retry", Runner: runner, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}, Middleware: []task.Middleware{check}},
	}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("retry", "alice", "write it")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := b.coord.Get(context.Background(), wait(t, b, res.Task.ID).ID, -1)
	if got.State != task.StateSucceeded || len(got.History) < 3 ||
		got.History[1].Role != task.RoleAgent || got.History[1].Text() != "draft 1" ||
		got.History[2].Role != task.RoleUser || got.History[2].Text() != "add a title" {
		t.Fatalf("retried task %s, history %+v", got.State, got.History)
	}
	if l := seen.get(); !slices.Equal(l, []string{"write it|user:write it", "add a title|user:write it,agent:draft 1,user:add a title"}) {
		t.Fatalf("attempts saw %q", l)
	}
}
