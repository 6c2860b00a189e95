package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/clocktest"
)

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

// TestRetryBackoffWakesDispatcherOnItsClock is
// TestRetryBackoffWakesDispatcher on a clock the test moves: the failed
// attempt's backoff of an hour, with an even longer poll, ends when the
// Coordinator's clock says so, and no sooner.
func TestRetryBackoffWakesDispatcherOnItsClock(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	var calls atomic.Int64
	flaky := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("transient")
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{
		Clock: clock,
		Agents: []task.AgentSpec{{Name: "flaky", Runner: flaky,
			Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Hour, MaxBackoff: time.Hour, Jitter: 0}}},
		PollInterval: 24 * time.Hour,
	})
	env := envelope("flaky", "a", "x")
	env.TaskID = task.NewID()
	events, cancel := b.coord.Broker().Subscribe(env.TaskID)
	defer cancel()
	if _, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: env}); err != nil {
		t.Fatal(err)
	}
	// The queued event after the attempt comes after the retry's wake-up
	// is set.
	var queued task.Event
	for queued.State != task.StateQueued || queued.Task == nil || queued.Task.Attempt != 1 {
		queued = recv(t, events, "queued event after the failed attempt")
	}
	if want := clock.Now().Add(time.Hour); !queued.Task.RunAfter.Equal(want) {
		t.Fatalf("queued to run after %v, want %v", queued.Task.RunAfter, want)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d calls before the backoff ended, want 1", n)
	}
	clock.Advance(time.Hour)
	if got := wait(t, b, env.TaskID); got.State != task.StateSucceeded || got.Attempt != 2 || calls.Load() != 2 {
		t.Fatalf("%s attempt %d after %d calls, want succeeded at attempt 2", got.State, got.Attempt, calls.Load())
	}
}
