package task_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestSubmitValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}})
	ctx := context.Background()
	cases := []struct {
		name string
		req  task.SubmitRequest
		code task.Code
	}{
		{"unknown action", task.SubmitRequest{Envelope: envelope("nope", "a", "x")}, task.CodeNotFound},
		{"unknown agent", task.SubmitRequest{Agent: "nope", Envelope: envelope("", "a", "x")}, task.CodeNotFound},
		{"agent and action disagree", task.SubmitRequest{Agent: "echo", Envelope: envelope("other", "a", "x")}, task.CodeInvalidArgument},
		{"no actor", task.SubmitRequest{Envelope: envelope("echo", "", "x")}, task.CodeInvalidArgument},
		{"no parts", task.SubmitRequest{Envelope: task.Envelope{Action: "echo", Actor: "a", Input: task.Message{ID: "m"}}}, task.CodeInvalidArgument},
		{"bad data part", task.SubmitRequest{Envelope: task.Envelope{Action: "echo", Actor: "a", Input: task.Message{ID: "m", Parts: []task.Part{{Kind: task.PartData, Data: []byte("{")}}}}}, task.CodeInvalidArgument},
		{"unknown part kind", task.SubmitRequest{Envelope: task.Envelope{Action: "echo", Actor: "a", Input: task.Message{ID: "m", Parts: []task.Part{{Kind: "video"}}}}}, task.CodeInvalidArgument},
	}
	for _, c := range cases {
		if _, err := b.coord.Submit(ctx, c.req); task.ErrorCode(err) != c.code {
			t.Errorf("%s: err %v, want code %s", c.name, err, c.code)
		}
	}
	page, err := b.coord.List(ctx, task.ListParams{})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("invalid submits stored tasks: %+v, %v", page, err)
	}
}

func TestConcurrentDuplicateSubmitsRunOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}}})
	env := envelope("echo", "alice", "once")
	env.IdempotencyKey = "key-1"
	const n = 100
	var wg sync.WaitGroup
	results := make([]*task.SubmitResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := env
			e.Input.ID = task.NewID() // a different message id, the same key
			results[i], errs[i] = b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: e})
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("submit %d: %v", i, errs[i])
		}
		ids[results[i].Task.ID] = true
		if !results[i].Duplicate {
			created++
		}
	}
	if len(ids) != 1 || created != 1 {
		t.Fatalf("%d task ids, %d created; want 1 and 1", len(ids), created)
	}
	for id := range ids {
		wait(t, b, id)
	}
	if calls.Load() != 1 {
		t.Fatalf("agent ran %d times, want 1", calls.Load())
	}
	// The same key with another payload is a conflict and stores nothing.
	other := env
	other.Input = text("something else")
	if _, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: other}); task.ErrorCode(err) != task.CodeConflict {
		t.Fatalf("different payload: %v, want conflict", err)
	}
	// Another actor may use the same key.
	mine := env
	mine.Actor = "bob"
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: mine})
	if err != nil || res.Duplicate || ids[res.Task.ID] {
		t.Fatalf("other actor: %+v, %v", res, err)
	}
}

func TestSensitiveActionsAndPermissions(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var revoked atomic.Bool
	engine := task.PolicyFunc(func(ctx context.Context, in task.PolicyInput) (task.Decision, error) {
		if in.Envelope.ApprovalRef == "APR-1" && !(in.Stage == task.StageExecute && revoked.Load()) {
			return task.Decision{Allow: true, Version: "p7"}, nil
		}
		return task.Decision{Reason: "approval " + in.Envelope.ApprovalRef + " not valid", Version: "p7"}, nil
	})
	b := setup(t, task.Options{
		Agents:      []task.AgentSpec{{Name: "deploy", Runner: echoRunner(&calls), Sensitive: true}, {Name: "echo", Runner: echoRunner(&calls)}},
		Permissions: task.Permissions{"alice": {"*"}, "bob": {"echo"}},
		Policy:      engine,
	})
	ctx := context.Background()
	submit := func(env task.Envelope) *task.Task {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: env})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	// Missing references: rejected at submit, never run.
	got := submit(envelope("deploy", "alice", "x"))
	if got.State != task.StateFailed || !got.Rejected || got.ErrorCode != task.CodeApprovalRequired {
		t.Fatalf("no refs: %+v", got)
	}
	if _, err := b.coord.Retry(ctx, got.ID); task.ErrorCode(err) != task.CodeNotRetryable {
		t.Fatalf("retry of rejected: %v", err)
	}
	// Actor not allowed.
	got = submit(envelope("deploy", "bob", "x"))
	if !got.Rejected || got.ErrorCode != task.CodeForbidden {
		t.Fatalf("forbidden: %+v", got)
	}
	// Denied by the engine.
	env := envelope("deploy", "alice", "x")
	env.PolicyRef, env.ApprovalRef = "p7", "APR-9"
	got = submit(env)
	if !got.Rejected || got.ErrorCode != task.CodePolicyDenied {
		t.Fatalf("denied: %+v", got)
	}
	// Allowed, runs, and records the policy version. (A new message: the
	// old one's id is the idempotency key of the denied task.)
	env.ApprovalRef = "APR-1"
	env.Input = text("x")
	got = wait(t, b, submit(env).ID)
	if got.State != task.StateSucceeded {
		t.Fatalf("allowed: %+v", got)
	}
	recs, _ := b.coord.Timeline(ctx, got.ID)
	if last := recs[len(recs)-1]; last.PolicyVersion != "p7" {
		t.Fatalf("policy version not recorded: %+v", last)
	}
	// Revoked between submit and execution: stopped before the agent runs.
	before := calls.Load()
	revoked.Store(true)
	env.Input = text("after revocation")
	got = wait(t, b, submit(env).ID)
	if got.State != task.StateFailed || got.ErrorCode != task.CodePolicyDenied || calls.Load() != before {
		t.Fatalf("revoked: %+v calls %d→%d", got, before, calls.Load())
	}
	// The policy decisions are in the audit log.
	entries, err := b.store.AuditEntries(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	decisions := 0
	for _, e := range entries {
		if e.Kind == task.AuditPolicy {
			decisions++
		}
	}
	// missing refs, forbidden, denied, allowed×2 (submit+execute), revoked×2.
	if decisions != 7 {
		t.Fatalf("%d policy decisions audited, want 7", decisions)
	}
	verifyAudit(t, b)
}

// blockStep refuses before calling next (before) or after it (after).
func blockStep(before, after bool) task.Middleware {
	return task.MiddlewareFunc("block", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		if before {
			return nil, task.Refuse("contract pre-condition failed")
		}
		res, err := next(ctx)
		if err == nil && after {
			return nil, task.Refuse("output does not match the contract")
		}
		return res, err
	})
}

func TestStepsRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ before, after bool }{{before: true}, {after: true}} {
		var calls atomic.Int64
		b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}},
			Middleware: []task.Middleware{blockStep(false, false), blockStep(tc.before, tc.after)}})
		res, _ := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "a", "x")})
		got := wait(t, b, res.Task.ID)
		if got.State != task.StateFailed || got.ErrorCode != task.CodeGateBlocked || len(got.Artifacts) != 0 {
			t.Fatalf("step %+v: %+v", tc, got)
		}
		wantCalls := int64(0)
		if tc.after {
			wantCalls = 1
		}
		if calls.Load() != wantCalls {
			t.Fatalf("step %+v: agent called %d times", tc, calls.Load())
		}
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls), DryRun: true}}})
	res, _ := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "a", "x")})
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || calls.Load() != 0 || len(got.Artifacts) != 1 || got.Artifacts[0].Name != "dry-run" {
		t.Fatalf("%+v calls %d", got, calls.Load())
	}
}

// coverage is a policy engine that allows every cited approval and says
// whether it covers an action.
type coverage bool

func (coverage) Decide(context.Context, task.PolicyInput) (task.Decision, error) {
	return task.Decision{Allow: true, Version: "v1"}, nil
}

func (c coverage) Covers(string) bool { return bool(c) }

// TestSensitiveDryRunWithoutPolicy: a sensitive action in dry run that no
// policy covers (no engine, or one that says it does not cover it) is a
// simulation that needs no approval; once a policy covers it, the approval
// rules apply to the dry run as before.
func TestSensitiveDryRunWithoutPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		policy    task.PolicyEngine
		simulated bool
	}{
		{"no engine", nil, true},
		{"engine that does not cover the action", coverage(false), true},
		{"engine that covers the action", coverage(true), false},
		{"engine that does not say", task.PolicyFunc(func(context.Context, task.PolicyInput) (task.Decision, error) {
			return task.Decision{Allow: true}, nil
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			b := setup(t, task.Options{Policy: tc.policy, Agents: []task.AgentSpec{{Name: "deploy", Runner: echoRunner(&calls), Sensitive: true, DryRun: true}}})
			res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("deploy", "a", "ship")})
			if err != nil {
				t.Fatal(err)
			}
			got := wait(t, b, res.Task.ID)
			if calls.Load() != 0 {
				t.Fatalf("the agent was called %d times", calls.Load())
			}
			if !tc.simulated {
				if got.State != task.StateFailed || got.ErrorCode != task.CodeApprovalRequired {
					t.Fatalf("%s %s (%s), want failed approval_required", got.State, got.ErrorCode, got.Reason)
				}
				return
			}
			if got.State != task.StateSucceeded || !strings.HasPrefix(got.Reason, "simulation (dry run)") ||
				len(got.Artifacts) != 1 || !strings.HasPrefix(got.Artifacts[0].Parts[0].Text, "simulation (dry run)") {
				t.Fatalf("%s (%s) %+v, want a succeeded simulation", got.State, got.Reason, got.Artifacts)
			}
			verifyAudit(t, b)
		})
	}
}

// metaWith returns a metadata object of n keys whose values are strings of
// size bytes.
func metaWith(n, size int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = strings.Repeat("x", size)
	}
	return m
}

func TestMetadataLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}})
	ctx := context.Background()
	tooMany := metaWith(task.MaxMetadataKeys+1, 0)
	tooBig := metaWith(1, task.MaxMetadataBytes)
	withMeta := func(env, msg, part map[string]any) task.Envelope {
		e := envelope("echo", "a", "x")
		e.Metadata, e.Input.Metadata, e.Input.Parts[0].Metadata = env, msg, part
		return e
	}
	for _, c := range []struct {
		name string
		env  task.Envelope
		says string // "" wants the submit to pass
	}{
		{"200,000 envelope keys", withMeta(metaWith(200_000, 0), nil, nil), "envelope.metadata has 200000 keys"},
		{"too many envelope keys", withMeta(tooMany, nil, nil), "envelope.metadata has 257 keys"},
		{"too many message keys", withMeta(nil, tooMany, nil), "envelope.input.metadata"},
		{"too many part keys", withMeta(nil, nil, tooMany), "envelope.input.parts[0]: metadata"},
		{"envelope too big", withMeta(tooBig, nil, nil), "envelope.metadata takes"},
		{"part too big", withMeta(nil, nil, tooBig), "envelope.input.parts[0]: metadata takes"},
		{"at the limits", withMeta(metaWith(task.MaxMetadataKeys, 200), metaWith(task.MaxMetadataKeys, 200), metaWith(task.MaxMetadataKeys, 200)), ""},
	} {
		_, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: c.env})
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.says != "" && (task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s: err %v, want invalid_argument saying %q", c.name, err, c.says)
		}
	}
	page, err := b.coord.List(ctx, task.ListParams{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("refused submits stored tasks: %d, %v", len(page.Tasks), err)
	}
}

func TestContinueMetadataLimits(t *testing.T) {
	t.Parallel()
	asker := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		q := task.Message{Parts: []task.Part{task.TextPart("which city?")}}
		return &task.Result{InputRequired: true, Message: &q}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "ask", Runner: asker}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("ask", "a", "weather")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	msg := text("Lyon")
	msg.Metadata = metaWith(task.MaxMetadataKeys+1, 0)
	if _, err := b.coord.Continue(ctx, got.ID, msg); task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "message.metadata") {
		t.Fatalf("continue with too much metadata: %v", err)
	}
	msg = text("Lyon")
	msg.Parts[0].Metadata = metaWith(1, task.MaxMetadataBytes)
	if _, err := b.coord.Continue(ctx, got.ID, msg); task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "message.parts[0]: metadata") {
		t.Fatalf("continue with an oversized part: %v", err)
	}
	if now := wait(t, b, got.ID); now.State != task.StateInputRequired || now.Seq != got.Seq {
		t.Fatalf("a refused answer changed the task: %s seq %d, was seq %d", now.State, now.Seq, got.Seq)
	}
}

// TestIdentityGrants checks a caller whose token grants only some actions
// (task.WithIdentity): an action its actor may call but the token does not
// grant is rejected as forbidden; a granted one runs, and its submission
// entry in the audit log records the token's subject and issuer.
func TestIdentityGrants(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{
		Agents:      []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}, {Name: "other", Runner: echoRunner(&calls)}},
		Permissions: task.Permissions{"svc": {"*"}},
	})
	ctx := task.WithIdentity(context.Background(), task.Identity{Actor: "svc", Subject: "client-1", Issuer: "https://id.example", Actions: []string{"echo"}})
	for _, tc := range []struct {
		action string
		ok     bool
	}{{"other", false}, {"echo", true}} {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope(tc.action, "svc", tc.action)})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Task; got.Rejected == tc.ok || (!tc.ok && got.ErrorCode != task.CodeForbidden) {
			t.Errorf("%s: rejected %v (%s); want rejected %v", tc.action, got.Rejected, got.ErrorCode, !tc.ok)
		}
	}
	entries, err := b.store.AuditEntries(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		if e.Kind != task.AuditSubmitted {
			continue
		}
		var d struct{ Subject, Issuer string }
		if err := json.Unmarshal(e.Data, &d); err != nil || d.Subject != "client-1" || d.Issuer != "https://id.example" {
			t.Errorf("submission entry %s: subject %q issuer %q (%v)", e.Data, d.Subject, d.Issuer, err)
		}
		found++
	}
	if found != 2 {
		t.Errorf("%d submission entries, want 2", found)
	}
	// Without an identity (or with one of another actor), the actor's
	// permissions alone decide, and nothing more is recorded.
	res, err := b.coord.Submit(task.WithIdentity(context.Background(), task.Identity{Actor: "svc", Actions: nil}), task.SubmitRequest{Envelope: envelope("other", "svc", "x")})
	if err != nil || res.Task.Rejected {
		t.Errorf("unrestricted identity: %+v, %v", res, err)
	}
}
