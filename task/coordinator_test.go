package task_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/clocktest"
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

// recv waits (bounded) for a value on ch; what names it in the failure.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("no %s: the channel closed", what)
		}
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// timerSet waits (bounded) until clock has a timer set for when, so that
// the Advance that follows fires it (clocktest.Clock.WaitForTimer); what
// names the timer in the failure.
func timerSet(t *testing.T, clock *clocktest.Clock, when time.Time, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := clock.WaitForTimer(ctx, when); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitUntil waits (bounded) until cond holds, checking it once at first
// and again each time changed receives: no polling, changed says when to
// look. what names the condition in the failure.
func waitUntil(t *testing.T, changed <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("still not %s", what)
		}
	}
}

// attemptEnds is an Observer that reports where each attempt went: the
// state of every transition out of in_progress.
type attemptEnds chan task.State

func (a attemptEnds) Transition(agent string, from, to task.State) {
	if from == task.StateInProgress {
		a <- to
	}
}

func (attemptEnds) AttemptFinished(string, time.Duration, error) {}
