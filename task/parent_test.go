package task_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// phases is a parent's decision logic: the steps of each phase are spawned
// together once every step of the phases before has succeeded; a step that
// ended otherwise fails the run; when all succeeded the run reports each
// step's output. It decides only from req.Children, as a parent must.
func phases(agentFor func(step string) string, ph ...[]string) task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		byStep := map[string]*task.Task{}
		for _, c := range req.Children {
			byStep[c.Envelope.Step] = c
		}
		for _, phase := range ph {
			var spawn []task.Child
			waiting := false
			for _, s := range phase {
				c, ok := byStep[s]
				switch {
				case !ok:
					spawn = append(spawn, task.Child{Step: s, Agent: agentFor(s), Input: text(req.Message.Text() + "/" + s)})
				case c.State == task.StateSucceeded:
				case c.State.Terminal():
					return nil, task.Permanent(fmt.Errorf("step %s ended %s: %s", s, c.State, c.Reason))
				default:
					waiting = true
				}
			}
			if len(spawn) > 0 {
				return &task.Result{Spawn: spawn}, nil
			}
			if waiting {
				return &task.Result{Wait: true}, nil
			}
		}
		var lines []string
		for _, c := range req.Children {
			out := ""
			if len(c.Artifacts) > 0 {
				out = partsText(c.Artifacts[0].Parts)
			}
			lines = append(lines, c.Envelope.Step+"="+out)
		}
		return &task.Result{Artifacts: []task.Artifact{{ID: "report", Parts: []task.Part{task.TextPart(strings.Join(lines, ";"))}}}}, nil
	})
}

// stepCounter counts the runs of each child step.
type stepCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *stepCounter) runner() task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		s.mu.Lock()
		if s.n == nil {
			s.n = map[string]int{}
		}
		s.n[req.Envelope.Step]++
		s.mu.Unlock()
		return &task.Result{Artifacts: []task.Artifact{{Parts: req.Message.Parts}}}, nil
	})
}

func (s *stepCounter) runs() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

func children(t *testing.T, c *task.Coordinator, parent string) []*task.Task {
	t.Helper()
	page, err := c.List(context.Background(), task.ListParams{ParentTaskID: parent, PageSize: task.MaxPageSize, IncludeArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	return page.Tasks
}

func steps(kids []*task.Task) []string {
	var out []string
	for _, k := range kids {
		out = append(out, k.Envelope.Step+":"+string(k.State))
	}
	return out
}

func echoFor(string) string { return "echo" }

// TestParentRunsPhases: three sequential children, then three in
// parallel, on ONE worker: a waiting parent holds no worker, or its first
// child could never run. Every child runs once, in order, and the parent
// reports from what its children stored.
func TestParentRunsPhases(t *testing.T) {
	t.Parallel()
	var sc stepCounter
	b := setup(t, task.Options{Workers: 1, Agents: []task.AgentSpec{
		{Name: "run", Runner: phases(echoFor, []string{"s1"}, []string{"s2"}, []string{"s3"}, []string{"p1", "p2", "p3"}),
			Retry: task.RetryPolicy{MaxAttempts: 1}},
		{Name: "echo", Runner: sc.runner()},
	}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded {
		t.Fatalf("parent %s: %s: %s", got.State, got.ErrorCode, got.Reason)
	}
	if got.Children != 6 {
		t.Fatalf("parent counts %d children", got.Children)
	}
	want := "s1=go/s1;s2=go/s2;s3=go/s3;p1=go/p1;p2=go/p2;p3=go/p3"
	if len(got.Artifacts) != 1 || partsText(got.Artifacts[0].Parts) != want {
		t.Fatalf("report %+v, want %q", got.Artifacts, want)
	}
	kids := children(t, b.coord, got.ID)
	if s := steps(kids); !slices.Equal(s, []string{"s1:succeeded", "s2:succeeded", "s3:succeeded", "p1:succeeded", "p2:succeeded", "p3:succeeded"}) {
		t.Fatalf("children %v", s)
	}
	for _, k := range kids {
		if k.Envelope.ParentTaskID != got.ID || k.Envelope.Actor != "alice" || k.ContextID != got.ContextID || k.Agent != "echo" {
			t.Fatalf("child envelope %+v", k.Envelope)
		}
	}
	for step, n := range sc.runs() {
		if n != 1 {
			t.Fatalf("step %s ran %d times", step, n)
		}
	}
	// Sequential steps: each spawned only after the one before succeeded.
	for i := 1; i < 3; i++ {
		if !kids[i].CreatedAt.After(kids[i-1].UpdatedAt) && !kids[i].CreatedAt.Equal(kids[i-1].UpdatedAt) {
			t.Fatalf("%s created %s, before %s ended %s", kids[i].Envelope.Step, kids[i].CreatedAt, kids[i-1].Envelope.Step, kids[i-1].UpdatedAt)
		}
	}
	// The parent waited and was woken: each wake starts a turn, so one
	// attempt per turn is enough however many decisions the run takes.
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	var waits, wakes int
	for _, r := range recs {
		switch {
		case r.From == task.StateInProgress && r.To == task.StateWaiting:
			waits++
		case r.From == task.StateWaiting && r.To == task.StateQueued:
			wakes++
			if !strings.Contains(r.Reason, "succeeded") || !strings.Contains(r.Reason, "step") {
				t.Fatalf("wake reason %q", r.Reason)
			}
		}
	}
	if waits < 4 || waits != wakes {
		t.Fatalf("%d waits and %d wakes in %+v", waits, wakes, recs)
	}
	verifyAudit(t, b)
}

// TestCancelParentCancelsChildren: canceling a waiting parent cancels its
// running children in the same transaction and stops their attempts.
func TestCancelParentCancelsChildren(t *testing.T) {
	t.Parallel()
	started := make(chan string, 4)
	stopped := make(chan string, 4)
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- req.Envelope.Step
		<-ctx.Done()
		stopped <- req.Envelope.Step
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "run", Runner: phases(func(string) string { return "block" }, []string{"b1", "b2"})},
		{Name: "block", Runner: block},
	}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, started, "first child started")
	recv(t, started, "second child started")
	got, err := b.coord.Cancel(context.Background(), res.Task.ID, "operator gave up")
	if err != nil || got.State != task.StateCanceled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	recv(t, stopped, "first child stopped")
	recv(t, stopped, "second child stopped")
	for _, k := range children(t, b.coord, res.Task.ID) {
		k = wait(t, b, k.ID)
		if k.State != task.StateCanceled || !strings.Contains(k.Reason, res.Task.ID) {
			t.Fatalf("child %s: %s: %s", k.Envelope.Step, k.State, k.Reason)
		}
	}
	recs, _ := b.coord.Timeline(context.Background(), res.Task.ID)
	if last := recs[len(recs)-1]; last.To != task.StateCanceled {
		t.Fatalf("parent moved on after its cancel: %+v", last)
	}
	verifyAudit(t, b)
}

// TestChildDeadLetterIsReportedToParent: a child that spends its attempts
// wakes its parent with its reason, and the parent fails naming it.
func TestChildDeadLetterIsReportedToParent(t *testing.T) {
	t.Parallel()
	down := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return nil, errors.New("backend down")
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "run", Runner: phases(func(string) string { return "down" }, []string{"c1"})},
		{Name: "down", Runner: down, Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}},
	}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateFailed || !strings.Contains(got.Reason, "c1 ended dead_letter") || !strings.Contains(got.Reason, "backend down") {
		t.Fatalf("parent %s: %s", got.State, got.Reason)
	}
	recs, _ := b.coord.Timeline(context.Background(), got.ID)
	woke := false
	for _, r := range recs {
		if r.From == task.StateWaiting && r.To == task.StateQueued {
			woke = strings.Contains(r.Reason, "dead_letter") && strings.Contains(r.Reason, "backend down")
		}
	}
	if !woke {
		t.Fatalf("no wake record carries the child's dead letter: %+v", recs)
	}
}

// TestSpawnRefusesBadChildren: a child that names no agent pactum has, or
// a step used twice, fails the parent's attempt permanently and spawns
// nothing; a caller cannot submit a task as another's child.
func TestSpawnRefusesBadChildren(t *testing.T) {
	t.Parallel()
	spawn := func(ch ...task.Child) task.Runner {
		return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			return &task.Result{Spawn: ch}, nil
		})
	}
	var calls stepCounter
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "unknown", Runner: spawn(task.Child{Step: "a", Agent: "nobody", Input: text("x")})},
		{Name: "twice", Runner: spawn(task.Child{Step: "a", Agent: "echo", Input: text("x")}, task.Child{Step: "a", Agent: "echo", Input: text("y")})},
		{Name: "nameless", Runner: spawn(task.Child{Agent: "echo", Input: text("x")})},
		{Name: "empty", Runner: spawn(task.Child{Step: "a", Agent: "echo"})},
		{Name: "echo", Runner: calls.runner()},
	}})
	for _, agent := range []string{"unknown", "twice", "nameless", "empty"} {
		res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope(agent, "alice", "go")})
		if err != nil {
			t.Fatal(err)
		}
		got := wait(t, b, res.Task.ID)
		if got.State != task.StateFailed || got.Children != 0 || got.TurnAttempt() != 1 {
			t.Fatalf("%s: %s after %d attempts, %d children: %s", agent, got.State, got.TurnAttempt(), got.Children, got.Reason)
		}
		if kids := children(t, b.coord, got.ID); len(kids) != 0 {
			t.Fatalf("%s spawned %v", agent, steps(kids))
		}
	}
	if len(calls.runs()) != 0 {
		t.Fatalf("children ran: %v", calls.runs())
	}
	env := envelope("echo", "alice", "x")
	env.ParentTaskID = "someone-else"
	if _, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: env}); task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Fatalf("submit as a child: %v", err)
	}
}

// TestParentResumesAfterRestart: a node stops in the middle of a run (its
// running child's lease left to expire, as after a crash); another
// Coordinator on the same store finishes the run, and the child that had
// succeeded is not run again.
func TestParentResumesAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	var sc stepCounter
	stuck := make(chan struct{}, 1)
	first := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if req.Envelope.Step == "s2" {
			stuck <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return sc.runner().Run(ctx, req, emit)
	})
	open := func(child task.Runner) (task.Store, *task.Coordinator) {
		st, err := store.Open(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := task.NewCoordinator(task.Options{Store: st, LeaseFor: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond,
			Agents: []task.AgentSpec{
				{Name: "run", Runner: phases(echoFor, []string{"s1"}, []string{"s2"}, []string{"s3"})},
				{Name: "echo", Runner: child},
			}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return st, c
	}
	st1, c1 := open(first)
	res, err := c1.Submit(ctx, task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	recv(t, stuck, "s2 running")
	// The drain's deadline has passed: Stop cuts s2's attempt at once.
	sctx, cancel := context.WithDeadline(ctx, time.Now())
	_ = c1.Stop(sctx)
	cancel()
	_ = st1.Close()

	st2, c2 := open(sc.runner())
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c2.Stop(sctx)
		_ = st2.Close()
	})
	b := &bundle{store: st2, coord: c2}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded {
		t.Fatalf("parent %s: %s", got.State, got.Reason)
	}
	if runs := sc.runs(); runs["s1"] != 1 || runs["s2"] != 1 || runs["s3"] != 1 {
		t.Fatalf("runs to completion per step: %v", runs)
	}
	if s := steps(children(t, c2, got.ID)); !slices.Equal(s, []string{"s1:succeeded", "s2:succeeded", "s3:succeeded"}) {
		t.Fatalf("children %v", s)
	}
	verifyAudit(t, b)
}

// TestChildOnlyAgentsRunOnlyAsChildren: a caller cannot submit to a
// child-only agent (the answer is that of an agent that does not exist),
// and a parent can spawn it.
func TestChildOnlyAgentsRunOnlyAsChildren(t *testing.T) {
	t.Parallel()
	var sc stepCounter
	b := setup(t, task.Options{Agents: []task.AgentSpec{
		{Name: "run", Runner: phases(func(string) string { return "step" }, []string{"s1"})},
		{Name: "step", Runner: sc.runner(), ChildOnly: true},
	}})
	_, err := b.coord.Submit(context.Background(), task.SubmitRequest{Agent: "step", Envelope: envelope("", "alice", "x")})
	_, unknown := b.coord.Submit(context.Background(), task.SubmitRequest{Agent: "nobody", Envelope: envelope("", "alice", "x")})
	if task.ErrorCode(err) != task.CodeNotFound || err.Error() != strings.Replace(unknown.Error(), "nobody", "step", 1) {
		t.Fatalf("submit to a child-only agent: %v (unknown agent: %v)", err, unknown)
	}
	if _, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("step", "alice", "x")}); task.ErrorCode(err) != task.CodeNotFound {
		t.Fatalf("submit to a child-only agent by action: %v", err)
	}
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded || sc.runs()["s1"] != 1 {
		t.Fatalf("run %s (%s), step runs %v", got.State, got.Reason, sc.runs())
	}
}
