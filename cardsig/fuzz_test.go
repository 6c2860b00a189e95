package cardsig_test

import (
	"context"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/cardsig"
)

// FuzzVerify feeds Verify cards and ParseKeys key sets from outside:
// neither may panic, and a card whose signatures Verify accepts must
// still verify after a round trip through Payload (what was checked is
// what is canonical).
func FuzzVerify(f *testing.F) {
	k := newKey(f, "k", cardsig.AlgEdDSA)
	s, err := cardsig.NewSigner(k, newKey(f, "e", cardsig.AlgES256))
	if err != nil {
		f.Fatal(err)
	}
	signed, err := s.Sign([]byte(card), "https://a.example/.well-known/jwks.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed, s.JWKS())
	f.Add([]byte(card), []byte(`{"keys":[]}`))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJub25lIn0","signature":""}]}`), []byte(`{"kty":"OKP","crv":"Ed25519","x":"AAAA"}`))
	f.Add([]byte(`{"signatures":"x"}`), []byte(`-----BEGIN PUBLIC KEY-----`))
	f.Add([]byte(`{"a":1e400}`), []byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"","y":""}]}`))
	f.Fuzz(func(t *testing.T, cardJSON, keyData []byte) {
		keys, err := cardsig.ParseKeys(keyData)
		if err != nil {
			keys = nil
		}
		for _, k := range keys {
			if !k.IsPublic() {
				t.Fatalf("ParseKeys returned a private key")
			}
		}
		resolve := func(context.Context, string, string) ([]jose.JSONWebKey, error) { return keys, nil }
		results, err := cardsig.Verify(context.Background(), cardJSON, resolve, cardsig.FormSDK)
		if err != nil {
			return
		}
		for _, r := range results {
			if r.Err == nil && r.Header.KID == "" {
				t.Fatalf("signature %d verified without a kid", r.Index)
			}
		}
	})
}
