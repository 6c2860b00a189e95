package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/internal/e2e/mdblock"
)

// signedNode serves a node whose cards two keys sign (an Ed25519 one,
// kid new, and a P-256 one, kid old) and returns it with the directory
// holding the key files.
func signedNode(t *testing.T) (*testNode, string) {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []struct{ file, alg string }{{"new.pem", cardsig.AlgEdDSA}, {"old.pem", cardsig.AlgES256}} {
		_, pemData, err := cardsig.GenerateKey("unused", k.alg)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, k.file), string(pemData))
		if err := os.Chmod(filepath.Join(dir, k.file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, `cards:
  signing_keys:
    - {kid: new, alg: EdDSA, private_key_file: new.pem}
    - {kid: old, alg: ES256, private_key_file: old.pem}
agents:
  - {name: echo, type: echo}
`)
	return serve(t, "--config", cfg), dir
}

// TestCardVerify runs `pactum card verify` against a real `pactum serve`
// signing its cards: by agent URL or card URL, keys from the jku, from
// --jwks (URL or file) or one --key; every signature verifies, exit 0.
func TestCardVerify(t *testing.T) {
	t.Parallel()
	n, dir := signedNode(t)
	_, jwks := n.get(t, cardsig.JWKSPath)
	jwksFile := filepath.Join(dir, "jwks.json")
	writeFile(t, jwksFile, jwks)
	keys, err := cardsig.ParseKeys([]byte(jwks))
	if err != nil {
		t.Fatal(err)
	}
	// One key alone (the Ed25519 one) as a JWK file: its signature
	// verifies, the other one has no key, so the card does not pass.
	oneJWK, err := json.Marshal(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	oneFile := filepath.Join(dir, "new.jwk")
	writeFile(t, oneFile, string(oneJWK))

	agent := n.url + "/agents/echo"
	for _, tc := range []struct {
		name string
		args []string
		keys string
	}{
		{"agent URL, jku", []string{agent}, "keys from each signature's jku on " + n.url},
		{"card URL, jku", []string{agent + "/.well-known/agent-card.json"}, "keys from each signature's jku on " + n.url},
		{"root card", []string{n.url + "/"}, "keys from each signature's jku on " + n.url},
		{"legacy card", []string{n.url + "/agents/echo/.well-known/agent.json"}, "keys from each signature's jku"},
		{"jwks URL", []string{agent, "--jwks", n.url + cardsig.JWKSPath}, "keys --jwks " + n.url + cardsig.JWKSPath},
		{"jwks file", []string{agent, "--jwks", jwksFile}, "keys --jwks " + jwksFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(append([]string{"card", "verify"}, tc.args...)...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, want := range []string{tc.keys, "signature 1/2: kid new (EdDSA): verified\n", "signature 2/2: kid old (ES256): verified\n", "OK: 2 of 2 signatures verify\n"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
	// --sdk-form accepts a card to which only empty members were added
	// (as the a2a-js and a2a-python SDKs canonicalise), and says so.
	var c map[string]any
	_, signed := n.get(t, "/agents/echo/.well-known/agent-card.json")
	if err := json.Unmarshal([]byte(signed), &c); err != nil {
		t.Fatal(err)
	}
	c["documentationUrl"], c["provider"] = "", map[string]any{}
	withEmpty, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(withEmpty) }))
	defer fake.Close()
	code, stdout, stderr := runMain("card", "verify", fake.URL+"/card.json", "--jwks", jwksFile, "--sdk-form")
	if code != 0 || !strings.Contains(stdout, "kid new (EdDSA) in the sdk form: verified") || !strings.Contains(stdout, "kid old (ES256) in the sdk form: verified") {
		t.Fatalf("--sdk-form: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = runMain("card", "verify", agent, "--key", oneFile)
	if code != 1 || !strings.Contains(stdout, "kid new (EdDSA): verified") || !strings.Contains(stdout, `kid old (ES256): FAILED: no key for kid "old"`) ||
		!strings.Contains(stderr, "1 of 2 signatures of "+agent+"/.well-known/agent-card.json fail") {
		t.Fatalf("one key: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestCardVerifyRefuses: a tampered card (a server serving a signed card
// with one member changed), an unsigned card, a jku on another origin and
// keys that did not sign it each make card verify exit 1, saying why.
func TestCardVerifyRefuses(t *testing.T) {
	t.Parallel()
	n, dir := signedNode(t)
	_, signed := n.get(t, "/agents/echo/.well-known/agent-card.json")
	_, jwks := n.get(t, cardsig.JWKSPath)
	var card map[string]any
	if err := json.Unmarshal([]byte(signed), &card); err != nil {
		t.Fatal(err)
	}
	tampered := func(f func(map[string]any)) string {
		var c map[string]any
		if err := json.Unmarshal([]byte(signed), &c); err != nil {
			t.Fatal(err)
		}
		f(c)
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	// A server of its own serves each variant, with the node's JWKS on
	// its own origin, so the jku policy does not decide the outcome.
	serveCard := func(body string) string {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) })
		mux.HandleFunc("GET "+cardsig.JWKSPath, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, jwks) })
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	otherKey, _, err := cardsig.GenerateKey("new", cardsig.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	other, err := cardsig.NewSigner(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(dir, "other.json")
	writeFile(t, otherFile, string(other.JWKS()))

	for _, tc := range []struct {
		name   string
		args   func() []string
		stdout []string
		stderr string
	}{
		{"interface URL moved", func() []string {
			return []string{serveCard(tampered(func(c map[string]any) {
				c["supportedInterfaces"].([]any)[0].(map[string]any)["url"] = "https://evil.example.com/agents/echo"
			})), "--jwks", n.url + cardsig.JWKSPath}
		}, []string{"kid new (EdDSA): FAILED: the signature does not match the card", "kid old (ES256): FAILED: the signature does not match the card"}, "no signature of"},
		{"member added", func() []string {
			return []string{serveCard(tampered(func(c map[string]any) { c["documentationUrl"] = "https://evil.example.com" })), "--jwks", n.url + cardsig.JWKSPath}
		}, []string{"FAILED: the signature does not match"}, "no signature of"},
		{"one signature swapped for garbage", func() []string {
			return []string{serveCard(tampered(func(c map[string]any) {
				c["signatures"].([]any)[1].(map[string]any)["signature"] = "AAAA"
			})), "--jwks", n.url + cardsig.JWKSPath}
		}, []string{"kid new (EdDSA): verified", "kid old (ES256): FAILED"}, "1 of 2 signatures of"},
		{"unsigned", func() []string {
			return []string{serveCard(tampered(func(c map[string]any) { delete(c, "signatures") }))}
		}, nil, "the card is not signed: it has no signatures"},
		{"jku on another origin", func() []string { return []string{serveCard(signed)} },
			[]string{"FAILED: no key: jku " + n.url + cardsig.JWKSPath + " is not on the card's origin"}, "no signature of"},
		{"keys that did not sign it", func() []string { return []string{n.url + "/agents/echo", "--jwks", otherFile} },
			[]string{"kid new (EdDSA): FAILED: the signature does not match", `kid old (ES256): FAILED: no key for kid "old"`}, "no signature of"},
		{"empty member added", func() []string {
			return []string{serveCard(tampered(func(c map[string]any) { c["documentationUrl"] = "" })), "--jwks", n.url + cardsig.JWKSPath}
		}, []string{"kid new (EdDSA): FAILED: the signature does not match"}, "no signature of"},
		{"not a URL", func() []string { return []string{"agents/echo"} }, nil, "needs an http(s) URL"},
		{"no card there", func() []string { return []string{n.url + "/agents/nobody"} }, nil, "HTTP 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(append([]string{"card", "verify"}, tc.args()...)...)
			if code != 1 || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, want 1 and stderr containing %q\nstdout:\n%s\nstderr:\n%s", code, tc.stderr, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// TestSignedCardsDoc runs the example of docs/a2a.md, "Verifying a card":
// the setup block with the real binary, then `pactum serve` on the
// configuration it wrote, then the verify block against it, and compares
// what they print with what the doc shows, the server's address aside.
func TestSignedCardsDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "a2a.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name, lang string) string {
		t.Helper()
		b, err := mdblock.Extract(string(doc), "<!-- "+name+":begin -->", "<!-- "+name+":end -->", lang, "the signed cards example's")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	setup, verify, want := block("cards-setup", "sh"), block("cards-verify", "sh"), block("cards-verify-output", "text")
	bin := pactumBinary(t)
	dir := t.TempDir()
	sh := func(script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out.String())
		}
		return out.String()
	}
	got := sh(setup)
	n := serve(t, "--config", filepath.Join(dir, "pactum.yaml"))
	const docURL = "http://127.0.0.1:9000"
	got += sh(strings.ReplaceAll(verify, docURL, n.url))
	if got = strings.ReplaceAll(got, n.url, docURL); got != want {
		t.Fatalf("the example printed:\n%s\ndocs/a2a.md shows:\n%s", got, want)
	}
}
