// Package relaytest is the conformance suite of task.Relay implementations:
// what two Coordinators linked by a relay must do together. A relay's tests
// call Run with a function that returns, for each scenario, a fresh backend
// on which Open opens one node's store and relay:
//
//	relaytest.Run(t, func(t *testing.T) relaytest.Open {
//		schema := newSchema(t)
//		return func(t *testing.T) (task.Store, task.Relay) {
//			st := open(t, dsn, schema)
//			return st, st.Relay()
//		}
//	})
package relaytest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// Open opens one more node on a shared backend: its store and its relay.
// The caller closes them when the test ends (t.Cleanup registered before
// the node's own cleanups runs after them).
type Open func(t *testing.T) (task.Store, task.Relay)

// Run runs the scenarios, each on a backend newBackend returns.
func Run(t *testing.T, newBackend func(t *testing.T) Open) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"RunsTaskOnOtherNodeAndAnswersWaiter", testRunsOnOtherNode},
		{"StreamsOtherNodesEvents", testStreams},
		{"CancelStopsAttemptOnOtherNode", testCancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newBackend(t))
		})
	}
}

// TwoNodes opens two nodes and runs a Coordinator on each, linked by their
// relays. Polling is slow (1 h), so whatever moves fast moved because of
// the relay. Node A has one worker, and a task of the "hold" agent
// occupies it until the test ends, so every task submitted on A afterwards
// runs on B. It returns once each node hears the other.
func TwoNodes(t *testing.T, open Open, agents []task.AgentSpec) (a, b *task.Coordinator) {
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
	relays := map[*task.Coordinator]task.Relay{}
	start := func(node string, workers int) *task.Coordinator {
		st, relay := open(t)
		c, err := task.NewCoordinator(task.Options{Store: st, Relay: relay, Agents: agents, Node: node,
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
		})
		relays[c] = relay
		return c
	}
	// A first, alone, so it takes the hold task itself.
	a = start("node-a", 1)
	if _, err := a.Submit(ctx, task.SubmitRequest{Envelope: Envelope("hold", "hold")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("node A never ran the hold task")
	}
	b = start("node-b", 4)
	// Cleanups run last first: the hold task ends before the nodes stop.
	t.Cleanup(func() { close(release) })
	hears(t, a, relays[b])
	hears(t, b, relays[a])
	return a, b
}

// hears waits until c receives what from sends: a probe event from a node
// named "probe", which c puts on its broker like any remote event.
func hears(t *testing.T, c *task.Coordinator, from task.Relay) {
	t.Helper()
	id := "probe-" + task.NewID()
	ch, stop := c.Broker().Subscribe(id)
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		from.Send(task.Event{Kind: task.EventArtifact, TaskID: id, Node: "probe", At: time.Now().UTC(),
			Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "probe", Parts: []task.Part{task.TextPart("probe")}}}})
		select {
		case <-ch:
			return
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("node %s never heard the other node's relay", c.Node())
		}
	}
}

// Envelope is a task envelope of actor alice for action with a text input.
func Envelope(action, input string) task.Envelope {
	return task.Envelope{Action: action, Actor: "alice",
		Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(input)}}}
}

// testRunsOnOtherNode: node A only takes the request (its one worker is
// busy); the relay's "queued" event wakes node B at once, B runs the task,
// and A's SubmitAndWait hears B's final event.
func testRunsOnOtherNode(t *testing.T, open Open) {
	var calls atomic.Int64
	echo := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		return &task.Result{Artifacts: []task.Artifact{{Name: "echo", Parts: req.Message.Parts}}}, nil
	})
	a, _ := TwoNodes(t, open, []task.AgentSpec{{Name: "echo", Runner: echo}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := a.SubmitAndWait(ctx, task.SubmitRequest{Envelope: Envelope("echo", "hi")})
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

// testStreams: a subscriber on A sees B's artifact chunks and status
// changes, in order, none claiming a whole task.
func testStreams(t *testing.T, open Open) {
	release := make(chan struct{})
	words := []string{"one ", "two ", "three ", "four ", "five"}
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		for _, s := range words {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(s)}}, Append: true}); err != nil {
				return nil, err
			}
		}
		return &task.Result{}, nil
	})
	a, _ := TwoNodes(t, open, []task.AgentSpec{{Name: "stream", Runner: streamer}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: Envelope("stream", "go")})
	if err != nil {
		t.Fatal(err)
	}
	_, ch, stop, err := a.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// B streams only once A subscribed, so A hears every chunk.
	close(release)
	var chunks []string
	var states []task.State
	seq := 0
loop:
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("subscription closed before the final event")
			}
			if ev.Seq < seq {
				t.Errorf("event seq %d after %d", ev.Seq, seq)
			}
			seq = ev.Seq
			switch ev.Kind {
			case task.EventArtifact:
				chunks = append(chunks, ev.Chunk.Artifact.Parts[0].Text)
				if ev.Node != "node-b" {
					t.Errorf("chunk from node %q, want node-b", ev.Node)
				}
			case task.EventStatus:
				if ev.Node != "node-b" {
					t.Errorf("status %s from node %q, want node-b", ev.State, ev.Node)
				}
				if ev.Complete || (ev.Task != nil && (ev.Task.History != nil || ev.Task.Artifacts != nil)) {
					t.Errorf("relayed status %s claims a whole task", ev.State)
				}
				if ev.Task == nil || ev.Task.ID != res.Task.ID || ev.Task.State != ev.State {
					t.Errorf("relayed status %s carries snapshot %+v", ev.State, ev.Task)
				}
				states = append(states, ev.State)
			}
			if ev.Final {
				break loop
			}
		case <-ctx.Done():
			t.Fatalf("no final event; got chunks %q, states %v", chunks, states)
		}
	}
	if strings.Join(chunks, "") != strings.Join(words, "") {
		t.Errorf("chunks %q, want %q in order", chunks, words)
	}
	if len(states) == 0 || states[len(states)-1] != task.StateSucceeded {
		t.Fatalf("states %v, want them to end in succeeded", states)
	}
}

// testCancel: a cancel taken on A stops the attempt running on B at once,
// not at B's next lease renewal (an hour away here).
func testCancel(t *testing.T, open Open) {
	started, stopped := make(chan struct{}), make(chan struct{})
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		close(started)
		<-ctx.Done()
		close(stopped)
		return nil, ctx.Err()
	})
	a, _ := TwoNodes(t, open, []task.AgentSpec{{Name: "block", Runner: block}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: Envelope("block", "x")})
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
