package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// TestStreamsLeftByTheirCallersAreReleased: clients that go away in the
// middle of a stream (SubscribeToTask and SendStreamingMessage, over
// JSON-RPC, which pactum answers itself, and HTTP+JSON, which the SDK
// serves) give their event subscriptions back at once, while the tasks
// they followed still run: nothing is held on the server for a caller
// that is gone. The tasks run on, and are canceled afterwards.
func TestStreamsLeftByTheirCallersAreReleased(t *testing.T) {
	t.Parallel()
	// The agent outlasts the test: a task ends only when canceled.
	n := startNode(t, "", "agents:\n  - name: slow\n    type: echo\n    echo: {delay: 120s}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const subscribers = "pactum_event_subscribers"
	if got := n.metric(t, subscribers); got != 0 {
		t.Fatalf("%s = %v before any stream, want 0", subscribers, got)
	}
	card, err := agentcard.DefaultResolver.Resolve(ctx, n.base+"/agents/slow")
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*a2aclient.Client{}
	for name, proto := range map[string]a2a.TransportProtocol{"jsonrpc": a2a.TransportProtocolJSONRPC, "rest": a2a.TransportProtocolHTTPJSON} {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(http.DefaultClient), a2aclient.WithRESTTransport(http.DefaultClient),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{proto}}))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Destroy()
		clients[name] = c
	}
	// The task the SubscribeToTask streams follow.
	followed := startTask(ctx, t, clients["jsonrpc"], "followed")
	tasks := map[a2a.TaskID]bool{followed.ID: true}

	// Each stream runs in a goroutine until its context is canceled; it
	// reports its first event (so its subscription is open) and, at its
	// end, how it ended.
	type stream struct {
		name   string
		cancel context.CancelFunc
		first  chan a2a.Event
		done   chan error
	}
	var streams []*stream
	open := func(name string, events func(context.Context) func(func(a2a.Event, error) bool)) {
		sctx, scancel := context.WithCancel(ctx)
		s := &stream{name: name, cancel: scancel, first: make(chan a2a.Event, 1), done: make(chan error, 1)}
		streams = append(streams, s)
		go func() {
			var err error
			seen := false
			for ev, e := range events(sctx) {
				if e != nil {
					err = e
					break
				}
				if !seen {
					seen = true
					s.first <- ev
				}
			}
			close(s.first)
			s.done <- err
		}()
	}
	const perKind = 3
	for name, c := range clients {
		for range perKind {
			open(name+" SubscribeToTask", func(sctx context.Context) func(func(a2a.Event, error) bool) {
				return c.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{ID: followed.ID})
			})
			open(name+" SendStreamingMessage", func(sctx context.Context) func(func(a2a.Event, error) bool) {
				return c.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("streamed"))})
			})
		}
	}
	for _, s := range streams {
		select {
		case ev, ok := <-s.first:
			if !ok {
				t.Fatalf("%s ended before its first event: %v", s.name, <-s.done)
			}
			if tk, ok := ev.(*a2a.Task); ok {
				tasks[tk.ID] = true
			} else if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				tasks[st.TaskID] = true
			}
		case <-ctx.Done():
			t.Fatalf("%s: no first event", s.name)
		}
	}
	if want := 1 + 2*perKind; len(tasks) != want {
		t.Fatalf("the streams name %d tasks, want %d (one followed, %d streamed)", len(tasks), want, 2*perKind)
	}
	waitFor(t, "every stream's subscription", func() bool { return n.metric(t, subscribers) == float64(len(streams)) })

	// The callers go away.
	for _, s := range streams {
		s.cancel()
	}
	for _, s := range streams {
		select {
		case <-s.done:
		case <-ctx.Done():
			t.Fatalf("%s did not end when its context was canceled", s.name)
		}
	}
	waitFor(t, "the subscriptions of the streams whose callers left to be released", func() bool { return n.metric(t, subscribers) == 0 })

	// Released because the callers left, not because the tasks ended: they
	// all still run, and end when canceled.
	c := clients["jsonrpc"]
	for id := range tasks {
		tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("GetTask %s: %v", id, err)
		}
		if tk.Status.State != a2a.TaskStateWorking {
			t.Errorf("task %s is %s after its streams' callers left, want still working", id, tk.Status.State)
		}
		if tk, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil || tk.Status.State != a2a.TaskStateCanceled {
			t.Errorf("CancelTask %s: %v, %v", id, tk, err)
		}
	}
	if got := n.metric(t, subscribers); got != 0 {
		t.Errorf("%s = %v after the tasks ended, want 0", subscribers, got)
	}
}

// startTask sends text with returnImmediately and returns the task the
// server answers with, still running.
func startTask(ctx context.Context, t *testing.T, c *a2aclient.Client, text string) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatalf("SendMessage %q: %v", text, err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage %q answered %T, want a task", text, res)
	}
	return tk
}
