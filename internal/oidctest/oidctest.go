// Package oidctest is an OpenID provider for tests, in process: it serves
// a discovery document and a JWKS on loopback, signs tokens with its
// current key, rotates keys on demand, and forges the tokens a verifier
// must refuse (expired, wrong issuer, alg none, HS256 keyed with its
// public key, …).
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Audience is the audience the provider's tokens carry by default.
const Audience = "pactum"

// Provider is an OpenID provider on loopback.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:PORT).
	Issuer string

	mu   sync.Mutex
	keys []*rsa.PrivateKey // the newest signs; all are published
	kids []string
	// JWKSFetches counts the requests for the JWKS.
	JWKSFetches atomic.Int64
}

// New starts a provider with one RSA key, stopped by t.Cleanup.
func New(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{}
	p.Rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                p.Issuer,
			"jwks_uri":                              p.Issuer + "/jwks",
			"token_endpoint":                        p.Issuer + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		p.JWKSFetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.JWKS())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Issuer = srv.URL
	return p
}

// Rotate adds a new signing key: tokens are signed with it from now on,
// and the JWKS publishes it beside the old ones.
func (p *Provider) Rotate(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, k)
	p.kids = append(p.kids, fmt.Sprintf("key-%d", len(p.keys)))
}

// JWKS returns the provider's public keys.
func (p *Provider) JWKS() jose.JSONWebKeySet {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: p.kids[i], Algorithm: "RS256", Use: "sig"})
	}
	return set
}

// Claims returns valid claims for subject: the provider as issuer,
// Audience, issued now, expiring in an hour, and extra.
func (p *Provider) Claims(subject string, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": p.Issuer, "sub": subject, "aud": Audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// Token returns a token for subject signed with the current key (claims
// as Claims makes them, with extra).
func (p *Provider) Token(t testing.TB, subject string, extra map[string]any) string {
	t.Helper()
	return p.Sign(t, p.Claims(subject, extra))
}

// Sign signs claims with the current key (RS256, its kid in the header).
func (p *Provider) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	p.mu.Lock()
	k, kid := p.keys[len(p.keys)-1], p.kids[len(p.kids)-1]
	p.mu.Unlock()
	return sign(t, jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k, KeyID: kid}}, claims)
}

// SignUnknownKey signs claims with a key the provider never published,
// under a kid it does not know.
func (p *Provider) SignUnknownKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k, KeyID: "unknown-kid"}}, claims)
}

// SignHS256WithPublicKey signs claims with HS256, its HMAC secret the
// provider's current public key (DER, as an attacker would fetch it from
// the JWKS), under the key's kid: the key-confusion attack.
func (p *Provider) SignHS256WithPublicKey(t testing.TB, claims map[string]any) string {
	t.Helper()
	p.mu.Lock()
	k, kid := p.keys[len(p.keys)-1], p.kids[len(p.kids)-1]
	p.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: der, KeyID: kid}}, claims)
}

// Unsigned returns claims as an unsecured JWT (alg none, no signature).
func Unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(b) + "."
}

func sign(t testing.TB, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Refusal is a token that a verifier of the provider's tokens (issuer,
// Audience, RS256, a leeway under an hour) must refuse, and a part of the
// reason it must give.
type Refusal struct {
	Name, Token, Reason string
}

// Refusals returns the forged and faulty tokens for subject, one per check
// a verifier makes: expired, not yet valid, wrong issuer, wrong audience,
// unknown key id, alg none, HS256 keyed with the provider's public key.
func (p *Provider) Refusals(t testing.TB, subject string) []Refusal {
	t.Helper()
	hour := time.Hour
	with := func(k string, v any) map[string]any { return p.Claims(subject, map[string]any{k: v}) }
	return []Refusal{
		{"expired", p.Sign(t, with("exp", time.Now().Add(-hour).Unix())), "expired"},
		{"not yet valid", p.Sign(t, with("nbf", time.Now().Add(hour).Unix())), "not yet valid"},
		{"wrong issuer", p.Sign(t, with("iss", "https://evil.example")), "wrong issuer"},
		{"wrong audience", p.Sign(t, with("aud", "someone-else")), "wrong audience"},
		{"unknown kid", p.SignUnknownKey(t, p.Claims(subject, nil)), "does not verify"},
		{"alg none", Unsigned(t, p.Claims(subject, nil)), "algorithm none is not allowed"},
		{"HS256 with the public key", p.SignHS256WithPublicKey(t, p.Claims(subject, nil)), "algorithm HS256 is not allowed"},
	}
}
