package node_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/internal/node"
)

// negotiatingNode is a node whose agent echo has a contract and which
// signs with a key of its own.
const negotiatingNode = `negotiation: {signing_key_file: b.pem}
agents:
  - name: echo
    type: echo
    contract:
      assertions:
        - type: assert
          message: the answer is not empty
          check: {type: regex, target: output, pattern: "."}
`

// TestNegotiateOverMCP: validate_contract and negotiate_contract reach
// the same negotiations as the HTTP endpoints, with the schemas they
// declare; the negotiation agent is no agent of list_agents.
func TestNegotiateOverMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeKey(t, dir, "b.pem", cardsig.AlgEdDSA)
	base := startLogged(t, dir, negotiatingNode, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tl := range tools.Tools {
		if tl.Name == "validate_contract" || tl.Name == "negotiate_contract" {
			found++
			if tl.InputSchema == nil || tl.OutputSchema == nil {
				t.Errorf("%s declares no input or output schema", tl.Name)
			}
		}
	}
	if found != 2 {
		t.Fatalf("tools: %d of validate_contract and negotiate_contract", found)
	}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b, _ := json.Marshal(res)
			t.Fatalf("%s: %v %s", name, err, b)
		}
		return res.StructuredContent.(map[string]any)
	}
	proposal := map[string]any{"version": "1.0", "id": "greeting", "steps": []any{map[string]any{"id": "greet",
		"assertions": []any{map[string]any{"type": "assert", "message": "says hello", "check": map[string]any{"type": "regex", "target": "output", "pattern": "hello"}}}}}}
	r := call("validate_contract", map[string]any{"agent": "echo", "contract": proposal})
	if r["acceptable"] != false || len(r["counter"].([]any)) != 1 {
		t.Fatalf("validate_contract: %v", r)
	}

	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key, _ := negotiation.NewKey(priv, "http://a.example")
	sign := func(v any) (json.RawMessage, string) {
		b, _ := json.Marshal(v)
		c, err := contract.Parse("c", b)
		if err != nil {
			t.Fatal(err)
		}
		canonical, _ := contract.Canonical(c)
		sig, _ := key.Sign(canonical, negotiation.RoleProposer)
		return canonical, sig
	}
	canonical, sig := sign(proposal)
	v := call("negotiate_contract", map[string]any{"agent": "echo", "move": map[string]any{"action": "propose", "contract": json.RawMessage(canonical), "signature": sig}})
	if v["status"] != "counter" {
		t.Fatalf("propose: %v", v)
	}
	_, sig = sign(v["contract"])
	v = call("negotiate_contract", map[string]any{"agent": "echo", "negotiation": v["id"], "move": map[string]any{"action": "accept", "signature": sig}})
	if v["status"] != "accepted" {
		t.Fatalf("accept: %v", v)
	}
	agents := call("list_agents", nil)
	if b, _ := json.Marshal(agents); strings.Contains(string(b), negotiation.Agent("echo")) {
		t.Errorf("list_agents shows the negotiation agent: %s", b)
	}
}

// TestNegotiationEndpointsNeedAuth: with auth: bearer the contract
// endpoints need a token, as A2A calls do; the card names them.
func TestNegotiationEndpointsNeedAuth(t *testing.T) {
	t.Setenv("PACTUM_TEST_NEG_TOKEN", "neg-secret")
	dir := t.TempDir()
	writeKey(t, dir, "b.pem", cardsig.AlgEdDSA)
	base := startLogged(t, dir, negotiatingNode+"auth: bearer\nactors:\n  - {name: alice, actions: [echo], token_env: PACTUM_TEST_NEG_TOKEN}\n", nil)
	resp, err := http.Get(base + "/agents/echo/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI    string         `json:"uri"`
				Params map[string]any `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	var validate string
	for _, e := range card.Capabilities.Extensions {
		if v, ok := e.Params["validate"].(string); ok {
			validate = v
			if e.Params["negotiate"] != base+"/agents/echo/negotiations" {
				t.Errorf("negotiate = %v", e.Params["negotiate"])
			}
		}
	}
	if validate != base+"/agents/echo/contracts/validate" {
		t.Fatalf("validate = %q", validate)
	}
	body := `{"version":"1.0","id":"x","steps":[{"id":"s"}]}`
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong", http.StatusUnauthorized}, {"neg-secret", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodPost, validate, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("token %q: %s, want %d", tc.token, resp.Status, tc.want)
		}
	}
}

// TestSigningKeyErrors: a key file that holds no Ed25519 key is a
// configuration error at its line, which never shows the file's content.
func TestSigningKeyErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.pem"), []byte("top-secret-material"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("listen: 127.0.0.1:0\nstore: sqlite://%s/p.db\n%s", dir, negotiatingNode)
	cfg, err := config.Parse([]byte(src), filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = node.New(context.Background(), cfg, "", nil, nil)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Path != "negotiation.signing_key_file" || strings.Contains(err.Error(), "top-secret") {
		t.Errorf("err = %v", err)
	}
}

// TestPinnedToTheProposer: a negotiation is its proposer's: another
// actor neither reads it nor has a task checked against it (the task
// fails with contract_violation, as for a negotiation that does not
// exist), while the proposer's citing task runs under exactly its digest.
func TestPinnedToTheProposer(t *testing.T) {
	t.Setenv("PACTUM_TEST_ALICE_NEG", "alice-secret")
	t.Setenv("PACTUM_TEST_BOB_NEG", "bob-secret")
	dir := t.TempDir()
	writeKey(t, dir, "b.pem", cardsig.AlgEdDSA)
	base := startLogged(t, dir, negotiatingNode+`auth: bearer
actors:
  - {name: alice, actions: [echo], token_env: PACTUM_TEST_ALICE_NEG}
  - {name: bob, actions: [echo], token_env: PACTUM_TEST_BOB_NEG}
`, nil)
	post := func(token, url, body string, out any) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	// An acceptable contract: for echo, with its assertion.
	c, err := contract.Parse("c", []byte(`{"version":"1.0","id":"ok","steps":[{"id":"s","agent":"echo","assertions":[{"type":"assert","message":"the answer is not empty","check":{"type":"regex","target":"output","pattern":"."}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	canonical, _ := contract.Canonical(c)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key, _ := negotiation.NewKey(priv, "http://alice.example")
	sig, _ := key.Sign(canonical, negotiation.RoleProposer)
	move, _ := json.Marshal(negotiation.Move{Action: negotiation.ActionPropose, Contract: canonical, Signature: sig})
	var v negotiation.View
	if code := post("alice-secret", base+"/agents/echo/negotiations", string(move), &v); code != http.StatusCreated || v.Status != negotiation.StatusAccepted {
		t.Fatalf("propose: %d %+v", code, v)
	}
	if code := post("bob-secret", base+"/agents/echo/negotiations/"+v.ID, `{"action":"reject","reason":"mine now"}`, nil); code != http.StatusNotFound {
		t.Errorf("bob answering alice's negotiation: %d, want 404", code)
	}
	// send sends a task citing the negotiation as token's actor and
	// returns the task's state, the contract digest it was verified
	// under and its status text.
	send := func(token, msgID string) (state, digest, text string) {
		t.Helper()
		var r map[string]any
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"pactum.negotiation":%q},"configuration":{"blocking":true}}}`, msgID, v.ID)
		post(token, base+"/agents/echo/", body, &r)
		at := func(path ...string) any {
			var x any = r
			for _, k := range path {
				if l, ok := x.([]any); ok && len(l) > 0 {
					x = l[0]
				}
				m, _ := x.(map[string]any)
				x = m[k]
			}
			return x
		}
		state, _ = at("result", "task", "status", "state").(string)
		digest, _ = at("result", "task", "metadata", "pactum", "verifiedResult", "contractDigest").(string)
		text, _ = at("result", "task", "status", "message", "parts", "text").(string)
		return state, digest, text
	}
	if state, digest, _ := send("alice-secret", "a1"); state != "TASK_STATE_COMPLETED" || digest != v.Accepted.Digest {
		t.Errorf("alice's citing task: %s under %s, want completed under %s", state, digest, v.Accepted.Digest)
	}
	if state, _, text := send("bob-secret", "b1"); state != "TASK_STATE_FAILED" || !strings.Contains(text, "contract_violation") || !strings.Contains(text, "no such negotiation") {
		t.Errorf("bob's task citing alice's negotiation: %s %q", state, text)
	}
}
