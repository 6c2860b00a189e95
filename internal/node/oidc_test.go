package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/oidctest"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// oidcNode starts a node with auth: oidc trusting p, gRPC on, two agents
// (echo and other) and two actors: alice (every action, subject
// alice-client) and bob (echo and other, subject bob-client); the token's
// scope claim grants actions. It returns the HTTP base URL and the gRPC
// address.
func oidcNode(t *testing.T, p *oidctest.Provider) (base, grpcAddr string) {
	t.Helper()
	grpcAddr = freeAddr(t)
	base = startServer(t, fmt.Sprintf(`grpc_listen: %s
auth:
  mode: oidc
  issuer: %q
  audience: %s
  actions_claim: scope
agents:
  - {name: echo, type: echo}
  - {name: other, type: echo}
actors:
  - {name: alice, actions: ["*"], subject: alice-client}
  - {name: bob, actions: [echo, other], subject: bob-client}
`, grpcAddr, p.Issuer, oidctest.Audience))
	return base, grpcAddr
}

// binding refuses or accepts one call made with a token ("" for none) on
// one of pactum's bindings; it returns the refusal's challenge and the
// text of the answer (nil error), or the call's error (gRPC).
type binding struct {
	name string
	call func(ctx context.Context, t *testing.T, token string) (status int, challenge, body string)
}

// httpBinding calls method path with body and the A2A-Version header.
func httpBinding(name, base, method, path, body string, hdr map[string]string) binding {
	return binding{name, func(ctx context.Context, t *testing.T, token string) (int, string, string) {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
	}}
}

// grpcBinding calls GetTask over gRPC with the official client; a refusal
// is 401 (Unauthenticated), its message the body.
func grpcBinding(card *a2a.AgentCard) binding {
	return binding{"gRPC", func(ctx context.Context, t *testing.T, token string) (int, string, string) {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if token != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(bearer.PerRPC{Token: token, AllowInsecure: true}))
		}
		c, err := a2aclient.NewFromCard(ctx, card, a2agrpc.WithGRPCTransport(opts...),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Destroy() }()
		_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
		switch {
		case errors.Is(err, a2a.ErrUnauthenticated):
			return http.StatusUnauthorized, "", err.Error()
		case errors.Is(err, a2a.ErrTaskNotFound):
			return http.StatusNotFound, "", err.Error()
		}
		t.Fatalf("gRPC GetTask: %v", err)
		return 0, "", ""
	}}
}

// TestOIDCRefusals is the refusal table of auth: oidc: no token, and each
// faulty or forged token (expired, not yet valid, wrong issuer, wrong
// audience, unknown kid, alg none, HS256 keyed with the provider's public
// key), on every binding: A2A JSON-RPC, HTTP+JSON, a JSON-RPC stream,
// gRPC, MCP and the dashboard. Each is refused with 401 and an RFC 6750
// challenge that names the failed check, and never echoes the token; a
// valid token of the same provider passes on each.
func TestOIDCRefusals(t *testing.T) {
	p := oidctest.New(t)
	base, _ := oidcNode(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-%s","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	stream := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"s-%s","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	n := 0
	next := func() string { n++; return fmt.Sprint(n) }
	bindings := []binding{
		{"JSON-RPC", func(ctx context.Context, t *testing.T, token string) (int, string, string) {
			return httpBinding("", base, http.MethodPost, "/agents/echo", fmt.Sprintf(send, next()), nil).call(ctx, t, token)
		}},
		httpBinding("HTTP+JSON", base, http.MethodGet, "/agents/echo/tasks", "", nil),
		{"stream", func(ctx context.Context, t *testing.T, token string) (int, string, string) {
			return httpBinding("", base, http.MethodPost, "/agents/echo", fmt.Sprintf(stream, next()), nil).call(ctx, t, token)
		}},
		grpcBinding(card),
		httpBinding("MCP", base, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil),
		httpBinding("dashboard", base, http.MethodGet, "/ui/", "", map[string]string{"X-Pactum-Fragment": "1"}),
	}
	refusals := append([]oidctest.Refusal{{Name: "no token"}}, p.Refusals(t, "alice-client")...)
	for _, b := range bindings {
		for _, r := range refusals {
			status, challenge, body := b.call(ctx, t, r.Token)
			switch {
			case status != http.StatusUnauthorized:
				t.Errorf("%s, %s: %d %.200s; want 401", b.name, r.Name, status, body)
			case r.Token == "" && b.name != "gRPC" && b.name != "MCP" && (challenge != `Bearer realm="pactum"`):
				t.Errorf("%s, %s: challenge %q", b.name, r.Name, challenge)
			case r.Token == "" && b.name == "MCP" && (challenge != `Bearer realm="pactum", resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`):
				// The MCP endpoint's challenge also names its protected
				// resource metadata (TestOIDCMCPProtectedResource).
				t.Errorf("%s, %s: challenge %q", b.name, r.Name, challenge)
			case r.Token != "" && b.name != "gRPC" && (!strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, r.Reason)):
				t.Errorf("%s, %s: challenge %q; want invalid_token saying %q", b.name, r.Name, challenge, r.Reason)
			case r.Token != "" && !strings.Contains(body, r.Reason):
				t.Errorf("%s, %s: body %.300q does not say %q", b.name, r.Name, body, r.Reason)
			case r.Token != "" && (strings.Contains(body, r.Token) || strings.Contains(challenge, r.Token)):
				t.Errorf("%s, %s: the answer echoes the token", b.name, r.Name)
			}
		}
		good := p.Token(t, "alice-client", map[string]any{"scope": "pactum:*"})
		if status, _, body := b.call(ctx, t, good); status == http.StatusUnauthorized {
			t.Errorf("%s with a valid token: 401 %.300s", b.name, body)
		}
	}
}

// TestOIDCActors drives a node with auth: oidc with the official A2A and
// MCP clients and the provider's tokens: a token acts as the actor whose
// subject it carries, another actor's task is invisible to it (A2A and
// MCP), a token whose scope lacks an action is refused that action, and
// after the provider rotates its key, tokens of the new key work.
func TestOIDCActors(t *testing.T) {
	p := oidctest.New(t)
	base, _ := oidcNode(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := card.SecuritySchemes["oidc"].(a2a.OpenIDConnectSecurityScheme); !ok || s.OpenIDConnectURL != p.Issuer+"/.well-known/openid-configuration" {
		t.Errorf("card security schemes %+v; want oidc with the provider's discovery URL", card.SecuritySchemes)
	}
	a2aAs := func(card *a2a.AgentCard, token string) *a2aclient.Client {
		hc := withBearer(token)
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	sendAs := func(c *a2aclient.Client) (*a2a.Task, error) { return sendHello(ctx, c, nil) }
	aliceToken := p.Token(t, "alice-client", map[string]any{"scope": "openid pactum:*"})
	bobToken := p.Token(t, "bob-client", map[string]any{"scope": "pactum:echo"})
	alice := a2aAs(card, aliceToken)
	aliceTask, err := sendAs(alice)
	if err != nil || aliceTask.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice sends: %+v, %v", aliceTask, err)
	}

	// On every A2A binding, bob neither reads alice's task nor, with a
	// token whose scope lacks pactum:other, gets other to run (blocking or
	// streaming), though his actor may call it.
	otherCard, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/other")
	if err != nil {
		t.Fatal(err)
	}
	over := func(card *a2a.AgentCard, binding a2a.TransportProtocol, token string) *a2aclient.Client {
		hc := withBearer(token)
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
			a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithPerRPCCredentials(bearer.PerRPC{Token: token, AllowInsecure: true})),
			a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC} {
		if _, err := over(card, binding, bobToken).GetTask(ctx, &a2a.GetTaskRequest{ID: aliceTask.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%s: bob reads alice's task: %v, want TaskNotFound", binding, err)
		}
		if tk, err := sendAs(over(otherCard, binding, bobToken)); err != nil || tk.Status.State != a2a.TaskStateRejected {
			t.Errorf("%s: bob's token without pactum:other sends to other: %+v, %v; want rejected", binding, tk, err)
		}
		var last a2a.TaskState
		for ev, err := range over(otherCard, binding, bobToken).SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream"))}) {
			if err != nil {
				break
			}
			switch e := ev.(type) {
			case *a2a.Task:
				last = e.Status.State
			case *a2a.TaskStatusUpdateEvent:
				last = e.Status.State
			}
		}
		if last != a2a.TaskStateRejected {
			t.Errorf("%s: bob's stream without pactum:other to other ended %q; want rejected", binding, last)
		}
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: withBearer(bobToken)}, nil)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	callMCP := func(tool string, args map[string]any) map[string]any {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out
	}
	if got := callMCP("get_task", map[string]any{"task_id": string(aliceTask.ID)}); got["code"] != "not_found" {
		t.Errorf("bob's get_task on alice's task over MCP: %v, want not_found", got)
	}
	if got := callMCP("submit_task", map[string]any{"agent": "echo", "text": "over mcp", "wait": true}); got["actor"] != "bob" || got["state"] != "succeeded" {
		t.Errorf("bob's submit_task to echo over MCP: %v, want a succeeded task of bob", got)
	}

	// Bob's token grants echo only: other is refused over MCP too, and
	// over JSON-RPC the answer says why.
	tk, err := sendAs(a2aAs(otherCard, bobToken))
	if err == nil && (tk.Status.State != a2a.TaskStateRejected && tk.Status.State != a2a.TaskStateFailed) {
		t.Errorf("bob's token without pactum:other sends to other: %+v", tk.Status)
	}
	if err != nil && !strings.Contains(err.Error(), "does not grant") {
		t.Errorf("bob's token without pactum:other sends to other: %v", err)
	}
	if got := callMCP("submit_task", map[string]any{"agent": "other", "text": "over mcp", "wait": true}); got["error_code"] != "forbidden" || got["rejected"] != true {
		t.Errorf("bob's submit_task to other over MCP: %v, want forbidden", got)
	}

	// Key rotation: a token of the new key works (the node fetches the
	// JWKS again), and so does one of the old key.
	p.Rotate(t)
	if tk, err := sendAs(a2aAs(card, p.Token(t, "alice-client", map[string]any{"scope": "pactum:echo"}))); err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a token of the rotated key: %+v, %v", tk, err)
	}
	if tk, err := sendAs(alice); err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a token of the old key after rotation: %+v, %v", tk, err)
	}
}

// TestOIDCRealProvider runs a node with auth: oidc against oidc-provider
// from npm (a real OpenID provider on loopback) issuing client credentials
// tokens: the official A2A clients (JSON-RPC and gRPC) and the MCP client
// authenticate with them; a client's token acts as its actor (client_id)
// and sees only its own tasks; a scope without the action is refused; the
// provider rotates its key mid-run and tokens of the new key verify.
func TestOIDCRealProvider(t *testing.T) {
	p := oidctest.StartNode(t,
		oidctest.Client{ID: "alice-client", Secret: "alice-secret", Scope: "pactum:* pactum:echo"},
		oidctest.Client{ID: "bob-client", Secret: "bob-secret", Scope: "pactum:echo pactum:other"})
	grpcAddr := freeAddr(t)
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	base := startServerOn(t, dsn, fmt.Sprintf(`grpc_listen: %s
auth: {mode: oidc, issuer: %q, audience: %s, algorithms: [RS256], actor_claim: client_id, actions_claim: scope}
agents:
  - {name: echo, type: echo}
  - {name: other, type: echo}
actors:
  - {name: alice, actions: ["*"], subject: alice-client}
  - {name: bob, actions: [echo, other], subject: bob-client}
`, grpcAddr, p.Issuer, oidctest.Audience))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	token := func(client, scope string) string {
		tok, err := p.Token(ctx, client, scope)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	send := func(c *a2aclient.Client) (*a2a.Task, error) { return sendHello(ctx, c, nil) }
	jsonrpc := func(card *a2a.AgentCard, tok string) *a2aclient.Client {
		c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(withBearer(tok)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Destroy() })
		return c
	}
	aliceTask, err := send(jsonrpc(card, token("alice-client", "pactum:echo")))
	if err != nil || aliceTask.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice over JSON-RPC: %+v, %v", aliceTask, err)
	}
	grpcClient, err := a2aclient.NewFromCard(ctx, card, a2agrpc.WithGRPCTransport(
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearer.PerRPC{Token: token("alice-client", "pactum:*"), AllowInsecure: true})),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = grpcClient.Destroy() })
	if got, err := grpcClient.GetTask(ctx, &a2a.GetTaskRequest{ID: aliceTask.ID}); err != nil || got.ID != aliceTask.ID {
		t.Errorf("alice reads her task over gRPC: %v", err)
	}

	bobEcho := token("bob-client", "pactum:echo")
	if _, err := jsonrpc(card, bobEcho).GetTask(ctx, &a2a.GetTaskRequest{ID: aliceTask.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob reads alice's task: %v, want TaskNotFound", err)
	}
	otherCard, err := agentcard.DefaultResolver.Resolve(ctx, base+"/agents/other")
	if err != nil {
		t.Fatal(err)
	}
	if tk, err := send(jsonrpc(otherCard, bobEcho)); err == nil && tk.Status.State == a2a.TaskStateCompleted {
		t.Errorf("bob's token with scope pactum:echo ran other: %+v", tk.Status)
	}
	if tk, err := send(jsonrpc(otherCard, token("bob-client", "pactum:other"))); err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("bob's token with scope pactum:other: %+v, %v", tk, err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: withBearer(bobEcho)}, nil)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	t.Cleanup(func() { _ = session.Close() })
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "submit_task", Arguments: map[string]any{"agent": "echo", "text": "over mcp", "wait": true}})
	if out, _ := res.StructuredContent.(map[string]any); err != nil || out["actor"] != "bob" || out["state"] != "succeeded" {
		t.Errorf("bob's submit_task over MCP: %v, %v", out, err)
	}

	// Key rotation mid-run: the provider now signs with a key the node
	// has not seen.
	old := token("alice-client", "pactum:echo")
	p.Rotate()
	if tk, err := send(jsonrpc(card, token("alice-client", "pactum:echo"))); err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a token of the rotated key: %+v, %v", tk, err)
	}
	if tk, err := send(jsonrpc(card, old)); err != nil || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a token of the old key after rotation: %+v, %v", tk, err)
	}

	// The audit log records each submission's subject and issuer, and no
	// token reaches the store.
	st, err := store.OpenWith(ctx, dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.AuditEntries(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	submitted := 0
	for _, e := range entries {
		if strings.Contains(string(e.Data), old) || strings.Contains(string(e.Data), "eyJ") {
			t.Errorf("audit entry %d holds a token", e.Seq)
		}
		if e.Kind != task.AuditSubmitted {
			continue
		}
		submitted++
		var d struct{ Subject, Issuer string }
		if err := json.Unmarshal(e.Data, &d); err != nil || d.Issuer != p.Issuer || d.Subject != e.Actor+"-client" {
			t.Errorf("submission of %s: subject %q, issuer %q (%v); want %s-client, %s", e.Actor, d.Subject, d.Issuer, err, e.Actor, p.Issuer)
		}
	}
	if submitted < 5 {
		t.Errorf("%d submissions in the audit log, want at least 5", submitted)
	}
}

// TestOIDCOutboundClientCredentials: a pactum a2a agent (oauth2 client
// credentials) calls a second pactum protected by the real OpenID
// provider (auth: oidc): it gets its token from the provider's token
// endpoint and refreshes it when it is about to expire (the provider
// issues 5 s tokens here, inside golang.org/x/oauth2's 10 s reuse margin,
// so every call gets a fresh one); the second node sees the caller as the
// actor its token names. A wrong client secret fails the task with the
// token endpoint's refusal, naming no secret.
func TestOIDCOutboundClientCredentials(t *testing.T) {
	t.Setenv("PACTUM_OIDC_TOKEN_TTL", "5") // read by the provider (oidctest/js)
	t.Setenv("PACTUM_TEST_CALLER_SECRET", "caller-secret")
	t.Setenv("PACTUM_TEST_WRONG_SECRET", "not-the-secret")
	p := oidctest.StartNode(t, oidctest.Client{ID: "caller-client", Secret: "caller-secret", Scope: "pactum:echo"})
	var grants atomic.Int32
	target, err := url.Parse(p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			grants.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(counting.Close)

	remote := startServerOn(t, "sqlite://"+filepath.Join(t.TempDir(), "remote.db"), fmt.Sprintf(`auth: {mode: oidc, issuer: %q, audience: %s, algorithms: [RS256], actor_claim: client_id, actions_claim: scope}
agents:
  - {name: echo, type: echo}
actors:
  - {name: caller, actions: [echo], subject: caller-client}
`, p.Issuer, oidctest.Audience))
	local := startServerOn(t, "sqlite://"+filepath.Join(t.TempDir(), "local.db"), fmt.Sprintf(`agents:
  - name: remote
    type: a2a
    a2a:
      url: %s/agents/echo
      oauth2: {token_url: %q, client_id: caller-client, client_secret_env: PACTUM_TEST_CALLER_SECRET, scopes: ["pactum:echo"]}
  - name: misconfigured
    type: a2a
    retry: {max_attempts: 1}
    a2a:
      url: %s/agents/echo
      oauth2: {token_url: %q, client_id: caller-client, client_secret_env: PACTUM_TEST_WRONG_SECRET}
`, remote, counting.URL+"/token", remote, counting.URL+"/token"))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	send := func(agent, text string) *a2a.Task {
		t.Helper()
		card, err := agentcard.DefaultResolver.Resolve(ctx, local+"/agents/"+agent)
		if err != nil {
			t.Fatal(err)
		}
		c, err := a2aclient.NewFromCard(ctx, card)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Destroy()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
		if err != nil {
			t.Fatalf("SendMessage to %s: %v", agent, err)
		}
		tk, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("SendMessage to %s answered %T", agent, res)
		}
		return tk
	}
	for _, text := range []string{"first", "second"} {
		if tk := send("remote", text); tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s call through the a2a agent: %s (%v)", text, tk.Status.State, tk.Status.Message)
		}
	}
	if n := grants.Load(); n < 2 {
		t.Errorf("the token endpoint granted %d tokens for two calls with 5 s tokens, want a fresh one per call", n)
	}
	// The remote node ran the tasks as the actor the token names: the
	// caller, with a token of its own, lists exactly those two.
	tok, err := p.Token(ctx, "caller-client", "pactum:echo")
	if err != nil {
		t.Fatal(err)
	}
	rcard, err := agentcard.DefaultResolver.Resolve(ctx, remote+"/agents/echo")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := a2aclient.NewFromCard(ctx, rcard, a2aclient.WithJSONRPCTransport(withBearer(tok)))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Destroy()
	list, err := rc.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 2 {
		t.Errorf("the caller lists %d tasks on the remote node (%v), want the two the a2a agent sent", len(list.Tasks), err)
	}

	tk := send("misconfigured", "x")
	reason := fmt.Sprint(tk.Metadata["pactum"])
	if tk.Status.State != a2a.TaskStateFailed || !strings.Contains(reason, "the token endpoint answered 401") || strings.Contains(reason, "not-the-secret") {
		t.Errorf("a wrong client secret: %s, %s", tk.Status.State, reason)
	}
}

// TestOIDCMCPProtectedResource: under auth: oidc the MCP endpoint is an
// OAuth protected resource (RFC 9728, the MCP authorization
// specification): its metadata, public, names the endpoint as the
// resource and the issuer as its authorization server, and a refusal's
// challenge points at that metadata.
func TestOIDCMCPProtectedResource(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	base, _ := oidcNode(t, p)
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			BearerMethods        []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || md.Resource != base+"/mcp" ||
			len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != p.Issuer || len(md.BearerMethods) != 1 {
			t.Errorf("GET %s: %d %+v %v; want resource %s/mcp, authorization server %s", path, resp.StatusCode, md, err, base, p.Issuer)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`
	if c := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(c, want) || !strings.HasPrefix(c, "Bearer ") {
		t.Errorf("MCP without a token: %d, WWW-Authenticate %q; want 401 naming %s", resp.StatusCode, c, want)
	}
}

// TestOIDCCardOAuth2Scheme: with auth.token_url the cards declare the
// scheme callers get their tokens by, oauth2 client credentials at that
// token URL with the pactum:ACTION scopes, instead of openIdConnect.
func TestOIDCCardOAuth2Scheme(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	base := startServer(t, fmt.Sprintf(`auth: {mode: oidc, issuer: %q, audience: %s, actions_claim: scope, token_url: %q}
agents:
  - {name: echo, type: echo}
actors:
  - {name: alice, actions: ["*"], subject: alice-client}
`, p.Issuer, oidctest.Audience, p.Issuer+"/token"))
	resp, err := http.Get(base + "/agents/echo/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card struct {
		SecuritySchemes map[string]struct {
			OAuth2 *struct {
				Flows struct {
					ClientCredentials *struct {
						TokenURL string            `json:"tokenUrl"`
						Scopes   map[string]string `json:"scopes"`
					} `json:"clientCredentials"`
				} `json:"flows"`
			} `json:"oauth2SecurityScheme"`
			OIDC any `json:"openIdConnectSecurityScheme"`
		} `json:"securitySchemes"`
		SecurityRequirements []map[string]any `json:"securityRequirements"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	s, ok := card.SecuritySchemes["oauth2"]
	if !ok || s.OAuth2 == nil || s.OAuth2.Flows.ClientCredentials == nil || len(card.SecuritySchemes) != 1 {
		t.Fatalf("security schemes %+v: want one oauth2 scheme with a client credentials flow", card.SecuritySchemes)
	}
	cc := s.OAuth2.Flows.ClientCredentials
	if cc.TokenURL != p.Issuer+"/token" || cc.Scopes["pactum:echo"] == "" || cc.Scopes["pactum:*"] == "" {
		t.Errorf("client credentials flow %+v: want token URL %s/token and scopes pactum:echo, pactum:*", cc, p.Issuer)
	}
	if b, _ := json.Marshal(card.SecurityRequirements); !strings.Contains(string(b), `"oauth2"`) || len(card.SecurityRequirements) != 1 {
		t.Errorf("security requirements %s: want the oauth2 scheme required", b)
	}
}

// TestOIDCMCPAudience: with auth.mcp_audience, the MCP endpoint takes
// only tokens issued for it (aud its own), and the A2A endpoints keep
// auth.audience: a token for one is refused by the other, "wrong
// audience".
func TestOIDCMCPAudience(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	base := startServer(t, fmt.Sprintf(`auth: {mode: oidc, issuer: %q, audience: %s, mcp_audience: "mcp-resource"}
agents:
  - {name: echo, type: echo}
actors:
  - {name: alice, actions: ["*"], subject: alice-client}
`, p.Issuer, oidctest.Audience))
	a2aToken := p.Token(t, "alice-client", nil)
	mcpToken := p.Token(t, "alice-client", map[string]any{"aud": "mcp-resource"})
	call := func(path, body, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const list = `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
	for _, tc := range []struct {
		name, path, body, token string
		ok                      bool
	}{
		{"MCP with an MCP token", "/mcp", initialize, mcpToken, true},
		{"MCP with an A2A token", "/mcp", initialize, a2aToken, false},
		{"A2A with an A2A token", "/agents/echo", list, a2aToken, true},
		{"A2A with an MCP token", "/agents/echo", list, mcpToken, false},
	} {
		status, challenge := call(tc.path, tc.body, tc.token)
		switch {
		case tc.ok && status == http.StatusUnauthorized:
			t.Errorf("%s: refused (%s)", tc.name, challenge)
		case !tc.ok && (status != http.StatusUnauthorized || !strings.Contains(challenge, "wrong audience")):
			t.Errorf("%s: %d %q, want 401 wrong audience", tc.name, status, challenge)
		}
	}
}
