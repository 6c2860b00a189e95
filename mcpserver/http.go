package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSessionTimeout is how long an idle stateful session is kept when
// HTTPOptions.SessionTimeout is zero.
const DefaultSessionTimeout = 30 * time.Minute

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// AllowedHosts are the host names (optionally host:port) besides
	// loopback ones that requests may name in their Host header and, when
	// they send one, in their Origin header. A deployment reached under a
	// public name lists it here, e.g. the host of its base URL. An entry
	// without a port allows every port. Default: none, only loopback
	// (localhost, 127.0.0.0/8, ::1).
	AllowedHosts []string
	// Stateful keeps a session per client in memory (Mcp-Session-Id), as
	// protocol versions up to 2025-11-25 describe. Default false: every
	// request stands alone, which any node of a cluster can answer and
	// which protocol version 2026-07-28 requires. Tool calls, including
	// progress notifications of a waiting submit, work either way.
	Stateful bool
	// SessionTimeout closes stateful sessions idle this long (default
	// DefaultSessionTimeout; negative: never).
	SessionTimeout time.Duration
	// MaxBodyBytes bounds request bodies (default the SDK's 4 MiB).
	MaxBodyBytes int64
}

// Handler returns the streamable HTTP handler of the server, to be mounted
// at /mcp. It refuses with 403 Forbidden, before the SDK sees it, a request
// whose Host is not a loopback name or address nor one of
// opts.AllowedHosts, and one that carries an Origin header whose host is
// neither: a web page cannot reach a local server through DNS rebinding or
// a cross-site request. It also answers malformed JSON-RPC messages itself
// with JSON-RPC 2.0 error codes (see rpcGuard).
func (s *Server) Handler(opts HTTPOptions) http.Handler {
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           !opts.Stateful,
		SessionTimeout:      timeout,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		Logger:              s.log,
		// A client that hangs up ends its waiting call (the task runs on).
		PropagateRequestCancellation: true,
		// hostGuard replaces the SDK's own DNS-rebinding protection, which
		// checks the Host header only on a loopback listener, compares
		// "localhost" case-sensitively, ignores Origin and has no
		// allow-list (a deployment behind a reverse proxy on loopback could
		// not be reached by its public name).
		DisableLocalhostProtection: true,
	})
	limit := opts.MaxBodyBytes
	if limit == 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	return hostGuard(newHostList(opts.AllowedHosts), rpcGuard(limit, h))
}

// hostList is a parsed HTTPOptions.AllowedHosts.
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

// allows reports whether hostport (a Host header or the host of an Origin)
// is loopback or allowed.
func (l hostList) allows(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), ""
	}
	if host == "" {
		return false
	}
	if isLoopback(host) || l.anyPort[host] {
		return true
	}
	return port != "" && l.exact[net.JoinHostPort(host, port)]
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// hostGuard refuses requests whose Host or Origin is neither loopback nor
// allowed (DNS-rebinding and cross-site protection).
func hostGuard(allowed hostList, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed.allows(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback host and not among the allowed hosts (DNS-rebinding protection)", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !allowed.allows(u.Host) {
				http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not a loopback origin and not among the allowed hosts", origin), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
