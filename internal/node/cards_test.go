package node_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// writeKey writes a new key of alg to dir/name and returns its path.
func writeKey(t *testing.T, dir, name, alg string) string {
	t.Helper()
	_, pemData, err := cardsig.GenerateKey("unused", alg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSignedCardsNode: a node with cards.signing_keys signs its cards
// with each key and serves the JWKS the signatures' jku names, which any
// web page may read, as it may read the cards.
func TestSignedCardsNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ed, ec := writeKey(t, dir, "ed.pem", cardsig.AlgEdDSA), writeKey(t, dir, "ec.pem", cardsig.AlgES256)
	base := startServer(t, fmt.Sprintf("cards:\n  signing_keys:\n    - {kid: new, alg: EdDSA, private_key_file: %q}\n    - {kid: old, alg: ES256, private_key_file: %q}\nagents:\n  - {name: echo, type: echo}\n", ed, ec))
	get := func(path string) []byte {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://elsewhere.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s from another origin: %d %s %v", path, resp.StatusCode, body, err)
		}
		return body
	}
	keys, err := cardsig.ParseKeys(get(cardsig.JWKSPath))
	if err != nil || len(keys) != 2 {
		t.Fatalf("JWKS: %d keys, %v", len(keys), err)
	}
	results, err := cardsig.Verify(t.Context(), get("/agents/echo/.well-known/agent-card.json"),
		func(_ context.Context, kid, jku string) ([]jose.JSONWebKey, error) {
			if jku != base+cardsig.JWKSPath {
				t.Errorf("jku %q, want %q", jku, base+cardsig.JWKSPath)
			}
			return keys, nil
		})
	if err != nil || len(results) != 2 {
		t.Fatalf("Verify = %v, %v", results, err)
	}
	for i, want := range []string{"new", "old"} {
		if r := results[i]; r.Err != nil || r.Header.KID != want {
			t.Errorf("signature %d: kid %s, %v; want %s verified", i, r.Header.KID, r.Err, want)
		}
	}
}

// TestCheckSigningKeys: config check (node.Check) loads each key and
// places what is wrong with it at its private_key_file.
func TestCheckSigningKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeKey(t, dir, "ed.pem", cardsig.AlgEdDSA)
	pub := filepath.Join(dir, "pub.pem")
	if err := os.WriteFile(pub, []byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{
		{"{kid: a, alg: EdDSA, private_key_file: ed.pem}", ""},
		{"{kid: a, alg: ES256, private_key_file: ed.pem}", "k.yaml:2:57: cards.signing_keys[0].private_key_file: bad card signing key: the file holds an Ed25519 key, which signs with alg EdDSA, not ES256"},
		{"{kid: a, alg: EdDSA, private_key_file: missing.pem}", "cards.signing_keys[0].private_key_file: bad card signing key: open " + filepath.Join(dir, "missing.pem") + ": no such file or directory"},
		{"{kid: a, alg: EdDSA, private_key_file: pub.pem}", `cards.signing_keys[0].private_key_file: bad card signing key: PEM block "PUBLIC KEY" is not a private key`},
		{"{kid: 'a b', alg: EdDSA, private_key_file: ed.pem}", `printable ASCII`},
	} {
		cfg, err := config.Parse([]byte("cards:\n  signing_keys: ["+tc.key+"]\nagents: [{name: echo, type: echo}]\n"), "k.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = node.Check(t.Context(), cfg, dir)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.key, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error containing %q", tc.key, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "BEGIN") {
			t.Errorf("the error quotes a key: %v", err)
		}
	}
}
