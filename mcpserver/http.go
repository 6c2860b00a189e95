package mcpserver

import (
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/internal/httpguard"
)

// DefaultSessionTimeout is how long an idle stateful session is kept when
// HTTPOptions.SessionTimeout is zero.
const DefaultSessionTimeout = 30 * time.Minute

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// AllowedHosts are the host names (optionally host:port) besides
	// loopback ones that requests may name in their Host header. A
	// deployment reached under a public name lists it here, e.g. the host
	// of its base URL. An entry without a port allows every port. Default:
	// none, only loopback (localhost, 127.0.0.0/8, ::1). A request that
	// arrives on a loopback address is always checked; one on another
	// address only when AllowedHosts is not empty.
	AllowedHosts []string
	// AllowedOrigins are the origins ("https://app.example.com",
	// "http://localhost:5173", or "*" for any) whose web pages may call
	// the handler; they get CORS headers. A request whose Origin header is
	// neither its own origin nor listed is refused. Default: none.
	AllowedOrigins []string
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
// opts.AllowedHosts, and one that carries an Origin header that is neither
// its own origin nor one of opts.AllowedOrigins: a web page cannot reach a
// local server through DNS rebinding or a cross-site request. The rule is
// that of a pactum node's routes (docs/a2a.md, "Host, Origin and content
// type"); mounted in a node, whose guard has checked the request already,
// the handler leaves the decision to it. It also answers malformed JSON-RPC
// messages itself with JSON-RPC 2.0 error codes (see rpcGuard).
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
		Logger:              sdkLogger(s.log),
		// A client that hangs up ends its waiting call (the task runs on).
		PropagateRequestCancellation: true,
		// The guard replaces the SDK's own DNS-rebinding protection, which
		// compares "localhost" case-sensitively, ignores Origin and has no
		// allow-list (a deployment behind a reverse proxy on loopback could
		// not be reached by its public name).
		DisableLocalhostProtection: true,
	})
	limit := opts.MaxBodyBytes
	if limit == 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	guard, err := httpguard.New(httpguard.Options{AllowedHosts: opts.AllowedHosts, AllowedOrigins: opts.AllowedOrigins})
	if err != nil {
		// An entry that is no host name or origin matches no request:
		// refuse what it could not have allowed rather than fail open.
		s.log.Error("mcp: HTTPOptions ignored; only loopback hosts and same-origin requests are allowed", "err", err)
		guard, _ = httpguard.New(httpguard.Options{})
	}
	return guard.Handler(rpcGuard(limit, h))
}
