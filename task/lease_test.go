package task_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/clocktest"
)

// TestLeaseExpiryRequeuesAndDeadLetters: the tasks of a crashed worker,
// whose leases end unrenewed, are taken back by the reaper on the
// Coordinator's clock: requeued after their backoff while attempts are
// left, dead-lettered when they are spent.
func TestLeaseExpiryRequeuesAndDeadLetters(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	var calls atomic.Int64
	const backoff = time.Second
	agents := []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls), Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: backoff, Jitter: 0}}}
	b := setup(t, task.Options{Clock: clock, Agents: agents, LeaseFor: time.Second, Workers: 1})
	ctx := context.Background()
	// Simulate a crashed worker: stop the dispatcher from winning by
	// claiming the tasks ourselves under an owner that never renews.
	b.coord.Stop(ctx)
	now := clock.Now()
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
	c2, err := task.NewCoordinator(task.Options{Store: b.store, Clock: clock, Agents: agents, LeaseFor: time.Second, PollInterval: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c2.Start(ctx)
	defer c2.Stop(ctx)
	b2 := &bundle{store: b.store, coord: c2}
	// Both leases have ended. The reaper's pass (its loop runs one every
	// half lease; the test runs it where it wants it) takes both tasks
	// back.
	clock.Advance(100 * time.Millisecond)
	reaped := clock.Now()
	c2.ReapExpired(ctx)
	cur, err := b.store.GetTask(ctx, requeue, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := reaped.Add(backoff); cur.State != task.StateQueued || !cur.RunAfter.Equal(want) || calls.Load() != 0 {
		t.Fatalf("requeued task %s to run after %v (%d calls), want queued after its backoff, %v, and not run yet", cur.State, cur.RunAfter, calls.Load(), want)
	}
	clock.Advance(backoff)
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

// renewFails is a store whose lease renewals fail as if the database could
// not be reached.
type renewFails struct{ task.Store }

func (renewFails) RenewLease(context.Context, task.RenewParams) error {
	return errors.New("connection refused")
}

// renewFailsOnce is a store whose first lease renewal fails, as a passing
// error (a busy database, a dropped connection) would. It tells renewed
// how each renewal went.
type renewFailsOnce struct {
	task.Store
	failed  *atomic.Bool
	renewed chan<- error
}

func (s renewFailsOnce) RenewLease(ctx context.Context, p task.RenewParams) error {
	err := errors.New("connection reset")
	if !s.failed.CompareAndSwap(false, true) {
		err = s.Store.RenewLease(ctx, p)
	}
	s.renewed <- err
	return err
}

// One failed renewal does not stop a healthy attempt: the next try comes
// a twelfth of a lease later, well before the lease is given up (a third
// of a lease before it ends), and the renewals after it keep the attempt
// running for two and a half leases, on the Coordinator's clock.
func TestOneFailedRenewalKeepsTheAttempt(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	const leaseFor = 30 * time.Second
	var failed atomic.Bool
	var calls atomic.Int64
	renewed := make(chan error, 16)
	attempts := make(chan context.Context, 1)
	release := make(chan struct{})
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		attempts <- ctx
		select {
		case <-release:
			return &task.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	b := setupWrapped(t, task.Options{
		Clock:        clock,
		LeaseFor:     leaseFor,
		PollInterval: 24 * time.Hour,
		Agents:       []task.AgentSpec{{Name: "slow", Runner: slow, Timeout: time.Hour}},
	}, func(s task.Store) task.Store { return renewFailsOnce{s, &failed, renewed} })
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	attempt := recv(t, attempts, "attempt start")
	end := clock.Now().Add(leaseFor * 5 / 2)
	// The first renewal, a third of the way through the lease, fails.
	clock.Advance(leaseFor / 3)
	if err := recv(t, renewed, "first renewal"); err == nil {
		t.Fatal("the first renewal succeeded; the store was to fail it")
	}
	// The next try comes a twelfth of a lease later, and every renewal
	// after a third of a lease after the one before.
	next := leaseFor / 12
	for n := 2; clock.Now().Before(end); n++ {
		timerSet(t, clock, clock.Now().Add(next), fmt.Sprintf("renewal %d", n))
		clock.Advance(next)
		if err := recv(t, renewed, fmt.Sprintf("renewal %d", n)); err != nil {
			t.Fatalf("renewal %d: %v", n, err)
		}
		next = leaseFor / 3
	}
	if err := attempt.Err(); err != nil {
		t.Fatalf("the attempt was stopped (%v) after one failed renewal", err)
	}
	close(release)
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || calls.Load() != 1 || !failed.Load() {
		t.Fatalf("task %s after %d calls (a renewal failed: %v), want succeeded at the first call", got.State, calls.Load(), failed.Load())
	}
}

// An attempt whose lease could not be renewed stops when the lease ends:
// past it another node may claim the task, and two attempts would run at
// once (issue 14 §1). The agent's own timeout is far away. Nor does this
// node's reaper start a new attempt while the old one is still returning.
// On a clock the test moves, each step is checked where it happens: the
// lease watch stops an attempt whose renewals fail a third of a lease
// before the lease ends; once the lease has ended the reaper leaves the
// task to the attempt still returning; its end queues the next attempt
// after the backoff, and the third dead-letters the task.
func TestAttemptStopsWhenItsLeaseEndsUnrenewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	const leaseFor = 30 * time.Second
	started := make(chan struct{}, 8)
	stopped := make(chan error, 8)
	release := make(chan struct{}, 3)
	var running, overlapped atomic.Int64
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if running.Add(1) > 1 {
			overlapped.Add(1)
		}
		started <- struct{}{}
		<-ctx.Done()
		stopped <- ctx.Err()
		<-release // returning takes as long as the test says
		running.Add(-1)
		return nil, ctx.Err()
	})
	ends := make(attemptEnds, 8)
	b := setupWrapped(t, task.Options{
		Clock:        clock,
		LeaseFor:     leaseFor,
		PollInterval: 24 * time.Hour,
		Observer:     ends,
		Agents: []task.AgentSpec{{Name: "block", Runner: block, Timeout: time.Hour,
			Retry: task.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, Jitter: 0}}},
	}, func(s task.Store) task.Store { return renewFails{s} })
	t.Cleanup(func() { close(release) }) // before Stop, should the test fail
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	for attempt := 1; attempt <= 3; attempt++ {
		recv(t, started, fmt.Sprintf("start of attempt %d", attempt))
		clock.Advance(leaseFor - leaseFor/3)
		if err := recv(t, stopped, fmt.Sprintf("stop of attempt %d by the lease watch", attempt)); !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt %d stopped with %v, want it canceled by the lease watch", attempt, err)
		}
		clock.Advance(leaseFor)
		b.coord.ReapExpired(ctx)
		cur, err := b.store.GetTask(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State != task.StateInProgress || cur.Attempt != attempt {
			t.Fatalf("reaper moved the task to %s (attempt %d) while attempt %d still returned", cur.State, cur.Attempt, attempt)
		}
		release <- struct{}{}
		want := task.StateQueued
		if attempt == 3 {
			want = task.StateDeadLetter
		}
		if got := recv(t, ends, fmt.Sprintf("end of attempt %d", attempt)); got != want {
			t.Fatalf("attempt %d ended %s, want %s", attempt, got, want)
		}
		if attempt < 3 {
			clock.Advance(time.Second << (attempt - 1))
		}
	}
	if got := wait(t, b, id); got.State != task.StateDeadLetter || got.Attempt != 3 {
		t.Fatalf("task ended %s at attempt %d, want dead_letter after 3 attempts that each lost their lease", got.State, got.Attempt)
	}
	if n := overlapped.Load(); n != 0 {
		t.Fatalf("%d attempts started while an earlier attempt of the task still ran on this node", n)
	}
}
