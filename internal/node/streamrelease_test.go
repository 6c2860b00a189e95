package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/task"
)

// TestStreamsLeftByTheirCallersAreReleased: clients that go away in the
// middle of a stream (SubscribeToTask and SendStreamingMessage, over A2A
// 1.0 JSON-RPC, which pactum answers itself, and HTTP+JSON, which the SDK
// serves, with the official client; their 0.3 forms over both bindings,
// as raw SSE requests; an MCP tool call waiting for its task) give their
// event subscriptions back at once, while
// the tasks they followed still run: nothing is held on the server for a
// caller that is gone. The tasks run on, and are canceled afterwards.
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
	// first carries the id of the task its first event names.
	type stream struct {
		name   string
		cancel context.CancelFunc
		first  chan string
		done   chan error
	}
	var streams []*stream
	newStream := func(name string) (*stream, context.Context) {
		sctx, scancel := context.WithCancel(ctx)
		s := &stream{name: name, cancel: scancel, first: make(chan string, 1), done: make(chan error, 1)}
		streams = append(streams, s)
		return s, sctx
	}
	open := func(name string, events func(context.Context) func(func(a2a.Event, error) bool)) {
		s, sctx := newStream(name)
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
					s.first <- string(ev.TaskInfo().TaskID)
				}
			}
			close(s.first)
			s.done <- err
		}()
	}
	// openRaw opens an A2A 0.3 stream (no A2A-Version header) as a plain
	// SSE request and reads it until its context ends.
	openRaw := func(name, method, path, body string) {
		s, sctx := newStream(name)
		go func() {
			var rd io.Reader = http.NoBody
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequestWithContext(sctx, method, n.base+"/agents/slow"+path, rd)
			if err != nil {
				close(s.first)
				s.done <- err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				close(s.first)
				s.done <- err
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			seen := false
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data:")
				if !ok || seen {
					continue
				}
				seen = true
				var v any
				_ = json.Unmarshal([]byte(data), &v)
				s.first <- taskIDIn(v)
			}
			close(s.first)
			s.done <- sc.Err()
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
	id := string(followed.ID)
	openRaw("jsonrpc 0.3 tasks/resubscribe", http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`)
	openRaw("jsonrpc 0.3 message/stream", http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"`+task.NewID()+`","role":"user","parts":[{"kind":"text","text":"streamed 0.3"}]}}}`)
	openRaw("rest 0.3 tasks:subscribe", http.MethodGet, "/v1/tasks/"+id+":subscribe", "")
	openRaw("rest 0.3 message:stream", http.MethodPost, "/v1/message:stream", `{"message":{"messageId":"`+task.NewID()+`","role":"ROLE_USER","content":[{"text":"streamed 0.3"}]}}`)
	// An MCP call waiting for its task: its progress notifications name
	// the task ("task <id> is …").
	mcpFirst := make(chan string, 16)
	mcpSession, err := mcp.NewClient(&mcp.Implementation{Name: "leaver", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if f := strings.Fields(req.Params.Message); len(f) > 1 && f[0] == "task" {
				select {
				case mcpFirst <- f[1]:
				default:
				}
			}
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: n.base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mcpSession.Close()
	{
		s, sctx := newStream("mcp submit_task wait")
		go func() {
			p := &mcp.CallToolParams{Name: "submit_task", Arguments: map[string]any{"agent": "slow", "text": "waited", "wait": true}}
			p.SetProgressToken("leaver-1")
			go func() {
				select {
				case id := <-mcpFirst:
					s.first <- id
				case <-sctx.Done():
					close(s.first)
				}
			}()
			_, err := mcpSession.CallTool(sctx, p)
			s.done <- err
		}()
	}
	streamedTasks := 2*perKind + 3
	for _, s := range streams {
		select {
		case got, ok := <-s.first:
			if !ok {
				t.Fatalf("%s ended before its first event: %v", s.name, <-s.done)
			}
			if got == "" {
				t.Fatalf("%s: its first event names no task", s.name)
			}
			tasks[a2a.TaskID(got)] = true
		case <-ctx.Done():
			t.Fatalf("%s: no first event", s.name)
		}
	}
	if want := 1 + streamedTasks; len(tasks) != want {
		t.Fatalf("the streams name %d tasks, want %d (one followed, %d streamed)", len(tasks), want, streamedTasks)
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

// taskIDIn finds the task id in a decoded stream event of either protocol
// version: a task's "id" (0.3 marks it "kind": "task"; 1.0 and 0.3
// HTTP+JSON wrap it as "task"), else the first "taskId".
func taskIDIn(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if id, ok := m["id"].(string); ok && m["kind"] == "task" {
		return id
	}
	if tk, ok := m["task"].(map[string]any); ok {
		if id, ok := tk["id"].(string); ok {
			return id
		}
	}
	if id, ok := m["taskId"].(string); ok {
		return id
	}
	for _, k := range []string{"result", "statusUpdate", "artifactUpdate", "status-update", "artifact-update"} {
		if id := taskIDIn(m[k]); id != "" {
			return id
		}
	}
	return ""
}
