package cardsig

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/go-jose/go-jose/v4"
)

// ErrUnsigned is returned by Verify for a card without signatures.
var ErrUnsigned = errors.New("the card is not signed: it has no signatures")

// ErrNoKey is what a Resolver returns (wrapped) when it has no key for a
// signature.
var ErrNoKey = errors.New("no key")

// Header is the protected header of one signature, as far as Verify reads
// it.
type Header struct {
	Alg string `json:"alg"`
	KID string `json:"kid"`
	JKU string `json:"jku,omitempty"`
	Typ string `json:"typ,omitempty"`
}

// Resolver returns the public keys that may have made a signature with
// key id kid; jku is the signature's jku header ("" when it has none). A
// key without a KeyID stands for any kid.
type Resolver func(ctx context.Context, kid, jku string) ([]jose.JSONWebKey, error)

// Result is the verdict on one signature of a card.
type Result struct {
	// Index is the signature's position in the card's signatures (from 0).
	Index int
	// Header is its protected header (zero when it does not decode).
	Header Header
	// Err is nil when the signature verifies, else why not.
	Err error
}

// Verify checks every signature of card, a JSON object as fetched,
// against the keys resolve finds for it, over the card's canonical form
// (Payload). It returns one Result per signature; err is ErrUnsigned for a
// card without signatures, or says why the card cannot be read. A card is
// to be trusted when at least one signature verifies and, for a strict
// reader, none fails.
func Verify(ctx context.Context, card []byte, resolve Resolver) ([]Result, error) {
	payload, err := Payload(card)
	if err != nil {
		return nil, err
	}
	sigs, err := signaturesOf(card)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(sigs))
	for i, sig := range sigs {
		out[i] = Result{Index: i}
		out[i].Header, out[i].Err = verifyOne(ctx, sig, payload, resolve)
	}
	return out, nil
}

// signaturesOf decodes the signatures member of card.
func signaturesOf(card []byte) ([]a2a.AgentCardSignature, error) {
	var c struct {
		Signatures json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal(card, &c); err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	if len(c.Signatures) == 0 || string(c.Signatures) == "null" {
		return nil, ErrUnsigned
	}
	var sigs []a2a.AgentCardSignature
	if err := json.Unmarshal(c.Signatures, &sigs); err != nil {
		return nil, fmt.Errorf("cardsig: signatures is not a list of {protected, signature, header}: %w", err)
	}
	if len(sigs) == 0 {
		return nil, ErrUnsigned
	}
	return sigs, nil
}

// verifyOne checks one signature over payload.
func verifyOne(ctx context.Context, sig a2a.AgentCardSignature, payload []byte, resolve Resolver) (Header, error) {
	var h Header
	raw, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		return h, fmt.Errorf("protected header is not base64url: %w", err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return h, fmt.Errorf("protected header is not a JSON object: %s", strings.TrimSpace(fmt.Sprint(err)))
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, fmt.Errorf("protected header: alg, kid, jku and typ must be strings: %w", err)
	}
	if !slices.Contains(Algorithms, h.Alg) {
		return h, fmt.Errorf("alg %q is not accepted (only %s)", h.Alg, strings.Join(Algorithms, ", "))
	}
	if h.KID == "" {
		return h, errors.New("the protected header has no kid")
	}
	keys, err := resolve(ctx, h.KID, h.JKU)
	if err != nil {
		return h, err
	}
	jws, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, payload,
		[]jose.SignatureAlgorithm{jose.EdDSA, jose.ES256})
	if err != nil {
		return h, fmt.Errorf("not a JWS: %w", err)
	}
	tried := 0
	var last error
	for _, k := range keys {
		if k.KeyID != "" && k.KeyID != h.KID {
			continue
		}
		if why := fits(k, h.Alg); why != "" {
			last = fmt.Errorf("key %s: %s", h.KID, why)
			continue
		}
		tried++
		if err := jws.DetachedVerify(payload, k.Key); err != nil {
			last = fmt.Errorf("the signature does not match the card (kid %s): %w", h.KID, err)
			continue
		}
		return h, nil
	}
	if tried == 0 && last == nil {
		return h, fmt.Errorf("%w for kid %q", ErrNoKey, h.KID)
	}
	return h, last
}

// fits says why public key k cannot verify under alg, or "".
func fits(k jose.JSONWebKey, alg string) string {
	if !k.IsPublic() {
		return "not a public key"
	}
	if k.Algorithm != "" && k.Algorithm != alg {
		return fmt.Sprintf("the key is for alg %s, the signature says %s", k.Algorithm, alg)
	}
	switch pk := k.Key.(type) {
	case ed25519.PublicKey:
		if alg == AlgEdDSA {
			return ""
		}
		return "an Ed25519 key cannot verify " + alg
	case *ecdsa.PublicKey:
		if alg == AlgES256 && pk.Curve == elliptic.P256() {
			return ""
		}
		return fmt.Sprintf("an ECDSA %s key cannot verify %s", pk.Curve.Params().Name, alg)
	}
	return fmt.Sprintf("a %T cannot verify %s", k.Key, alg)
}

// maxKeys bounds the keys of a JWKS ParseKeys reads.
const maxKeys = 64

// ParseKeys reads public keys for Verify from data: a JWKS ({"keys":
// [...]}), one JWK, or a PEM "PUBLIC KEY" (which stands for any kid). A
// private key is refused: only public halves are published or needed.
func ParseKeys(data []byte) ([]jose.JSONWebKey, error) {
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "-----BEGIN") {
		block, _ := pem.Decode([]byte(trimmed))
		if block == nil || block.Type != "PUBLIC KEY" {
			return nil, errors.New("cardsig: want a PEM \"PUBLIC KEY\" (openssl pkey -pubout), a JWK or a JWKS")
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("cardsig: public key: %w", err)
		}
		return []jose.JSONWebKey{{Key: pub}}, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("cardsig: keys: not JSON: %w", err)
	}
	var keys []jose.JSONWebKey
	if rawKeys, ok := probe["keys"]; ok {
		var list []json.RawMessage
		if err := json.Unmarshal(rawKeys, &list); err != nil {
			return nil, fmt.Errorf("cardsig: JWKS keys is not a list: %w", err)
		}
		if len(list) > maxKeys {
			return nil, fmt.Errorf("cardsig: the JWKS has %d keys, more than %d", len(list), maxKeys)
		}
		for i, raw := range list {
			var k jose.JSONWebKey
			if err := k.UnmarshalJSON(raw); err != nil {
				// A key of a type this package does not use (RSA, X25519, …)
				// is skipped unless it cannot be read at all.
				return nil, fmt.Errorf("cardsig: JWKS key %d: %w", i, err)
			}
			keys = append(keys, k)
		}
	} else {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("cardsig: JWK: %w", err)
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		if !k.IsPublic() {
			return nil, fmt.Errorf("cardsig: key %q is a private key; give its public half", k.KeyID)
		}
	}
	return keys, nil
}
