package node_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent/function"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// secret marks everything of alice's tasks that bob must never see.
const secret = "A-SECRET"

// vaultAgent emits a chunk and answers with the text of its input; an
// input ending in "block" keeps the task running until release closes.
func vaultAgent(started chan<- string, release <-chan struct{}) *function.Runtime {
	return function.Streaming("vault", func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		in := req.Message.Text()
		if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "chunk", Parts: []task.Part{task.TextPart("chunk of " + in)}}}); err != nil {
			return nil, err
		}
		if strings.HasSuffix(in, "block") {
			started <- req.TaskID
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			}
		}
		return &task.Result{Message: &task.Message{Parts: []task.Part{task.TextPart("result of " + in)}}}, nil
	})
}

// startNodeWith is startServer with agents given in code.
func startNodeWith(t *testing.T, yaml string, extra []node.Extra) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("listen: %s\nstore: sqlite://%s\n%s", ln.Addr(), filepath.Join(t.TempDir(), "pactum.db"), yaml)
	cfg, err := config.Parse([]byte(src), "visibility.yaml")
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := node.New(ctx, cfg, ".", extra, nil)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// wireAnswer is what a caller learns from one HTTP exchange.
type wireAnswer struct {
	status      int
	contentType string
	body        string
}

// call sends one raw request as token. A streamed answer (SSE) is read up
// to its first event, then to its end only if that event is an error: a
// stream that goes on is a leak, and the test must not wait for its end.
func call(ctx context.Context, t *testing.T, base, token, version, method, path, body string) wireAnswer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := wireAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type")}
	if !strings.HasPrefix(a.contentType, "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		a.body = string(data)
		return a
	}
	br := bufio.NewReader(resp.Body)
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if err != nil || (strings.TrimSpace(line) == "" && strings.Contains(ev.String(), "data:")) {
			break
		}
	}
	a.body = ev.String()
	if strings.Contains(a.body, `"error"`) {
		rest, _ := io.ReadAll(br)
		a.body += string(rest)
	}
	return a
}

var (
	sseIDLine = regexp.MustCompile(`(?m)^id: .*\n`)
	timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// normalize takes out of an answer what differs between any two answers:
// the random ids of SSE events, the time of an error, trailing blank
// lines.
func normalize(body string) string {
	body = sseIDLine.ReplaceAllString(body, "")
	return strings.TrimSpace(timestamp.ReplaceAllString(body, "<time>"))
}

// TestAnotherActorsTaskIsInvisible: under auth: bearer, bob drives every
// operation of every binding — A2A JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and
// 0.3 (/v1), MCP — against alice's running task and alice's finished
// task. Each answer is, byte for byte once the id is replaced, the answer
// to a task id that does not exist; nothing of alice's tasks (their input,
// chunks, results, actor) reaches bob; bob changed nothing (the running
// task still runs, no webhook of bob's is called); lists leave alice's
// tasks out.
func TestAnotherActorsTaskIsInvisible(t *testing.T) {
	t.Parallel()
	aliceHash, bobHash := sha256.Sum256([]byte("alice-secret")), sha256.Sum256([]byte("bob-secret"))
	started, release := make(chan string, 4), make(chan struct{})
	var bobHooks atomic.Int64
	bobHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { bobHooks.Add(1) }))
	t.Cleanup(bobHook.Close)
	aliceHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(aliceHook.Close)
	base := startNodeWith(t, fmt.Sprintf(`auth: bearer
push: {allow_private: true}
agents:
  - {name: echo, type: echo}
actors:
  - {name: alice, actions: ["*"], token_sha256: %s}
  - {name: bob, actions: ["*"], token_sha256: %s}
`, hex.EncodeToString(aliceHash[:]), hex.EncodeToString(bobHash[:])),
		[]node.Extra{{Config: config.NewAgent("vault"), Agent: vaultAgent(started, release)}})
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const agent = "/agents/vault"

	rpc := func(token, version, method, params string) wireAnswer {
		return call(ctx, t, base, token, version, http.MethodPost, agent, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`)
	}
	resultOf := func(a wireAnswer) map[string]any {
		t.Helper()
		var v struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(a.body), &v); err != nil || v.Result == nil {
			t.Fatalf("no JSON-RPC result: %d %s", a.status, a.body)
		}
		return v.Result
	}
	// Alice's tasks: one running, one finished; each has a webhook.
	send := func(token, text string, wait bool) string {
		t.Helper()
		cfg := `"configuration":{"returnImmediately":true},`
		if wait {
			cfg = ""
		}
		res := resultOf(rpc(token, "1.0", "SendMessage", `{`+cfg+`"message":{"messageId":"`+task.NewID()+`","role":"ROLE_USER","parts":[{"text":"`+text+`"}]}}`))
		tk, _ := res["task"].(map[string]any)
		id, _ := tk["id"].(string)
		if id == "" {
			t.Fatalf("SendMessage %q answered %v", text, res)
		}
		return id
	}
	running := send("alice-secret", secret+"-INPUT block", false)
	if got := <-started; got != running {
		t.Fatalf("started %s, want %s", got, running)
	}
	finished := send("alice-secret", secret+"-INPUT done", true)
	for _, id := range []string{running, finished} {
		a := rpc("alice-secret", "1.0", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"alice-hook","url":"`+aliceHook.URL+`"}`)
		if a.status != http.StatusOK || !strings.Contains(a.body, "alice-hook") {
			t.Fatalf("alice's webhook on %s: %d %s", id, a.status, a.body)
		}
	}
	bobsTask := send("bob-secret", "bob-input", true)

	type op struct {
		binding, name   string
		version, method string
		path, body      string
	}
	msg1 := func(stream bool) string {
		m := "SendMessage"
		if stream {
			m = "SendStreamingMessage"
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + m + `","params":{"message":{"messageId":"bob-m1","role":"ROLE_USER","parts":[{"text":"bob's answer"}],"taskId":"{id}"}}}`
	}
	msg03 := func(stream bool) string {
		m := "message/send"
		if stream {
			m = "message/stream"
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + m + `","params":{"message":{"kind":"message","messageId":"bob-m03","role":"user","parts":[{"kind":"text","text":"bob's answer"}],"taskId":"{id}"}}}`
	}
	rpc1 := func(name, method, params string) op {
		return op{"JSON-RPC 1.0", name, "1.0", http.MethodPost, agent, `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`}
	}
	rpc03 := func(name, method, params string) op {
		return op{"JSON-RPC 0.3", name, "", http.MethodPost, agent, `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`}
	}
	rest1 := func(name, method, path, body string) op {
		return op{"HTTP+JSON 1.0", name, "1.0", method, agent + path, body}
	}
	rest03 := func(name, method, path, body string) op {
		return op{"HTTP+JSON 0.3", name, "", method, agent + "/v1" + path, body}
	}
	ops := []op{
		rpc1("GetTask", "GetTask", `{"id":"{id}"}`),
		rpc1("SubscribeToTask", "SubscribeToTask", `{"id":"{id}"}`),
		rpc1("CancelTask", "CancelTask", `{"id":"{id}"}`),
		{"JSON-RPC 1.0", "SendMessage", "1.0", http.MethodPost, agent, msg1(false)},
		{"JSON-RPC 1.0", "SendStreamingMessage", "1.0", http.MethodPost, agent, msg1(true)},
		rpc1("CreateTaskPushConfig", "CreateTaskPushNotificationConfig", `{"taskId":"{id}","id":"bob-hook","url":"`+bobHook.URL+`"}`),
		rpc1("GetTaskPushConfig", "GetTaskPushNotificationConfig", `{"taskId":"{id}","id":"alice-hook"}`),
		rpc1("ListTaskPushConfigs", "ListTaskPushNotificationConfigs", `{"taskId":"{id}"}`),
		rpc1("DeleteTaskPushConfig", "DeleteTaskPushNotificationConfig", `{"taskId":"{id}","id":"alice-hook"}`),

		rpc03("tasks/get", "tasks/get", `{"id":"{id}"}`),
		rpc03("tasks/resubscribe", "tasks/resubscribe", `{"id":"{id}"}`),
		rpc03("tasks/cancel", "tasks/cancel", `{"id":"{id}"}`),
		{"JSON-RPC 0.3", "message/send", "", http.MethodPost, agent, msg03(false)},
		{"JSON-RPC 0.3", "message/stream", "", http.MethodPost, agent, msg03(true)},
		rpc03("tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/set", `{"taskId":"{id}","pushNotificationConfig":{"id":"bob-hook","url":"`+bobHook.URL+`"}}`),
		rpc03("tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/get", `{"id":"{id}","pushNotificationConfigId":"alice-hook"}`),
		rpc03("tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/list", `{"id":"{id}"}`),
		rpc03("tasks/pushNotificationConfig/delete", "tasks/pushNotificationConfig/delete", `{"id":"{id}","pushNotificationConfigId":"alice-hook"}`),

		rest1("GetTask", http.MethodGet, "/tasks/{id}", ""),
		rest1("SubscribeToTask (GET)", http.MethodGet, "/tasks/{id}:subscribe", ""),
		rest1("SubscribeToTask (POST)", http.MethodPost, "/tasks/{id}:subscribe", ""),
		rest1("CancelTask", http.MethodPost, "/tasks/{id}:cancel", ""),
		rest1("SendMessage", http.MethodPost, "/message:send", `{"message":{"messageId":"bob-r1","role":"ROLE_USER","parts":[{"text":"bob's answer"}],"taskId":"{id}"}}`),
		rest1("SendStreamingMessage", http.MethodPost, "/message:stream", `{"message":{"messageId":"bob-r1s","role":"ROLE_USER","parts":[{"text":"bob's answer"}],"taskId":"{id}"}}`),
		rest1("CreateTaskPushConfig", http.MethodPost, "/tasks/{id}/pushNotificationConfigs", `{"id":"bob-hook","url":"`+bobHook.URL+`"}`),
		rest1("GetTaskPushConfig", http.MethodGet, "/tasks/{id}/pushNotificationConfigs/alice-hook", ""),
		rest1("ListTaskPushConfigs", http.MethodGet, "/tasks/{id}/pushNotificationConfigs", ""),
		rest1("DeleteTaskPushConfig", http.MethodDelete, "/tasks/{id}/pushNotificationConfigs/alice-hook", ""),

		rest03("GetTask", http.MethodGet, "/tasks/{id}", ""),
		rest03("SubscribeToTask (GET)", http.MethodGet, "/tasks/{id}:subscribe", ""),
		rest03("SubscribeToTask (POST)", http.MethodPost, "/tasks/{id}:subscribe", ""),
		rest03("CancelTask", http.MethodPost, "/tasks/{id}:cancel", ""),
		rest03("SendMessage", http.MethodPost, "/message:send", `{"message":{"messageId":"bob-r03","role":"ROLE_USER","content":[{"text":"bob's answer"}],"taskId":"{id}"}}`),
		rest03("SendStreamingMessage", http.MethodPost, "/message:stream", `{"message":{"messageId":"bob-r03s","role":"ROLE_USER","content":[{"text":"bob's answer"}],"taskId":"{id}"}}`),
		rest03("CreateTaskPushConfig", http.MethodPost, "/tasks/{id}/pushNotificationConfigs", `{"config":{"pushNotificationConfig":{"id":"bob-hook","url":"`+bobHook.URL+`"}}}`),
		rest03("GetTaskPushConfig", http.MethodGet, "/tasks/{id}/pushNotificationConfigs/alice-hook", ""),
		rest03("ListTaskPushConfigs", http.MethodGet, "/tasks/{id}/pushNotificationConfigs", ""),
		rest03("DeleteTaskPushConfig", http.MethodDelete, "/tasks/{id}/pushNotificationConfigs/alice-hook", ""),
	}
	missing := task.NewID()
	for _, o := range ops {
		do := func(id string) wireAnswer {
			a := call(ctx, t, base, "bob-secret", o.version, o.method, strings.ReplaceAll(o.path, "{id}", id), strings.ReplaceAll(o.body, "{id}", id))
			a.body = normalize(strings.ReplaceAll(a.body, id, "{id}"))
			return a
		}
		want := do(missing)
		if want.status == http.StatusOK && !strings.Contains(want.body, `"error"`) {
			t.Errorf("%s %s of a missing task succeeded: %s", o.binding, o.name, want.body)
		}
		for _, tc := range []struct{ what, id string }{{"running", running}, {"finished", finished}} {
			got := do(tc.id)
			if got != want {
				t.Errorf("%s %s of alice's %s task:\n%d %s\n%s\nwant, as for a missing task:\n%d %s\n%s",
					o.binding, o.name, tc.what, got.status, got.contentType, got.body, want.status, want.contentType, want.body)
			}
			if strings.Contains(got.body, secret) || strings.Contains(got.body, "alice") {
				t.Errorf("%s %s of alice's %s task leaks it: %s", o.binding, o.name, tc.what, got.body)
			}
		}
	}

	// Lists leave alice's tasks out and show bob's.
	for _, l := range []struct{ name, version, method, path, body string }{
		{"JSON-RPC 1.0 ListTasks", "1.0", http.MethodPost, agent, `{"jsonrpc":"2.0","id":7,"method":"ListTasks","params":{"includeArtifacts":true}}`},
		{"HTTP+JSON 1.0 ListTasks", "1.0", http.MethodGet, agent + "/tasks?includeArtifacts=true", ""},
		{"HTTP+JSON 0.3 ListTasks", "", http.MethodGet, agent + "/v1/tasks", ""},
	} {
		a := call(ctx, t, base, "bob-secret", l.version, l.method, l.path, l.body)
		if a.status != http.StatusOK || !strings.Contains(a.body, bobsTask) {
			t.Errorf("%s: %d %s; want bob's task %s", l.name, a.status, a.body, bobsTask)
		}
		if strings.Contains(a.body, running) || strings.Contains(a.body, finished) || strings.Contains(a.body, secret) {
			t.Errorf("%s shows alice's tasks: %s", l.name, a.body)
		}
	}

	// The official a2a-go client, on both 1.0 bindings: subscribing to
	// alice's running task is TaskNotFound, before any event.
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+agent)
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(withBearer("bob-secret")), a2aclient.WithRESTTransport(withBearer("bob-secret")),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{proto}}))
		if err != nil {
			t.Fatal(err)
		}
		for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(running)}) {
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("a2a-go client over %s: bob's SubscribeToTask of alice's running task yields %v, %v; want TaskNotFound", proto, ev, err)
			}
			break
		}
		_ = c.Destroy()
	}

	// MCP, through the go-sdk client: the same answer as for a missing task.
	session, err := mcp.NewClient(&mcp.Implementation{Name: "bob", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: withBearer("bob-secret")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	tool := func(name, id string) string {
		t.Helper()
		args := map[string]any{"task_id": id}
		if name == "continue_task" {
			args["text"] = "bob's answer"
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Errorf("bob's %s of %s succeeded: %+v", name, id, res.StructuredContent)
		}
		raw, _ := json.Marshal(res)
		return strings.ReplaceAll(string(raw), id, "{id}")
	}
	for _, name := range []string{"get_task", "cancel_task", "retry_task", "continue_task"} {
		want := tool(name, missing)
		for _, tc := range []struct{ what, id string }{{"running", running}, {"finished", finished}} {
			if got := tool(name, tc.id); got != want {
				t.Errorf("MCP %s of alice's %s task: %s\nwant, as for a missing task: %s", name, tc.what, got, want)
			}
		}
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "list_tasks", Arguments: map[string]any{"include_artifacts": true}})
	if err != nil || res.IsError {
		t.Fatalf("list_tasks: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res)
	if !strings.Contains(string(raw), bobsTask) || strings.Contains(string(raw), running) || strings.Contains(string(raw), finished) || strings.Contains(string(raw), secret) {
		t.Errorf("bob's list_tasks: %s; want his task and none of alice's", raw)
	}

	// Bob changed nothing: alice's running task still runs, her webhooks
	// are still there, and bob's webhook was never registered.
	for _, tc := range []struct {
		id, state string
	}{{running, "TASK_STATE_WORKING"}, {finished, "TASK_STATE_COMPLETED"}} {
		got := resultOf(rpc("alice-secret", "1.0", "GetTask", `{"id":"`+tc.id+`"}`))
		if st, _ := got["status"].(map[string]any); st["state"] != tc.state {
			t.Errorf("alice's task %s after bob's calls: %v, want %s", tc.id, got["status"], tc.state)
		}
		hooks := rpc("alice-secret", "1.0", "ListTaskPushNotificationConfigs", `{"taskId":"`+tc.id+`"}`)
		if !strings.Contains(hooks.body, "alice-hook") || strings.Contains(hooks.body, "bob-hook") {
			t.Errorf("alice's webhooks of %s after bob's calls: %s", tc.id, hooks.body)
		}
	}
	if n := bobHooks.Load(); n != 0 {
		t.Errorf("bob's webhook was called %d times", n)
	}
}
