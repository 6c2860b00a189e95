package clientcreds

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// authServer stands in for an authorization server's token endpoint
// (a real OpenID provider, oidc-provider from npm, is used by the tests of
// inbound authentication; this one counts and checks the grants it gets)
// and a resource server that accepts only the newest token.
type authServer struct {
	mu        sync.Mutex
	issued    int
	expiresIn int
	revoked   map[string]bool
	grants    []string // each token request's form, for the assertions
	seen      []string // the tokens the resource server got
	bodies    []string
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	_ = r.ParseForm()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grants = append(a.grants, r.PostForm.Encode())
	if !ok || id != "pactum" || secret != "s3cret" || r.PostForm.Get("grant_type") != "client_credentials" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"bad client; the secret was s3cret"}`)
		return
	}
	a.issued++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", a.issued), "token_type": "Bearer", "expires_in": a.expiresIn})
}

func (a *authServer) resource(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, tok)
	a.bodies = append(a.bodies, string(b))
	if a.revoked[tok] || tok != fmt.Sprintf("tok-%d", a.issued) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	fmt.Fprint(w, "ok")
}

func setup(t *testing.T, expiresIn int) (*authServer, *http.Client, string) {
	t.Helper()
	a := &authServer{expiresIn: expiresIn, revoked: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/token", a.token)
	mux.HandleFunc("/api", a.resource)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("PACTUM_TEST_CLIENT_SECRET", "s3cret")
	tr, err := Transport(Settings{TokenURL: srv.URL + "/token", ClientID: "pactum", ClientSecretEnv: "PACTUM_TEST_CLIENT_SECRET",
		Scopes: []string{"agents.call"}, Audience: "https://agents.example", Resource: "https://agents.example/a2a"}, http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	return a, &http.Client{Transport: tr}, srv.URL + "/api"
}

func post(t *testing.T, c *http.Client, url, body string) int {
	t.Helper()
	resp, err := c.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// TestTokensCachedAndRenewedOn401: one token serves request after request
// until the resource server refuses it; then one fresh token is fetched
// and the request sent again, body and all.
func TestTokensCachedAndRenewedOn401(t *testing.T) {
	a, c, api := setup(t, 3600)
	for i := 0; i < 3; i++ {
		if code := post(t, c, api, fmt.Sprintf("call %d", i)); code != http.StatusOK {
			t.Fatalf("call %d: %d", i, code)
		}
	}
	a.mu.Lock()
	if a.issued != 1 {
		t.Errorf("3 calls fetched %d tokens, want 1 (cached)", a.issued)
	}
	if g := a.grants[0]; !strings.Contains(g, "grant_type=client_credentials") || !strings.Contains(g, "scope=agents.call") ||
		!strings.Contains(g, "audience=https%3A%2F%2Fagents.example") || !strings.Contains(g, "resource=https%3A%2F%2Fagents.example%2Fa2a") {
		t.Errorf("the token request was %q", g)
	}
	a.revoked["tok-1"] = true
	a.mu.Unlock()

	if code := post(t, c, api, "after the revocation"); code != http.StatusOK {
		t.Fatalf("after the revocation: %d, want the retry with a fresh token to pass", code)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.issued != 2 {
		t.Errorf("tokens issued %d, want 2 (one renewal)", a.issued)
	}
	n := len(a.seen)
	if a.seen[n-2] != "tok-1" || a.seen[n-1] != "tok-2" || a.bodies[n-1] != "after the revocation" {
		t.Errorf("the last two requests carried %q with bodies %q; want tok-1 then tok-2, the body sent again", a.seen[n-2:], a.bodies[n-2:])
	}
}

// TestRenewedOnceOnly: a resource server that refuses every token gets
// the request twice (one renewal), and the 401 reaches the caller.
func TestRenewedOnceOnly(t *testing.T) {
	a, c, api := setup(t, 3600)
	a.mu.Lock()
	a.issued = 100 // every token issued is "not the newest" to the resource server
	a.mu.Unlock()
	a.revoked["tok-101"], a.revoked["tok-102"] = true, true
	if code := post(t, c, api, "x"); code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 after one renewal", code)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) != 2 || a.issued != 102 {
		t.Errorf("requests %d, tokens issued %d: want 2 requests and 2 tokens", len(a.seen), a.issued-100)
	}
}

// TestShortLivedTokensRefetched: a token about to expire (oauth2's reuse
// keeps one until 10 s before its expiry) is not reused.
func TestShortLivedTokensRefetched(t *testing.T) {
	a, c, api := setup(t, 5)
	for i := 0; i < 2; i++ {
		if code := post(t, c, api, "x"); code != http.StatusOK {
			t.Fatalf("call %d: %d", i, code)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.issued != 2 {
		t.Errorf("2 calls with 5 s tokens fetched %d tokens, want 2", a.issued)
	}
}

// TestTokenErrorsRedacted: a refused grant is an error naming the token
// endpoint's status and error code, not its body or the secret.
func TestTokenErrorsRedacted(t *testing.T) {
	a, _, api := setup(t, 3600)
	_ = a
	t.Setenv("PACTUM_TEST_CLIENT_SECRET", "wrong")
	tr, err := Transport(Settings{TokenURL: strings.TrimSuffix(api, "/api") + "/token", ClientID: "pactum", ClientSecretEnv: "PACTUM_TEST_CLIENT_SECRET"}, http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&http.Client{Transport: tr}).Get(api)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: invalid_client (bad client") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("error %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Setenv("PACTUM_TEST_SET", "x")
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{ClientID: "c", ClientSecretEnv: "PACTUM_TEST_SET"}, "oauth2.token_url: required"},
		{Settings{TokenURL: "https://idp/t", ClientSecretEnv: "PACTUM_TEST_SET"}, "oauth2.client_id: required"},
		{Settings{TokenURL: "https://idp/t", ClientID: "c"}, "oauth2.client_secret_env: required"},
		{Settings{TokenURL: "http://idp.example/t", ClientID: "c", ClientSecretEnv: "PACTUM_TEST_SET"}, "use https (http only on loopback)"},
		{Settings{TokenURL: "https://u:p@idp/t", ClientID: "c", ClientSecretEnv: "PACTUM_TEST_SET"}, "without credentials"},
		{Settings{TokenURL: "https://idp/t", ClientID: "c", ClientSecretEnv: "PACTUM_TEST_UNSET_X"}, "PACTUM_TEST_UNSET_X is not set"},
		{Settings{TokenURL: "http://127.0.0.1:9/t", ClientID: "c", ClientSecretEnv: "PACTUM_TEST_SET"}, ""},
	} {
		err := tc.s.Validate("oauth2")
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}
