package a2aserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/cardsig"
)

// newSigner returns a Signer with an Ed25519 and a P-256 key.
func newSigner(t testing.TB) *cardsig.Signer {
	t.Helper()
	var keys []*cardsig.Key
	for _, alg := range cardsig.Algorithms {
		k, _, err := cardsig.GenerateKey("k-"+alg, alg)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	s, err := cardsig.NewSigner(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignedCards: with a CardSigner every card served (each agent's, the
// root's, the 0.3 one) carries one signature per key over exactly what is
// served, each naming the JWKS on the card's own base URL, which serves
// the public keys; the ETag stays put across requests although ES256
// signatures are randomised; the official client still reads the card.
func TestSignedCards(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	b := setup(t, func(c *setupConfig) { c.opts.CardSigner = signer })

	jwks := b.do(http.MethodGet, cardsig.JWKSPath, "", nil)
	if jwks.status != http.StatusOK || jwks.header.Get("Content-Type") != "application/jwk-set+json" ||
		jwks.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET %s: %d %v %s", cardsig.JWKSPath, jwks.status, jwks.header, jwks.body)
	}
	keys, err := cardsig.ParseKeys(jwks.body)
	if err != nil || len(keys) != 2 {
		t.Fatalf("JWKS %s: %d keys, %v", jwks.body, len(keys), err)
	}
	resolve := func(_ context.Context, kid, jku string) ([]jose.JSONWebKey, error) {
		if jku != b.url+cardsig.JWKSPath {
			t.Errorf("signature %s names jku %q, want %q", kid, jku, b.url+cardsig.JWKSPath)
		}
		return keys, nil
	}
	for _, path := range []string{
		"/agents/echo/.well-known/agent-card.json",
		"/agents/slow/.well-known/agent-card.json",
		"/.well-known/agent-card.json",
		"/.well-known/agent.json",
		"/agents/echo/.well-known/agent.json",
	} {
		first := b.do(http.MethodGet, path, "", nil)
		if first.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, first.status, first.body)
		}
		results, err := cardsig.Verify(t.Context(), first.body, resolve)
		if err != nil || len(results) != 2 {
			t.Fatalf("%s: Verify = %v, %v", path, results, err)
		}
		for _, r := range results {
			if r.Err != nil {
				t.Errorf("%s: signature %d (%s): %v", path, r.Index, r.Header.KID, r.Err)
			}
		}
		again := b.do(http.MethodGet, path, "", nil)
		if etag := first.header.Get("ETag"); etag == "" || again.header.Get("ETag") != etag || string(again.body) != string(first.body) {
			t.Errorf("%s: ETag %q then %q; want one card, one ETag", path, etag, again.header.Get("ETag"))
		}
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(b.do(http.MethodGet, "/agents/echo/.well-known/agent-card.json", "", nil).body, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.Signatures) != 2 || card.Name != "echo" {
		t.Fatalf("card %s has %d signatures", card.Name, len(card.Signatures))
	}
	raw, err := base64.RawURLEncoding.DecodeString(card.Signatures[0].Protected)
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil || h["alg"] != cardsig.AlgEdDSA || h["kid"] != "k-EdDSA" || h["typ"] != "JOSE" {
		t.Fatalf("first protected header %s", raw)
	}
	c := b.client("echo", a2a.TransportProtocolJSONRPC)
	if tk := send(testCtx(t), t, c, sendReq(userMessage("signed"))); tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task through a signed card: %s", tk.Status.State)
	}
}

// TestJWKSWithBearerAuth: with bearer authentication the JWKS stays as
// open as the cards, and the signed card still declares the scheme.
func TestJWKSWithBearerAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.opts.CardSigner = newSigner(t)
		c.opts.Authenticate = aliceToken
	})
	if r := b.do(http.MethodGet, cardsig.JWKSPath, "", nil); r.status != http.StatusOK {
		t.Fatalf("GET %s without a token: %d %s", cardsig.JWKSPath, r.status, r.body)
	}
	if r := b.do(http.MethodPost, cardsig.JWKSPath, "", nil); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST %s: %d %s", cardsig.JWKSPath, r.status, r.body)
	}
	c := b.card("/agents/echo/.well-known/agent-card.json")
	if len(c.Signatures) != 2 || len(c.SecuritySchemes) != 1 {
		t.Fatalf("card: %d signatures, schemes %v", len(c.Signatures), c.SecuritySchemes)
	}
}

// TestNoJWKSWithoutSigner: without a CardSigner cards are unsigned and
// there is no key endpoint.
func TestNoJWKSWithoutSigner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if r := b.do(http.MethodGet, cardsig.JWKSPath, "", nil); r.status == http.StatusOK {
		t.Fatalf("GET %s without a signer: %d %s", cardsig.JWKSPath, r.status, r.body)
	}
	if c := b.card("/agents/echo/.well-known/agent-card.json"); len(c.Signatures) != 0 {
		t.Fatalf("unsigned server served %d signatures", len(c.Signatures))
	}
}

// TestCardsHaveNoEmptyValues: pactum's cards hold no empty string, list
// or object and no null, so the form the a2a-js and a2a-python SDKs
// verify over (empty values removed) is the form pactum signs, and their
// verifiers accept its signatures (docs/a2a.md, "Signed cards"). An
// agent's own skill without tags would break that: the spec requires the
// member, so pactum sends "tags": [].
func TestCardsHaveNoEmptyValues(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.CardSigner = newSigner(t) })
	for _, path := range []string{
		"/agents/echo/.well-known/agent-card.json", "/agents/slow/.well-known/agent-card.json",
		"/agents/guarded/.well-known/agent-card.json", "/.well-known/agent.json",
	} {
		var v any
		if err := json.Unmarshal(b.do(http.MethodGet, path, "", nil).body, &v); err != nil {
			t.Fatal(err)
		}
		if empty := emptyValues(v, "$"); len(empty) > 0 {
			t.Errorf("%s has empty values at %v", path, empty)
		}
	}
}

// emptyValues returns the paths below path of v's empty strings, lists,
// objects and nulls.
func emptyValues(v any, path string) []string {
	switch x := v.(type) {
	case nil:
		return []string{path}
	case string:
		if x == "" {
			return []string{path}
		}
	case []any:
		if len(x) == 0 {
			return []string{path}
		}
		var out []string
		for i, item := range x {
			out = append(out, emptyValues(item, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case map[string]any:
		if len(x) == 0 {
			return []string{path}
		}
		var out []string
		for k, item := range x {
			out = append(out, emptyValues(item, path+"."+k)...)
		}
		return out
	}
	return nil
}
