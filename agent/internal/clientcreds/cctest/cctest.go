// Package cctest is a token endpoint for the tests of runtimes that get
// their bearer tokens by the client credentials grant (oauth2 settings):
// it stands in for an authorization server's token endpoint, checks the
// client's id and secret (HTTP Basic, as clientcreds sends them) and
// counts the tokens it issues: tok-1, tok-2, …
package cctest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// SecretEnv is the environment variable Start sets to the client secret.
const SecretEnv = "PACTUM_CCTEST_SECRET"

// IdP is a running token endpoint.
type IdP struct {
	// URL is the token endpoint.
	URL    string
	issued atomic.Int32
}

// Start starts a token endpoint for client id "pactum" with a secret it
// puts in SecretEnv (t.Setenv: the test cannot be parallel), stopped when
// the test ends.
func Start(t *testing.T) *IdP {
	t.Helper()
	t.Setenv(SecretEnv, "cc-s3cret")
	p := &IdP{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "pactum" || secret != "cc-s3cret" || r.PostFormValue("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		n := p.issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":3600}`, n)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// YAML is the oauth2 settings of a runtime that uses p, as one YAML line.
func (p *IdP) YAML() string {
	return fmt.Sprintf("oauth2: {token_url: %q, client_id: pactum, client_secret_env: %s}\n", p.URL, SecretEnv)
}

// Issued is how many tokens p has issued.
func (p *IdP) Issued() int { return int(p.issued.Load()) }
