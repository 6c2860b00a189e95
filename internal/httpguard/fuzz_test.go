package httpguard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/httpguard"
)

// FuzzGuard sends arbitrary Host, Origin and Content-Type headers through
// a guard on a loopback connection and checks the rule against a plain
// oracle: what passes names a loopback Host, comes from its own origin (or
// sends none), and declares a JSON body; what is refused gets 403 or 415.
func FuzzGuard(f *testing.F) {
	for _, s := range [][3]string{
		{"127.0.0.1:9000", "", "application/json"},
		{"localhost", "http://localhost", "application/a2a+json; charset=utf-8"},
		{"[::1]:80", "null", "text/plain"},
		{"evil.example", "", "application/json"},
		{"127.0.0.1:9000", "http://evil.example", "application/json"},
		{"LOCALHOST:1", "http://LocalHost:1", ""},
		{"127.0.0.1.evil.example", "", "application/x-www-form-urlencoded"},
		{"[::ffff:127.0.0.1]", "file://", "application/+json"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000@evil.example", "application/json"},
		{"127.0.0.1:80", "http://127.0.0.1", "multipart/form-data; boundary=x"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	g, err := httpguard.New(httpguard.Options{})
	if err != nil {
		f.Fatal(err)
	}
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000}
	f.Fuzz(func(t *testing.T, host, origin, contentType string) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader("{}"))
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusForbidden, http.StatusUnsupportedMediaType:
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("refusal %d without a JSON body", rec.Code)
			}
			return
		case http.StatusOK:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		hostName, hostPort := splitOracle(host)
		if !loopbackName(hostName) {
			t.Fatalf("Host %q passed", host)
		}
		if origin != "" {
			u, err := url.Parse(origin)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Hostname(), hostName) {
				t.Fatalf("Origin %q passed with Host %q", origin, host)
			}
			port, def := u.Port(), map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
			if port == "" {
				port = def
			}
			if (hostPort != "" && port != hostPort) || (hostPort == "" && port != def) {
				t.Fatalf("Origin %q passed with Host %q (other port)", origin, host)
			}
		}
		ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
		if ct != "application/json" && !strings.HasSuffix(ct, "+json") {
			t.Fatalf("Content-Type %q passed", contentType)
		}
	})
}

// splitOracle splits a Host header into a lower-case name and a port.
func splitOracle(hp string) (string, string) {
	if h, p, err := net.SplitHostPort(hp); err == nil {
		return strings.ToLower(h), p
	}
	return strings.ToLower(strings.Trim(hp, "[]")), ""
}

func loopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}
