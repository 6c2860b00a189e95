package task_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// memRelay links coordinators in one process. It stands in for a real
// relay (PostgreSQL LISTEN/NOTIFY, tested in store/postgres) so these tests
// pin what the Coordinator does with one: every node hears every other
// node's events, in order.
type memRelay struct {
	mu        sync.Mutex
	listeners map[int]func(task.Event)
	next      int
	sent      atomic.Int64
	deaf      atomic.Bool // drop what is sent, as a broken connection would
}

// resync tells every listener it (re)started listening.
func (r *memRelay) resync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, deliver := range r.listeners {
		deliver(task.Event{Kind: task.EventResync})
	}
}

func (r *memRelay) Send(ev task.Event) {
	if r.deaf.Load() {
		return
	}
	r.sent.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, deliver := range r.listeners {
		deliver(ev)
	}
}

func (r *memRelay) Listen(ctx context.Context, deliver func(task.Event)) error {
	r.mu.Lock()
	if r.listeners == nil {
		r.listeners = map[int]func(task.Event){}
	}
	id := r.next
	r.next++
	r.listeners[id] = deliver
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	delete(r.listeners, id)
	r.mu.Unlock()
	return ctx.Err()
}

// twoNodes opens one SQLite file twice (two stores, as two processes
// would) and runs a coordinator on each, linked by one relay. Polling is
// slow (1 h), so whatever moves fast moved because of the relay. Node A has
// one worker, and a task of the "hold" agent occupies it until the test
// ends, so every task submitted on A afterwards runs on B.
func twoNodes(t *testing.T, agents []task.AgentSpec) (a, b *task.Coordinator) {
	a, b, _ = twoNodesRelay(t, agents)
	return a, b
}

func twoNodesRelay(t *testing.T, agents []task.AgentSpec) (a, b *task.Coordinator, relay *memRelay) {
	t.Helper()
	held, release := make(chan struct{}, 1), make(chan struct{})
	agents = append(agents, task.AgentSpec{Name: "hold", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		held <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &task.Result{}, nil
	})})
	ctx := context.Background()
	path := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	relay = &memRelay{}
	open := func(node string, workers int) *task.Coordinator {
		st, err := store.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := task.NewCoordinator(task.Options{Store: st, Agents: agents, Node: node, Relay: relay,
			Workers: workers, PollInterval: time.Hour, LeaseFor: time.Hour})
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
		return c
	}
	// A first, alone, so it takes the hold task itself.
	a = open("node-a", 1)
	if _, err := a.Submit(ctx, task.SubmitRequest{Envelope: envelope("hold", "alice", "hold")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("node A never ran the hold task")
	}
	b = open("node-b", 4)
	// Cleanups run last first: the hold task ends before the nodes stop.
	t.Cleanup(func() { close(release) })
	// Both listeners are registered before the test goes on.
	deadline := time.Now().Add(5 * time.Second)
	for {
		relay.mu.Lock()
		n := len(relay.listeners)
		relay.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d relay listeners, want both nodes", n)
		}
		time.Sleep(time.Millisecond)
	}
	return a, b, relay
}

// TestRelayResyncAnswersWaiterThatMissedEvents: events sent while a relay
// was not listening are lost; when it listens again (EventResync) a waiter
// re-reads the store instead of waiting forever for the final event.
func TestRelayResyncAnswersWaiterThatMissedEvents(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	gated := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		<-release
		return &task.Result{}, nil
	})
	a, _, relay := twoNodesRelay(t, []task.AgentSpec{{Name: "gated", Runner: gated}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: envelope("gated", "alice", "x")})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *task.Task, 1)
	go func() {
		got, err := a.Wait(ctx, res.Task.ID)
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		done <- got
	}()
	// Node B finishes the task while the relay drops everything.
	relay.deaf.Store(true)
	close(release)
	select {
	case <-done:
		t.Fatal("Wait returned although its node heard no final event")
	case <-time.After(300 * time.Millisecond):
	}
	relay.deaf.Store(false)
	relay.resync()
	select {
	case got := <-done:
		if got == nil || got.State != task.StateSucceeded {
			t.Fatalf("Wait after resync = %v, want succeeded", got)
		}
	case <-ctx.Done():
		t.Fatal("Wait still blocked after the relay resynced")
	}
}

// TestRelayRunsTaskOnOtherNodeAndAnswersWaiter: node A only takes the
// request (its one worker is busy); the relay's "queued" event wakes node B at
// once, B runs the task, and A's SubmitAndWait and streaming subscriber hear
// every state B goes through.
func TestRelayRunsTaskOnOtherNodeAndAnswersWaiter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	a, _ := twoNodes(t, []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("echo", "alice", "hi")})
	if err != nil {
		t.Fatalf("SubmitAndWait on node A: %v (the relay did not wake node B, or B's events did not reach A)", err)
	}
	got := res.Task
	if got.State != task.StateSucceeded || len(got.Artifacts) != 1 || calls.Load() != 1 {
		t.Fatalf("task = %s with %d artifacts after %d calls, want succeeded, 1, 1", got.State, len(got.Artifacts), calls.Load())
	}
	recs, err := a.Timeline(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.To == task.StateInProgress && r.Node != "node-b" {
			t.Errorf("claimed by %q, want node-b", r.Node)
		}
	}
}

// TestRelayStreamsOtherNodesEvents: a subscriber on A sees B's artifact
// chunks and its status changes, in order.
func TestRelayStreamsOtherNodesEvents(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		for _, s := range []string{"one ", "two"} {
			emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(s)}}, Append: true})
		}
		<-release
		return &task.Result{}, nil
	})
	a, _ := twoNodes(t, []task.AgentSpec{{Name: "stream", Runner: streamer}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: envelope("stream", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	_, ch, stop, err := a.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	close(release)
	var chunks []string
	var last task.State
	for ev := range ch {
		switch ev.Kind {
		case task.EventArtifact:
			chunks = append(chunks, ev.Chunk.Artifact.Parts[0].Text)
		case task.EventStatus:
			if ev.Node != "node-b" {
				t.Errorf("status %s from node %q, want node-b", ev.State, ev.Node)
			}
			if ev.Complete || (ev.Task != nil && (ev.Task.History != nil || ev.Task.Artifacts != nil)) {
				t.Errorf("relayed status %s claims a whole task", ev.State)
			}
			last = ev.State
		}
		if ev.Final {
			break
		}
	}
	// The subscription may begin after B's chunks went by (they are not
	// stored one by one), so only what arrived is checked for order.
	if len(chunks) > 0 && (chunks[0] != "one " || (len(chunks) == 2 && chunks[1] != "two")) {
		t.Errorf("chunks %q, want in order", chunks)
	}
	if last != task.StateSucceeded {
		t.Fatalf("last state %s, want succeeded", last)
	}
}

// TestRelayCancelStopsAttemptOnOtherNode: a cancel taken on A stops the
// attempt running on B at once, not at B's next lease renewal (an hour
// away here).
func TestRelayCancelStopsAttemptOnOtherNode(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}), make(chan struct{})
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		close(started)
		<-ctx.Done()
		close(stopped)
		return nil, ctx.Err()
	})
	a, _ := twoNodes(t, []task.AgentSpec{{Name: "block", Runner: block}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "alice", "x")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("node B never started the task")
	}
	if _, err := a.Cancel(ctx, res.Task.ID, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("the attempt on node B kept running after the cancel on node A")
	}
	got, err := a.Wait(ctx, res.Task.ID)
	if err != nil || got.State != task.StateCanceled {
		t.Fatalf("Wait = %v, %v; want canceled", got, err)
	}
}
