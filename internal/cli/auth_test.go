package cli_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/internal/oidctest"
)

// TestAuthCheck runs pactum auth check against a configuration with auth:
// oidc whose keys are a JWKS file: a valid token prints its actor and the
// actions its scope grants among its actor's; each forged or faulty token
// exits 1 with the failed check; nothing is fetched from the provider.
func TestAuthCheck(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	dir := t.TempDir()
	b, _ := json.Marshal(p.JWKS())
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "pactum.yaml")
	cfg := fmt.Sprintf(`auth: {mode: oidc, issuer: %q, audience: %s, jwks_file: jwks.json, actions_claim: scope}
agents: [{name: echo, type: echo}, {name: other, type: echo}]
actors:
  - {name: bob, actions: [echo, other], subject: bob-client}
`, p.Issuer, oidctest.Audience)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(p.Token(t, "bob-client", map[string]any{"scope": "openid pactum:echo"})+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain("auth", "check", "--config", cfgPath, "--token-file", tokenFile)
	want := "actor:   bob\nsubject: bob-client\nissuer:  " + p.Issuer + "\nactions: echo\n"
	if code != 0 || stdout != want {
		t.Fatalf("auth check: exit %d\n%s\nstderr %s; want\n%s", code, stdout, stderr, want)
	}
	for _, r := range p.Refusals(t, "bob-client") {
		code, stdout, stderr := runMain("auth", "check", "--config", cfgPath, "--token", r.Token)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "refused: the bearer token is not valid: ") || !strings.Contains(stderr, r.Reason) || strings.Contains(stderr, r.Token) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and the reason %q", r.Name, code, stdout, stderr, r.Reason)
		}
	}
	if n := p.JWKSFetches.Load(); n != 0 {
		t.Errorf("auth check fetched the JWKS %d times; it is offline", n)
	}
	// Without keys it refuses to go online.
	noKeys := filepath.Join(dir, "nokeys.yaml")
	if err := os.WriteFile(noKeys, []byte(strings.Replace(cfg, "jwks_file: jwks.json, ", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runMain("auth", "check", "--config", noKeys, "--token-file", tokenFile); code != 1 || !strings.Contains(stderr, "--jwks FILE") {
		t.Errorf("without keys: exit %d, %s", code, stderr)
	}
	if code, stdout, _ := runMain("auth", "check", "--config", noKeys, "--token-file", tokenFile, "--jwks", filepath.Join(dir, "jwks.json")); code != 0 || !strings.Contains(stdout, "actor:   bob") {
		t.Errorf("with --jwks: exit %d, %s", code, stdout)
	}
	if code, _, stderr := runMain("auth", "check", "--config", noKeys, "--token-file", tokenFile, "--jwks", cfgPath); code != 1 || !strings.Contains(stderr, "--jwks: ") {
		t.Errorf("with --jwks naming a file that is not a JWKS: exit %d, %s", code, stderr)
	}
}

// TestConfigCheckJWKS checks that pactum config check refuses an
// auth.jwks_file that holds a private key, at its line.
func TestConfigCheckJWKS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k, KeyID: "oops"}}})
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "pactum.yaml")
	cfg := "agents: [{name: echo, type: echo}]\nauth:\n  mode: oidc\n  issuer: https://id.example\n  audience: pactum\n  jwks_file: jwks.json\nactors:\n  - {name: bob, actions: [echo], subject: s}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runMain("config", "check", cfgPath)
	if want := cfgPath + ":6:14: auth.jwks_file: cannot use the JWKS:"; code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "not a public key") {
		t.Errorf("config check: exit %d, %s; want %s … not a public key", code, stderr, want)
	}
}
