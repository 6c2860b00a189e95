package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/bearer"
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

// authenticate is the A2A server's Authenticate option: nil (no
// authentication) without tokens.
func (t tokens) authenticate() func(string) (string, bool) {
	if t == nil {
		return nil
	}
	return t.actor
}

// requireMCP puts the MCP endpoint behind the same tokens, through the MCP
// SDK's bearer middleware (401 with a WWW-Authenticate challenge; 400 for
// a request with more than one Authorization header); the tools then act
// as the token's actor (mcpserver reads TokenInfo.UserID). refused is told
// of each refusal (invalid: a token was sent).
func (t tokens) requireMCP(h http.Handler, refused func(invalid bool)) http.Handler {
	if t == nil {
		return h
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		a, ok := t.actor(token)
		if !ok {
			return nil, fmt.Errorf("%w: unknown bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: a}, nil
	}
	inner := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	// The SDK's middleware answers 401 without a challenge unless OAuth
	// metadata is configured; RFC 6750 wants one, so refusals are answered
	// here, as the A2A endpoints answer them.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := bearer.Token(r)
		if err == nil {
			if _, ok := t.actor(token); ok {
				inner.ServeHTTP(w, r)
				return
			}
			err = bearer.ErrInvalidToken
		}
		refused(!errors.Is(err, bearer.ErrNoToken))
		http.Error(w, err.Error(), bearer.Refuse(w, err))
	})
}
