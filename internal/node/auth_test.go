package node_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/node"
)

// withBearer is an HTTP client that sends token as a bearer token.
func withBearer(token string) *http.Client {
	return &http.Client{Transport: bearer.Transport{Token: token}}
}

// TestBearerAuth runs a node with auth: bearer and drives it with the
// official A2A and MCP clients: cards stay public and declare the scheme;
// calls without a valid token get 401; a token's actor submits under its
// own name, cannot act as another actor, and neither sees nor touches
// another actor's tasks, over A2A and over MCP.
func TestBearerAuth(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("PACTUM_TEST_ALICE_TOKEN", "alice-secret")
	bobHash := sha256.Sum256([]byte("bob-secret"))
	base := startServer(t, fmt.Sprintf(`auth: bearer
agents:
  - name: echo
    type: echo
actors:
  - name: alice
    actions: ["*"]
    token_env: PACTUM_TEST_ALICE_TOKEN
  - name: bob
    actions: [echo]
    token_sha256: %s
`, hex.EncodeToString(bobHash[:])))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The card is public and names the scheme.
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/echo")
	if err != nil {
		t.Fatalf("card without a token: %v", err)
	}
	if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok || len(card.SecurityRequirements) != 1 {
		t.Errorf("card security = %+v / %+v, want the bearer scheme, required", card.SecuritySchemes, card.SecurityRequirements)
	}

	// No token, a wrong token: 401 with a challenge, on A2A and on MCP.
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-401","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	for _, tc := range []struct{ path, token, body, challenge string }{
		{"/agents/echo", "", send, `Bearer realm="pactum"`},
		{"/agents/echo", "wrong", send, `error="invalid_token"`},
		{"/agents/echo/tasks", "", "", "Bearer"},
		{"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Bearer"},
		{"/mcp", "wrong", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Bearer"},
	} {
		method := http.MethodPost
		if tc.body == "" {
			method = http.MethodGet
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tc.challenge) {
			t.Errorf("%s %s with token %q: %s, WWW-Authenticate %q; want 401 with %q", method, tc.path, tc.token, resp.Status, resp.Header.Get("WWW-Authenticate"), tc.challenge)
		}
	}
	// Each refusal is counted, by endpoint and reason.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`pactum_auth_refusals_total{endpoint="a2a",reason="missing"} 2`,
		`pactum_auth_refusals_total{endpoint="a2a",reason="invalid"} 1`,
		`pactum_auth_refusals_total{endpoint="mcp",reason="missing"} 1`,
		`pactum_auth_refusals_total{endpoint="mcp",reason="invalid"} 1`,
	} {
		if !strings.Contains(string(metricsText), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/healthz", "/agents/echo/.well-known/agent-card.json", "/.well-known/agent.json"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %s, want 200", path, resp.Status)
		}
	}

	a2aAs := func(token string) *a2aclient.Client {
		hc := withBearer(token)
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	alice, bob := a2aAs("alice-secret"), a2aAs("bob-secret")
	sendAs := func(c *a2aclient.Client, meta map[string]any) (*a2a.Task, error) { return sendHello(ctx, c, meta) }
	aliceTask, err := sendAs(alice, nil)
	if err != nil {
		t.Fatalf("alice sends: %v", err)
	}
	if aliceTask.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's task: %s", aliceTask.Status.State)
	}
	stored, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: aliceTask.ID})
	if err != nil {
		t.Fatalf("alice reads her task: %v", err)
	}
	raw, _ := json.Marshal(stored.Metadata)
	if !strings.Contains(string(raw), `"alice"`) {
		t.Errorf("alice's task metadata %s does not record actor alice", raw)
	}

	// Naming another actor is forbidden; naming yourself is fine.
	if _, err := sendAs(alice, map[string]any{"pactum": map[string]any{"actor": "bob"}}); err == nil || !strings.Contains(err.Error(), "cannot act as") {
		t.Errorf("alice acting as bob: %v, want a forbidden error", err)
	}
	if _, err := sendAs(bob, map[string]any{"pactum": map[string]any{"actor": "bob"}}); err != nil {
		t.Errorf("bob naming himself: %v", err)
	}

	// Bob neither sees nor touches alice's task.
	if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: aliceTask.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob reads alice's task: %v, want TaskNotFound", err)
	}
	if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: aliceTask.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob cancels alice's task: %v, want TaskNotFound", err)
	}
	list, err := bob.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range list.Tasks {
		if tk.ID == aliceTask.ID {
			t.Errorf("bob's ListTasks shows alice's task")
		}
	}
	if len(list.Tasks) != 1 {
		t.Errorf("bob's ListTasks has %d tasks, want his one", len(list.Tasks))
	}

	// MCP: the same tokens, the same rules.
	mcpAs := func(token string) *mcp.ClientSession {
		s, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: withBearer(token)}, nil)
		if err != nil {
			t.Fatalf("MCP connect: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	bobMCP := mcpAs("bob-secret")
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		res, err := bobMCP.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res
	}
	res := call("submit_task", map[string]any{"agent": "echo", "text": "over mcp", "wait": true})
	if res.IsError || res.StructuredContent.(map[string]any)["actor"] != "bob" {
		t.Errorf("bob's submit_task: %+v, want a task of actor bob", res.StructuredContent)
	}
	res = call("submit_task", map[string]any{"agent": "echo", "text": "as alice", "actor": "alice"})
	if !res.IsError || res.StructuredContent.(map[string]any)["code"] != "forbidden" {
		t.Errorf("bob submitting as alice over MCP: %+v, want forbidden", res.StructuredContent)
	}
	for _, tool := range []string{"get_task", "cancel_task", "retry_task"} {
		res = call(tool, map[string]any{"task_id": string(aliceTask.ID)})
		if !res.IsError || res.StructuredContent.(map[string]any)["code"] != "not_found" {
			t.Errorf("bob's %s on alice's task: %+v, want not_found", tool, res.StructuredContent)
		}
	}
}

// TestBearerTokenEnvUnset: a token_env variable that is not set stops the
// node from starting, naming the actor and the variable.
func TestBearerTokenEnvUnset(t *testing.T) {
	t.Setenv("PACTUM_TEST_UNSET_TOKEN", "")
	src := "listen: 127.0.0.1:0\nstore: sqlite://" + filepath.Join(t.TempDir(), "p.db") + "\nauth: bearer\nagents: [{name: echo, type: echo}]\nactors:\n  - {name: carol, actions: ['*'], token_env: PACTUM_TEST_UNSET_TOKEN}\n"
	cfg, err := config.Parse([]byte(src), "auth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = node.New(context.Background(), cfg, t.TempDir(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "carol") || !strings.Contains(err.Error(), "PACTUM_TEST_UNSET_TOKEN") {
		t.Fatalf("node.New with an unset token_env: %v; want an error naming carol and the variable", err)
	}
}

// TestBearerMultipleAuthorizationHeaders: a request with more than one
// Authorization header is refused with 400 and error="invalid_request" on
// A2A (JSON-RPC and HTTP+JSON) and on MCP, whatever the headers hold (two
// valid tokens, a valid one first or last, two actors' tokens), and runs
// nothing; the same request with one of its headers passes.
func TestBearerMultipleAuthorizationHeaders(t *testing.T) {
	t.Parallel()
	aliceHash, bobHash := sha256.Sum256([]byte("alice-secret")), sha256.Sum256([]byte("bob-secret"))
	base := startServer(t, fmt.Sprintf(`auth: bearer
agents:
  - {name: echo, type: echo}
actors:
  - {name: alice, actions: ["*"], token_sha256: %s}
  - {name: bob, actions: ["*"], token_sha256: %s}
`, hex.EncodeToString(aliceHash[:]), hex.EncodeToString(bobHash[:])))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-two-headers","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	rest := `{"message":{"messageId":"m-two-headers-rest","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	do := func(path, body string, headers ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		for _, h := range headers {
			req.Header.Add("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(data)
	}
	for _, target := range []struct{ name, path, body string }{
		{"A2A JSON-RPC", "/agents/echo", send},
		{"A2A HTTP+JSON", "/agents/echo/message:send", rest},
		{"MCP", "/mcp", initialize},
	} {
		for _, headers := range [][]string{
			{"Bearer alice-secret", "Bearer alice-secret"},
			{"Bearer alice-secret", "Bearer wrong"},
			{"Bearer wrong", "Bearer alice-secret"},
			{"Bearer alice-secret", "Bearer bob-secret"},
			{"Bearer alice-secret", ""},
		} {
			resp, body := do(target.path, target.body, headers...)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("WWW-Authenticate") != `Bearer realm="pactum", error="invalid_request"` ||
				!strings.Contains(body, "more than one Authorization header") {
				t.Errorf("%s with Authorization headers %q: %s, WWW-Authenticate %q, body %s; want 400 with error=\"invalid_request\"",
					target.name, headers, resp.Status, resp.Header.Get("WWW-Authenticate"), body)
			}
		}
	}
	// Nothing ran: alice has no task. One header of the same kind passes.
	resp, body := do("/agents/echo", `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`, "Bearer alice-secret")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tasks":[]`) {
		t.Errorf("alice's ListTasks after the refused requests: %s %s; want no tasks", resp.Status, body)
	}
	if resp, body := do("/mcp", initialize, "Bearer alice-secret"); resp.StatusCode != http.StatusOK {
		t.Errorf("MCP initialize with one Authorization header: %s %s", resp.Status, body)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`pactum_auth_refusals_total{endpoint="a2a",reason="invalid"} 10`,
		`pactum_auth_refusals_total{endpoint="mcp",reason="invalid"} 5`,
	} {
		if !strings.Contains(string(metricsText), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// sendHello sends "hello" (with request metadata meta) through c and
// returns the task it answers with; an answer that is not a task is an
// error.
func sendHello(ctx context.Context, c *a2aclient.Client, meta map[string]any) (*a2a.Task, error) {
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello")), Metadata: meta})
	if err != nil {
		return nil, err
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("SendMessage answered %T", res)
	}
	return tk, nil
}
