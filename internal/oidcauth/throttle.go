package oidcauth

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultRefetchInterval is how soon after a fetch of the JWKS that
// brought no new key another one may go to the issuer.
const DefaultRefetchInterval = 10 * time.Second

// maxJWKSBytes bounds a JWKS response.
const maxJWKSBytes = 1 << 20

// throttle is the transport of JWKS fetches. go-oidc fetches the JWKS
// again for every token whose kid it does not hold, so tokens with made-up
// kids would make the node fetch it once per request. After a fetch that
// brought nothing new, throttle answers again with that same JWKS, without
// asking the issuer, until interval has passed; a fetch that brought a new
// key set lets the next one through at once (a rotation is followed
// without delay).
type throttle struct {
	next     http.RoundTripper
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	last    time.Time
	body    []byte
	header  http.Header
	changed bool
}

// RoundTrip implements http.RoundTripper.
func (t *throttle) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.body != nil && !t.changed && t.now().Sub(t.last) < t.interval {
		return t.answer(r), nil
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	t.changed = !bytes.Equal(body, t.body)
	t.body, t.header, t.last = body, resp.Header.Clone(), t.now()
	return t.answer(r), nil
}

// answer is the last JWKS fetched, as a response to r.
func (t *throttle) answer(r *http.Request) *http.Response {
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: t.header.Clone(), Body: io.NopCloser(bytes.NewReader(t.body)), ContentLength: int64(len(t.body)), Request: r,
	}
}
