package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/internal/oidcauth"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// tokens maps the SHA-256 of each actor's bearer token to the actor; nil
// when the configuration does not ask for authentication (auth: none).
type tokens map[[sha256.Size]byte]string

// bearerTokens reads the actors' tokens of an auth: bearer configuration:
// the configured hashes, and the tokens of token_env variables, which must
// be set and not empty. Two actors may not share a token.
func bearerTokens(cfg *config.Config) (tokens, error) {
	if cfg.Auth != config.AuthBearer {
		return nil, nil
	}
	t := tokens{}
	for i, a := range cfg.Actors {
		var sum [sha256.Size]byte
		switch {
		case a.TokenSHA256 != "":
			b, err := hex.DecodeString(a.TokenSHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("actors[%d] (%s): token_sha256 is not a hex SHA-256", i, a.Name)
			}
			copy(sum[:], b)
		case a.TokenEnv != "":
			v := os.Getenv(a.TokenEnv)
			if v == "" {
				return nil, fmt.Errorf("actors[%d] (%s): token_env names %s, which is not set or empty", i, a.Name, a.TokenEnv)
			}
			sum = sha256.Sum256([]byte(v))
		default:
			return nil, fmt.Errorf("actors[%d] (%s): auth: bearer needs token_sha256 or token_env", i, a.Name)
		}
		if other, dup := t[sum]; dup {
			return nil, fmt.Errorf("actors[%d] (%s): has the same token as actor %s", i, a.Name, other)
		}
		t[sum] = a.Name
	}
	if len(t) == 0 {
		return nil, errors.New("auth: bearer needs actors with tokens")
	}
	return t, nil
}

// actor returns the actor whose token this is. Tokens are compared by
// their SHA-256, so the lookup's timing says nothing about the token.
func (t tokens) actor(token string) (string, bool) {
	a, ok := t[sha256.Sum256([]byte(token))]
	return a, ok
}

// verify is the verification of auth: bearer: the token's actor, or
// bearer.ErrInvalidToken.
func (t tokens) verify(_ context.Context, token string) (task.Identity, error) {
	a, ok := t.actor(token)
	if !ok {
		return task.Identity{}, bearer.ErrInvalidToken
	}
	return task.Identity{Actor: a}, nil
}

// authenticator is how the node authenticates callers, the same on every
// binding (A2A JSON-RPC, HTTP+JSON and gRPC, MCP, the dashboard): nil
// with auth: none.
type authenticator struct {
	// verify maps a token to its identity, or refuses it with an error
	// wrapping bearer.ErrInvalidToken.
	verify func(ctx context.Context, token string) (task.Identity, error)
	// scheme is the security scheme the cards declare.
	scheme a2aserver.Scheme
	// issuer is the authorization server of auth: oidc ("" otherwise):
	// the MCP endpoint names it in its protected resource metadata.
	issuer string
	// verifyMCP is verify for the MCP endpoint: its own audience
	// (auth.mcp_audience) when configured, else verify.
	verifyMCP func(ctx context.Context, token string) (task.Identity, error)
}

// newAuthenticator returns the authenticator of cfg's auth mode: nil for
// none; the actors' tokens for bearer; for oidc, a verifier of the
// issuer's JWTs (its discovery document is read now, within ctx, unless a
// jwks_file gives the keys).
func newAuthenticator(ctx context.Context, cfg *config.Config, baseDir string) (*authenticator, error) {
	switch cfg.Auth {
	case config.AuthBearer:
		t, err := bearerTokens(cfg)
		if err != nil {
			return nil, err
		}
		return &authenticator{verify: t.verify}, nil
	case config.AuthOIDC:
		v, err := oidcVerifier(ctx, cfg, baseDir)
		if err != nil {
			return nil, err
		}
		scheme := a2aserver.Scheme{OpenIDConnectURL: discoveryURL(cfg.OIDC.Issuer)}
		if cfg.OIDC.TokenURL != "" {
			scheme = a2aserver.Scheme{TokenURL: cfg.OIDC.TokenURL}
			if cfg.OIDC.ActionsClaim != "" {
				scheme.Scopes = map[string]string{"pactum:*": "every action the actor may call"}
				for _, ac := range cfg.Agents {
					scheme.Scopes["pactum:"+ac.Action] = "call action " + ac.Action
				}
			}
		}
		a := &authenticator{verify: v.Verify, scheme: scheme, issuer: cfg.OIDC.Issuer, verifyMCP: v.Verify}
		if len(cfg.OIDC.MCPAudience) > 0 {
			a.verifyMCP = v.ForAudience(cfg.OIDC.MCPAudience).Verify
		}
		return a, nil
	}
	return nil, nil
}

// discoveryURL returns the OpenID discovery URL of issuer.
func discoveryURL(issuer string) string {
	return strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
}

// oidcVerifier returns the verifier of auth: oidc.
func oidcVerifier(ctx context.Context, cfg *config.Config, baseDir string) (*oidcauth.Verifier, error) {
	o := cfg.OIDC
	opts := oidcauth.Options{
		Issuer: o.Issuer, Audience: o.Audience, Algorithms: o.Algorithms, Leeway: o.Leeway.Duration,
		ActorClaim: o.ActorClaim, ActionsClaim: o.ActionsClaim, Actors: map[string]string{},
	}
	for _, a := range cfg.Actors {
		opts.Actors[a.Subject] = a.Name
	}
	if path, place := cfg.OIDCJWKS(baseDir); path != "" {
		keys, err := oidcauth.ReadJWKS(path)
		if err != nil {
			return nil, place("cannot use the JWKS: "+err.Error(), err)
		}
		opts.Keys = keys
	}
	v, err := oidcauth.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return v, nil
}

// authenticate is the A2A server's and the dashboard's Authenticate
// option: nil (no authentication) without an authenticator.
func (a *authenticator) authenticate() func(context.Context, string) (task.Identity, error) {
	if a == nil {
		return nil
	}
	return a.verify
}

// cardScheme is the security scheme the cards declare.
func (a *authenticator) cardScheme() a2aserver.Scheme {
	if a == nil {
		return a2aserver.Scheme{}
	}
	return a.scheme
}

// protectedResourcePath is where the MCP endpoint's OAuth protected
// resource metadata (RFC 9728) is served: the well-known path with the
// resource's path, /mcp, inserted, as the MCP authorization specification
// has clients look first.
const protectedResourcePath = "/.well-known/oauth-protected-resource/mcp"

// mcpResource returns the MCP endpoint's protected resource metadata
// under base (the node's base URL), or nil when its tokens do not come
// from an authorization server (auth: none or bearer): the endpoint is
// an OAuth 2.1 resource server of the oidc issuer, its resource identifier
// the endpoint's URL.
func (a *authenticator) mcpResource(base string) *oauthex.ProtectedResourceMetadata {
	if a == nil || a.issuer == "" {
		return nil
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               strings.TrimSuffix(base, "/") + "/mcp",
		AuthorizationServers:   []string{a.issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "pactum MCP",
	}
}

// requireMCP puts the MCP endpoint behind the same authentication, through
// the MCP SDK's bearer middleware (401 with a WWW-Authenticate challenge;
// 400 for a request with more than one Authorization header); the tools
// then act as the token's identity (mcpserver reads TokenInfo). refused
// is told of each refusal (invalid: a token was sent).
func (a *authenticator) requireMCP(h http.Handler, base string, refused func(invalid bool)) http.Handler {
	if a == nil {
		return h
	}
	var metadataURL string
	if a.mcpResource(base) != nil {
		metadataURL = strings.TrimSuffix(base, "/") + protectedResourcePath
	}
	type verified struct{}
	verify := func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		// The token was verified below, once; its identity rides in ctx.
		id, ok := ctx.Value(verified{}).(task.Identity)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: id.Actor, Extra: map[string]any{mcpserver.IdentityKey: id}}, nil
	}
	inner := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	// The SDK's middleware answers 401 without a challenge unless OAuth
	// metadata is configured; RFC 6750 wants one, so refusals are answered
	// here, as the A2A endpoints answer them.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := bearer.Token(r)
		if err == nil {
			var id task.Identity
			check := a.verify
			if a.verifyMCP != nil {
				check = a.verifyMCP
			}
			if id, err = check(r.Context(), token); err == nil {
				inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verified{}, id)))
				return
			}
			if !errors.Is(err, bearer.ErrInvalidToken) {
				err = fmt.Errorf("%w: %w", bearer.ErrInvalidToken, err)
			}
		}
		refused(!errors.Is(err, bearer.ErrNoToken))
		status := bearer.Refuse(w, err)
		if metadataURL != "" {
			// The MCP authorization specification: the challenge names
			// the protected resource metadata, where a client finds the
			// authorization server to get a token from.
			w.Header().Set("WWW-Authenticate", w.Header().Get("WWW-Authenticate")+`, resource_metadata="`+metadataURL+`"`)
		}
		http.Error(w, err.Error(), status)
	})
}

// Access is what a token may do on a node: the identity it establishes
// and the actions it may call.
type Access struct {
	Identity task.Identity
	// Actions are the actions the token may call: its actor's (actors[].
	// actions), narrowed to those the token grants when the actions claim
	// is configured; ["*"] for all.
	Actions []string
}

// CheckToken verifies token as a node of cfg would, offline: with auth:
// oidc the keys come from jwksFile when set, else from auth.jwks_file;
// without either it fails rather than fetch them. A refusal wraps
// bearer.ErrInvalidToken and says which check failed.
func CheckToken(ctx context.Context, cfg *config.Config, baseDir, jwksFile, token string) (Access, error) {
	if cfg.Auth == config.AuthOIDC {
		c := *cfg
		switch {
		case jwksFile != "":
			if _, err := oidcauth.ReadJWKS(jwksFile); err != nil {
				return Access{}, fmt.Errorf("--jwks: %w", err)
			}
			c.OIDC.JWKSFile, _ = filepath.Abs(jwksFile)
		case cfg.OIDC.JWKSFile == "":
			return Access{}, errors.New("the check is offline: give the issuer's keys with --jwks FILE (or auth.jwks_file)")
		}
		cfg = &c
	}
	a, err := newAuthenticator(ctx, cfg, baseDir)
	if err != nil {
		return Access{}, err
	}
	if a == nil {
		return Access{}, errors.New("auth: none: every caller is anonymous and no token is checked")
	}
	id, err := a.verify(ctx, token)
	if err != nil {
		return Access{}, err
	}
	var actions []string
	for _, ac := range cfg.Actors {
		if ac.Name == id.Actor {
			actions = ac.Actions
		}
	}
	if id.Actions != nil {
		var narrowed []string
		switch {
		case slices.Contains(actions, "*"):
			narrowed = id.Actions
		default:
			for _, act := range actions {
				if id.Grants(act) {
					narrowed = append(narrowed, act)
				}
			}
		}
		actions = narrowed
	}
	if slices.Contains(actions, "*") {
		actions = []string{"*"}
	}
	return Access{Identity: id, Actions: actions}, nil
}
