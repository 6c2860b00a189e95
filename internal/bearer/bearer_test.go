package bearer_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc/credentials"

	"github.com/pactum/pactum/internal/bearer"
)

func TestToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		headers []string
		token   string
		err     error
	}{
		{[]string{"Bearer abc"}, "abc", nil},
		{[]string{"bearer  abc "}, "abc", nil},
		{[]string{"BEARER abc"}, "abc", nil},
		{[]string{"Basic abc"}, "", bearer.ErrNoToken},
		{[]string{"Bearer"}, "", bearer.ErrNoToken},
		{[]string{"Bearer   "}, "", bearer.ErrNoToken},
		{[]string{"abc"}, "", bearer.ErrNoToken},
		{[]string{""}, "", bearer.ErrNoToken},
		{nil, "", bearer.ErrNoToken},
		// More than one header is refused whatever they hold.
		{[]string{"Bearer abc", "Bearer abc"}, "", bearer.ErrMultipleHeaders},
		{[]string{"Bearer abc", "Bearer xyz"}, "", bearer.ErrMultipleHeaders},
		{[]string{"Bearer abc", ""}, "", bearer.ErrMultipleHeaders},
		{[]string{"Basic abc", "Bearer abc"}, "", bearer.ErrMultipleHeaders},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, h := range tc.headers {
			r.Header.Add("Authorization", h)
		}
		if token, err := bearer.Token(r); token != tc.token || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Token(%q) = %q, %v; want %q, %v", tc.headers, token, err, tc.token, tc.err)
		}
	}
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err       error
		status    int
		challenge string
	}{
		{bearer.ErrNoToken, http.StatusUnauthorized, `Bearer realm="pactum"`},
		{bearer.ErrInvalidToken, http.StatusUnauthorized, `Bearer realm="pactum", error="invalid_token"`},
		{bearer.ErrMultipleHeaders, http.StatusBadRequest, `Bearer realm="pactum", error="invalid_request"`},
		{bearer.Invalid("expired"), http.StatusUnauthorized, `Bearer realm="pactum", error="invalid_token", error_description="expired"`},
		{fmt.Errorf("verify: %w", bearer.Invalid("bad \"kid\"\n\\é")), http.StatusUnauthorized, `Bearer realm="pactum", error="invalid_token", error_description="bad  kid     "`},
	} {
		w := httptest.NewRecorder()
		if status := bearer.Refuse(w, tc.err); status != tc.status || w.Header().Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("Refuse(%v) = %d, challenge %q; want %d, %q", tc.err, status, w.Header().Get("WWW-Authenticate"), tc.status, tc.challenge)
		}
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Values("Authorization") }))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Add("Authorization", "Bearer stale")
	resp, err := (&http.Client{Transport: bearer.Transport{Token: "t0k"}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(seen) != 1 || seen[0] != "Bearer t0k" || req.Header.Get("Authorization") != "Bearer stale" {
		t.Errorf("server saw %q; the caller's request now has %q", seen, req.Header.Get("Authorization"))
	}
}

// TestPerRPC checks the gRPC credentials: the token as authorization
// metadata, and transport security required unless allowed away.
func TestPerRPC(t *testing.T) {
	t.Parallel()
	var _ credentials.PerRPCCredentials = bearer.PerRPC{}
	md, err := bearer.PerRPC{Token: "t0k"}.GetRequestMetadata(t.Context())
	if err != nil || len(md) != 1 || md["authorization"] != "Bearer t0k" {
		t.Errorf("metadata %v, %v; want authorization: Bearer t0k", md, err)
	}
	if !(bearer.PerRPC{}).RequireTransportSecurity() || (bearer.PerRPC{AllowInsecure: true}).RequireTransportSecurity() {
		t.Error("RequireTransportSecurity must be true unless AllowInsecure")
	}
}
