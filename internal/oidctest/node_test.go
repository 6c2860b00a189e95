package oidctest_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/oidctest"
)

// TestNodeProvider checks the real provider starts and issues a client
// credentials JWT: the client as sub, the audience, the scope asked for.
func TestNodeProvider(t *testing.T) {
	p := oidctest.StartNode(t, oidctest.Client{ID: "c1", Secret: "s1", Scope: "pactum:echo pactum:other"})
	tok, err := p.Token(t.Context(), "c1", "pactum:echo")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Iss, Sub, Scope string
		Aud             any
		ClientID        string `json:"client_id"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Iss != p.Issuer || c.Sub != "c1" || c.ClientID != "c1" || c.Aud != oidctest.Audience || c.Scope != "pactum:echo" {
		t.Errorf("claims %s", b)
	}
}
