package negotiation_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
)

// newKey returns a fresh key of a party at url.
func newKey(t testing.TB, url string) *negotiation.Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := negotiation.NewKey(priv, url)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// accepted returns an accepted contract signed by proposer and provider.
func accepted(t testing.TB, proposer, provider *negotiation.Key) *negotiation.Accepted {
	t.Helper()
	c, err := contract.Parse("test", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	canonical, _ := contract.Canonical(c)
	digest, _ := contract.Digest(c)
	a := &negotiation.Accepted{Negotiation: "n1", Agent: "echo", Contract: canonical, Digest: digest}
	for _, p := range []struct {
		k    *negotiation.Key
		role negotiation.Role
	}{{proposer, negotiation.RoleProposer}, {provider, negotiation.RoleProvider}} {
		sig, err := p.k.Sign(canonical, p.role)
		if err != nil {
			t.Fatal(err)
		}
		a.Parties = append(a.Parties, negotiation.Party{Role: p.role, Key: p.k.Thumbprint, URL: p.k.URL, Signature: sig})
	}
	return a
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	k := newKey(t, "http://a.example")
	payload := []byte(`{"id":"x"}`)
	sig, err := k.Sign(payload, negotiation.RoleProposer)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sig, "."); n != 2 || strings.Contains(sig, "..") == false {
		t.Errorf("signature %q is not a detached compact JWS", sig)
	}
	p, err := negotiation.VerifySignature(sig, payload)
	if err != nil {
		t.Fatal(err)
	}
	if p.Key != k.Thumbprint || p.Role != negotiation.RoleProposer || p.URL != "http://a.example" {
		t.Errorf("party = %+v", p)
	}
	if _, err := negotiation.VerifySignature(sig, []byte(`{"id":"y"}`)); err == nil {
		t.Error("a signature verified over other bytes")
	}
}

func TestAcceptedVerify(t *testing.T) {
	t.Parallel()
	a, b := newKey(t, "http://a.example"), newKey(t, "http://b.example")
	good := accepted(t, a, b)
	if _, err := good.Verify(); err != nil {
		t.Fatalf("a well-signed contract: %v", err)
	}
	// Re-encoding the contract without changing it keeps it valid.
	var generic any
	_ = json.Unmarshal(good.Contract, &generic)
	reencoded := *good
	reencoded.Contract, _ = json.MarshalIndent(generic, "", "  ")
	if _, err := reencoded.Verify(); err != nil {
		t.Errorf("re-encoded: %v", err)
	}
	for _, tc := range []struct {
		name   string
		tamper func(a *negotiation.Accepted)
	}{
		{"a byte of the contract", func(a *negotiation.Accepted) {
			a.Contract = []byte(strings.Replace(string(a.Contract), "hello", "hellO", 1))
		}},
		{"the contract and its digest", func(a *negotiation.Accepted) {
			a.Contract = []byte(strings.Replace(string(a.Contract), "hello", "hellO", 1))
			c, _ := contract.Parse("x", a.Contract)
			a.Digest, _ = contract.Digest(c)
		}},
		{"the digest", func(a *negotiation.Accepted) { a.Digest = "sha256:00" }},
		{"signatures swapped", func(a *negotiation.Accepted) {
			a.Parties[0].Signature, a.Parties[1].Signature = a.Parties[1].Signature, a.Parties[0].Signature
		}},
		{"parties swapped", func(a *negotiation.Accepted) { a.Parties[0], a.Parties[1] = a.Parties[1], a.Parties[0] }},
		{"a party's URL", func(a *negotiation.Accepted) { a.Parties[1].URL = "http://evil.example" }},
		{"a party's key", func(a *negotiation.Accepted) { a.Parties[0].Key = a.Parties[1].Key }},
		{"one signature", func(a *negotiation.Accepted) { a.Parties = a.Parties[:1] }},
		{"a byte of a signature", func(a *negotiation.Accepted) {
			s := []byte(a.Parties[1].Signature)
			s[len(s)-2] ^= 1
			a.Parties[1].Signature = string(s)
		}},
		{"a third party's signature", func(a *negotiation.Accepted) {
			other := accepted(t, newKey(t, "http://a.example"), b)
			a.Parties[0].Signature = other.Parties[0].Signature
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := accepted(t, a, b)
			tc.tamper(x)
			if _, err := x.Verify(); err == nil {
				t.Error("a tampered accepted contract verified")
			}
		})
	}
}

func TestLoadKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, pemBytes, err := cardsig.GenerateKey("test", cardsig.AlgEdDSA)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "k.pem")
	bad := filepath.Join(dir, "bad.pem")
	_ = os.WriteFile(good, pemBytes, 0o600)
	_ = os.WriteFile(bad, []byte("secret-not-a-key"), 0o600)
	k, err := negotiation.LoadKey(good, "http://x")
	if err != nil || len(k.Thumbprint) != 43 {
		t.Fatalf("LoadKey = %+v, %v", k, err)
	}
	_, err = negotiation.LoadKey(bad, "")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("LoadKey of a bad file: %v (must not quote it)", err)
	}
}
