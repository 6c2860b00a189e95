package oidctest

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Client is a client credentials client of a NodeProvider.
type Client struct {
	ID, Secret string
	// Scope is the space-separated scopes it may ask for (pactum:ACTION).
	Scope string
}

// NodeProvider is oidc-provider from npm (the version internal/oidctest/js
// pins), run by Node.js on loopback: a real OpenID provider issuing client
// credentials access tokens as JWTs (aud Audience, the granted scopes in
// scope, sub and client_id the client's id).
type NodeProvider struct {
	// Issuer is the provider's issuer URL.
	Issuer string

	t       testing.TB
	port    int
	clients []Client
	dir     string
	keys    []jose.JSONWebKey // private; the first signs
	cmd     *exec.Cmd
}

// StartNode starts oidc-provider with clients, stopped by t.Cleanup. It
// skips t when Node.js or the npm packages are missing (run npm ci in
// internal/oidctest/js), unless PACTUM_REQUIRE_INTEROP=1 makes that a
// failure.
func StartNode(t testing.TB, clients ...Client) *NodeProvider {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	js := filepath.Join(filepath.Dir(file), "js")
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(js, "node_modules", "oidc-provider", "package.json"))
	if nodeErr != nil || modErr != nil {
		msg := "oidc-provider is not installed (cd internal/oidctest/js && npm ci)"
		if nodeErr != nil {
			msg = "node is not on PATH"
		}
		if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := &NodeProvider{Issuer: fmt.Sprintf("http://127.0.0.1:%d", port), t: t, port: port, clients: clients, dir: t.TempDir()}
	p.addKey()
	p.start(js)
	t.Cleanup(p.stop)
	return p
}

// addKey makes a new RSA key the signing key (first in the JWKS).
func (p *NodeProvider) addKey() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		p.t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: k, KeyID: fmt.Sprintf("node-key-%d", len(p.keys)+1), Algorithm: "RS256", Use: "sig"}
	p.keys = append([]jose.JSONWebKey{jwk}, p.keys...)
}

// start runs the provider and waits until it listens.
func (p *NodeProvider) start(js string) {
	t := p.t
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: p.keys})
	if err != nil {
		t.Fatal(err)
	}
	jwksFile := filepath.Join(p.dir, "jwks.json")
	if err := os.WriteFile(jwksFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var cs []map[string]string
	for _, c := range p.clients {
		cs = append(cs, map[string]string{"client_id": c.ID, "client_secret": c.Secret, "scope": c.Scope})
	}
	clients, _ := json.Marshal(cs)
	cmd := exec.Command("node", "provider.mjs")
	cmd.Dir = js
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", p.port), "JWKS_FILE="+jwksFile, "CLIENTS="+string(clients), "AUDIENCE="+Audience)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd = cmd
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "listening" {
				ready <- true
				break
			}
		}
		ready <- false
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("oidc-provider exited before listening: %s", stderr.String())
		}
	case <-time.After(60 * time.Second):
		p.stop()
		t.Fatalf("oidc-provider did not start: %s", stderr.String())
	}
}

// stop ends the provider process (safe to call twice).
func (p *NodeProvider) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Rotate restarts the provider on the same issuer with a new signing key,
// publishing the old ones beside it: tokens issued from now on name a
// kid a verifier has not seen.
func (p *NodeProvider) Rotate() {
	p.t.Helper()
	js := p.cmd.Dir
	p.stop()
	p.addKey()
	p.start(js)
}

// Token asks the provider for a client credentials access token of
// client id with scope ("" for none).
func (p *NodeProvider) Token(ctx context.Context, id, scope string) (string, error) {
	var secret string
	for _, c := range p.clients {
		if c.ID == id {
			secret = c.Secret
		}
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %s: %s", resp.Status, body)
	}
	return tok.AccessToken, nil
}
