package oidcauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/oidcauth"
	"github.com/pactum/pactum/internal/oidctest"
	"github.com/pactum/pactum/task"
)

// options are the Verifier options for p's tokens with actor svc for
// subject client-1.
func options(p *oidctest.Provider) oidcauth.Options {
	return oidcauth.Options{
		Issuer: p.Issuer, Audience: []string{"other", oidctest.Audience},
		Algorithms: []string{"RS256", "ES256", "EdDSA"}, Leeway: 30 * time.Second,
		Actors: map[string]string{"client-1": "svc"},
	}
}

func newVerifier(t *testing.T, o oidcauth.Options) *oidcauth.Verifier {
	t.Helper()
	v, err := oidcauth.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRefusals checks every faulty or forged token is refused with
// ErrInvalidToken and the reason of the check it failed, and that the
// reason never holds the token.
func TestRefusals(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	v := newVerifier(t, options(p))
	refusals := append(p.Refusals(t, "client-1"),
		oidctest.Refusal{Name: "unknown subject", Token: p.Token(t, "client-2", nil), Reason: "no actor has the token's sub as subject"},
		oidctest.Refusal{Name: "no exp", Token: p.Sign(t, map[string]any{"iss": p.Issuer, "aud": "pactum", "sub": "client-1"}), Reason: "no expiry"},
		oidctest.Refusal{Name: "not a JWT", Token: "s3cret", Reason: "malformed"},
		oidctest.Refusal{Name: "tampered payload", Token: tamper(p.Token(t, "client-1", nil)), Reason: "does not verify"},
	)
	for _, r := range refusals {
		t.Run(r.Name, func(t *testing.T) {
			t.Parallel()
			_, err := v.Verify(t.Context(), r.Token)
			var e *bearer.InvalidTokenError
			if !errors.Is(err, bearer.ErrInvalidToken) || !errors.As(err, &e) || !strings.Contains(e.Reason, r.Reason) {
				t.Fatalf("Verify = %v; want an invalid token error saying %q", err, r.Reason)
			}
			if strings.Contains(err.Error(), r.Token) {
				t.Errorf("the error holds the token")
			}
		})
	}
}

// tamper changes the payload of a signed token, keeping its signature.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	return strings.Join(parts, ".")
}

// TestAccepted checks a valid token's identity, with the leeway on both
// sides, a list audience, another actor claim and the actions claim.
func TestAccepted(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	o := options(p)
	o.ActorClaim, o.ActionsClaim = "client_id", "scope"
	v := newVerifier(t, o)
	for _, tc := range []struct {
		name   string
		extra  map[string]any
		actors []string
	}{
		{"scope string", map[string]any{"scope": "openid pactum:echo pactum:say other"}, []string{"echo", "say"}},
		{"roles list", map[string]any{"scope": []string{"pactum:*"}}, []string{"*"}},
		{"no scope", nil, []string{}},
		{"list audience, within the leeway", map[string]any{"aud": []string{"x", "pactum"}, "exp": p.Claims("", nil)["iat"].(int64) - 10, "nbf": p.Claims("", nil)["iat"].(int64) + 10}, []string{}},
	} {
		extra := map[string]any{"client_id": "client-1"}
		for k, val := range tc.extra {
			extra[k] = val
		}
		id, err := v.Verify(t.Context(), p.Token(t, "user-9", extra))
		want := task.Identity{Actor: "svc", Subject: "client-1", Issuer: p.Issuer, Actions: tc.actors}
		if err != nil || !reflect.DeepEqual(id, want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, id, err, want)
		}
	}
}

// TestKeyRotation checks that a token signed with a key the provider
// published after the Verifier fetched the JWKS verifies (the JWKS is
// fetched again for the unknown kid), and old tokens still do.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	v := newVerifier(t, options(p))
	old := p.Token(t, "client-1", nil)
	if _, err := v.Verify(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	fetches := p.JWKSFetches.Load()
	p.Rotate(t)
	if _, err := v.Verify(t.Context(), p.Token(t, "client-1", nil)); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if p.JWKSFetches.Load() == fetches {
		t.Error("the JWKS was not fetched again for the new key")
	}
	if _, err := v.Verify(t.Context(), old); err != nil {
		t.Errorf("token of the old key: %v", err)
	}
}

// TestStaticJWKS checks the air-gapped mode: keys from a JWKS file, no
// request to the provider; a private key in the file is refused.
func TestStaticJWKS(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	set := p.JWKS()
	b, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := oidcauth.ReadJWKS(path)
	if err != nil {
		t.Fatal(err)
	}
	o := options(p)
	o.Keys = keys
	v := newVerifier(t, o)
	if id, err := v.Verify(t.Context(), p.Token(t, "client-1", nil)); err != nil || id.Actor != "svc" {
		t.Fatalf("Verify = %+v, %v", id, err)
	}
	for _, r := range p.Refusals(t, "client-1") {
		if _, err := v.Verify(t.Context(), r.Token); !errors.Is(err, bearer.ErrInvalidToken) {
			t.Errorf("%s: %v", r.Name, err)
		}
	}
	if n := p.JWKSFetches.Load(); n != 0 {
		t.Errorf("%d JWKS fetches with a static JWKS", n)
	}
}

// TestNewRefuses checks the options New refuses: a symmetric algorithm,
// an unreachable issuer.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	o := options(p)
	o.Algorithms = []string{"HS256"}
	if _, err := oidcauth.New(t.Context(), o); err == nil {
		t.Error("HS256 accepted")
	}
	o = options(p)
	o.Issuer = "http://127.0.0.1:1"
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := oidcauth.New(ctx, o); err == nil {
		t.Error("unreachable issuer accepted")
	}
}

// TestMadeUpKidsDoNotFloodTheIssuer checks that tokens naming key ids the
// issuer never published make the verifier fetch the JWKS again once, not
// once per token, and that a rotation is still followed when no such
// tokens came first.
func TestMadeUpKidsDoNotFloodTheIssuer(t *testing.T) {
	t.Parallel()
	p := oidctest.New(t)
	v := newVerifier(t, options(p))
	if _, err := v.Verify(t.Context(), p.Token(t, "client-1", nil)); err != nil {
		t.Fatal(err)
	}
	p.Rotate(t)
	if _, err := v.Verify(t.Context(), p.Token(t, "client-1", nil)); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	before := p.JWKSFetches.Load()
	for range 20 {
		if _, err := v.Verify(t.Context(), p.SignUnknownKey(t, p.Claims("client-1", nil))); !errors.Is(err, bearer.ErrInvalidToken) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := p.JWKSFetches.Load() - before; n > 1 {
		t.Errorf("20 tokens with made-up kids made %d JWKS fetches; want at most 1", n)
	}
}
