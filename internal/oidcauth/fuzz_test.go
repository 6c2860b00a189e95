package oidcauth_test

import (
	"errors"
	"testing"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/oidcauth"
	"github.com/pactum/pactum/internal/oidctest"
)

// FuzzVerify feeds arbitrary tokens (seeded with valid, faulty and forged
// ones) to a Verifier: it never panics, and whatever it refuses, it
// refuses with ErrInvalidToken.
func FuzzVerify(f *testing.F) {
	p := oidctest.New(f)
	v, err := oidcauth.New(f.Context(), options(p))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.Token(f, "client-1", nil))
	for _, r := range p.Refusals(f, "client-1") {
		f.Add(r.Token)
	}
	f.Add("")
	f.Add("..")
	f.Add("e30.e30.")
	f.Fuzz(func(t *testing.T, token string) {
		id, err := v.Verify(t.Context(), token)
		if err != nil && !errors.Is(err, bearer.ErrInvalidToken) {
			t.Fatalf("refused with %v, not ErrInvalidToken", err)
		}
		if err == nil && id.Actor != "svc" {
			t.Fatalf("accepted as %+v", id)
		}
	})
}

// FuzzParseHeader checks the header decoder never panics.
func FuzzParseHeader(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiJ9.e30.x")
	f.Add("")
	f.Add("%%%.")
	f.Fuzz(func(t *testing.T, token string) { _, _ = oidcauth.ParseHeader(token) })
}
