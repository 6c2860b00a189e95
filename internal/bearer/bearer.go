// Package bearer holds what pactum's servers and clients share about
// bearer tokens (RFC 6750): reading the token of a request, the challenge
// of a refusal, and a client transport that sends a token.
package bearer

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// Why a request is refused. Their messages are fit to show the caller.
var (
	// ErrNoToken: the request has no "Authorization: Bearer TOKEN" header.
	ErrNoToken = errors.New("this endpoint needs an Authorization: Bearer token")
	// ErrInvalidToken: the token is not one the server knows. Token never
	// returns it; servers use it for the tokens they do not accept.
	ErrInvalidToken = errors.New("the bearer token is not valid")
	// ErrMultipleHeaders: the request has more than one Authorization
	// header. It is refused whatever they hold: a server that read one of
	// them while a proxy or a logger read another could be led to act as
	// an actor nobody checked.
	ErrMultipleHeaders = errors.New("the request has more than one Authorization header; send exactly one")
)

// InvalidTokenError is ErrInvalidToken with the check the token failed
// (expired, wrong issuer, …), fit to show the caller: it never holds the
// token nor a key.
type InvalidTokenError struct {
	// Reason says which check failed, in a few words.
	Reason string
}

// Invalid returns an InvalidTokenError for reason.
func Invalid(reason string) error { return &InvalidTokenError{Reason: reason} }

// Error implements error.
func (e *InvalidTokenError) Error() string { return ErrInvalidToken.Error() + ": " + e.Reason }

// Unwrap returns ErrInvalidToken.
func (e *InvalidTokenError) Unwrap() error { return ErrInvalidToken }

// Token returns the token of r's one "Authorization: Bearer TOKEN" header
// (the scheme in any case, surrounding blanks trimmed). It returns
// ErrMultipleHeaders when r has more than one Authorization header, and
// ErrNoToken when it has none or one that holds no bearer token.
func Token(r *http.Request) (string, error) { return FromValues(r.Header.Values("Authorization")) }

// FromValues is Token on the values of a request's Authorization header
// (or of gRPC's "authorization" metadata), as the request carried them.
func FromValues(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", ErrNoToken
	case 1:
	default:
		return "", ErrMultipleHeaders
	}
	scheme, token, found := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", ErrNoToken
	}
	return token, nil
}

// Refuse sets the WWW-Authenticate header of the answer refusing a request
// for err (ErrNoToken, ErrInvalidToken or ErrMultipleHeaders) and returns
// its HTTP status: 401, or 400 with error="invalid_request" for several
// Authorization headers (RFC 6750 §3.1).
func Refuse(w http.ResponseWriter, err error) int {
	challenge, status := Challenge(err)
	w.Header().Set("WWW-Authenticate", challenge)
	return status
}

// Challenge returns the WWW-Authenticate challenge refusing a request for
// err (ErrNoToken, ErrInvalidToken or ErrMultipleHeaders) and the HTTP
// status of the refusal, as Refuse answers them. An InvalidTokenError adds
// its reason as error_description.
func Challenge(err error) (challenge string, status int) {
	c := `Bearer realm="pactum"`
	status = http.StatusUnauthorized
	switch {
	case errors.Is(err, ErrMultipleHeaders):
		c += `, error="invalid_request"`
		status = http.StatusBadRequest
	case errors.Is(err, ErrInvalidToken):
		c += `, error="invalid_token"`
		if e := (*InvalidTokenError)(nil); errors.As(err, &e) {
			c += `, error_description="` + quotable(e.Reason) + `"`
		}
	}
	return c, status
}

// quotable returns s fit for a quoted-string of a challenge: RFC 6750
// limits error_description to printable ASCII without '"' and '\'; other
// bytes become spaces.
func quotable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b[i] = ' '
		}
	}
	return string(b)
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

// PerRPC sends Token as a bearer token with every gRPC call, as the
// "authorization" metadata (a credentials.PerRPCCredentials). gRPC sends
// per-call credentials only over a secure connection unless
// AllowInsecure is set (plaintext on loopback).
type PerRPC struct {
	Token         string
	AllowInsecure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (p PerRPC) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + p.Token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (p PerRPC) RequireTransportSecurity() bool { return !p.AllowInsecure }
