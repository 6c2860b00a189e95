package cardsig

import (
	"bytes"
	"cmp"
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
	"github.com/gowebpki/jcs"
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
	// Form is the form of the card the signature verified over (FormJCS
	// unless Verify was asked to try others); "" when it did not verify.
	Form Form
	// Err is nil when the signature verifies, else why not.
	Err error
}

// Form is how the payload of a signature is computed from a card.
type Form string

const (
	// FormJCS is the card without its signatures in RFC 8785 canonical
	// form (Payload): what A2A §8.4 asks for and pactum signs.
	FormJCS Form = "jcs"
	// FormSDK is FormJCS after removing, at every depth, each member or
	// list item that is an empty string, an empty list, an empty object
	// or null: how the a2a-js and a2a-python SDKs canonicalise before
	// they sign (docs/a2a.md, "Signed cards"). It is weaker (empty
	// members can be added or removed without breaking the signature) and
	// keeps members outside the A2A schema, which those SDKs drop.
	FormSDK Form = "sdk"
)

// Verify checks every signature of card, a JSON object as fetched,
// against the keys resolve finds for it, over the card's canonical form
// (Payload). It returns one Result per signature; err is ErrUnsigned for a
// card without signatures, or says why the card cannot be read. A card is
// to be trusted when at least one signature verifies and, for a strict
// reader, none fails.
//
// A signature that does not verify over FormJCS is tried over each of
// also in turn, and verifies if one of them does.
func Verify(ctx context.Context, card []byte, resolve Resolver, also ...Form) ([]Result, error) {
	payload, err := Payload(card)
	if err != nil {
		return nil, err
	}
	sigs, err := signaturesOf(card)
	if err != nil {
		return nil, err
	}
	payloads := map[Form][]byte{FormJCS: payload}
	for _, f := range also {
		if f == FormSDK && payloads[FormSDK] == nil {
			if payloads[FormSDK], err = sdkPayload(card); err != nil {
				return nil, err
			}
		}
	}
	out := make([]Result, len(sigs))
	for i, sig := range sigs {
		out[i] = Result{Index: i}
		out[i].Header, out[i].Err = verifyOne(ctx, sig, payload, resolve)
		if out[i].Err == nil {
			out[i].Form = FormJCS
			continue
		}
		for _, f := range also {
			if p, ok := payloads[f]; ok && f != FormJCS {
				if _, err := verifyOne(ctx, sig, p, resolve); err == nil {
					out[i].Form, out[i].Err = f, nil
					break
				}
			}
		}
	}
	return out, nil
}

// sdkPayload returns the FormSDK payload of card.
func sdkPayload(card []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(card))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("cardsig: the card is not a JSON object")
	}
	delete(m, signaturesMember)
	cleaned, _ := withoutEmpty(m)
	if cleaned == nil {
		cleaned = map[string]any{}
	}
	b, err := json.Marshal(cleaned)
	if err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	out, err := jcs.Transform(b)
	if err != nil {
		return nil, fmt.Errorf("cardsig: canonical form: %w", err)
	}
	return out, nil
}

// withoutEmpty returns v without empty strings, lists, objects and nulls
// at any depth; ok is false when v itself is empty once cleaned.
func withoutEmpty(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, x != ""
	case []any:
		out := make([]any, 0, len(x))
		for _, item := range x {
			if c, ok := withoutEmpty(item); ok {
				out = append(out, c)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			if c, ok := withoutEmpty(item); ok {
				out[k] = c
			}
		}
		return out, len(out) > 0
	}
	return v, true
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
	if err := json.Unmarshal(raw, &fields); err != nil {
		return h, fmt.Errorf("protected header is not a JSON object: %w", err)
	}
	if fields == nil {
		return h, errors.New("protected header is not a JSON object: null")
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
		var skipped error
		for i, raw := range list {
			var k jose.JSONWebKey
			if err := k.UnmarshalJSON(raw); err != nil {
				// A key go-jose cannot read (a type it does not know) may sit
				// beside the signing keys: skip it, unless no key is left.
				skipped = cmp.Or(skipped, fmt.Errorf("cardsig: JWKS key %d: %w", i, err))
				continue
			}
			keys = append(keys, k)
		}
		if len(keys) == 0 && skipped != nil {
			return nil, skipped
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
