package task_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/clocktest"
)

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

// TestBacklogRunsWhenAWorkerFrees: tasks queued while every worker is busy
// start as soon as one frees, not at the dispatcher's next poll (an hour
// here).
func TestBacklogRunsWhenAWorkerFrees(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 5)
	busy := make(chan struct{}) // closed once every task is submitted
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		<-busy
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
		if i == 0 {
			recv(t, started, "the first attempt") // the one worker is busy
		} else if res.Task.State != task.StateQueued {
			t.Fatalf("task %d submitted while the worker was busy is %s, want queued", i, res.Task.State)
		}
	}
	close(busy)
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

// claimCounter counts the Coordinator's claims.
type claimCounter struct {
	task.Store
	n *atomic.Int64
}

func (s claimCounter) Claim(ctx context.Context, p task.ClaimParams) ([]*task.Task, error) {
	s.n.Add(1)
	return s.Store.Claim(ctx, p)
}

// TestPollClaimsOnlyWhenSomethingIsDue: the dispatcher's poll claims (and
// so holds every free worker slot through a write, while submissions that
// find none are queued instead of run at once) only when the store says
// a queued task is due; a task another process queued is still found and
// run at the next poll.
func TestPollClaimsOnlyWhenSomethingIsDue(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	const poll = 5 * time.Millisecond
	var claims atomic.Int64
	echo := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{}, nil
	})
	agents := []task.AgentSpec{{Name: "echo", Runner: echo}}
	b := setupWrapped(t, task.Options{Clock: clock, Agents: agents, PollInterval: poll},
		func(s task.Store) task.Store { return claimCounter{Store: s, n: &claims} })
	// Thirty polls with nothing queued: each sets the timer of the next,
	// a poll later, once it has read the store.
	for n := 1; n <= 30; n++ {
		timerSet(t, clock, clock.Now().Add(poll), fmt.Sprintf("the poll after poll %d", n))
		clock.Advance(poll)
	}
	timerSet(t, clock, clock.Now().Add(poll), "the poll after poll 31")
	if n := claims.Load(); n != 0 {
		t.Fatalf("%d claims while nothing was queued, want none", n)
	}
	// Another process queues a task: a coordinator that was never started
	// claims nothing itself.
	other, err := task.NewCoordinator(task.Options{Store: b.store, Clock: clock, Agents: agents})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := other.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "a", "queued elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.State != task.StateQueued {
		t.Fatalf("the other process's task is %s, want queued", res.Task.State)
	}
	clock.Advance(poll) // the next poll
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded {
		t.Fatalf("the queued task ended %s, want succeeded", got.State)
	}
	if claims.Load() == 0 {
		t.Fatal("the queued task ran without a claim")
	}
}

// TestPoolsDoNotWaitForEachOther: a pool whose one slot a slow agent
// holds (its backlog queued behind it) does not hold back an agent of
// another pool, whether the task is run at submit or claimed by the
// dispatcher; each pool's backlog runs as its own slots free.
func TestPoolsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	started := make(chan string, 10)
	release := make(chan struct{})
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- req.TaskID
		select {
		case <-release:
			return &task.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	fast := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{
		Agents: []task.AgentSpec{
			{Name: "slow", Runner: slow, Pool: "processes"},
			{Name: "fast", Runner: fast},
		},
		Workers: 1, Pools: map[string]int{"processes": 1}, PollInterval: time.Hour,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var slowIDs []string
	for i := range 3 {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", fmt.Sprint("s", i))})
		if err != nil {
			t.Fatal(err)
		}
		slowIDs = append(slowIDs, res.Task.ID)
		if i == 0 {
			recv(t, started, "the slow agent's first attempt")
		} else if res.Task.State != task.StateQueued {
			t.Fatalf("slow task %d submitted while its pool was full is %s, want queued", i, res.Task.State)
		}
	}
	// The slow pool is full and has a backlog: the fast agent runs at
	// submit, on its own pool's slot, again and again.
	for i := range 5 {
		res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("fast", "a", fmt.Sprint("f", i))})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task.State != task.StateSucceeded {
			t.Fatalf("fast task %d is %s while the slow pool is full, want succeeded", i, res.Task.State)
		}
	}
	// The default pool's claims (kicked by every queued submission) left
	// the slow backlog to its own pool.
	for _, id := range slowIDs[1:] {
		if got, err := b.coord.Get(ctx, id, 0); err != nil || got.State != task.StateQueued {
			t.Fatalf("slow task %s = %v, %v; want still queued for its own pool", id, got, err)
		}
	}
	// Queued behind a busy default pool, a fast task is claimed by the
	// dispatcher's claim for its pool, not the slow pool's.
	hold := make(chan struct{})
	var blocker atomic.Bool
	b2 := setup(t, task.Options{
		Agents: []task.AgentSpec{
			{Name: "slow", Runner: slow, Pool: "processes"},
			{Name: "fast", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
				if blocker.CompareAndSwap(false, true) {
					// The first fast task keeps the default pool's one slot.
					select {
					case <-hold:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return &task.Result{}, nil
			})},
		},
		Workers: 1, Pools: map[string]int{"processes": 2}, PollInterval: time.Hour,
	})
	first, err := b2.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("fast", "a", "f-first")})
	if err != nil {
		t.Fatal(err)
	}
	// A slow task runs at once on its own pool's free slot. (Submitted
	// before anything is queued: a claim the dispatcher is making holds
	// its pool's free slots meanwhile, and a submission then queues.)
	s, err := b2.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", "s-other")})
	if err != nil || s.Task.State != task.StateInProgress {
		t.Fatalf("slow task = %v, %v; want run at once on the free pool", s.Task.State, err)
	}
	second, err := b2.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("fast", "a", "f-second")})
	if err != nil || second.Task.State != task.StateQueued {
		t.Fatalf("second fast task = %v, %v; want queued behind the first", second, err)
	}
	recv(t, started, "the other node's slow attempt")
	close(hold)
	for _, id := range []string{first.Task.ID, second.Task.ID} {
		got, err := b2.coord.Wait(ctx, id)
		if err != nil || got.State != task.StateSucceeded {
			t.Fatalf("fast task %s = %v, %v; want succeeded once the default pool's slot freed", id, got, err)
		}
	}
	close(release)
	for _, id := range slowIDs {
		got, err := b.coord.Wait(ctx, id)
		if err != nil || got.State != task.StateSucceeded {
			t.Fatalf("slow task %s = %v, %v; want succeeded as its pool's slot freed", id, got, err)
		}
	}
	got, err := b2.coord.Wait(ctx, s.Task.ID)
	if err != nil || got.State != task.StateSucceeded {
		t.Fatalf("slow task %s = %v, %v", s.Task.ID, got, err)
	}
}

// TestPoolsValidated: an agent naming a pool that Options.Pools does not
// size, and a pool without a positive size, are refused.
func TestPoolsValidated(t *testing.T) {
	t.Parallel()
	run := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{}, nil
	})
	for _, o := range []task.Options{
		{Agents: []task.AgentSpec{{Name: "a", Runner: run, Pool: "nope"}}},
		{Agents: []task.AgentSpec{{Name: "a", Runner: run}}, Pools: map[string]int{"p": 0}},
		{Agents: []task.AgentSpec{{Name: "a", Runner: run}}, Pools: map[string]int{"": 4}},
	} {
		o.Store = setup(t, task.Options{Agents: []task.AgentSpec{{Name: "x", Runner: run}}}).store
		if _, err := task.NewCoordinator(o); err == nil {
			t.Errorf("NewCoordinator(%+v) = nil error", o.Pools)
		}
	}
}
