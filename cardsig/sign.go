package cardsig

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// signaturesMember is the card member that holds the signatures and is
// left out of what they sign.
const signaturesMember = "signatures"

// JWKSPath is where pactum serves the JWKS of its card signing keys,
// relative to its base URL; the jku of its signatures names it.
const JWKSPath = "/.well-known/jwks.json"

// Signer signs agent cards with one or more keys.
type Signer struct {
	keys []*Key
	jwks []byte
}

// NewSigner returns a Signer that signs with every one of keys, in order.
// Their kids must differ.
func NewSigner(keys ...*Key) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("cardsig: NewSigner needs at least one key")
	}
	seen := map[string]bool{}
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		if k == nil {
			return nil, errors.New("cardsig: NewSigner: nil key")
		}
		if seen[k.kid] {
			return nil, fmt.Errorf("cardsig: NewSigner: kid %q is used by two keys", k.kid)
		}
		seen[k.kid] = true
		set.Keys = append(set.Keys, k.JWK())
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("cardsig: JWKS: %w", err)
	}
	return &Signer{keys: keys, jwks: jwks}, nil
}

// KIDs returns the key ids the Signer signs with, in order.
func (s *Signer) KIDs() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.kid
	}
	return out
}

// JWKS returns the JSON Web Key Set of the public halves of the keys.
func (s *Signer) JWKS() []byte { return s.jwks }

// Sign returns card, a JSON object, with a `signatures` member holding one
// signature per key over its canonical form (Payload). A `signatures`
// member card already has is replaced. jku, when not empty, is put in
// each protected header: the URL of the JWKS that holds the keys. The
// members of the result are in canonical order; their values are card's.
func (s *Signer) Sign(card []byte, jku string) ([]byte, error) {
	members, payload, err := split(card)
	if err != nil {
		return nil, err
	}
	sigs := make([]a2a.AgentCardSignature, 0, len(s.keys))
	for _, k := range s.keys {
		sig, err := k.sign(payload, jku)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	raw, err := json.Marshal(sigs)
	if err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	members[signaturesMember] = raw
	out, err := json.Marshal(members)
	if err != nil {
		return nil, fmt.Errorf("cardsig: %w", err)
	}
	return out, nil
}

// sign returns k's signature of payload.
func (k *Key) sign(payload []byte, jku string) (a2a.AgentCardSignature, error) {
	opts := (&jose.SignerOptions{}).WithType("JOSE")
	if jku != "" {
		opts = opts.WithHeader("jku", jku)
	}
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.SignatureAlgorithm(k.alg),
		Key:       jose.JSONWebKey{Key: k.priv, KeyID: k.kid, Algorithm: k.alg},
	}, opts)
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("cardsig: key %s: %w", k, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("cardsig: key %s: %w", k, err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("cardsig: key %s: %w", k, err)
	}
	protected, signature, ok := strings.Cut(compact, "..")
	if !ok {
		return a2a.AgentCardSignature{}, fmt.Errorf("cardsig: key %s: unexpected detached JWS %q", k, compact)
	}
	return a2a.AgentCardSignature{Protected: protected, Signature: signature}, nil
}

// Payload returns what the signatures of card sign: card, a JSON object,
// without its `signatures` member, in RFC 8785 canonical form.
func Payload(card []byte) ([]byte, error) {
	_, payload, err := split(card)
	return payload, err
}

// split decodes card into its members (signatures removed) and returns
// them with the canonical payload.
func split(card []byte) (map[string]json.RawMessage, []byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(card, &members); err != nil {
		return nil, nil, fmt.Errorf("cardsig: the card is not a JSON object: %w", err)
	}
	if members == nil {
		return nil, nil, errors.New("cardsig: the card is null, not a JSON object")
	}
	delete(members, signaturesMember)
	unsigned, err := json.Marshal(members)
	if err != nil {
		return nil, nil, fmt.Errorf("cardsig: %w", err)
	}
	payload, err := jcs.Transform(unsigned)
	if err != nil {
		return nil, nil, fmt.Errorf("cardsig: canonical form: %w", err)
	}
	return members, payload, nil
}
