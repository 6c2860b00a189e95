package a2aserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/internal/syncbuf"
)

// rawResponse is a decoded HTTP answer.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// post sends body to path with the given A2A-Version ("" sends none).
func (b *bundle) post(path, version, body string) rawResponse {
	b.t.Helper()
	return b.do(http.MethodPost, path, version, strings.NewReader(body))
}

func (b *bundle) do(method, path, version string, body io.Reader) rawResponse {
	b.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(b.t), method, b.url+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	out := rawResponse{status: resp.StatusCode, header: resp.Header, body: data}
	_ = json.Unmarshal(data, &out.json)
	return out
}

// rpcError returns the code and message of a JSON-RPC error response.
func rpcError(t *testing.T, r rawResponse) (int, string) {
	t.Helper()
	e, ok := r.json["error"].(map[string]any)
	if !ok {
		t.Fatalf("no JSON-RPC error in %d %s", r.status, r.body)
	}
	if r.json["jsonrpc"] != "2.0" {
		t.Fatalf("response is not JSON-RPC 2.0: %s", r.body)
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

// rpcResult returns the result object of a JSON-RPC response.
func rpcResult(t *testing.T, r rawResponse) map[string]any {
	t.Helper()
	res, ok := r.json["result"].(map[string]any)
	if !ok {
		t.Fatalf("no JSON-RPC result in %d %s", r.status, r.body)
	}
	return res
}

// restReason returns the ErrorInfo reason of an HTTP+JSON error response.
func restReason(t *testing.T, r rawResponse) string {
	t.Helper()
	e, ok := r.json["error"].(map[string]any)
	if !ok {
		t.Fatalf("no HTTP+JSON error in %d %s", r.status, r.body)
	}
	details, _ := e["details"].([]any)
	for _, d := range details {
		if m, ok := d.(map[string]any); ok && m["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			reason, _ := m["reason"].(string)
			return reason
		}
	}
	t.Fatalf("no ErrorInfo in %s", r.body)
	return ""
}

func TestLegacyJSONRPCWithoutVersionHeader(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// message/send with the 0.3 wire shapes: kind discriminators, lower-case
	// roles and states.
	r := b.post("/", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"legacy-1","role":"user","parts":[{"kind":"text","text":"old client"}]}}}`)
	res := rpcResult(t, r)
	if res["kind"] != "task" {
		t.Fatalf("result kind = %v, want task: %s", res["kind"], r.body)
	}
	status, _ := res["status"].(map[string]any)
	if status["state"] != "completed" {
		t.Fatalf("0.3 state = %v, want completed: %s", status["state"], r.body)
	}
	arts, _ := res["artifacts"].([]any)
	if len(arts) != 1 || !strings.Contains(string(r.body), `"kind":"text"`) {
		t.Fatalf("artifacts in 0.3 form missing: %s", r.body)
	}
	if r.header.Get("A2A-Version") != "0.3" {
		t.Fatalf("served version header = %q, want 0.3", r.header.Get("A2A-Version"))
	}
	id, _ := res["id"].(string)

	r = b.post("/", "", `{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"id":"`+id+`","historyLength":1}}`)
	got := rpcResult(t, r)
	if got["id"] != id || got["kind"] != "task" {
		t.Fatalf("tasks/get = %s", r.body)
	}
	if h, _ := got["history"].([]any); len(h) != 1 {
		t.Fatalf("tasks/get historyLength 1 returned %d messages", len(h))
	}

	r = b.post("/", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"`+id+`"}}`)
	if code, _ := rpcError(t, r); code != -32002 {
		t.Fatalf("tasks/cancel of a completed task: code %d, want -32002: %s", code, r.body)
	}

	// A running task cancels over 0.3 too.
	r = b.post("/agents/slow", "", `{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"configuration":{"blocking":false},"message":{"kind":"message","messageId":"legacy-2","role":"user","parts":[{"kind":"text","text":"slow"}]}}}`)
	slowID, _ := rpcResult(t, r)["id"].(string)
	b.waitStarted()
	r = b.post("/agents/slow/", "", `{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"id":"`+slowID+`"}}`)
	canceled := rpcResult(t, r)
	if st, _ := canceled["status"].(map[string]any); st["state"] != "canceled" {
		t.Fatalf("tasks/cancel = %s, want a canceled task", r.body)
	}

	// The 1.0 method names are not 0.3 ones: the error says what to send.
	r = b.post("/", "", `{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":"`+id+`"}}`)
	if code, msg := rpcError(t, r); code != -32601 || !strings.Contains(msg, "A2A-Version: 1.0") {
		t.Fatalf("1.0 method without header: %d %q, want -32601 naming the header", code, msg)
	}
	r = b.post("/", "1.0", `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"id":"`+id+`"}}`)
	if code, _ := rpcError(t, r); code != -32601 {
		t.Fatalf("0.3 method with A2A-Version 1.0: code %d, want -32601", code)
	}
}

func TestLegacyClients(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		proto a2a.TransportProtocol
		opt   a2aclient.FactoryOption
	}{
		{a2a.TransportProtocolJSONRPC, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{})},
		{a2a.TransportProtocolHTTPJSON, a2av0.WithRESTTransport(a2av0.RESTTransportConfig{})},
	} {
		t.Run(string(tc.proto), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			ep := &a2a.AgentInterface{URL: b.url + "/agents/echo", ProtocolBinding: tc.proto, ProtocolVersion: a2av0.Version}
			c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{ep}, a2aclient.WithDefaultsDisabled(), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Destroy()
			tk := send(ctx, t, c, sendReq(userMessage("0.3 client")))
			if tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) != 1 || artifactText(tk.Artifacts[0]) != "0.3 client" {
				t.Fatalf("0.3 send = %+v", tk)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
			if err != nil || got.ID != tk.ID {
				t.Fatalf("0.3 get = %+v, %v", got, err)
			}
			_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
			// a2a-go's 0.3 REST server writes errors as application/problem+json,
			// which its own 0.3 REST client does not decode (it reports a server
			// error); the status and reason on the wire are checked in
			// TestVersionNegotiation.
			if err == nil || (tc.proto == a2a.TransportProtocolJSONRPC && !errors.Is(err, a2a.ErrTaskNotFound)) {
				t.Fatalf("0.3 get unknown: err = %v, want TaskNotFound", err)
			}
			var events []a2a.Event
			for ev, err := range c.SendStreamingMessage(ctx, sendReq(userMessage("0.3 stream"))) {
				if err != nil {
					t.Fatalf("0.3 stream: %v", err)
				}
				events = append(events, ev)
			}
			checkStream(t, events, a2a.TaskStateCompleted, map[string]string{"echo": "0.3 stream"})
		})
	}
}

func TestVersionNegotiation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	getUnknown := `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"nope"}}`
	for _, v := range []string{"2.0", "0.2", "1", "1.x", "one"} {
		for _, path := range []string{"/", "/agents/echo", "/agents/ask/"} {
			r := b.post(path, v, getUnknown)
			code, msg := rpcError(t, r)
			if code != -32009 || !strings.Contains(msg, "not supported") || r.json["id"] != float64(7) {
				t.Fatalf("A2A-Version %s at %s: %d %q id %v, want -32009 with the request id", v, path, code, msg, r.json["id"])
			}
		}
		r := b.do(http.MethodGet, "/tasks/nope", v, nil)
		if r.status != http.StatusBadRequest || restReason(t, r) != "VERSION_NOT_SUPPORTED" {
			t.Fatalf("REST with A2A-Version %s: %d %s, want 400 VERSION_NOT_SUPPORTED", v, r.status, r.body)
		}
	}
	// Major.Minor decides; a patch number is ignored.
	if code, _ := rpcError(t, b.post("/", "1.0.3", getUnknown)); code != -32001 {
		t.Fatalf("A2A-Version 1.0.3: code %d, want -32001 (served as 1.0)", code)
	}
	// The query parameter the specification allows instead of the header.
	if code, _ := rpcError(t, b.post("/?A2A-Version=1.0", "", getUnknown)); code != -32001 {
		t.Fatalf("A2A-Version as query parameter: code %d, want -32001 (served as 1.0)", code)
	}
	if r := b.do(http.MethodGet, "/tasks/nope?A2A-Version=1.0", "", nil); r.status != http.StatusNotFound || restReason(t, r) != "TASK_NOT_FOUND" {
		t.Fatalf("REST with the query parameter: %d %s, want 404 TASK_NOT_FOUND", r.status, r.body)
	}
	// Without a version, HTTP+JSON is 0.3: its routes start with /v1.
	r := b.do(http.MethodGet, "/tasks/nope", "", nil)
	if r.status != http.StatusNotFound || !strings.Contains(string(r.body), "A2A-Version") {
		t.Fatalf("1.0 route without a version: %d %s, want 404 naming A2A-Version", r.status, r.body)
	}
	if r := b.do(http.MethodGet, "/v1/tasks/nope", "", nil); r.status != http.StatusNotFound || restReason(t, r) != "TASK_NOT_FOUND" {
		t.Fatalf("0.3 route: %d %s, want 404 TASK_NOT_FOUND", r.status, r.body)
	}
	if r := b.do(http.MethodGet, "/agents/nope/tasks/x", "1.0", nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown agent: %d %s, want 404", r.status, r.body)
	}
	if r := b.do(http.MethodGet, "/no/such/route", "1.0", nil); r.status != http.StatusNotFound || restReason(t, r) != "METHOD_NOT_FOUND" {
		t.Fatalf("unknown route: %d %s, want a JSON 404", r.status, r.body)
	}
}

func TestJSONRPCErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := send(testCtx(t), t, b.client("echo", a2a.TransportProtocolJSONRPC), sendReq(userMessage("done")))
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, -32600},
		{"not an object", `42`, -32600},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"no method", `{"jsonrpc":"2.0","id":1,"params":{}}`, -32600},
		{"bad id", `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"tasks/explode","params":{}}`, -32601},
		{"bad params type", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`, -32602},
		{"missing message", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32602},
		{"empty parts", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, -32602},
		{"agent role", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}}`, -32602},
		{"negative page size", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":-1}}`, -32602},
		{"unknown status", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"status":"TASK_STATE_SLEEPING"}}`, -32602},
		{"task not found", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}`, -32001},
		{"not cancelable", `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + string(done.ID) + `"}}`, -32002},
		{"extended card", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, -32004},
		// params may be omitted (JSON-RPC 2.0 §4.2): not a parse error.
		{"extended card without params", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`, -32004},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.post("/", "1.0", tc.body)
			if code, msg := rpcError(t, r); code != tc.code {
				t.Fatalf("code %d (%s), want %d: %s", code, msg, tc.code, r.body)
			}
		})
	}
	// A2A 1.0 lists anonymous callers' tasks (the SDK's own handler would
	// refuse them).
	r := b.post("/", "1.0", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	if tasks, _ := rpcResult(t, r)["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("anonymous ListTasks = %s, want the one task", r.body)
	}
	// HTTP+JSON carries the same errors as HTTP statuses.
	if r := b.do(http.MethodGet, "/extendedAgentCard", "1.0", nil); r.status != http.StatusBadRequest || restReason(t, r) != "UNSUPPORTED_OPERATION" {
		t.Fatalf("REST extended card: %d %s", r.status, r.body)
	}
	if r := b.do(http.MethodPost, "/tasks/"+string(done.ID)+":cancel", "1.0", nil); r.status != http.StatusBadRequest || restReason(t, r) != "TASK_NOT_CANCELABLE" {
		t.Fatalf("REST cancel of a completed task: %d %s", r.status, r.body)
	}
	// Streaming refusals known up front are HTTP errors on HTTP+JSON, not
	// events of an opened stream.
	for _, tc := range []struct {
		method, path, version, body string
		status                      int
		reason                      string
	}{
		{"POST", "/tasks/" + string(done.ID) + ":subscribe", "1.0", "", http.StatusBadRequest, "UNSUPPORTED_OPERATION"},
		{"GET", "/tasks/" + string(done.ID) + ":subscribe", "1.0", "", http.StatusBadRequest, "UNSUPPORTED_OPERATION"},
		{"POST", "/tasks/no-such-task:subscribe", "1.0", "", http.StatusNotFound, "TASK_NOT_FOUND"},
		{"POST", "/v1/tasks/" + string(done.ID) + ":subscribe", "", "", http.StatusBadRequest, "UNSUPPORTED_OPERATION"},
		{"POST", "/message:stream", "1.0", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}`, http.StatusBadRequest, "INVALID_PARAMS"},
		{"POST", "/message:stream", "1.0", `{"message":{"messageId":"m","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"x"}]}}`, http.StatusNotFound, "TASK_NOT_FOUND"},
	} {
		r := b.do(tc.method, tc.path, tc.version, strings.NewReader(tc.body))
		if r.status != tc.status || strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || restReason(t, r) != tc.reason {
			t.Errorf("%s %s: %d %s %s, want an immediate %d %s", tc.method, tc.path, r.status, r.header.Get("Content-Type"), r.body, tc.status, tc.reason)
		}
	}
	// On JSON-RPC the error stays in the stream: a2a-go's JSON-RPC client
	// reads streaming answers as SSE only.
	r = b.post("/", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+string(done.ID)+`"}}`)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(r.body), "-32004") {
		t.Fatalf("JSON-RPC subscribe to a completed task: %s %s", r.header.Get("Content-Type"), r.body)
	}
}

func TestInternalErrorsAreShortAndLogged(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	b := setup(t, func(c *setupConfig) { c.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	ctx := testCtx(t)
	c := b.client("echo", a2a.TransportProtocolJSONRPC)
	tk := send(ctx, t, c, sendReq(userMessage("x")))
	if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: "%%%not-a-token"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("garbage page token: err = %v, want InvalidParams", err)
	}
	// When the store fails the caller sees a short message with a
	// reference; the log has the whole error.
	b.store.failGet.Store(true)
	_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
	if !errors.Is(err, a2a.ErrInternalError) {
		t.Fatalf("GetTask on a closed store: err = %v, want InternalError", err)
	}
	msg := err.Error()
	i := strings.Index(msg, "(ref ")
	if i < 0 || strings.Contains(msg, "disk") {
		t.Fatalf("internal error %q: want a short message with a reference and no store details", msg)
	}
	ref := strings.TrimSuffix(msg[i+len("(ref "):], ")")
	if !strings.Contains(logs.String(), "ref="+ref) || !strings.Contains(logs.String(), "disk on fire") {
		t.Fatalf("log does not hold ref %s with the full error:\n%s", ref, logs.String())
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.MaxBodyBytes = 1024 })
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 4096) + `"}]}}}`
	for _, version := range []string{"1.0", ""} {
		r := b.post("/", version, big)
		code, msg := rpcError(t, r)
		if r.status != http.StatusRequestEntityTooLarge || code != -32600 || !strings.Contains(msg, "1024 bytes") {
			t.Fatalf("oversized JSON-RPC body (version %q): %d, %d %q", version, r.status, code, msg)
		}
	}
	// Without a Content-Length the limit holds while reading.
	r := b.do(http.MethodPost, "/", "1.0", io.MultiReader(strings.NewReader(big)))
	if code, _ := rpcError(t, r); r.status != http.StatusRequestEntityTooLarge || code != -32600 {
		t.Fatalf("oversized chunked body: %d %s", r.status, r.body)
	}
	r = b.do(http.MethodPost, "/message:send", "1.0", bytes.NewReader([]byte(big)))
	if r.status != http.StatusRequestEntityTooLarge || restReason(t, r) != "INVALID_REQUEST" {
		t.Fatalf("oversized HTTP+JSON body: %d %s", r.status, r.body)
	}
	// A body under the limit still works.
	r = b.post("/", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"small","role":"ROLE_USER","parts":[{"text":"small"}]}}}`)
	if _, ok := rpcResult(t, r)["task"]; !ok {
		t.Fatalf("small body: %s", r.body)
	}
}

func TestServerOptionsValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name string
		opts a2aserver.Options
		says string
	}{
		{"no coordinator", a2aserver.Options{}, "Coordinator"},
		{"unknown agent", a2aserver.Options{Coordinator: b.coord, Agents: []a2aserver.AgentInfo{{Name: "ghost"}}}, "ghost"},
		{"duplicate agent", a2aserver.Options{Coordinator: b.coord, Agents: []a2aserver.AgentInfo{{Name: "echo"}, {Name: "echo"}}}, "twice"},
		{"bad default", a2aserver.Options{Coordinator: b.coord, Agents: []a2aserver.AgentInfo{{Name: "echo"}}, DefaultAgent: "slow"}, "DefaultAgent"},
		{"relative base", a2aserver.Options{Coordinator: b.coord, BaseURL: "/relative"}, "BaseURL"},
		{"negative limit", a2aserver.Options{Coordinator: b.coord, MaxBodyBytes: -1}, "MaxBodyBytes"},
	} {
		if _, err := a2aserver.New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want one naming %s", tc.name, err, tc.says)
		}
	}
}

// TestUnknownAgentListsTheAgents: a request for an agent not served here,
// whatever the transport it was meant for, is answered 404 with the
// reason METHOD_NOT_FOUND as before, and names the agents that are
// served, in the message and in the ErrorInfo metadata.
func TestUnknownAgentListsTheAgents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const want = "ask,chunks,echo,failing,flaky,guarded,slow"
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/agents/ehco/.well-known/agent-card.json", ""},
		{http.MethodPost, "/agents/ehco", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`},
		{http.MethodPost, "/agents/ehco/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`},
	} {
		r := b.do(c.method, c.path, "1.0", strings.NewReader(c.body))
		if r.status != http.StatusNotFound || restReason(t, r) != "METHOD_NOT_FOUND" {
			t.Errorf("%s %s: %d %s, want 404 METHOD_NOT_FOUND", c.method, c.path, r.status, r.body)
			continue
		}
		e := r.json["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, `no agent named "ehco"`) || !strings.Contains(msg, strings.ReplaceAll(want, ",", ", ")) {
			t.Errorf("%s %s: message %q does not name the agent asked for and the agents served (%s)", c.method, c.path, msg, want)
		}
		var agents string
		for _, d := range e["details"].([]any) {
			if m, ok := d.(map[string]any)["metadata"].(map[string]any); ok {
				agents, _ = m["agents"].(string)
			}
		}
		if agents != want {
			t.Errorf("%s %s: ErrorInfo metadata agents = %q, want %q", c.method, c.path, agents, want)
		}
	}
}
