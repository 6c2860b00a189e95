// Package bearer holds what pactum's servers and clients share about
// bearer tokens (RFC 6750): reading the token of a request, the challenge
// of a refusal, and a client transport that sends a token.
package bearer

import (
	"net/http"
	"strings"
)

// Token returns the token of r's "Authorization: Bearer TOKEN" header (the
// scheme in any case, surrounding blanks trimmed) and whether there is one.
func Token(r *http.Request) (string, bool) {
	scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// Challenge sets the WWW-Authenticate header of a 401 answer: invalid says
// a token was sent but is not valid.
func Challenge(w http.ResponseWriter, invalid bool) {
	c := `Bearer realm="pactum"`
	if invalid {
		c += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

// Transport sends Token as a bearer token with every request, through Next
// (http.DefaultTransport when nil).
type Transport struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.Token)
	return next.RoundTrip(r)
}
