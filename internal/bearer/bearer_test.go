package bearer_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pactum/pactum/internal/bearer"
)

func TestToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"BEARER abc", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer   ", "", false},
		{"abc", "", false},
		{"", "", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", tc.header)
		if token, ok := bearer.Token(r); token != tc.token || ok != tc.ok {
			t.Errorf("Token(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
	}
}

func TestChallengeAndTransport(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	bearer.Challenge(w, true)
	if got := w.Header().Get("WWW-Authenticate"); got != `Bearer realm="pactum", error="invalid_token"` {
		t.Errorf("challenge = %q", got)
	}
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Get("Authorization") }))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: bearer.Transport{Token: "t0k"}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen != "Bearer t0k" || req.Header.Get("Authorization") != "" {
		t.Errorf("server saw %q; the caller's request was changed: %q", seen, req.Header.Get("Authorization"))
	}
}
