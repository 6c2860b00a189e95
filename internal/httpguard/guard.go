// Package httpguard is the HTTP edge of a pactum node: one middleware in
// front of every route of the listener that refuses requests a web page
// could forge (a foreign Host header after DNS rebinding, a cross-origin
// request, a JSON endpoint driven by a form or text/plain POST), answers
// CORS for the configured origins, and bounds how long a request body may
// take to arrive and a response to be written; and a listener that caps
// concurrent connections.
//
// The rule, applied in this order:
//
//   - Host. A request that arrived on a loopback address must name a
//     loopback host (localhost, 127.0.0.0/8, ::1, any port), the host of the
//     base URL or an allowed host. A request on any other address is
//     checked only when allowed hosts are configured; it may then also name
//     an IP address (DNS rebinding needs a name, and probes and scrapers
//     address a node by its IP).
//   - Origin. A request that carries an Origin header must come from the
//     same origin (its host and port are those of the Host header, or it is
//     the base URL's origin) or from an origin on the CORS allow-list.
//     Public resources (agent cards) skip this check: any page may read
//     them.
//   - Content type. A POST, PUT or PATCH with a body needs a JSON media
//     type (application/json, or any type ending in +json such as
//     application/a2a+json), so that a browser cannot send it without a
//     CORS preflight.
//
// Refusals are 403 (Host, Origin) and 415 (content type) with a JSON body
// that says why.
package httpguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Refusal reasons, as passed to Options.Refused.
const (
	ReasonHost        = "host"
	ReasonOrigin      = "origin"
	ReasonContentType = "content_type"
)

// corsMethods and corsHeaders are what a preflight allows.
const (
	corsMethods       = "GET, POST, DELETE, OPTIONS"
	corsHeaders       = "Authorization, Content-Type, Accept, A2A-Version, A2A-Extensions, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
	corsExposeHeaders = "A2A-Version, A2A-Extensions, Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
	corsMaxAge        = "600"
)

// Options configure a Guard. The zero value checks Host on loopback
// connections, refuses every cross-origin request, checks content types and
// sets no deadlines.
type Options struct {
	// AllowedHosts are host names or addresses, optionally with a port
	// ("agents.example.com", "pactum.internal:8443", "[2001:db8::1]"),
	// that requests may name in their Host header besides loopback names
	// and the host of BaseURL. An entry without a port allows every port.
	// When not empty, the Host header is checked on every connection, not
	// only on loopback ones.
	AllowedHosts []string
	// BaseURL is the public URL of the server (optional). Its host is
	// always an allowed Host, and its origin counts as the same origin
	// (a page served from it behind a proxy that rewrites Host).
	BaseURL string
	// AllowedOrigins is the CORS allow-list: origins such as
	// "https://app.example.com" or "http://localhost:5173" (scheme, host
	// and port if not the scheme's default), or "*" for any origin. Such
	// origins may call every route and get CORS headers.
	AllowedOrigins []string
	// Public reports whether a request is for a public resource that any
	// origin may read (agent cards, which answer CORS themselves): it skips
	// the Origin and content-type checks, not the Host check. Nil: none.
	Public func(*http.Request) bool
	// ReadTimeout bounds how long a request body may take to arrive,
	// counted from when the handler starts; zero: unbounded. Once the body
	// has been read the connection has no read deadline, so a long
	// response stream is not cut.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, counted from its first
	// write; a streamed response (text/event-stream) is bounded per write
	// instead, so a stream may last as long as its client reads it. Zero:
	// unbounded.
	WriteTimeout time.Duration
	// Refused, when set, is told of each refused request (ReasonHost,
	// ReasonOrigin or ReasonContentType), for metrics.
	Refused func(reason string)
}

// Guard is the middleware Options describe.
type Guard struct {
	opts      Options
	hosts     hostList
	checkAll  bool   // allowed hosts configured: check Host on every connection
	baseOrig  string // normalized origin of BaseURL, or ""
	anyOrigin bool
	origins   map[string]bool // normalized allowed origins
}

// New checks opts and returns a Guard. Errors name the offending field.
func New(opts Options) (*Guard, error) {
	g := &Guard{opts: opts, origins: map[string]bool{}}
	var hosts []string
	for i, h := range opts.AllowedHosts {
		switch h = strings.TrimSpace(h); {
		case h == "":
			continue
		case strings.ContainsAny(h, "/ "):
			return nil, fmt.Errorf("httpguard: AllowedHosts[%d] %q is not a host name or address", i, opts.AllowedHosts[i])
		}
		hosts = append(hosts, h)
	}
	g.checkAll = len(hosts) > 0
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("httpguard: BaseURL %q is not an absolute URL", opts.BaseURL)
		}
		hosts = append(hosts, u.Hostname())
		g.baseOrig, _ = normalizeOrigin(u.Scheme + "://" + u.Host)
	}
	g.hosts = newHostList(hosts)
	for i, o := range opts.AllowedOrigins {
		if o == "*" {
			g.anyOrigin = true
			continue
		}
		n, ok := normalizeOrigin(o)
		if !ok {
			return nil, fmt.Errorf("httpguard: AllowedOrigins[%d] %q is not an origin such as https://app.example.com", i, o)
		}
		g.origins[n] = true
	}
	if opts.ReadTimeout < 0 || opts.WriteTimeout < 0 {
		return nil, errors.New("httpguard: ReadTimeout and WriteTimeout must not be negative")
	}
	return g, nil
}

// guardedKey marks a request that a Guard has checked, so that a guard
// mounted inside another (mcpserver's, below a node's) lets it pass: the
// outer one, which sees every route, decides.
type guardedKey struct{}

// Handler returns next behind the guard.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(guardedKey{}) != nil {
			next.ServeHTTP(w, r)
			return
		}
		if !g.hostAllowed(r) {
			g.refuse(w, http.StatusForbidden, ReasonHost, fmt.Sprintf(
				"Forbidden: Host %q is not a loopback host, the base URL's host or an allowed host (DNS-rebinding protection; see http.allowed_hosts)", r.Host))
			return
		}
		public := g.opts.Public != nil && g.opts.Public(r)
		origin := r.Header.Get("Origin")
		cors := false
		if origin != "" && !public {
			same, listed := g.originAllowed(r, origin)
			if !same && !listed {
				g.refuse(w, http.StatusForbidden, ReasonOrigin, fmt.Sprintf(
					"Forbidden: cross-origin request from %q; allow the origin in http.cors_origins to call this server from a web page", origin))
				return
			}
			cors = listed && !same
		}
		if cors {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsMethods)
				h.Set("Access-Control-Allow-Headers", corsHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if !public && hasBody(r) && !isJSON(r.Header.Get("Content-Type")) {
			ct := r.Header.Get("Content-Type")
			if ct == "" {
				ct = "none"
			}
			g.refuse(w, http.StatusUnsupportedMediaType, ReasonContentType, fmt.Sprintf(
				"Unsupported Media Type: a %s request needs Content-Type: application/json (or a +json type), got %s", r.Method, ct))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), guardedKey{}, true))
		g.serveWithDeadlines(w, r, next)
	})
}

// hostAllowed applies the Host rule.
func (g *Guard) hostAllowed(r *http.Request) bool {
	loopback := false
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		loopback = isLoopbackAddr(a)
	}
	if !loopback && !g.checkAll {
		return true
	}
	if g.hosts.allows(r.Host) {
		return true
	}
	if loopback {
		return false
	}
	ip, err := netip.ParseAddr(hostOnly(r.Host))
	return err == nil && ip.IsValid()
}

// originAllowed reports whether origin is the request's own (same) or on
// the allow-list (listed).
func (g *Guard) originAllowed(r *http.Request, origin string) (same, listed bool) {
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false, false
	}
	listed = g.anyOrigin || g.origins[n]
	if n == g.baseOrig {
		return true, listed
	}
	u, err := url.Parse(n)
	if err != nil {
		return false, listed
	}
	reqHost, reqPort := splitHost(strings.ToLower(r.Host))
	if reqHost == "" || reqHost != strings.Trim(u.Hostname(), "[]") {
		return false, listed
	}
	if reqPort == "" {
		// A Host without a port names the default port of a scheme that
		// a proxy in front may have changed (https to http): an origin on
		// its scheme's default port matches.
		return u.Port() == "", listed
	}
	return reqPort == originPort(u), listed
}

// refuse writes a refusal and reports it.
func (g *Guard) refuse(w http.ResponseWriter, status int, reason, msg string) {
	if g.opts.Refused != nil {
		g.opts.Refused(reason)
	}
	writeError(w, status, msg)
}

// writeError writes a JSON error body in the shape of A2A's HTTP+JSON
// errors ({"error": {"code", "status", "message"}}).
func writeError(w http.ResponseWriter, status int, msg string) {
	grpc := map[int]string{
		http.StatusForbidden:            "PERMISSION_DENIED",
		http.StatusUnsupportedMediaType: "INVALID_ARGUMENT",
		http.StatusRequestTimeout:       "DEADLINE_EXCEEDED",
	}[status]
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "status": grpc, "message": msg}})
}

// hasBody reports whether r is a POST, PUT or PATCH that carries a body. A
// bodiless POST (a2a-go's HTTP+JSON CancelTask) needs no content type.
func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return r.ContentLength != 0
	}
	return false
}

// isJSON reports whether a Content-Type header names a JSON media type:
// application/json or any type with a +json suffix, parameters allowed.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ != "" && (mt == "application/json" || strings.HasSuffix(sub, "+json"))
}

// normalizeOrigin returns an http(s) origin in its serialized form:
// lower-case scheme and host, the port only if not the scheme's default,
// no path. ok is false for anything else ("null", a URL with a path).
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		(u.Path != "" && u.Path != "/") || strings.HasSuffix(s, "/") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == defaultPort(scheme) {
		port = ""
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, true
	}
	return scheme + "://" + host, true
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// originPort is the port of a normalized origin URL, defaulted.
func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return defaultPort(u.Scheme)
}

// hostList is a parsed list of allowed hosts.
type hostList struct {
	anyPort map[string]bool // lower-case host names and addresses
	exact   map[string]bool // lower-case host:port
}

func newHostList(hosts []string) hostList {
	l := hostList{anyPort: map[string]bool{}, exact: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if host, port, err := net.SplitHostPort(h); err == nil && port != "" {
			l.exact[net.JoinHostPort(strings.Trim(host, "[]"), port)] = true
			continue
		}
		l.anyPort[strings.Trim(h, "[]")] = true
	}
	return l
}

// allows reports whether hostport (a Host header) is loopback or allowed.
func (l hostList) allows(hostport string) bool {
	host, port := splitHost(strings.ToLower(hostport))
	if host == "" {
		return false
	}
	if isLoopbackName(host) || l.anyPort[host] {
		return true
	}
	return port != "" && l.exact[net.JoinHostPort(host, port)]
}

// splitHost splits a Host header into host (without brackets) and port
// ("" when absent).
func splitHost(hostport string) (host, port string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.Trim(hostport, "[]"), ""
	}
	return host, port
}

// hostOnly is the host of a Host header, without port or brackets.
func hostOnly(hostport string) string {
	h, _ := splitHost(hostport)
	return h
}

// isLoopbackName reports whether host is localhost or a loopback address.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// isLoopbackAddr reports whether a connection's local address is loopback.
func isLoopbackAddr(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
