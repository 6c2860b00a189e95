package task_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// bundle is what a coordinator test needs: a real SQLite store in a temp
// dir and a started Coordinator.
type bundle struct {
	store task.Store
	coord *task.Coordinator
}

func setup(t *testing.T, opts task.Options) *bundle {
	t.Helper()
	return setupWrapped(t, opts, nil)
}

// setupWrapped is setup with the Coordinator's view of the store wrapped
// (to make some of its calls fail, say); the bundle holds the real store.
func setupWrapped(t *testing.T, opts task.Options, wrap func(task.Store) task.Store) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = st
	if wrap != nil {
		opts.Store = wrap(st)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	c, err := task.NewCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Stop(sctx)
		_ = st.Close()
	})
	return &bundle{store: st, coord: c}
}

func text(s string) task.Message {
	return task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(s)}}
}

func envelope(action, actor, input string) task.Envelope {
	return task.Envelope{Action: action, Actor: actor, Input: text(input)}
}

// wait waits (bounded) for a task to reach a terminal or interrupted state.
func wait(t *testing.T, b *bundle, id string) *task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := b.coord.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return got
}

func states(t *testing.T, b *bundle, id string) []task.State {
	t.Helper()
	recs, err := b.coord.Timeline(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := []task.State{recs[0].From}
	for i, r := range recs {
		if r.Seq != i+1 {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		if i > 0 && recs[i-1].To != r.From {
			t.Fatalf("record %d starts at %s, previous ended at %s", r.Seq, r.From, recs[i-1].To)
		}
		out = append(out, r.To)
	}
	return out
}

func equalStates(a, b []task.State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func verifyAudit(t *testing.T, b *bundle) {
	t.Helper()
	rep, err := audit.Verify(context.Background(), b.store)
	if err != nil || !rep.OK {
		t.Fatalf("audit chain: %+v, %v", rep, err)
	}
}

func echoRunner(calls *atomic.Int64) task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if calls != nil {
			calls.Add(1)
		}
		return &task.Result{Artifacts: []task.Artifact{{Name: "echo", Parts: req.Message.Parts}}}, nil
	})
}

func TestSubmitRunsToSucceeded(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate || (res.Task.State != task.StateQueued && res.Task.State != task.StateInProgress) {
		t.Fatalf("submit: %+v", res)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || got.Attempt != 1 || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "hi" {
		t.Fatalf("task: %+v", got)
	}
	want := []task.State{task.StateRequested, task.StateValidated, task.StateQueued, task.StateInProgress, task.StateSucceeded}
	if s := states(t, b, got.ID); !equalStates(s, want) {
		t.Fatalf("states %v, want %v", s, want)
	}
	verifyAudit(t, b)
}

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

func TestRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	flaky := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if n := calls.Add(1); n < 3 {
			return nil, fmt.Errorf("transient failure %d", n)
		}
		if req.Attempt != 3 {
			return nil, task.Permanent(fmt.Errorf("attempt %d, want 3", req.Attempt))
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "flaky", Runner: flaky, Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}}}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("flaky", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || got.Attempt != 3 {
		t.Fatalf("task %s attempt %d (%s)", got.State, got.Attempt, got.Reason)
	}
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	var backoffs int
	for _, r := range recs {
		if r.From == task.StateInProgress && r.To == task.StateQueued {
			backoffs++
			if r.ErrorCode != task.CodeAgentFailed || r.Reason == "" {
				t.Errorf("retry record without reason: %+v", r)
			}
		}
	}
	if backoffs != 2 {
		t.Fatalf("%d retry records, want 2", backoffs)
	}
}

// A manual retry starts a new turn: the dead-lettered task gets its agent's
// max_attempts again, counted from 1, while Attempt keeps the total.
func TestDeadLetterAndManualRetry(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var seen sync.Map // Request.Attempt -> true
	failing := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		seen.Store(req.Attempt, true)
		return nil, errors.New("always down")
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "down", Runner: failing, Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 5 * time.Millisecond}}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("down", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateDeadLetter || got.Attempt != 3 || got.TurnAttempt() != 3 || calls.Load() != 3 {
		t.Fatalf("task %s attempt %d (%d in turn) calls %d", got.State, got.Attempt, got.TurnAttempt(), calls.Load())
	}
	retried, err := b.coord.Retry(ctx, got.ID)
	if err != nil || retried.State != task.StateQueued {
		t.Fatalf("retry: %+v, %v", retried, err)
	}
	if retried.Attempt != 3 || retried.TurnStart != 3 || retried.TurnAttempt() != 0 {
		t.Fatalf("retried: attempt %d, turn start %d, turn attempt %d; want 3, 3, 0", retried.Attempt, retried.TurnStart, retried.TurnAttempt())
	}
	got = wait(t, b, got.ID)
	if got.State != task.StateDeadLetter || got.Attempt != 6 || got.TurnAttempt() != 3 || calls.Load() != 6 {
		t.Fatalf("after retry: %s attempt %d (%d in turn) calls %d; want dead_letter after 3 more attempts (6 in all, 3 of 3 in the turn)",
			got.State, got.Attempt, got.TurnAttempt(), calls.Load())
	}
	if !strings.HasPrefix(got.Reason, "attempt 3 of 3 failed") {
		t.Errorf("reason %q, want \"attempt 3 of 3 failed…\"", got.Reason)
	}
	if stored, err := b.coord.Get(ctx, got.ID, 0); err != nil || stored.TurnStart != 3 {
		t.Fatalf("stored task: %+v, %v; want turn start 3", stored, err)
	}
	for n := 1; n <= 6; n++ {
		if _, ok := seen.Load(n); !ok {
			t.Errorf("the agent never saw Request.Attempt %d (it counts every run)", n)
		}
	}
	recs, _ := b.coord.Timeline(ctx, got.ID)
	manual := 0
	for _, r := range recs {
		if r.Reason == "manual retry" {
			manual++
		}
	}
	if manual != 1 {
		t.Fatalf("%d manual retry records", manual)
	}
	verifyAudit(t, b)
}

func TestPermanentErrorFailsAtOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	bad := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		return nil, task.Permanent(errors.New("bad input"))
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "bad", Runner: bad}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("bad", "a", "x")})
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateFailed || got.Rejected || calls.Load() != 1 || got.Reason != "bad input" {
		t.Fatalf("%+v calls %d", got, calls.Load())
	}
	// Not retryable: succeeded tasks; retryable: this failed one.
	if _, err := b.coord.Retry(ctx, "missing"); task.ErrorCode(err) != task.CodeNotFound {
		t.Fatalf("retry missing: %v", err)
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: slow, Timeout: 50 * time.Millisecond, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}})
	res, _ := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateDeadLetter || got.ErrorCode != task.CodeTimeout || got.Attempt != 2 {
		t.Fatalf("%s %s attempt %d", got.State, got.ErrorCode, got.Attempt)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	stopped := make(chan error, 1)
	blocking := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- req.TaskID
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: blocking}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	<-started
	got, err := b.coord.Cancel(ctx, res.Task.ID, "user changed their mind")
	if err != nil || got.State != task.StateCanceled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("runner saw %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("running attempt was not stopped")
	}
	if _, err := b.coord.Cancel(ctx, res.Task.ID, ""); task.ErrorCode(err) != task.CodeNotCancelable {
		t.Fatalf("second cancel: %v", err)
	}
	// The stopped attempt's late result must not move the task again.
	b.coord.Stop(ctx)
	final, _ := b.coord.Get(ctx, res.Task.ID, 0)
	if final.State != task.StateCanceled {
		t.Fatalf("state after attempt ended: %s", final.State)
	}
	if _, err := b.coord.Cancel(ctx, "nope", ""); task.ErrorCode(err) != task.CodeNotFound {
		t.Fatalf("cancel missing: %v", err)
	}
}

func TestLeaseExpiryRequeuesAndDeadLetters(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{
		Agents:   []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls), Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}},
		LeaseFor: time.Second,
		Workers:  1,
	})
	ctx := context.Background()
	// Simulate a crashed worker: stop the dispatcher from winning by
	// claiming the tasks ourselves under an owner that never renews.
	b.coord.Stop(ctx)
	now := time.Now().UTC().Truncate(time.Microsecond)
	mk := func(attempts int) string {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "a", fmt.Sprint(attempts))})
		if err != nil {
			t.Fatal(err)
		}
		for range attempts {
			claimed, err := b.store.Claim(ctx, task.ClaimParams{Owner: "crashed/1", Node: "crashed", Now: now, LeaseFor: time.Millisecond, Limit: 1, TaskID: res.Task.ID})
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claim: %v, %d", err, len(claimed))
			}
			if attempts > 1 && claimed[0].Attempt < attempts {
				if _, err := b.store.Transition(ctx, task.TransitionParams{TaskID: res.Task.ID, From: task.StateInProgress, To: task.StateQueued, Now: now, RunAfter: now}); err != nil {
					t.Fatal(err)
				}
			}
		}
		return res.Task.ID
	}
	requeue, dead := mk(1), mk(2)
	c2, err := task.NewCoordinator(task.Options{Store: b.store, Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls), Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}, LeaseFor: time.Second, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c2.Start(ctx)
	defer c2.Stop(ctx)
	b2 := &bundle{store: b.store, coord: c2}
	got := wait(t, b2, requeue)
	if got.State != task.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("requeued task: %s attempt %d", got.State, got.Attempt)
	}
	got = wait(t, b2, dead)
	if got.State != task.StateDeadLetter || got.ErrorCode != task.CodeLeaseExpired {
		t.Fatalf("spent task: %s %s", got.State, got.ErrorCode)
	}
	recs, _ := c2.Timeline(ctx, requeue)
	found := false
	for _, r := range recs {
		if r.ErrorCode == task.CodeLeaseExpired && r.From == task.StateInProgress && r.To == task.StateQueued {
			found = true
		}
	}
	if !found || calls.Load() != 1 {
		t.Fatalf("lease expiry not recorded (%v) or calls %d", found, calls.Load())
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

type blockGate struct{ before, after bool }

func (g blockGate) Before(ctx context.Context, req *task.Request) error {
	if g.before {
		return errors.New("contract pre-condition failed")
	}
	return nil
}

func (g blockGate) After(ctx context.Context, req *task.Request, res *task.Result) error {
	if g.after {
		return errors.New("output does not match the contract")
	}
	return nil
}

func TestGatesBlock(t *testing.T) {
	t.Parallel()
	for _, g := range []blockGate{{before: true}, {after: true}} {
		var calls atomic.Int64
		b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}}, Gates: []task.Gate{blockGate{}, g}})
		res, _ := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "a", "x")})
		got := wait(t, b, res.Task.ID)
		if got.State != task.StateFailed || got.ErrorCode != task.CodeGateBlocked || len(got.Artifacts) != 0 {
			t.Fatalf("gate %+v: %+v", g, got)
		}
		wantCalls := int64(0)
		if g.after {
			wantCalls = 1
		}
		if calls.Load() != wantCalls {
			t.Fatalf("gate %+v: agent called %d times", g, calls.Load())
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

func TestInputRequiredThenContinue(t *testing.T) {
	t.Parallel()
	asker := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if len(req.History) == 1 {
			q := task.Message{Parts: []task.Part{task.TextPart("which city?")}}
			return &task.Result{InputRequired: true, Message: &q}, nil
		}
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("weather in " + req.Message.Text())}}}}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "ask", Runner: asker}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("ask", "a", "weather")})
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateInputRequired || got.StatusMessage.Text() != "which city?" {
		t.Fatalf("%+v", got)
	}
	if _, err := b.coord.Continue(ctx, got.ID, task.Message{ID: "m2"}); task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Fatalf("empty answer: %v", err)
	}
	if _, err := b.coord.Continue(ctx, got.ID, text("Lyon")); err != nil {
		t.Fatal(err)
	}
	got = wait(t, b, got.ID)
	if got.State != task.StateSucceeded || got.Artifacts[0].Parts[0].Text != "weather in Lyon" || len(got.History) != 3 {
		t.Fatalf("%+v", got)
	}
	if _, err := b.coord.Continue(ctx, got.ID, text("more")); task.ErrorCode(err) != task.CodeUnsupported {
		t.Fatalf("continue terminal: %v", err)
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

// TestEveryTurnGetsItsAttempts: attempts count every claim of a task, but
// retries are bounded per turn, so a conversation longer than MaxAttempts
// turns still gets its retries on each; a turn that fails MaxAttempts times
// is dead-lettered as a first turn would be.
func TestEveryTurnGetsItsAttempts(t *testing.T) {
	t.Parallel()
	// chatty fails the first attempt of every turn, then asks again until
	// it has had three answers; with fail set it never recovers after the
	// first answer.
	var failLater atomic.Bool
	var tries sync.Map // turn -> attempts so far
	chatty := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		turn := 0
		for _, m := range req.History {
			if m.Role == task.RoleUser {
				turn++
			}
		}
		n, _ := tries.LoadOrStore(turn, new(atomic.Int32))
		if k := n.(*atomic.Int32).Add(1); k == 1 || (failLater.Load() && turn > 1) {
			return nil, fmt.Errorf("turn %d, try %d: flaky", turn, k)
		}
		if turn < 4 {
			q := task.Message{Parts: []task.Part{task.TextPart(fmt.Sprintf("question %d", turn))}}
			return &task.Result{InputRequired: true, Message: &q}, nil
		}
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("done")}}}}, nil
	})
	retry := task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "chatty", Runner: chatty, Retry: retry}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("chatty", "a", "talk")})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	for answer := 1; answer <= 3; answer++ {
		got := wait(t, b, id)
		if got.State != task.StateInputRequired {
			t.Fatalf("before answer %d: state %s (%s), want input_required", answer, got.State, got.Reason)
		}
		if _, err := b.coord.Continue(ctx, id, text(fmt.Sprint("answer ", answer))); err != nil {
			t.Fatal(err)
		}
	}
	got := wait(t, b, id)
	if got.State != task.StateSucceeded || got.Attempt != 8 {
		t.Fatalf("after 4 turns of 2 attempts: state %s, attempt %d (%s); want succeeded after 8 attempts", got.State, got.Attempt, got.Reason)
	}

	// A turn that fails all its attempts is dead-lettered.
	failLater.Store(true)
	tries.Clear()
	res, err = b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("chatty", "b", "talk")})
	if err != nil {
		t.Fatal(err)
	}
	id = res.Task.ID
	if got := wait(t, b, id); got.State != task.StateInputRequired {
		t.Fatalf("first turn: %s (%s)", got.State, got.Reason)
	}
	if _, err := b.coord.Continue(ctx, id, text("answer")); err != nil {
		t.Fatal(err)
	}
	got = wait(t, b, id)
	if got.State != task.StateDeadLetter || got.Attempt != 4 || !strings.HasPrefix(got.Reason, "attempt 2 of 2 failed") {
		t.Fatalf("second turn failing twice: state %s, attempt %d, reason %q; want dead_letter at attempt 4, \"attempt 2 of 2 failed…\"", got.State, got.Attempt, got.Reason)
	}
}

func TestSubscribeStreamsChunksAndLateSubscriberSeesState(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		for i, w := range []string{"a", "b", "c"} {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(w)}}, Append: i > 0, LastChunk: i == 2}); err != nil {
				return nil, err
			}
			if i == 0 {
				<-release
			}
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: streamer}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	snap, ch, cancel, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	close(release)
	var text string
	var last task.Event
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("subscription closed early")
			}
			if ev.Kind == task.EventStatus && ev.Seq <= snap.Seq {
				t.Fatalf("event %d already in snapshot %d", ev.Seq, snap.Seq)
			}
			if ev.Kind == task.EventArtifact {
				text += ev.Chunk.Artifact.Parts[0].Text
			}
			last, done = ev, ev.Final
		case <-timeout:
			t.Fatal("no final event")
		}
	}
	if last.State != task.StateSucceeded {
		t.Fatalf("final %s", last.State)
	}
	// Chunks before the subscription may be missed; those after must not be.
	if text != "abc" && text != "bc" {
		t.Fatalf("streamed %q", text)
	}
	got, _ := b.coord.Get(ctx, res.Task.ID, -1)
	if len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "abc" {
		t.Fatalf("stored artifacts %+v", got.Artifacts)
	}
	// A late subscriber starts from the stored, final state.
	snap2, _, cancel2, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	if snap2.State != task.StateSucceeded {
		t.Fatalf("late snapshot %s", snap2.State)
	}
}

func TestSubmitAndWait(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{
		Agents:      []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}, {Name: "deploy", Runner: echoRunner(&calls), Sensitive: true}},
		Permissions: task.Permissions{"alice": {"*"}},
	})
	ctx := context.Background()
	env := envelope("echo", "alice", "hi")
	res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: env})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Task
	if got.State != task.StateSucceeded || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "hi" || len(got.History) != 1 {
		t.Fatalf("SubmitAndWait returned %+v", got)
	}
	// What it returned is what is stored.
	stored, _ := b.coord.Get(ctx, got.ID, -1)
	if stored.State != got.State || stored.Seq != got.Seq || len(stored.Artifacts) != len(got.Artifacts) || stored.Artifacts[0].ID != got.Artifacts[0].ID {
		t.Fatalf("returned %+v, stored %+v", got, stored)
	}
	// A duplicate returns the stored task without running again.
	again, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: env})
	if err != nil || !again.Duplicate || again.Task.ID != got.ID || len(again.Task.Artifacts) != 1 || calls.Load() != 1 {
		t.Fatalf("duplicate: %+v, %v, calls %d", again, err, calls.Load())
	}
	// A rejection comes back at once.
	rej, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("deploy", "bob", "x")})
	if err != nil || !rej.Task.Rejected || rej.Task.ErrorCode != task.CodeForbidden {
		t.Fatalf("rejected: %+v, %v", rej, err)
	}
}

func TestFinalEventCarriesWholeTask(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}})
	ctx := context.Background()
	env := envelope("echo", "a", "whole")
	env.TaskID = task.NewID()
	ch, cancel := b.coord.Broker().Subscribe(env.TaskID)
	defer cancel()
	if _, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: env}); err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if !ev.Final {
			continue
		}
		if !ev.Complete || len(ev.Task.Artifacts) != 1 || len(ev.Task.History) != 1 || ev.Task.Artifacts[0].Parts[0].Text != "whole" {
			t.Fatalf("final event %+v task %+v", ev, ev.Task)
		}
		return
	}
	t.Fatal("no final event")
}

func TestStopDrainsRunningAttempts(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		select {
		case <-time.After(300 * time.Millisecond):
			return &task.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: slow}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
	<-started
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.coord.Stop(sctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got, _ := b.coord.Get(ctx, res.Task.ID, 0)
	if got.State != task.StateSucceeded {
		t.Fatalf("after a drained stop the task is %s, want succeeded", got.State)
	}
}

func TestStopDeadlineLeavesLeaseToExpire(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: block}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	<-started
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := b.coord.Stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v, want deadline exceeded", err)
	}
	got, _ := b.coord.Get(ctx, res.Task.ID, 0)
	if got.State != task.StateInProgress || got.LeaseOwner == "" {
		t.Fatalf("interrupted attempt left the task %s (lease %q); want in_progress with its lease", got.State, got.LeaseOwner)
	}
}

// A retry's backoff wakes the dispatcher itself: with a poll interval of an
// hour, only that wake-up can run the second attempt.
func TestRetryBackoffWakesDispatcher(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	flaky := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("transient")
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{
		Agents:       []task.AgentSpec{{Name: "flaky", Runner: flaky, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: 20 * time.Millisecond}}},
		PollInterval: time.Hour,
	})
	res, _ := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("flaky", "a", "x")})
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("%s attempt %d", got.State, got.Attempt)
	}
}

// A task canceled by another process (pactum tasks cancel) is noticed by
// the worker's lease renewal, and this node's subscribers hear of it.
func TestCancelFromAnotherProcessReachesSubscribers(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: block}}, LeaseFor: 300 * time.Millisecond})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	<-started
	_, ch, cancel, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	other, err := task.NewCoordinator(task.Options{Store: b.store, Node: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Cancel(ctx, res.Task.ID, "from the command line"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Final {
				if ev.State != task.StateCanceled {
					t.Fatalf("final event %s", ev.State)
				}
				return
			}
		case <-timeout:
			t.Fatal("the subscriber never heard of the cancel")
		}
	}
}

// TestBacklogRunsWhenAWorkerFrees: tasks queued while every worker is busy
// start as soon as one frees, not at the dispatcher's next poll (an hour
// here).
func TestBacklogRunsWhenAWorkerFrees(t *testing.T) {
	t.Parallel()
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		time.Sleep(20 * time.Millisecond)
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: slow}}, Workers: 1, PollInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ids []string
	for i := range 5 {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", fmt.Sprint(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Task.ID)
	}
	for _, id := range ids {
		got, err := b.coord.Wait(ctx, id)
		if err != nil {
			t.Fatalf("task %s still waiting for a worker: %v", id, err)
		}
		if got.State != task.StateSucceeded {
			t.Fatalf("task %s ended %s", id, got.State)
		}
	}
}

// renewFails is a store whose lease renewals fail as if the database could
// not be reached.
type renewFails struct{ task.Store }

func (renewFails) RenewLease(context.Context, task.RenewParams) error {
	return errors.New("connection refused")
}

// An attempt whose lease could not be renewed stops when the lease ends:
// past it another node may claim the task, and two attempts would run at
// once (issue 14 §1). The agent's own timeout is far away. Nor does this
// node's reaper start a new attempt while the old one is still returning.
func TestAttemptStopsWhenItsLeaseEndsUnrenewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stopped := make(chan error, 16)
	var running, overlapped atomic.Int64
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if running.Add(1) > 1 {
			overlapped.Add(1)
		}
		<-ctx.Done()
		// Returning takes a while, as a process group's exit does.
		time.Sleep(200 * time.Millisecond)
		running.Add(-1)
		select {
		case stopped <- ctx.Err():
		default:
		}
		return nil, ctx.Err()
	})
	b := setupWrapped(t, task.Options{
		LeaseFor: 300 * time.Millisecond,
		Agents: []task.AgentSpec{{Name: "block", Runner: block, Timeout: time.Hour,
			Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond}}},
	}, func(s task.Store) task.Store { return renewFails{s} })
	c := b.coord
	res, err := c.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt stopped with %v, want it canceled by the lease watch", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the attempt ran on long after its unrenewed lease ended")
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got, err := c.Wait(wctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateDeadLetter {
		t.Fatalf("task ended %s, want dead_letter after 3 attempts that each lost their lease", got.State)
	}
	if n := overlapped.Load(); n != 0 {
		t.Fatalf("%d attempts started while an earlier attempt of the task still ran on this node", n)
	}
}

// renewFailsOnce is a store whose first lease renewal fails, as a passing
// error (a busy database, a dropped connection) would.
type renewFailsOnce struct {
	task.Store
	failed *atomic.Bool
}

func (s renewFailsOnce) RenewLease(ctx context.Context, p task.RenewParams) error {
	if s.failed.CompareAndSwap(false, true) {
		return errors.New("connection reset")
	}
	return s.Store.RenewLease(ctx, p)
}

// One failed renewal does not stop a healthy attempt: the next try comes
// well before the lease is given up.
func TestOneFailedRenewalKeepsTheAttempt(t *testing.T) {
	t.Parallel()
	var failed atomic.Bool
	var calls atomic.Int64
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		select {
		case <-time.After(1500 * time.Millisecond): // five leases
			return &task.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	b := setupWrapped(t, task.Options{
		LeaseFor: 300 * time.Millisecond,
		Agents:   []task.AgentSpec{{Name: "slow", Runner: slow, Timeout: time.Hour}},
	}, func(s task.Store) task.Store { return renewFailsOnce{s, &failed} })
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || calls.Load() != 1 || !failed.Load() {
		t.Fatalf("task %s after %d calls (a renewal failed: %v), want succeeded at the first call", got.State, calls.Load(), failed.Load())
	}
}
