// Package oidcauth verifies the JWTs an OpenID provider issues (OAuth
// access tokens in JWT form, or ID tokens) and maps them to pactum's
// actors: the verifier behind auth: oidc, shared by every binding (A2A
// JSON-RPC, HTTP+JSON and gRPC, MCP, the dashboard) and by pactum auth
// check.
//
// A token passes when its signature verifies with one of the issuer's
// keys under an allowed algorithm (asymmetric only: never none, never an
// HMAC), its iss is the issuer, its aud holds one of the audiences, it has
// not expired and is already valid (exp and nbf, within a leeway), and its
// actor claim names a configured actor. The keys come from the issuer's
// discovery document and JWKS, fetched again when a token names a key id
// not yet known (key rotation), or from a static JWKS (air-gapped nodes).
package oidcauth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/task"
)

// ActionScopePrefix prefixes the values of the actions claim that grant an
// action: pactum:ACTION grants ACTION, pactum:* every action.
const ActionScopePrefix = "pactum:"

// Options configure a Verifier.
type Options struct {
	// Issuer is the issuer URL tokens must carry as iss (required).
	Issuer string
	// Audience lists the values one of which a token's aud must hold
	// (required).
	Audience []string
	// Keys, when set, are the issuer's public keys: no discovery, no
	// fetch. Default nil: discover the JWKS from Issuer.
	Keys *jose.JSONWebKeySet
	// Algorithms are the signature algorithms accepted (required; only
	// asymmetric ones are honoured).
	Algorithms []string
	// Leeway is the clock skew allowed for exp and nbf.
	Leeway time.Duration
	// ActorClaim names the claim matched against Actors' keys (default
	// "sub").
	ActorClaim string
	// ActionsClaim, when set, names the claim whose pactum:ACTION values
	// are the actions a token grants (task.Identity.Actions).
	ActionsClaim string
	// Actors maps actor claim values (subjects) to actor names.
	Actors map[string]string
	// Client fetches the discovery document and the JWKS (default
	// http.DefaultClient).
	Client *http.Client
	// RefetchInterval is how soon after a fetch of the JWKS that brought
	// no new key another may go to the issuer (default
	// DefaultRefetchInterval): tokens with made-up key ids cannot make the
	// node fetch it on every request.
	RefetchInterval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Verifier verifies tokens of one issuer. It is safe for concurrent use.
type Verifier struct {
	opts     Options
	verifier *oidc.IDTokenVerifier
}

// asymmetric are the algorithms a Verifier may accept.
var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// New returns a Verifier. Without Options.Keys it reads the issuer's
// discovery document now (ctx bounds that request); the JWKS is fetched
// when first needed and again on an unknown key id, for as long as the
// Verifier lives.
func New(ctx context.Context, o Options) (*Verifier, error) {
	if o.Issuer == "" || len(o.Audience) == 0 {
		return nil, errors.New("oidcauth: issuer and audience are required")
	}
	for _, a := range o.Algorithms {
		if !slices.Contains(asymmetric, a) {
			return nil, fmt.Errorf("oidcauth: algorithm %q is not allowed (only %s)", a, strings.Join(asymmetric, ", "))
		}
	}
	if len(o.Algorithms) == 0 {
		return nil, errors.New("oidcauth: no algorithm allowed")
	}
	if o.ActorClaim == "" {
		o.ActorClaim = "sub"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	var keys oidc.KeySet
	if o.Keys != nil {
		static, err := publicKeys(o.Keys)
		if err != nil {
			return nil, err
		}
		keys = static
	} else {
		// The key set outlives ctx: it fetches the JWKS whenever a token
		// names a key it does not hold, through the throttle.
		next := o.Client.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		jwksClient := *o.Client
		jwksClient.Transport = &throttle{next: next, interval: cmp.Or(o.RefetchInterval, DefaultRefetchInterval), now: o.Now}
		client := oidc.ClientContext(context.WithoutCancel(ctx), &jwksClient)
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.Client), o.Issuer)
		if err != nil {
			return nil, fmt.Errorf("oidcauth: discovery of %s: %w", o.Issuer, err)
		}
		var meta struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&meta); err != nil || meta.JWKSURI == "" {
			return nil, fmt.Errorf("oidcauth: the discovery document of %s names no jwks_uri", o.Issuer)
		}
		keys = oidc.NewRemoteKeySet(client, meta.JWKSURI)
	}
	// go-oidc checks the signature and the algorithm; the claims are
	// checked here, with the leeway and with reasons to tell the caller.
	v := oidc.NewVerifier(o.Issuer, keys, &oidc.Config{
		SupportedSigningAlgs: o.Algorithms,
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		SkipIssuerCheck:      true,
	})
	return &Verifier{opts: o, verifier: v}, nil
}

// publicKeys returns the public keys of set as a static key set, refusing
// private and symmetric keys: a JWKS file holds public keys only.
func publicKeys(set *jose.JSONWebKeySet) (*oidc.StaticKeySet, error) {
	s := &oidc.StaticKeySet{}
	for i, k := range set.Keys {
		if !k.IsPublic() {
			return nil, fmt.Errorf("oidcauth: key %d (kid %q) of the JWKS is not a public key", i, k.KeyID)
		}
		switch k.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			return nil, fmt.Errorf("oidcauth: key %d (kid %q) of the JWKS is a %T, not an RSA, EC or Ed25519 public key", i, k.KeyID, k.Key)
		}
		s.PublicKeys = append(s.PublicKeys, crypto.PublicKey(k.Key))
	}
	if len(s.PublicKeys) == 0 {
		return nil, errors.New("oidcauth: the JWKS holds no key")
	}
	return s, nil
}

// ReadJWKS reads a JSON Web Key Set file of public keys (RSA, EC or
// Ed25519): a private or symmetric key in it is an error.
func ReadJWKS(path string) (*jose.JSONWebKeySet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: not a JSON Web Key Set: %w", path, err)
	}
	if _, err := publicKeys(&set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &set, nil
}

// Header is the part of a JOSE header the Verifier reads before the
// signature: the algorithm and the key id.
type Header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// ParseHeader decodes the header of a compact JWS (its first segment).
func ParseHeader(token string) (Header, error) {
	seg, _, ok := strings.Cut(token, ".")
	if !ok {
		return Header{}, errors.New("not a compact JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return Header{}, errors.New("the header is not base64url")
	}
	var h Header
	if err := json.Unmarshal(b, &h); err != nil {
		return Header{}, errors.New("the header is not a JSON object")
	}
	return h, nil
}

// claims are the claims the Verifier checks. exp and nbf are numbers
// (NumericDate), possibly fractional.
type claims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *float64        `json:"exp"`
	Nbf *float64        `json:"nbf"`
}

// ForAudience returns a verifier that is v but for the audiences a
// token's aud must hold one of: the same keys, issuer and checks, for a
// resource with an audience of its own (the MCP endpoint).
func (v *Verifier) ForAudience(audience []string) *Verifier {
	o := v.opts
	o.Audience = slices.Clone(audience)
	return &Verifier{opts: o, verifier: v.verifier}
}

// Verify returns the identity token establishes, or an error wrapping
// bearer.ErrInvalidToken (a *bearer.InvalidTokenError) that says which
// check failed. Neither the error nor anything logged holds the token.
func (v *Verifier) Verify(ctx context.Context, token string) (task.Identity, error) {
	h, err := ParseHeader(token)
	if err != nil {
		return task.Identity{}, bearer.Invalid("malformed: " + err.Error())
	}
	if !slices.Contains(v.opts.Algorithms, h.Alg) {
		return task.Identity{}, bearer.Invalid("algorithm " + algName(h.Alg) + " is not allowed")
	}
	t, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return task.Identity{}, bearer.Invalid("the signature does not verify with any key of the issuer (unknown key id, or a bad signature)")
	}
	var raw map[string]json.RawMessage
	var c claims
	if err := t.Claims(&raw); err != nil {
		return task.Identity{}, bearer.Invalid("malformed claims")
	}
	if err := t.Claims(&c); err != nil {
		return task.Identity{}, bearer.Invalid("malformed claims")
	}
	return v.check(c, raw)
}

// check checks the claims of a token whose signature verified.
func (v *Verifier) check(c claims, raw map[string]json.RawMessage) (task.Identity, error) {
	now := v.opts.Now()
	leeway := v.opts.Leeway
	switch {
	case c.Iss != v.opts.Issuer:
		return task.Identity{}, bearer.Invalid("wrong issuer")
	case !v.audienceOK(c.Aud):
		return task.Identity{}, bearer.Invalid("wrong audience")
	case c.Exp == nil:
		return task.Identity{}, bearer.Invalid("no expiry (exp)")
	case now.After(unix(*c.Exp).Add(leeway)):
		return task.Identity{}, bearer.Invalid("expired")
	case c.Nbf != nil && now.Add(leeway).Before(unix(*c.Nbf)):
		return task.Identity{}, bearer.Invalid("not yet valid (nbf)")
	}
	var subject string
	if err := json.Unmarshal(raw[v.opts.ActorClaim], &subject); err != nil || subject == "" {
		return task.Identity{}, bearer.Invalid(fmt.Sprintf("no %s claim (a string) to name the actor", v.opts.ActorClaim))
	}
	actor, ok := v.opts.Actors[subject]
	if !ok {
		return task.Identity{}, bearer.Invalid(fmt.Sprintf("no actor has the token's %s as subject", v.opts.ActorClaim))
	}
	id := task.Identity{Actor: actor, Subject: subject, Issuer: c.Iss}
	if v.opts.ActionsClaim != "" {
		id.Actions = grantedActions(raw[v.opts.ActionsClaim])
	}
	return id, nil
}

// audienceOK reports whether aud (a string or a list of strings) holds
// one of the configured audiences.
func (v *Verifier) audienceOK(aud json.RawMessage) bool {
	var list []string
	var one string
	if err := json.Unmarshal(aud, &one); err == nil {
		list = []string{one}
	} else if err := json.Unmarshal(aud, &list); err != nil {
		return false
	}
	for _, a := range list {
		if slices.Contains(v.opts.Audience, a) {
			return true
		}
	}
	return false
}

// grantedActions returns the actions a claim grants: its values
// (space-separated in a string, as scope; or a list of strings, as roles)
// that start with ActionScopePrefix, without it. Never nil: a token without
// the claim grants nothing.
func grantedActions(claim json.RawMessage) []string {
	var values []string
	var s string
	if err := json.Unmarshal(claim, &s); err == nil {
		values = strings.Fields(s)
	} else {
		_ = json.Unmarshal(claim, &values)
	}
	actions := []string{}
	for _, val := range values {
		if a, ok := strings.CutPrefix(val, ActionScopePrefix); ok && a != "" {
			actions = append(actions, a)
		}
	}
	return actions
}

// unix converts a NumericDate, clamped to ±2^40 seconds (beyond any
// real date, and within time.Duration's range).
func unix(secs float64) time.Time {
	const bound = 1 << 40
	secs = max(min(secs, bound), -bound)
	whole := int64(secs)
	return time.Unix(whole, int64((secs-float64(whole))*1e9))
}

// algName returns an algorithm name read from a token fit to show: as is
// when it is at most 16 letters and digits, else "(unreadable)".
func algName(s string) string {
	if s == "" || len(s) > 16 || strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) >= 0 {
		return "(unreadable)"
	}
	return s
}
