// Package clientcreds gives the HTTP clients of agent runtimes that call
// remote services bearer tokens from an OAuth 2.0 client credentials
// grant (RFC 6749 §4.4): the `oauth2:` mapping of a runtime's settings.
// Tokens are cached until shortly before they expire
// (golang.org/x/oauth2's reuse), and a 401 answer drops the cached token
// and sends the request once more with a fresh one, so that a token the
// server revoked early costs one retry, not a failed attempt. The client
// secret is read from the environment when the runtime is built; it and
// the tokens never reach logs, errors or the store.
package clientcreds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Settings is a runtime's `oauth2:` mapping.
//
//	oauth2:
//	  token_url: https://idp.example.com/oauth/token
//	  client_id: pactum
//	  client_secret_env: PACTUM_CLIENT_SECRET
//	  scopes: [agents.call]
//	  audience: https://agents.example.com
type Settings struct {
	// TokenURL is the authorization server's token endpoint (https, or
	// http on loopback). Required.
	TokenURL string `yaml:"token_url"`
	// ClientID is the client's id. Required.
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the environment variable that holds the
	// client secret; it must be set when the runtime is built. Required.
	ClientSecretEnv string `yaml:"client_secret_env"`
	// Scopes are requested with each token (default none).
	Scopes []string `yaml:"scopes"`
	// Audience is sent as the `audience` parameter of the token request
	// (the API the token is for; Auth0, Okta, Keycloak), default none.
	Audience string `yaml:"audience"`
	// Resource is sent as the `resource` parameter (RFC 8707 resource
	// indicators; node-oidc-provider, Entra), default none.
	Resource string `yaml:"resource"`
}

// Validate says what is wrong with s, naming the field (prefix is the
// field path of the mapping, e.g. "oauth2").
func (s *Settings) Validate(prefix string) error {
	switch {
	case s.TokenURL == "":
		return fmt.Errorf("%s.token_url: required: the authorization server's token endpoint", prefix)
	case s.ClientID == "":
		return fmt.Errorf("%s.client_id: required", prefix)
	case s.ClientSecretEnv == "":
		return fmt.Errorf("%s.client_secret_env: required: the environment variable that holds the client secret", prefix)
	}
	u, err := url.Parse(s.TokenURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return fmt.Errorf("%s.token_url: want an absolute http(s) URL without credentials", prefix)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("%s.token_url: a client secret goes to the token endpoint: use https (http only on loopback)", prefix)
	}
	if _, ok := os.LookupEnv(s.ClientSecretEnv); !ok {
		return fmt.Errorf("%s.client_secret_env: the environment variable %s is not set", prefix, s.ClientSecretEnv)
	}
	return nil
}

// CheckWith validates a runtime's oauth2 settings s (nil: none) beside
// its configured headers: the grant's token is the Authorization header,
// so one configured as well is refused.
func CheckWith(s *Settings, headers map[string]string) error {
	if s == nil {
		return nil
	}
	for name := range headers {
		if http.CanonicalHeaderKey(name) == "Authorization" {
			return errors.New("oauth2: the client credentials grant sets the Authorization header; drop headers.Authorization or oauth2")
		}
	}
	return s.Validate("oauth2")
}

// Wrap returns base with s's tokens (Transport), or base itself when s
// is nil.
func Wrap(s *Settings, base http.RoundTripper) (http.RoundTripper, error) {
	if s == nil {
		return base, nil
	}
	return Transport(*s, base)
}

func loopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// Transport returns base with s's tokens on every request: an
// Authorization: Bearer header from the grant, fetched through base
// itself (so the token request is traced and bounded as the runtime's
// are). It reads the client secret from the environment now.
func Transport(s Settings, base http.RoundTripper) (http.RoundTripper, error) {
	if err := s.Validate("oauth2"); err != nil {
		return nil, err
	}
	cfg := &clientcredentials.Config{
		ClientID:     s.ClientID,
		ClientSecret: os.Getenv(s.ClientSecretEnv),
		TokenURL:     s.TokenURL,
		Scopes:       s.Scopes,
		AuthStyle:    oauth2.AuthStyleInHeader,
	}
	if s.Audience != "" || s.Resource != "" {
		cfg.EndpointParams = url.Values{}
		if s.Audience != "" {
			cfg.EndpointParams.Set("audience", s.Audience)
		}
		if s.Resource != "" {
			cfg.EndpointParams.Set("resource", s.Resource)
		}
	}
	t := &transport{cfg: cfg, base: base}
	t.src = t.newSource()
	return t, nil
}

// tokenTimeout bounds one token request.
const tokenTimeout = 30 * time.Second

// transport adds the grant's tokens to requests.
type transport struct {
	cfg  *clientcredentials.Config
	base http.RoundTripper

	mu  sync.Mutex
	src oauth2.TokenSource // caches its token until shortly before expiry
}

// newSource returns a token source that fetches with base.
func (t *transport) newSource() oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: t.base, Timeout: tokenTimeout})
	return t.cfg.TokenSource(ctx)
}

func (t *transport) source() oauth2.TokenSource {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.src
}

// renew replaces the cached token source (the token a 401 refused) unless
// another request has already done so.
func (t *transport) renew(old oauth2.TokenSource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.src == old {
		t.src = t.newSource()
	}
}

// RoundTrip sends req with a token; on 401 it fetches a fresh token and
// sends req once more, when its body can be sent again.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	src := t.source()
	resp, err := t.send(req, src)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	body, ok := rewind(req)
	if !ok {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	t.renew(src)
	retry := req.Clone(req.Context())
	retry.Body = body
	return t.send(retry, t.source())
}

// send sends a copy of req with src's token.
func (t *transport) send(req *http.Request, src oauth2.TokenSource) (*http.Response, error) {
	tok, err := src.Token()
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("oauth2 client credentials: get a token from %s: %w", t.cfg.TokenURL, redact(err))
	}
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return t.base.RoundTrip(out)
}

// rewind returns a fresh copy of req's body for a second send, and false
// when it cannot be had (a streamed body without GetBody).
func rewind(req *http.Request) (io.ReadCloser, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return http.NoBody, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	b, err := req.GetBody()
	return b, err == nil
}

// redact keeps an oauth2 error's status and error code but not the
// response body it may quote in full.
func redact(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint answered"
		if re.Response != nil {
			msg += " " + re.Response.Status
		}
		if re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
			if re.ErrorDescription != "" {
				msg += " (" + re.ErrorDescription + ")"
			}
		}
		return errors.New(msg)
	}
	return err
}
