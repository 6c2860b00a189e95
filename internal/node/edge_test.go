package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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

// taskCount is how many tasks the node's store holds.
func (n *testNode) taskCount(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	page, err := n.srv.Coordinator().List(ctx, task.ListParams{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Tasks)
}

// exchange is a raw request and what it got.
type exchange struct {
	method, path, host, origin, contentType, body string
	header                                        map[string]string
}

func (n *testNode) do(t *testing.T, x exchange) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	method := x.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, n.base+x.path, strings.NewReader(x.body))
	if err != nil {
		t.Fatal(err)
	}
	if x.body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if x.host != "" {
		req.Host = x.host
	}
	if x.origin != "" {
		req.Header.Set("Origin", x.origin)
	}
	if x.contentType != "" {
		req.Header.Set("Content-Type", x.contentType)
	}
	for k, v := range x.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, x.path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// sendRequests are message sends on the three A2A routes a web page could
// reach with a simple (text/plain) POST: JSON-RPC 0.3 at the root, JSON-RPC
// 1.0 by query parameter, and the 0.3 HTTP+JSON route.
var sendRequests = []exchange{
	{path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"cs-1","role":"user","parts":[{"kind":"text","text":"rm -rf"}]}}}`},
	{path: "/?A2A-Version=1.0", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"cs-2","role":"ROLE_USER","parts":[{"text":"rm -rf"}]}}}`},
	{path: "/v1/message:send", body: `{"message":{"messageId":"cs-3","role":"ROLE_USER","content":[{"text":"rm -rf"}]}}`},
}

// TestCrossSiteSendRefused: a cross-site text/plain POST, which a web page
// sends without a CORS preflight, starts no task on any A2A route.
func TestCrossSiteSendRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "agents:\n  - name: echo\n    type: echo\n")
	for _, x := range sendRequests {
		x.origin, x.contentType = "http://evil.example", "text/plain"
		resp, body := n.do(t, x)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "evil.example") {
			t.Errorf("POST %s from http://evil.example: %s %s, want 403 naming the origin", x.path, resp.Status, body)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("POST %s from http://evil.example got Access-Control-Allow-Origin", x.path)
		}
	}
	// A page on another port of this machine is another origin too.
	x := sendRequests[1]
	x.origin, x.contentType = "http://localhost:3000", "application/json"
	if resp, body := n.do(t, x); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST / from http://localhost:3000: %s %s, want 403", resp.Status, body)
	}
	if got := n.taskCount(t); got != 0 {
		t.Fatalf("the refused requests created %d tasks", got)
	}
	// The refusals are counted.
	resp, metrics := n.do(t, exchange{method: http.MethodGet, path: "/metrics"})
	if resp.StatusCode != 200 || !strings.Contains(metrics, `pactum_http_refusals_total{reason="origin"} 4`) {
		t.Errorf("/metrics does not count 4 origin refusals:\n%s", grepLines(metrics, "pactum_http"))
	}
}

// TestJSONContentTypeRequired: a JSON endpoint refuses a body that is not
// declared JSON, even without an Origin header (415, JSON body), and
// creates no task; a declared JSON body passes.
func TestJSONContentTypeRequired(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "agents:\n  - name: echo\n    type: echo\n")
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		for _, x := range sendRequests {
			x.contentType = ct
			resp, body := n.do(t, x)
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusUnsupportedMediaType || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != 415 || !strings.Contains(e.Error.Message, "application/json") {
				t.Errorf("POST %s with Content-Type %q: %s %s, want 415 with a JSON error", x.path, ct, resp.Status, body)
			}
		}
	}
	resp, body := n.do(t, exchange{path: "/mcp", contentType: "text/plain", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		header: map[string]string{"Accept": "application/json, text/event-stream"}})
	if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("POST /mcp text/plain: %s %s, want 415 JSON", resp.Status, body)
	}
	if got := n.taskCount(t); got != 0 {
		t.Fatalf("the refused requests created %d tasks", got)
	}
	for i, x := range sendRequests {
		x.contentType = []string{"application/json", "application/json; charset=utf-8", "application/a2a+json"}[i]
		if resp, body := n.do(t, x); resp.StatusCode != http.StatusOK {
			t.Errorf("POST %s with Content-Type %s: %s %s", x.path, x.contentType, resp.Status, body)
		}
	}
	if got := n.taskCount(t); got != 3 {
		t.Errorf("JSON sends created %d tasks, want 3", got)
	}
}

// TestAllowedOrigin: an origin listed in http.cors_origins may call every
// route and gets CORS headers, preflight included.
func TestAllowedOrigin(t *testing.T) {
	t.Parallel()
	const app = "http://app.example:8080"
	n := startNode(t, "", "http: {cors_origins: [\""+app+"\"]}\nagents:\n  - name: echo\n    type: echo\n")
	pre, _ := n.do(t, exchange{method: http.MethodOptions, path: "/?A2A-Version=1.0", origin: app, header: map[string]string{
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, a2a-version, authorization",
	}})
	allowHeaders := strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers"))
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(allowHeaders, "a2a-version") || !strings.Contains(allowHeaders, "authorization") || !strings.Contains(allowHeaders, "mcp-session-id") {
		t.Errorf("preflight: %s %v", pre.Status, pre.Header)
	}
	for _, x := range sendRequests {
		x.origin, x.contentType = app, "application/json"
		resp, body := n.do(t, x)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != app || !strings.Contains(resp.Header.Get("Vary"), "Origin") {
			t.Errorf("POST %s from %s: %s %v %s", x.path, app, resp.Status, resp.Header, body)
		}
	}
	if got := n.taskCount(t); got != 3 {
		t.Errorf("allowed sends created %d tasks, want 3", got)
	}
	// Listing an origin does not let it send what a JSON endpoint cannot read.
	x := sendRequests[0]
	x.origin, x.contentType = app, "text/plain"
	if resp, _ := n.do(t, x); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain POST from an allowed origin: %s, want 415", resp.Status)
	}
	// Another origin is still refused.
	x.origin, x.contentType = "http://evil.example", "application/json"
	if resp, _ := n.do(t, x); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST from http://evil.example: %s, want 403", resp.Status)
	}
}

// TestForeignHostRefused: on a loopback listener a request naming a foreign
// Host (a page that rebound evil.example to 127.0.0.1) lists no tasks, on
// JSON-RPC, HTTP+JSON or MCP; health and metrics are refused too.
func TestForeignHostRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "agents:\n  - name: echo\n    type: echo\n")
	x := sendRequests[1]
	x.contentType = "application/json"
	if resp, body := n.do(t, x); resp.StatusCode != http.StatusOK {
		t.Fatalf("send: %s %s", resp.Status, body)
	}
	for _, x := range []exchange{
		{path: "/?A2A-Version=1.0", contentType: "application/json", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`},
		{path: "/agents/echo", contentType: "application/json", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, header: map[string]string{"A2A-Version": "1.0"}},
		{method: http.MethodGet, path: "/tasks", header: map[string]string{"A2A-Version": "1.0"}},
		{method: http.MethodGet, path: "/agents/echo/tasks?A2A-Version=1.0"},
		{path: "/mcp", contentType: "application/json", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`,
			header: map[string]string{"Accept": "application/json, text/event-stream"}},
		{method: http.MethodGet, path: "/healthz"},
		{method: http.MethodGet, path: "/metrics"},
		{method: http.MethodGet, path: "/.well-known/agent-card.json"},
	} {
		// Same-origin for the rebound page: its Origin is its own host.
		for _, origin := range []string{"", "http://evil.example:" + port(n.addr)} {
			x.host, x.origin = "evil.example:"+port(n.addr), origin
			resp, body := n.do(t, x)
			if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "cs-2") || !strings.Contains(body, "evil.example") {
				t.Errorf("%s %s with Host %s, Origin %q: %s %s, want 403 naming the host", x.method, x.path, x.host, origin, resp.Status, body)
			}
		}
	}
	// The same list with a loopback Host works.
	resp, body := n.do(t, exchange{method: http.MethodGet, path: "/tasks", host: "localhost:" + port(n.addr), header: map[string]string{"A2A-Version": "1.0"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tasks"`) {
		t.Errorf("ListTasks with Host localhost: %s %s", resp.Status, body)
	}
}

// TestAllowedHosts: http.allowed_hosts and its alias mcp.allowed_hosts let
// a loopback listener be reached under other names (a reverse proxy).
func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "http: {allowed_hosts: [agents.internal]}\nmcp: {allowed_hosts: [legacy.internal]}\nagents:\n  - name: echo\n    type: echo\n")
	for host, want := range map[string]int{"agents.internal": 200, "legacy.internal:443": 200, "evil.example": 403} {
		if resp, body := n.do(t, exchange{method: http.MethodGet, path: "/tasks?A2A-Version=1.0", host: host}); resp.StatusCode != want {
			t.Errorf("GET /tasks with Host %s: %s %s, want %d", host, resp.Status, body, want)
		}
	}
}

// TestCardsCrossOrigin: agent cards stay readable from any web page, but
// only under an acceptable Host.
func TestCardsCrossOrigin(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "agents:\n  - name: echo\n    type: echo\n")
	for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", "/agents/echo/.well-known/agent-card.json", "/agents/echo/.well-known/agent.json"} {
		resp, body := n.do(t, exchange{method: http.MethodGet, path: path, origin: "http://evil.example"})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "http://evil.example" || !strings.Contains(body, `"name"`) {
			t.Errorf("GET %s from http://evil.example: %s %v", path, resp.Status, resp.Header)
		}
		pre, _ := n.do(t, exchange{method: http.MethodOptions, path: path, origin: "http://evil.example", header: map[string]string{"Access-Control-Request-Method": "GET"}})
		if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Errorf("preflight of %s from http://evil.example: %s %v", path, pre.Status, pre.Header)
		}
		if resp, _ := n.do(t, exchange{method: http.MethodGet, path: path, host: "evil.example"}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with Host evil.example: %s, want 403", path, resp.Status)
		}
	}
	// The official resolver reads them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := agentcard.DefaultResolver.Resolve(ctx, n.base+"/agents/echo"); err != nil {
		t.Errorf("resolve card: %v", err)
	}
}

// TestSlowBodyClosed: a client that announces a body and sends part of it
// loses its connection once http.read_timeout passes.
func TestSlowBodyClosed(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "http: {read_timeout: 300ms}\nagents:\n  - name: echo\n    type: echo\n")
	for _, path := range []string{"/", "/v1/message:send", "/mcp", "/healthz"} {
		conn, err := net.Dial("tcp", n.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", path, n.addr)
		// A generous bound on this test's wait, not on the server.
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(conn)
		if err != nil {
			t.Errorf("POST %s with a stalled body: the connection stayed open (%v)", path, err)
			continue
		}
		if len(got) > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil)
			if err != nil {
				t.Errorf("POST %s: unreadable answer %q", path, got)
				continue
			}
			if resp.StatusCode != http.StatusRequestTimeout && path != "/healthz" {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("POST %s with a stalled body: %s, want 408 %s", path, resp.Status, b)
			}
		}
	}
}

// TestStreamOutlivesTimeouts: SSE streams (A2A SubscribeToTask over
// JSON-RPC and HTTP+JSON, SendStreamingMessage, a waiting MCP tool call)
// last longer than http.read_timeout and http.write_timeout and still
// deliver their final event.
func TestStreamOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "http: {read_timeout: 200ms, write_timeout: 200ms}\nagents:\n  - name: slow\n    type: echo\n    echo: {delay: 1500ms}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, n.base+"/agents/slow")
	if err != nil {
		t.Fatal(err)
	}
	final := func(events func(yield func(a2a.Event, error) bool)) (a2a.TaskState, error) {
		var last a2a.TaskState
		for ev, err := range events {
			if err != nil {
				return last, err
			}
			switch e := ev.(type) {
			case *a2a.Task:
				last = e.Status.State
			case *a2a.TaskStatusUpdateEvent:
				last = e.Status.State
			}
		}
		return last, nil
	}
	for _, transport := range []string{"jsonrpc", "rest"} {
		var opt a2aclient.FactoryOption
		if transport == "jsonrpc" {
			opt = a2aclient.WithJSONRPCTransport(http.DefaultClient)
		} else {
			opt = a2aclient.WithRESTTransport(http.DefaultClient)
		}
		client, err := a2aclient.NewFromCard(ctx, card, opt, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{map[string]a2a.TransportProtocol{"jsonrpc": a2a.TransportProtocolJSONRPC, "rest": a2a.TransportProtocolHTTPJSON}[transport]}}))
		if err != nil {
			t.Fatal(err)
		}
		defer client.Destroy()
		tk := startTask(ctx, t, client, "sub")
		state, err := final(client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: tk.ID}))
		if err != nil || state != a2a.TaskStateCompleted {
			t.Errorf("%s SubscribeToTask: last state %q, err %v; want completed", transport, state, err)
		}
		state, err = final(client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream"))}))
		if err != nil || state != a2a.TaskStateCompleted {
			t.Errorf("%s SendStreamingMessage: last state %q, err %v; want completed", transport, state, err)
		}
	}
	// A blocking send answers after the timeouts too: the write deadline
	// counts from the first write.
	x := sendRequests[1]
	x.path, x.contentType = "/agents/slow?A2A-Version=1.0", "application/json"
	if resp, body := n.do(t, x); resp.StatusCode != http.StatusOK || !strings.Contains(body, "TASK_STATE_COMPLETED") {
		t.Errorf("blocking SendMessage: %s %s", resp.Status, body)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: n.base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	out, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "submit_task", Arguments: map[string]any{"agent": "slow", "text": "mcp", "wait": true}})
	if err != nil || out.IsError || out.StructuredContent.(map[string]any)["state"] != "succeeded" {
		t.Errorf("MCP waiting submit_task: %v %+v", err, out)
	}
}

// TestMaxConnections: beyond http.max_connections a connection waits, and
// is served once another closes.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	n := startNode(t, "", "http: {max_connections: 1}\nagents:\n  - name: echo\n    type: echo\n")
	get := func(conn net.Conn) {
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", n.addr)
	}
	first, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	get(first)
	r1 := bufio.NewReader(first)
	if resp, err := http.ReadResponse(r1, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first connection: %v %v", resp, err)
	}
	// The first connection stays open (keep-alive); the second waits.
	second, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	get(second)
	answered := make(chan error, 1)
	go func() {
		_ = second.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(second), nil)
		if err == nil && resp.StatusCode != 200 {
			err = errors.New(resp.Status)
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("the second connection was served while the first was open (%v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	first.Close()
	if err := <-answered; err != nil {
		t.Fatalf("the second connection, after the first closed: %v", err)
	}
	second.Close()
	resp, body := n.do(t, exchange{method: http.MethodGet, path: "/metrics"})
	if resp.StatusCode != 200 || !strings.Contains(body, "pactum_http_connection_waits_total") {
		t.Errorf("/metrics lacks pactum_http_connection_waits_total")
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
