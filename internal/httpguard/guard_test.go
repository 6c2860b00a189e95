package httpguard_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/httpguard"
)

var (
	loopbackAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000}
	publicAddr   = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 9000}
)

// request is one request to the guard and the status it should get.
type request struct {
	name        string
	local       net.Addr // the connection's local address; nil: none known
	method      string
	path        string
	host        string
	origin      string
	contentType string
	body        string
	want        int
}

// serve sends rq through a guard with opts in front of a handler that
// answers 200 and returns the recorder.
func serve(t *testing.T, g *httpguard.Guard, rq request) *httptest.ResponseRecorder {
	t.Helper()
	method := rq.method
	if method == "" {
		method = http.MethodGet
	}
	path := rq.path
	if path == "" {
		path = "/"
	}
	req := httptest.NewRequest(method, path, strings.NewReader(rq.body))
	if rq.body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if rq.local != nil {
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, rq.local))
	}
	req.Host = rq.host
	if rq.origin != "" {
		req.Header.Set("Origin", rq.origin)
	}
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	rec := httptest.NewRecorder()
	g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})).ServeHTTP(rec, req)
	return rec
}

func newGuard(t *testing.T, opts httpguard.Options) *httpguard.Guard {
	t.Helper()
	opts.Public = func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/.well-known/agent-card.json") }
	g, err := httpguard.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func run(t *testing.T, g *httpguard.Guard, cases []request) {
	t.Helper()
	for _, rq := range cases {
		rec := serve(t, g, rq)
		if rec.Code != rq.want {
			t.Errorf("%s: status %d, want %d (%s)", rq.name, rec.Code, rq.want, strings.TrimSpace(rec.Body.String()))
			continue
		}
		if rec.Code == http.StatusForbidden || rec.Code == http.StatusUnsupportedMediaType {
			var body struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != rec.Code || body.Error.Message == "" {
				t.Errorf("%s: refusal body %q is not a JSON error that says why", rq.name, rec.Body.String())
			}
		}
	}
}

func TestHostRule(t *testing.T) {
	t.Parallel()
	g := newGuard(t, httpguard.Options{BaseURL: "https://agents.example.com"})
	run(t, g, []request{
		{name: "loopback, 127.0.0.1", local: loopbackAddr, host: "127.0.0.1:9000", want: 200},
		{name: "loopback, localhost", local: loopbackAddr, host: "LocalHost:1234", want: 200},
		{name: "loopback, [::1]", local: loopbackAddr, host: "[::1]:9000", want: 200},
		{name: "loopback, base URL host", local: loopbackAddr, host: "agents.example.com", want: 200},
		{name: "loopback, foreign", local: loopbackAddr, host: "evil.example", want: 403},
		{name: "loopback, foreign with port", local: loopbackAddr, host: "evil.example:9000", want: 403},
		{name: "loopback, IP", local: loopbackAddr, host: "10.0.0.1:9000", want: 403},
		{name: "loopback, empty", local: loopbackAddr, host: "", want: 403},
		{name: "loopback, card with foreign Host", local: loopbackAddr, host: "evil.example", path: "/.well-known/agent-card.json", want: 403},
		{name: "IPv6 loopback connection", local: &net.TCPAddr{IP: net.IPv6loopback, Port: 1}, host: "evil.example", want: 403},
		// Not loopback and no allowed hosts: the Host is not checked.
		{name: "public, foreign", local: publicAddr, host: "evil.example", want: 200},
		{name: "unknown connection, foreign", host: "evil.example", want: 200},
	})
	g = newGuard(t, httpguard.Options{BaseURL: "https://agents.example.com", AllowedHosts: []string{"pactum.internal", "ops.example.com:8443"}})
	run(t, g, []request{
		{name: "allowed", local: publicAddr, host: "pactum.internal:9000", want: 200},
		{name: "allowed with port", local: publicAddr, host: "ops.example.com:8443", want: 200},
		{name: "allowed host, other port", local: publicAddr, host: "ops.example.com:9000", want: 403},
		{name: "base URL host", local: publicAddr, host: "agents.example.com", want: 200},
		{name: "IP address", local: publicAddr, host: "192.0.2.10:9000", want: 200},
		{name: "IPv6 address", local: publicAddr, host: "[2001:db8::1]:9000", want: 200},
		{name: "foreign", local: publicAddr, host: "evil.example", want: 403},
		{name: "foreign, unknown connection", host: "evil.example", want: 403},
		{name: "loopback connection, allowed", local: loopbackAddr, host: "pactum.internal", want: 200},
		{name: "loopback connection, IP", local: loopbackAddr, host: "192.0.2.10", want: 403},
	})
}

func TestOriginRule(t *testing.T) {
	t.Parallel()
	g := newGuard(t, httpguard.Options{BaseURL: "https://agents.example.com", AllowedOrigins: []string{"http://localhost:5173", "https://App.Example.com"}})
	const host = "127.0.0.1:9000"
	run(t, g, []request{
		{name: "no Origin", local: loopbackAddr, host: host, want: 200},
		{name: "same origin", local: loopbackAddr, host: host, origin: "http://127.0.0.1:9000", want: 200},
		{name: "same origin, https", local: loopbackAddr, host: host, origin: "https://127.0.0.1:9000", want: 200},
		{name: "Host without port", local: loopbackAddr, host: "localhost", origin: "http://localhost", want: 200},
		{name: "Host without port, https origin (TLS proxy)", local: loopbackAddr, host: "localhost", origin: "https://localhost", want: 200},
		{name: "Host without port, origin on another port", local: loopbackAddr, host: "localhost", origin: "http://localhost:3000", want: 403},
		{name: "base URL origin", local: loopbackAddr, host: host, origin: "https://agents.example.com", want: 200},
		{name: "base URL host, default port", local: loopbackAddr, host: "agents.example.com:443", origin: "https://agents.example.com", want: 200},
		{name: "listed", local: loopbackAddr, host: host, origin: "http://localhost:5173", want: 200},
		{name: "listed, case", local: loopbackAddr, host: host, origin: "https://app.example.com:443", want: 200},
		{name: "other port", local: loopbackAddr, host: host, origin: "http://127.0.0.1:9001", want: 403},
		{name: "loopback page", local: loopbackAddr, host: host, origin: "http://localhost:3000", want: 403},
		{name: "foreign", local: loopbackAddr, host: host, origin: "http://evil.example", want: 403},
		{name: "foreign, public connection", local: publicAddr, host: "agents.example.com", origin: "https://evil.example", want: 403},
		{name: "null", local: loopbackAddr, host: host, origin: "null", want: 403},
		{name: "garbage", local: loopbackAddr, host: host, origin: "not a url", want: 403},
		{name: "userinfo trick", local: loopbackAddr, host: host, origin: "http://127.0.0.1:9000@evil.example", want: 403},
		{name: "card, foreign origin", local: loopbackAddr, host: host, origin: "http://evil.example", path: "/agents/x/.well-known/agent-card.json", want: 200},
		{name: "preflight, foreign", local: loopbackAddr, host: host, origin: "http://evil.example", method: http.MethodOptions, want: 403},
	})
	g = newGuard(t, httpguard.Options{AllowedOrigins: []string{"*"}})
	run(t, g, []request{
		{name: "any origin", local: loopbackAddr, host: host, origin: "http://evil.example", want: 200},
		{name: "but not null", local: loopbackAddr, host: host, origin: "null", want: 403},
		{name: "Host still checked", local: loopbackAddr, host: "evil.example", origin: "http://evil.example", want: 403},
	})
}

func TestCORSHeaders(t *testing.T) {
	t.Parallel()
	g := newGuard(t, httpguard.Options{AllowedOrigins: []string{"http://localhost:5173"}})
	rec := serve(t, g, request{local: loopbackAddr, host: "127.0.0.1:9000", origin: "http://localhost:5173", method: http.MethodPost, contentType: "application/json", body: "{}"})
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "http://localhost:5173" || !strings.Contains(rec.Header().Get("Vary"), "Origin") {
		t.Errorf("allowed origin: %d, headers %v", rec.Code, rec.Header())
	}
	if got := rec.Header().Get("Access-Control-Expose-Headers"); !strings.Contains(got, "Mcp-Session-Id") {
		t.Errorf("Access-Control-Expose-Headers = %q", got)
	}
	req := request{local: loopbackAddr, host: "127.0.0.1:9000", origin: "http://localhost:5173", method: http.MethodOptions}
	pre := httptest.NewRequest(http.MethodOptions, "/agents/x/", nil)
	pre = pre.WithContext(context.WithValue(pre.Context(), http.LocalAddrContextKey, req.local))
	pre.Host, pre.Header["Origin"] = req.host, []string{req.origin}
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type, a2a-version, authorization")
	rec = httptest.NewRecorder()
	reached := false
	g.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })).ServeHTTP(rec, pre)
	if rec.Code != http.StatusNoContent || reached {
		t.Fatalf("preflight: %d (handler reached: %v)", rec.Code, reached)
	}
	allowHeaders := strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "a2a-version", "a2a-extensions", "mcp-session-id", "mcp-protocol-version", "last-event-id"} {
		if !strings.Contains(allowHeaders, h) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowHeaders, h)
		}
	}
	if m := rec.Header().Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") || !strings.Contains(m, "DELETE") {
		t.Errorf("Access-Control-Allow-Methods = %q", m)
	}
	// Same-origin requests need no CORS headers.
	rec = serve(t, g, request{local: loopbackAddr, host: "127.0.0.1:9000", origin: "http://127.0.0.1:9000"})
	if v := rec.Header().Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("same-origin request got Access-Control-Allow-Origin %q", v)
	}
}

func TestContentTypeRule(t *testing.T) {
	t.Parallel()
	g := newGuard(t, httpguard.Options{})
	const host = "127.0.0.1:9000"
	run(t, g, []request{
		{name: "JSON", local: loopbackAddr, host: host, method: "POST", contentType: "application/json", body: "{}", want: 200},
		{name: "JSON with charset", local: loopbackAddr, host: host, method: "POST", contentType: "application/json; charset=utf-8", body: "{}", want: 200},
		{name: "a2a+json", local: loopbackAddr, host: host, method: "POST", contentType: "application/a2a+json", body: "{}", want: 200},
		{name: "text/plain", local: loopbackAddr, host: host, method: "POST", contentType: "text/plain", body: "{}", want: 415},
		{name: "form", local: loopbackAddr, host: host, method: "POST", contentType: "application/x-www-form-urlencoded", body: "a=b", want: 415},
		{name: "none", local: loopbackAddr, host: host, method: "POST", body: "{}", want: 415},
		{name: "PUT text", local: loopbackAddr, host: host, method: "PUT", contentType: "text/plain", body: "{}", want: 415},
		{name: "PATCH text", local: loopbackAddr, host: host, method: "PATCH", contentType: "text/plain", body: "{}", want: 415},
		{name: "bodiless POST", local: loopbackAddr, host: host, method: "POST", want: 200},
		{name: "GET", local: loopbackAddr, host: host, want: 200},
		{name: "DELETE with body", local: loopbackAddr, host: host, method: "DELETE", contentType: "text/plain", body: "x", want: 200},
		{name: "public", local: loopbackAddr, host: host, method: "POST", contentType: "text/plain", body: "x", path: "/.well-known/agent-card.json", want: 200},
	})
}

// TestNestedGuards: a guard inside another lets what the outer one passed
// through, so a mounted handler's own guard (mcpserver's) defers to the
// node's.
func TestNestedGuards(t *testing.T) {
	t.Parallel()
	outer := newGuard(t, httpguard.Options{AllowedHosts: []string{"pactum.internal"}})
	inner := newGuard(t, httpguard.Options{})
	h := outer.Handler(inner.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	req := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, loopbackAddr))
	req.Host = "pactum.internal"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("nested guards: %d %s", rec.Code, rec.Body)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	for _, opts := range []httpguard.Options{
		{AllowedHosts: []string{"https://x.example"}},
		{AllowedHosts: []string{"a b"}},
		{AllowedOrigins: []string{"app.example.com"}},
		{AllowedOrigins: []string{"https://app.example.com/"}},
		{AllowedOrigins: []string{"null"}},
		{BaseURL: "/relative"},
		{ReadTimeout: -1},
	} {
		if _, err := httpguard.New(opts); err == nil {
			t.Errorf("New(%+v) accepted", opts)
		}
	}
	if _, err := httpguard.New(httpguard.Options{AllowedHosts: []string{" [2001:db8::1] ", ""}}); err != nil {
		t.Errorf("New with padded and empty hosts: %v", err)
	}
}

func TestRefusedReasons(t *testing.T) {
	t.Parallel()
	var got []string
	g, err := httpguard.New(httpguard.Options{Refused: func(reason string) { got = append(got, reason) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, rq := range []request{
		{local: loopbackAddr, host: "evil.example"},
		{local: loopbackAddr, host: "localhost", origin: "http://evil.example"},
		{local: loopbackAddr, host: "localhost", method: "POST", contentType: "text/plain", body: "x"},
	} {
		serve(t, g, rq)
	}
	if want := []string{httpguard.ReasonHost, httpguard.ReasonOrigin, httpguard.ReasonContentType}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Refused got %v, want %v", got, want)
	}
}
