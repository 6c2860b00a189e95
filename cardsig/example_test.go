package cardsig_test

import (
	"context"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/cardsig"
)

// Sign a card with two keys, publish their JWKS, and verify the card as a
// client would, with the keys from the JWKS.
func ExampleSigner() {
	newKey, _, _ := cardsig.GenerateKey("card-2026", cardsig.AlgEdDSA)
	oldKey, _, _ := cardsig.GenerateKey("card-2025", cardsig.AlgES256)
	signer, err := cardsig.NewSigner(newKey, oldKey)
	if err != nil {
		panic(err)
	}
	card := []byte(`{"name":"echo","description":"Replies with the text it receives.","version":"1.0.0"}`)
	signed, err := signer.Sign(card, "https://agents.example.com/.well-known/jwks.json")
	if err != nil {
		panic(err)
	}

	keys, err := cardsig.ParseKeys(signer.JWKS())
	if err != nil {
		panic(err)
	}
	results, err := cardsig.Verify(context.Background(), signed, func(_ context.Context, kid, jku string) ([]jose.JSONWebKey, error) {
		return keys, nil
	})
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Printf("kid %s (%s, jku %s): verified %v\n", r.Header.KID, r.Header.Alg, r.Header.JKU, r.Err == nil)
	}
	// Output:
	// kid card-2026 (EdDSA, jku https://agents.example.com/.well-known/jwks.json): verified true
	// kid card-2025 (ES256, jku https://agents.example.com/.well-known/jwks.json): verified true
}
