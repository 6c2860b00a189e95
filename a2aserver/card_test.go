package a2aserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/task"
)

// card fetches and decodes a 1.0 card.
func (b *bundle) card(path string) *a2a.AgentCard {
	b.t.Helper()
	r := b.do(http.MethodGet, path, "", nil)
	if r.status != http.StatusOK {
		b.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var c a2a.AgentCard
	if err := json.Unmarshal(r.body, &c); err != nil {
		b.t.Fatalf("GET %s: %v", path, err)
	}
	return &c
}

// profile returns the params of the capability-profile extension.
func profile(t *testing.T, c *a2a.AgentCard) map[string]any {
	t.Helper()
	for _, e := range c.Capabilities.Extensions {
		if e.URI == a2aserver.CapabilityProfileURI {
			return e.Params
		}
	}
	t.Fatalf("card %s has no %s extension: %+v", c.Name, a2aserver.CapabilityProfileURI, c.Capabilities.Extensions)
	return nil
}

func TestCardsHonourBaseURL(t *testing.T) {
	t.Parallel()
	const base = "https://agents.example.com/pactum"
	b := setup(t, func(c *setupConfig) { c.opts.BaseURL = base + "/" })

	echo := b.card("/agents/echo/.well-known/agent-card.json")
	if echo.Name != "echo" || echo.Description != "Echoes its input." || echo.Version != "1.2.3" {
		t.Fatalf("card = %s %q %s", echo.Name, echo.Description, echo.Version)
	}
	if !echo.Capabilities.Streaming || !echo.Capabilities.PushNotifications || echo.Capabilities.ExtendedAgentCard {
		t.Fatalf("capabilities = %+v", echo.Capabilities)
	}
	if len(echo.DefaultInputModes) == 0 || len(echo.DefaultOutputModes) == 0 || len(echo.Skills) == 0 {
		t.Fatalf("card lacks modes or skills: %+v", echo)
	}
	want := map[string]bool{
		"JSONRPC 1.0 " + base + "/agents/echo": true, "HTTP+JSON 1.0 " + base + "/agents/echo": true,
		"JSONRPC 0.3 " + base + "/agents/echo": true, "HTTP+JSON 0.3 " + base + "/agents/echo": true,
	}
	for _, i := range echo.SupportedInterfaces {
		key := string(i.ProtocolBinding) + " " + string(i.ProtocolVersion) + " " + i.URL
		if !want[key] {
			t.Errorf("unexpected interface %s", key)
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Fatalf("missing interfaces: %v", want)
	}

	p := profile(t, echo)
	actions, _ := p["actions"].([]any)
	if len(actions) != 1 {
		t.Fatalf("profile actions = %v", p["actions"])
	}
	a := actions[0].(map[string]any)
	if a["action"] != "echo" || a["sensitive"] != false || a["dryRun"] != false || !sameStrings(a["requires"], "actor") {
		t.Fatalf("echo profile = %v", a)
	}
	guarded := profile(t, b.card("/agents/guarded/.well-known/agent-card.json"))
	g := guarded["actions"].([]any)[0].(map[string]any)
	if g["sensitive"] != true || !sameStrings(g["requires"], "actor", "policyRef", "approvalRef") {
		t.Fatalf("guarded profile = %v", g)
	}
	if env, _ := guarded["envelope"].(map[string]any); env["metadataKey"] != "pactum" {
		t.Fatalf("profile envelope = %v", guarded["envelope"])
	}

	// The default agent's card at the root points at the root.
	root := b.card("/.well-known/agent-card.json")
	if root.Name != "echo" || root.SupportedInterfaces[0].URL != base {
		t.Fatalf("root card = %s at %s, want echo at %s", root.Name, root.SupportedInterfaces[0].URL, base)
	}
	// The legacy path serves the 0.3 form.
	r := b.do(http.MethodGet, "/.well-known/agent.json", "", nil)
	var legacy map[string]any
	if err := json.Unmarshal(r.body, &legacy); err != nil || r.status != http.StatusOK {
		t.Fatalf("legacy card: %d %s", r.status, r.body)
	}
	if legacy["protocolVersion"] != "0.3" || legacy["url"] != base || legacy["preferredTransport"] != "JSONRPC" {
		t.Fatalf("legacy card = %s", r.body)
	}
	if r.header.Get("Access-Control-Allow-Origin") == "" {
		t.Fatalf("cards must be readable from any origin: %v", r.header)
	}
	// Caching (§8.6): Cache-Control and an ETag that revalidates.
	r = b.do(http.MethodGet, "/agents/echo/.well-known/agent-card.json", "", nil)
	etag := r.header.Get("ETag")
	if etag == "" || !strings.Contains(r.header.Get("Cache-Control"), "max-age=") {
		t.Fatalf("card caching headers: %v", r.header)
	}
	req, _ := http.NewRequest(http.MethodGet, b.url+"/agents/echo/.well-known/agent-card.json", nil)
	req.Header.Set("If-None-Match", etag)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match with the card's ETag: %d, want 304", resp.StatusCode)
	}
	if r := b.do(http.MethodOptions, "/.well-known/agent-card.json", "", nil); r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Methods") == "" {
		t.Fatalf("card preflight: %d %v", r.status, r.header)
	}
	if r := b.do(http.MethodPost, "/.well-known/agent-card.json", "", nil); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST to a card: %d", r.status)
	}
	if r := b.do(http.MethodGet, "/agents/nope/.well-known/agent-card.json", "", nil); r.status != http.StatusNotFound {
		t.Fatalf("card of an unknown agent: %d", r.status)
	}
}

func TestCardsWithoutBaseURLUseTheRequestHost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.card("/agents/chunks/.well-known/agent-card.json")
	if c.SupportedInterfaces[0].URL != b.url+"/agents/chunks" {
		t.Fatalf("interface URL = %s, want %s/agents/chunks", c.SupportedInterfaces[0].URL, b.url)
	}
	if c.Description == "" || c.Version == "" {
		t.Fatalf("defaults missing: %+v", c)
	}
	if profile(t, c)["actions"].([]any)[0].(map[string]any)["streamsArtifacts"] != true {
		t.Fatal("chunks agent should publish streamsArtifacts")
	}
	got, ok := b.srv.Card("chunks", "https://x.example")
	if !ok || got.SupportedInterfaces[0].URL != "https://x.example/agents/chunks" {
		t.Fatalf("Server.Card = %+v", got)
	}
}

func sameStrings(v any, want ...string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i, w := range want {
		if list[i] != w {
			return false
		}
	}
	return true
}

// extension returns the extension of card c with uri, failing the test
// when there is none.
func extension(t *testing.T, c *a2a.AgentCard, uri string) a2a.AgentExtension {
	t.Helper()
	for _, e := range c.Capabilities.Extensions {
		if e.URI == uri {
			return e
		}
	}
	t.Fatalf("card %s has no %s extension: %+v", c.Name, uri, c.Capabilities.Extensions)
	return a2a.AgentExtension{}
}

// TestCardsStateTheTrustModel fetches cards over HTTP from a server
// without authentication and from one with bearer tokens: each says, in
// its trust-model extension, how callers are authenticated and where the
// actor comes from; only the bearer one declares a security scheme.
func TestCardsStateTheTrustModel(t *testing.T) {
	t.Parallel()
	open := setup(t)
	authed := setup(t, func(c *setupConfig) {
		c.opts.Authenticate = aliceToken
	})
	oidc := setup(t, func(c *setupConfig) {
		c.opts.Authenticate = aliceToken
		c.opts.Scheme = a2aserver.Scheme{OpenIDConnectURL: "https://id.example/.well-known/openid-configuration"}
	})

	c := open.card("/agents/echo/.well-known/agent-card.json")
	e := extension(t, c, a2aserver.TrustModelURI)
	if e.Params["authentication"] != "none" || e.Params["actor"] != "self-asserted" ||
		e.Params["defaultActor"] != "anonymous" || e.Params["taskAccess"] != "any" {
		t.Fatalf("trust model without auth = %v", e.Params)
	}
	if !strings.Contains(e.Description, "not authenticated") || !strings.Contains(e.Description, "self-asserted") {
		t.Fatalf("trust model description = %q", e.Description)
	}
	if len(c.SecuritySchemes) != 0 || len(c.SecurityRequirements) != 0 {
		t.Fatalf("card without auth declares security: %+v / %+v", c.SecuritySchemes, c.SecurityRequirements)
	}
	// The 0.3 form served at the legacy path carries it too.
	r := open.do(http.MethodGet, "/.well-known/agent.json", "", nil)
	var legacy struct {
		Capabilities struct {
			Extensions []struct {
				URI    string         `json:"uri"`
				Params map[string]any `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(r.body, &legacy); err != nil || r.status != http.StatusOK {
		t.Fatalf("legacy card: %d %s", r.status, r.body)
	}
	found := false
	for _, x := range legacy.Capabilities.Extensions {
		found = found || (x.URI == a2aserver.TrustModelURI && x.Params["actor"] == "self-asserted")
	}
	if !found {
		t.Fatalf("0.3 card lacks the trust model: %s", r.body)
	}

	c = authed.card("/agents/echo/.well-known/agent-card.json")
	e = extension(t, c, a2aserver.TrustModelURI)
	if e.Params["authentication"] != "bearer" || e.Params["actor"] != "token" ||
		e.Params["securityScheme"] != "bearer" || e.Params["taskAccess"] != "own" {
		t.Fatalf("trust model with bearer auth = %v", e.Params)
	}
	if _, ok := c.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok || len(c.SecurityRequirements) != 1 {
		t.Fatalf("card security = %+v / %+v, want the bearer scheme, required", c.SecuritySchemes, c.SecurityRequirements)
	}

	// With an OpenID provider's JWTs: openIdConnect, with its discovery URL.
	c = oidc.card("/agents/echo/.well-known/agent-card.json")
	e = extension(t, c, a2aserver.TrustModelURI)
	if e.Params["authentication"] != "oidc" || e.Params["securityScheme"] != "oidc" || e.Params["taskAccess"] != "own" {
		t.Fatalf("trust model with oidc auth = %v", e.Params)
	}
	s, ok := c.SecuritySchemes["oidc"].(a2a.OpenIDConnectSecurityScheme)
	if !ok || s.OpenIDConnectURL != "https://id.example/.well-known/openid-configuration" || len(c.SecuritySchemes) != 1 ||
		len(c.SecurityRequirements) != 1 || c.SecurityRequirements[0]["oidc"] == nil {
		t.Fatalf("card security = %+v / %+v, want the oidc scheme, required", c.SecuritySchemes, c.SecurityRequirements)
	}
}

// aliceToken is an Options.Authenticate that knows one token, alice's.
func aliceToken(_ context.Context, token string) (task.Identity, error) {
	if token != "s3cret" {
		return task.Identity{}, bearer.ErrInvalidToken
	}
	return task.Identity{Actor: "alice"}, nil
}

// coveringPolicy is a policy engine that covers some actions
// (task.PolicyCoverage) and allows any call that cites both references.
type coveringPolicy map[string]bool

func (p coveringPolicy) Covers(action string) bool { return p[action] }

func (p coveringPolicy) Decide(_ context.Context, in task.PolicyInput) (task.Decision, error) {
	return task.Decision{Allow: p[in.Envelope.Action], Version: "1"}, nil
}

// TestCardOfASimulatedSensitiveAgent checks that a sensitive agent in dry
// run that no policy covers says on its card that it simulates and lists
// no approval references as required, and that the card tells the truth:
// the official client's call without them succeeds, as a simulation. A
// dry run the policy covers still needs the references, and says so.
func TestCardOfASimulatedSensitiveAgent(t *testing.T) {
	t.Parallel()
	noop := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{}, nil
	})
	b := setup(t, func(c *setupConfig) {
		c.agents = []task.AgentSpec{
			{Name: "deploy-sim", Action: "deploy", Sensitive: true, DryRun: true, Runner: noop},
			{Name: "rollback-sim", Action: "rollback", Sensitive: true, DryRun: true, Runner: noop},
		}
		c.policy = coveringPolicy{"rollback": true}
		c.opts.Agents = append(c.opts.Agents,
			a2aserver.AgentInfo{Name: "deploy-sim", Description: "Deploys to production."},
			a2aserver.AgentInfo{Name: "rollback-sim"})
	})

	card := b.card("/agents/deploy-sim/.well-known/agent-card.json")
	if !strings.HasPrefix(card.Description, "Deploys to production. ") || !strings.Contains(card.Description, "Simulation (dry run)") {
		t.Fatalf("description of a simulated agent = %q, want it to say it simulates", card.Description)
	}
	a := profile(t, card)["actions"].([]any)[0].(map[string]any)
	if a["sensitive"] != true || a["dryRun"] != true || !sameStrings(a["requires"], "actor") {
		t.Fatalf("simulated sensitive profile = %v, want dryRun and only actor required", a)
	}
	tk := send(testCtx(t), t, b.client("deploy-sim", a2a.TransportProtocolJSONRPC), sendReq(userMessage("ship it")))
	if done := b.waitState(string(tk.ID), task.StateSucceeded); done.Artifacts[0].ID != "dry-run" {
		t.Fatalf("a call without references should succeed as a simulation: %+v", done.Artifacts)
	}

	// Covered by policy: the dry run needs an approval like a real run.
	card = b.card("/agents/rollback-sim/.well-known/agent-card.json")
	a = profile(t, card)["actions"].([]any)[0].(map[string]any)
	if a["dryRun"] != true || !sameStrings(a["requires"], "actor", "policyRef", "approvalRef") {
		t.Fatalf("covered dry-run profile = %v, want the references required", a)
	}
	if !strings.Contains(card.Description, "Simulation (dry run)") {
		t.Fatalf("description of a dry-run agent = %q", card.Description)
	}
	tk = send(testCtx(t), t, b.client("rollback-sim", a2a.TransportProtocolJSONRPC), sendReq(userMessage("undo")))
	if tk.Status.State != a2a.TaskStateRejected {
		t.Fatalf("covered dry run without references: %s, want rejected", tk.Status.State)
	}
}
