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
)

// createSpy records whether each CreateTask was speculative; with fail set
// it also reports a speculative creation as lost (Committed with an error)
// once the real store created it: the fault a failed commit would be. The
// store itself cannot be made to fail its commit on demand, so the fault
// is injected here.
type createSpy struct {
	task.Store
	mu   sync.Mutex
	spec []bool
	// claimed says whether each CreateTask also claimed the task.
	claimed []bool
	// byID says whether each task was created speculatively.
	byID map[string]bool
	fail error
	// before, when set, is waited for before the loss is reported.
	before <-chan struct{}
}

func (s *createSpy) CreateTask(ctx context.Context, p task.CreateParams) (*task.Task, error) {
	s.mu.Lock()
	s.spec = append(s.spec, p.Speculative)
	if s.byID == nil {
		s.byID = map[string]bool{}
	}
	s.byID[p.Task.ID] = p.Speculative
	s.claimed = append(s.claimed, p.Claim != nil)
	fail := s.fail
	s.mu.Unlock()
	committed := p.Committed
	if fail != nil {
		p.Speculative, p.Committed = false, nil
	}
	t, err := s.Store.CreateTask(ctx, p)
	if err == nil && fail != nil && committed != nil {
		go func() {
			if s.before != nil {
				<-s.before
			}
			committed(fail)
		}()
	}
	return t, err
}

func (s *createSpy) speculative(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

func (s *createSpy) calls() (spec, claimed []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.spec...), append([]bool(nil), s.claimed...)
}

// A blocking submission that runs at once (it took a free worker: the
// dispatcher's poll holds them all for a moment, and a submission then
// queues its task instead) creates its task speculatively, one commit with
// its end on SQLite, and still answers the whole, stored task; a
// submission that does not wait never does.
func TestBlockingSubmitIsSpeculative(t *testing.T) {
	t.Parallel()
	spy := &createSpy{}
	b := setupWrapped(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}},
		func(s task.Store) task.Store { spy.Store = s; return spy })
	ctx := context.Background()
	want := []task.State{task.StateRequested, task.StateValidated, task.StateQueued, task.StateInProgress, task.StateSucceeded}
	const n = 10
	for i := range n {
		res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("echo", "a", "hello")})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task.State != task.StateSucceeded {
			t.Fatalf("blocking submit %d ended %s", i, res.Task.State)
		}
		// Answered only once durable: the store has it, whole, for any reader.
		stored, err := b.store.GetTask(ctx, res.Task.ID, -1)
		if err != nil || stored.State != task.StateSucceeded || len(stored.Artifacts) != 1 {
			t.Fatalf("stored task after the answer: %+v, %v", stored, err)
		}
		if got := states(t, b, res.Task.ID); !equalStates(got, want) {
			t.Fatalf("timeline %v, want %v", got, want)
		}
	}
	for range n {
		sub, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "a", "again")})
		if err != nil {
			t.Fatal(err)
		}
		wait(t, b, sub.Task.ID)
	}
	spec, claimed := spy.calls()
	speculative := 0
	for i := range spec {
		if i >= n && spec[i] {
			t.Fatalf("Submit %d created its task speculatively", i-n)
		}
		if i < n && spec[i] != claimed[i] {
			t.Fatalf("SubmitAndWait %d: speculative %v, claimed %v; want speculative exactly when claimed", i, spec[i], claimed[i])
		}
		if spec[i] {
			speculative++
		}
	}
	if len(spec) != 2*n || speculative == 0 {
		t.Fatalf("%d creations, %d speculative; want %d, and some speculative", len(spec), speculative, 2*n)
	}
}

// lostCreation sets up the agent "block", whose attempts of speculatively
// created tasks wait to be stopped, on a store that reports each
// speculative creation lost once its attempt runs, so that the attempt
// must be stopped (a loss reported before it registers stops it at once,
// as a cancel does). Other attempts (the dispatcher's poll held every
// worker at submit: queued, not speculative) answer at once; the tests
// submit again. stopped receives how the stopped attempt ended.
func lostCreation(t *testing.T) (b *bundle, spy *createSpy, stopped <-chan error) {
	t.Helper()
	started := make(chan struct{})
	spy = &createSpy{fail: errors.New("disk I/O error"), before: started}
	ended := make(chan error, 1)
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if !spy.speculative(req.TaskID) {
			return &task.Result{}, nil
		}
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	b = setupWrapped(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: block, Timeout: time.Hour}}},
		func(s task.Store) task.Store { spy.Store = s; return spy })
	return b, spy, ended
}

// checkLost checks that what ended with the lost commit's error (and not
// with ctx's) and that the attempt was stopped.
func checkLost(t *testing.T, ctx context.Context, what string, err error, stopped <-chan error) {
	t.Helper()
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "disk I/O error") {
		t.Fatalf("%s after a lost creation: %v (ctx %v), want the commit's error", what, err, ctx.Err())
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("attempt stopped with %v, want canceled", err)
		}
	case <-ctx.Done():
		t.Fatal("the attempt of a task whose creation was lost kept running")
	}
}

// A speculative creation that never commits fails the blocking submission
// with an error instead of leaving it waiting, and stops the attempt.
func TestLostSpeculativeCreationFailsTheSubmit(t *testing.T) {
	t.Parallel()
	b, spy, stopped := lostCreation(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	for range 20 {
		var res *task.SubmitResult
		res, err = b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
		if err != nil || spy.speculative(res.Task.ID) {
			break
		}
	}
	checkLost(t, ctx, "SubmitAndWait", err, stopped)
}

// A blocking submission that claimed its task at submit runs the attempt
// on the caller's goroutine, to its recorded end, even when the caller
// gives up meanwhile, and then answers that end rather than the caller's
// canceled context: nothing is left running that nobody waits for.
func TestBlockingSubmitAnswersTheAttemptItRan(t *testing.T) {
	t.Parallel()
	spy := &createSpy{}
	started, release := make(chan struct{}, 1), make(chan struct{})
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if !spy.speculative(req.TaskID) {
			// Queued (the dispatcher's poll held every worker): it runs on
			// a worker, not the caller's goroutine. Answer; the test
			// submits again.
			return &task.Result{}, nil
		}
		started <- struct{}{}
		<-release
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{{Kind: task.PartText, Text: "ran"}}}}}, nil
	})
	b := setupWrapped(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: runner, Timeout: time.Minute}}},
		func(s task.Store) task.Store { spy.Store = s; return spy })
	type answer struct {
		res *task.SubmitResult
		err error
	}
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan answer, 1)
		go func() {
			res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
			done <- answer{res, err}
		}()
		select {
		case <-started:
		case a := <-done:
			cancel()
			if a.err != nil {
				t.Fatal(a.err)
			}
			continue
		}
		cancel()
		close(release)
		a := <-done
		if a.err != nil {
			t.Fatalf("SubmitAndWait whose caller gave up during the attempt it ran: %v, want the attempt's end", a.err)
		}
		if a.res.Task.State != task.StateSucceeded || len(a.res.Task.Artifacts) != 1 {
			t.Fatalf("answered %s with %d artifacts, want succeeded with the attempt's artifact", a.res.Task.State, len(a.res.Task.Artifacts))
		}
		stored, err := b.store.GetTask(context.Background(), a.res.Task.ID, 0)
		if err != nil || stored.State != task.StateSucceeded {
			t.Fatalf("stored task: %+v, %v", stored, err)
		}
		return
	}
	t.Fatal("no blocking submission in 20 claimed its task at submit")
}

// A followed submission (SubmitAndFollow, what a stream does) that claims
// its task is created speculatively too, and its sequence starts only once
// the creation committed: the snapshot it yields first is stored, and the
// stream then ends with the settled task.
func TestFollowedSubmitIsSpeculative(t *testing.T) {
	t.Parallel()
	spy := &createSpy{}
	b := setupWrapped(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}},
		func(s task.Store) task.Store { spy.Store = s; return spy })
	ctx := context.Background()
	speculative := 0
	const n = 10
	for i := range n {
		_, f, err := b.coord.SubmitAndFollow(ctx, task.SubmitRequest{Envelope: envelope("echo", "a", "hello")})
		if err != nil {
			t.Fatal(err)
		}
		first := true
		items, err := collect(t, f.Follow(ctx), func(it task.FollowItem) {
			if !first {
				return
			}
			first = false
			// Yielded only once the creation committed: readers find it.
			if _, err := b.store.GetTask(ctx, it.Task.ID, 0); err != nil {
				t.Errorf("follow %d: first item names a task the store does not have: %v", i, err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if items[0].Kind != task.FollowSnapshot {
			t.Fatalf("follow %d: first item %+v, want the snapshot", i, items[0])
		}
		last := items[len(items)-1]
		if !last.Settled() || last.Event.State != task.StateSucceeded {
			t.Fatalf("follow %d: last item %+v, want succeeded", i, last)
		}
		if spy.speculative(items[0].Task.ID) {
			speculative++
		}
	}
	spec, claimed := spy.calls()
	for i := range spec {
		if spec[i] != claimed[i] {
			t.Fatalf("SubmitAndFollow %d: speculative %v, claimed %v; want speculative exactly when claimed", i, spec[i], claimed[i])
		}
	}
	if speculative == 0 {
		t.Fatal("no followed submission was speculative")
	}
}

// A followed submission whose speculative creation never commits yields
// the commit's error instead of the task, and its attempt is stopped.
func TestLostSpeculativeCreationFailsTheFollow(t *testing.T) {
	t.Parallel()
	b, spy, stopped := lostCreation(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	for range 20 {
		var res *task.SubmitResult
		var f *task.Following
		if res, f, err = b.coord.SubmitAndFollow(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")}); err != nil {
			t.Fatal(err)
		}
		if !spy.speculative(res.Task.ID) {
			if _, err = collect(t, f.Follow(ctx), nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var items []task.FollowItem
		items, err = collect(t, f.Follow(ctx), nil)
		if len(items) != 0 {
			t.Fatalf("a task whose creation was lost yielded %+v", items)
		}
		break
	}
	checkLost(t, ctx, "Follow", err, stopped)
}

// An attempt that panics on a blocking request's goroutine gives its
// worker slot back: with one worker, the next submission still runs.
// (The panic now fails the attempt, TestPanickingAgentFailsItsAttempt;
// the slot's deferred release stays for a panic of pactum's own code
// there, which the transport recovers.)
func TestPanickingInlineAttemptFreesItsWorker(t *testing.T) {
	t.Parallel()
	spy := &createSpy{}
	var panicked atomic.Bool
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		// On the caller's goroutine (claimed at submit).
		if spy.speculative(req.TaskID) && !panicked.Swap(true) {
			panic("agent bug")
		}
		return &task.Result{}, nil
	})
	b := setupWrapped(t, task.Options{Workers: 1, Agents: []task.AgentSpec{{Name: "p", Runner: runner}}},
		func(s task.Store) task.Store { spy.Store = s; return spy })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < 20 && !panicked.Load(); i++ {
		func() {
			defer func() { _ = recover() }() // as net/http and the A2A SDK do
			_, _ = b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("p", "a", fmt.Sprint("first ", i))})
		}()
	}
	if !panicked.Load() {
		t.Fatal("no attempt ran on the caller's goroutine in 20 tries")
	}
	res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("p", "a", "second")})
	if err != nil || res.Task.State != task.StateSucceeded {
		t.Fatalf("the submission after a panicking attempt: %+v, %v; want it run (the worker given back)", res, err)
	}
}
