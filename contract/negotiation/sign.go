package negotiation

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/contract"
)

// Role is a party's side of a negotiation.
type Role string

// The two parties.
const (
	// RoleProposer offers the first contract: the caller.
	RoleProposer Role = "proposer"
	// RoleProvider is the agent that would run the contract.
	RoleProvider Role = "provider"
)

// Signature header parameters pactum adds to the protected header (they
// are signed): the signer's role and base URL.
const (
	headerRole = "pactum-role"
	headerURL  = "pactum-url"
)

// MaxSignature bounds a signature's length, in bytes.
const MaxSignature = 4 << 10

// Key is a party's Ed25519 signing key and the base URL that names it.
type Key struct {
	priv ed25519.PrivateKey
	// Thumbprint is the RFC 7638 SHA-256 thumbprint of the public key,
	// base64url: the party's key id.
	Thumbprint string
	// URL is the party's base URL (a node's base_url).
	URL string
}

// NewKey returns the Key of priv for a party at url.
func NewKey(priv ed25519.PrivateKey, url string) (*Key, error) {
	pub, ok := priv.Public().(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	tp, err := thumbprint(pub)
	if err != nil {
		return nil, err
	}
	return &Key{priv: priv, Thumbprint: tp, URL: url}, nil
}

// LoadKey reads an Ed25519 private key from a PEM file ("PRIVATE KEY",
// PKCS #8: what `openssl genpkey -algorithm ed25519` and `pactum
// card keygen` write). Errors never quote the file's content.
func LoadKey(path, url string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" (PKCS #8) file")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, errors.New("the PEM block is not a PKCS #8 private key")
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the key is a %T, not Ed25519", k)
	}
	return NewKey(priv, url)
}

// thumbprint is the RFC 7638 thumbprint of pub, base64url.
func thumbprint(pub ed25519.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// Sign signs canonical (a contract's canonical JSON) as role: a JWS in
// compact serialization with a detached payload (RFC 7515, appendix F),
// its protected header holding alg EdDSA, kid (the key's thumbprint), jwk
// (the public key, so that the signature verifies on its own), and the
// role and URL of the signer.
func (k *Key) Sign(canonical []byte, role Role) (string, error) {
	opts := (&jose.SignerOptions{EmbedJWK: true}).
		WithHeader(jose.HeaderKey("kid"), k.Thumbprint).
		WithHeader(headerRole, string(role)).
		WithHeader(headerURL, k.URL)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: k.priv}, opts)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(canonical)
	if err != nil {
		return "", err
	}
	return jws.DetachedCompactSerialize()
}

// Party is one signer of a contract: its role, its key's thumbprint, its
// base URL and its signature (Key.Sign).
type Party struct {
	Role      Role   `json:"role"`
	Key       string `json:"key"`
	URL       string `json:"url"`
	Signature string `json:"signature"`
}

// VerifySignature verifies sig, a detached JWS (Key.Sign), over
// canonical and returns the party it names: the key thumbprint, role and
// URL its protected header holds. The signature must be EdDSA with an
// embedded Ed25519 jwk whose thumbprint is its kid.
func VerifySignature(sig string, canonical []byte) (Party, error) {
	if len(sig) > MaxSignature {
		return Party{}, errors.New("signature is too long")
	}
	jws, err := jose.ParseDetached(sig, canonical, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return Party{}, fmt.Errorf("signature: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return Party{}, errors.New("signature: want exactly one")
	}
	h := jws.Signatures[0].Protected
	if h.JSONWebKey == nil {
		return Party{}, errors.New("signature: its protected header has no jwk")
	}
	pub, ok := h.JSONWebKey.Key.(ed25519.PublicKey)
	if !ok {
		return Party{}, errors.New("signature: its jwk is not an Ed25519 public key")
	}
	tp, err := thumbprint(pub)
	if err != nil {
		return Party{}, err
	}
	if h.KeyID != tp {
		return Party{}, errors.New("signature: its kid is not its jwk's thumbprint")
	}
	if err := jws.DetachedVerify(canonical, pub); err != nil {
		return Party{}, fmt.Errorf("signature does not verify: %w", err)
	}
	role, _ := h.ExtraHeaders[headerRole].(string)
	url, _ := h.ExtraHeaders[headerURL].(string)
	if role != string(RoleProposer) && role != string(RoleProvider) {
		return Party{}, fmt.Errorf("signature: %s %q is neither proposer nor provider", headerRole, role)
	}
	return Party{Role: Role(role), Key: tp, URL: url, Signature: sig}, nil
}

// Accepted is an accepted contract: the contract, its digest and both
// parties' signatures over its canonical form.
type Accepted struct {
	// Negotiation is the id of the negotiation (its task) and Agent the
	// agent that accepted it: where it was negotiated, checked by the
	// provider against its store when a task cites it (not signed).
	Negotiation string `json:"negotiation"`
	Agent       string `json:"agent"`
	// Contract is the contract's JSON (canonical as signed; a copy
	// re-encoded without changing its content verifies too).
	Contract json.RawMessage `json:"contract"`
	// Digest is the digest of its canonical form (contract.Digest).
	Digest string `json:"digest"`
	// Parties are the proposer's and the provider's signatures, in that
	// order.
	Parties []Party `json:"parties"`
}

// Verify checks a: the contract parses, its canonical form has Digest,
// and each party's signature verifies over that form and names the party
// as listed (role, key, URL), the proposer first, then the provider. Any
// change to the contract, the digest or a party, and any swapped
// signature, fails it. It returns the contract (not compiled: a caller
// that runs it compiles it once per digest).
func (a *Accepted) Verify() (*contract.AgentContract, error) {
	c, err := contract.Parse("accepted contract", a.Contract)
	if err != nil {
		return nil, fmt.Errorf("accepted contract: %w", err)
	}
	canonical, err := contract.Canonical(c)
	if err != nil {
		return nil, err
	}
	if d, _ := contract.Digest(c); d != a.Digest {
		return nil, fmt.Errorf("accepted contract: its digest is %s, not %s: the contract was changed", d, a.Digest)
	}
	if len(a.Parties) != 2 {
		return nil, fmt.Errorf("accepted contract: %d signatures, want 2 (proposer and provider)", len(a.Parties))
	}
	for i, want := range []Role{RoleProposer, RoleProvider} {
		p := a.Parties[i]
		got, err := VerifySignature(p.Signature, canonical)
		if err != nil {
			return nil, fmt.Errorf("accepted contract: parties[%d] (%s): %w", i, p.Role, err)
		}
		if p.Role != want || got.Role != want || got.Key != p.Key || got.URL != p.URL {
			return nil, fmt.Errorf("accepted contract: parties[%d] is listed as %s %s at %q but its signature is %s's %s at %q (want the %s)",
				i, p.Role, p.Key, p.URL, got.Role, got.Key, got.URL, want)
		}
	}
	return c, nil
}
