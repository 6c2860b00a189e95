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
	"github.com/pactum/pactum/task/relaytest"
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

// memBackend is a relaytest backend: one SQLite file that each node opens
// again (as separate processes would), linked by one in-memory relay.
func memBackend(t *testing.T) (relaytest.Open, *memRelay) {
	path := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	relay := &memRelay{}
	return func(t *testing.T) (task.Store, task.Relay) {
		st, err := store.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st, relay
	}, relay
}

// TestRelayConformance runs the relay suite on the in-memory relay, which
// pins what the Coordinator does with any relay.
func TestRelayConformance(t *testing.T) {
	relaytest.Run(t, func(t *testing.T) relaytest.Open {
		open, _ := memBackend(t)
		return open
	})
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
	open, relay := memBackend(t)
	a, b := relaytest.TwoNodes(t, open, []task.AgentSpec{{Name: "gated", Runner: gated}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := a.Submit(ctx, task.SubmitRequest{Envelope: relaytest.Envelope("gated", "x")})
	if err != nil {
		t.Fatal(err)
	}
	// Follow is what Wait does; its first item, the snapshot, comes once
	// it listens, so the task is released only after that: a waiter
	// started late would read the finished task from the store and prove
	// nothing.
	listening := make(chan struct{})
	done := make(chan *task.Task, 1)
	go func() {
		first := true
		for it, err := range a.Follow(ctx, res.Task.ID) {
			if err != nil {
				t.Errorf("Follow: %v", err)
				done <- nil
				return
			}
			if first {
				first = false
				close(listening)
			}
			if it.Settled() {
				got, err := a.Get(ctx, res.Task.ID, -1)
				if err != nil {
					t.Errorf("Get: %v", err)
				}
				done <- got
				return
			}
		}
	}()
	select {
	case <-listening:
	case <-ctx.Done():
		t.Fatal("Follow never listened")
	}
	// Node B finishes the task while the relay drops everything. B's own
	// subscribers hear of it at once; node A's waiter must not return in
	// the 300 ms that follow, having heard nothing. (Nothing marks the
	// end of a wait that should not end: a window it is.)
	onB, unsubscribe := b.Broker().Subscribe(res.Task.ID)
	defer unsubscribe()
	relay.deaf.Store(true)
	close(release)
	for ev := recv(t, onB, "node B's event"); !ev.Final; ev = recv(t, onB, "node B's final event") {
	}
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
