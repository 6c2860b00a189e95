package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pactum/pactum/cardsig"
)

// TestCardSignaturesNode is the independent evidence for signed cards:
// testdata/cardsig/verify.mjs, which verifies with npm jose and
// canonicalize (pinned in its package.json) and nothing of pactum's,
// checks the cards a pactum subprocess signs with an Ed25519 and a P-256
// key against the JWKS it serves, and must pass every signature of every
// card; a card with one member changed must fail both. The official
// JavaScript SDK's own verifier (js/cardsig.mjs) must accept them too. It
// is skipped only when node or the npm packages are missing, and fails
// instead when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func TestCardSignaturesNode(t *testing.T) {
	t.Parallel()
	node, dir := nodeWith(t, filepath.Join("testdata", "cardsig"), "jose")
	keys := t.TempDir()
	for _, k := range []struct{ file, alg string }{{"ed.pem", cardsig.AlgEdDSA}, {"ec.pem", cardsig.AlgES256}} {
		_, pemData, err := cardsig.GenerateKey("unused", k.alg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keys, k.file), pemData, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(keys, "pactum.yaml")
	src := fmt.Sprintf(`cards:
  signing_keys:
    - {kid: card-ed25519, alg: EdDSA, private_key_file: %q}
    - {kid: card-p256, alg: ES256, private_key_file: %q}
agents:
  - name: echo
    type: echo
    description: "Replies with the text it receives — «déjà vu» ✓ 𝄞"
    skills: [{id: echo, name: echo, tags: [text, "ünïcode"], examples: ["say <b>&amp;</b>"]}]
  - {name: slow-echo, type: echo, echo: {delay: 1ms}}
`, filepath.Join(keys, "ed.pem"), filepath.Join(keys, "ec.pem"))
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := setupWith(t, cfg)
	jwksURL := srv.URL + cardsig.JWKSPath

	verify := func(cardURL string) (string, error) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "verify.mjs", cardURL, jwksURL)
		cmd.Dir = dir
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, card := range []string{
		srv.AgentURL("echo") + "/.well-known/agent-card.json",
		srv.AgentURL("slow-echo") + "/.well-known/agent-card.json",
		srv.URL + "/.well-known/agent-card.json",
		srv.URL + "/.well-known/agent.json",
	} {
		out, err := verify(card)
		t.Logf("node verify.mjs %s:\n%s", card, out)
		if err != nil {
			t.Errorf("node says the signatures of %s do not verify: %v", card, err)
		}
		if n := bytes.Count([]byte(out), []byte("PASS ")); n != 2 {
			t.Errorf("%s: %d signatures passed, want 2", card, n)
		}
	}

	// The official JavaScript SDK's verifier, which canonicalises its own
	// way (docs/a2a.md, "Signed cards"), accepts them too.
	t.Run("a2a-js", func(t *testing.T) {
		node, jsDir := jsClient(t)
		card := srv.AgentURL("echo") + "/.well-known/agent-card.json"
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "cardsig.mjs", card, jwksURL)
		cmd.Dir = jsDir
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		logLines(t, out)
		if err != nil {
			t.Fatalf("node cardsig.mjs %s: %v (see FAIL lines above)", card, err)
		}
		if n := bytes.Count(out, []byte("PASS ")); n != 4 {
			t.Fatalf("cardsig.mjs passed %d checks, want 4", n)
		}
	})

	// The same card with its description changed, served with the
	// node's own JWKS: node must refuse both signatures.
	resp, err := http.Get(srv.AgentURL("echo") + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	c["description"] = "Replies with the text it receives — and sends it elsewhere"
	tampered, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tampered) }))
	defer fake.Close()
	out, err := verify(fake.URL + "/.well-known/agent-card.json")
	t.Logf("node verify.mjs (tampered):\n%s", out)
	if err == nil || bytes.Count([]byte(out), []byte("FAIL ")) != 2 {
		t.Fatalf("node accepted a tampered card (err %v)", err)
	}
}

// TestCardSignedByJSSDK: cards the official JavaScript SDK signs
// (js/cardsign.mjs, generateAgentCardSignature of @a2a-js/sdk) verify with
// `pactum card verify`; one whose JSON holds empty values, which the SDK
// leaves out of what it signs, verifies only with --sdk-form, and says
// so (docs/a2a.md, "What other SDKs canonicalise differently").
func TestCardSignedByJSSDK(t *testing.T) {
	t.Parallel()
	node, jsDir := jsClient(t)
	bin := pactumBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "cardsign.mjs")
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node cardsign.mjs: %v\n%s", err, out)
	}
	var signed struct {
		Plain, WithEmpty, JWKS json.RawMessage
	}
	if err := json.Unmarshal(out, &signed); err != nil {
		t.Fatalf("cardsign.mjs printed %s: %v", out, err)
	}
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwks, signed.JWKS, 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func(card []byte) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(card) }))
		t.Cleanup(srv.Close)
		return srv.URL + "/.well-known/agent-card.json"
	}
	plain, withEmpty := serve(signed.Plain), serve(signed.WithEmpty)
	for _, tc := range []struct {
		name string
		args []string
		ok   bool
		want string
	}{
		{"plain", []string{plain}, true, "signature 1/1: kid a2a-js (ES256): verified"},
		{"with empty values", []string{withEmpty}, false, "signature 1/1: kid a2a-js (ES256): FAILED: the signature does not match"},
		{"with empty values, --sdk-form", []string{withEmpty, "--sdk-form"}, true, "signature 1/1: kid a2a-js (ES256) in the sdk form: verified"},
	} {
		cmd := exec.CommandContext(ctx, bin, append([]string{"card", "verify", "--jwks", jwks}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok || !bytes.Contains(out, []byte(tc.want)) {
			t.Errorf("%s: pactum card verify: %v, want success %v and %q\n%s", tc.name, err, tc.ok, tc.want, out)
		}
	}
}
