package a2aserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pactum/pactum/a2aserver/internal/wire"
	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/task"
)

// DefaultMaxBodyBytes is the request body limit when Options.MaxBodyBytes
// is zero.
const DefaultMaxBodyBytes = 4 << 20

// DefaultKeepAlive is the interval of SSE keep-alive comments when
// Options.KeepAlive is zero.
const DefaultKeepAlive = 15 * time.Second

// AgentInfo describes one agent for its card. Name must be registered with
// the Coordinator; everything else has a default.
type AgentInfo struct {
	// Name is the agent's name as registered with the Coordinator; it is
	// also its path segment (/agents/{name}/).
	Name string
	// Description defaults to "pactum agent {name} (action {action})".
	Description string
	// Version is the agent's own version (default "0.0.0").
	Version string
	// Skills default to one skill named after the agent's action.
	Skills []a2a.AgentSkill
	// InputModes and OutputModes are media types (default text/plain).
	InputModes  []string
	OutputModes []string
	// Streaming says the agent emits artifact chunks while it runs; it is
	// published in the capability profile. (Every agent supports the
	// streaming operations: status updates stream regardless.)
	Streaming bool
	// Contracts, when set, are the contracts the agent's answers are
	// checked against: its card declares them in the contracts extension
	// (ContractsURI), each served at /agents/NAME/contracts/DIGEST.
	Contracts *ContractsInfo
}

// Options configure a Server.
type Options struct {
	// Coordinator is the orchestration core (required).
	Coordinator *task.Coordinator
	// Agents are the agents to serve (default: every agent registered with
	// the Coordinator, with default card details).
	Agents []AgentInfo
	// DefaultAgent is also served at the root: "/", "/.well-known/…"
	// (default: the first of Agents).
	DefaultAgent string
	// BaseURL is the public absolute URL of the server, e.g.
	// "https://agents.example.com"; cards advertise interfaces under it.
	// Default: the scheme and Host of each card request.
	BaseURL string
	// GRPCAddress, when set, is where gRPC clients reach the agents' A2A
	// gRPC binding (served by NewGRPCServer): host:port, as a gRPC client
	// dials it. Each card then lists a GRPC interface at that address
	// whose tenant is the agent's name. Default "": no gRPC interface.
	GRPCAddress string
	// MaxBodyBytes bounds request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// AllowPrivatePush lets push notifications reach loopback, private and
	// link-local addresses (default false).
	AllowPrivatePush bool
	// Push tunes webhook delivery; its AllowPrivate and Logger are taken
	// from AllowPrivatePush and Logger.
	Push push.Options
	// Authenticate, when set, turns on bearer authentication: every request
	// but the agent cards needs an "Authorization: Bearer TOKEN" header whose
	// token Authenticate maps to an identity (an error wrapping
	// bearer.ErrInvalidToken refuses it; a bearer.InvalidTokenError says
	// which check failed). The call then runs as that identity
	// (task.WithIdentity): it submits under its actor,
	// lists and addresses only its own tasks, and naming another actor is
	// forbidden. A request without a valid token gets HTTP 401 with a
	// WWW-Authenticate challenge; one with more than one Authorization
	// header gets HTTP 400 (error="invalid_request"), whatever they hold.
	// Cards declare the bearer scheme.
	Authenticate func(ctx context.Context, token string) (task.Identity, error)
	// Scheme is the security scheme cards declare with Authenticate
	// (default: HTTP bearer; see OpenIDConnect).
	Scheme Scheme
	// Policy is the Coordinator's policy engine (task.Options.Policy), if
	// any. Cards use it only to tell whether a sensitive agent in dry run
	// needs approval references: one whose action the policy does not
	// cover (task.PolicyCoverage) runs as a simulation without them, and
	// its card does not list them as required. Default nil: no policy, as
	// for a Coordinator without one.
	Policy task.PolicyEngine
	// Refused, when set, is told of each request Authenticate refused:
	// invalid when it carried a token (or several Authorization headers),
	// else it had none (for metrics).
	Refused func(invalid bool)
	// KeepAlive is the interval of SSE keep-alive comments on streams
	// (default DefaultKeepAlive; negative disables them).
	KeepAlive time.Duration
	// Logger receives internal errors and delivery failures (default:
	// discard).
	Logger *slog.Logger
	// CardSigner, when set, signs every card served (the 1.0 card and
	// the 0.3 one, each over its own JSON as served) with each of its keys,
	// and the server publishes the keys' public halves as a JWKS at
	// cardsig.JWKSPath (/.well-known/jwks.json), which each signature's
	// jku names under the card's base URL. Default nil: cards are not
	// signed and there is no JWKS.
	CardSigner *cardsig.Signer
	// VerifiedResult, when set, returns the verified result of the newest
	// checked attempt of a task (nil when none): what its contract's gates
	// found. GetTask, SendMessage's answer, CancelTask and a stream's first
	// task and final status update carry it as metadata.pactum.
	// verifiedResult, and the task's last artifact as its own
	// metadata.pactum.verifiedResult. ListTasks and intermediate status
	// updates do not, so that they cost no extra read. The node sets it
	// only for agents with a contract (internal/node).
	VerifiedResult func(ctx context.Context, t *task.Task) (any, error)
}

// validate checks the options and fills in defaults. Errors name the field.
func (o *Options) validate() error {
	if o.Coordinator == nil {
		return errors.New("a2aserver: Options.Coordinator is required")
	}
	if len(o.Agents) == 0 {
		for _, a := range o.Coordinator.Agents() {
			o.Agents = append(o.Agents, AgentInfo{Name: a.Name})
		}
	}
	if len(o.Agents) == 0 {
		return errors.New("a2aserver: Options.Agents is empty and the Coordinator has no agents")
	}
	seen := map[string]bool{}
	for i, a := range o.Agents {
		if a.Name == "" {
			return fmt.Errorf("a2aserver: Options.Agents[%d].Name is required", i)
		}
		if strings.ContainsAny(a.Name, "/?#%") || a.Name == "." || a.Name == ".." {
			return fmt.Errorf("a2aserver: Options.Agents[%d].Name %q cannot be a path segment", i, a.Name)
		}
		if seen[a.Name] {
			return fmt.Errorf("a2aserver: Options.Agents[%d].Name %q is listed twice", i, a.Name)
		}
		seen[a.Name] = true
		if _, ok := o.Coordinator.Agent(a.Name); !ok {
			return fmt.Errorf("a2aserver: Options.Agents[%d].Name %q is not registered with the Coordinator", i, a.Name)
		}
	}
	if o.DefaultAgent == "" {
		o.DefaultAgent = o.Agents[0].Name
	} else if !seen[o.DefaultAgent] {
		return fmt.Errorf("a2aserver: Options.DefaultAgent %q is not one of Options.Agents", o.DefaultAgent)
	}
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("a2aserver: Options.BaseURL %q must be an absolute http(s) URL without query or fragment", o.BaseURL)
		}
		o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	}
	if o.GRPCAddress != "" {
		host, port, err := net.SplitHostPort(o.GRPCAddress)
		if n, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil || n == 0 {
			return fmt.Errorf("a2aserver: Options.GRPCAddress %q must be host:port with a port in 1..65535", o.GRPCAddress)
		}
	}
	if o.MaxBodyBytes < 0 {
		return fmt.Errorf("a2aserver: Options.MaxBodyBytes must not be negative, got %d", o.MaxBodyBytes)
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// endpoint is one agent's handler and the dispatcher that serves it.
type endpoint struct {
	spec    task.AgentSpec
	info    AgentInfo
	handler *Handler
	wire    *dispatcher
}

// Server serves the configured agents over A2A: each at /agents/{name}/
// (JSON-RPC by POST to that path, HTTP+JSON below it, the card at
// /agents/{name}/.well-known/agent-card.json) and the default agent also at
// the root. It negotiates the protocol version from the A2A-Version header
// (or query parameter): 1.0, or 0.3 when absent.
type Server struct {
	opts   Options
	signed signedCards
	agents map[string]*endpoint
	def    *endpoint
	pusher *push.Pusher
	log    *slog.Logger
}

var _ http.Handler = (*Server)(nil)

// New checks opts and builds a Server. Call Start to run push delivery.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	popts := opts.Push
	popts.AllowPrivate = opts.AllowPrivatePush
	popts.Logger = opts.Logger
	s := &Server{opts: opts, agents: map[string]*endpoint{}, log: opts.Logger}
	s.pusher = push.New(opts.Coordinator, popts)
	for _, info := range opts.Agents {
		spec, _ := opts.Coordinator.Agent(info.Name)
		h, err := NewHandler(opts.Coordinator, info.Name, HandlerOptions{AllowPrivatePush: opts.AllowPrivatePush, Pusher: s.pusher, Logger: opts.Logger, VerifiedResult: opts.VerifiedResult, Contracts: info.Contracts})
		if err != nil {
			return nil, err
		}
		s.agents[info.Name] = &endpoint{spec: spec, info: info, handler: h,
			wire: &dispatcher{h: h, keepAlive: opts.KeepAlive, recovered: s.recovered, extensions: info.Contracts != nil}}
	}
	s.def = s.agents[opts.DefaultAgent]
	return s, nil
}

// recovered turns a panic in a request into an internal error (logged
// under a reference the caller sees).
func (s *Server) recovered(r any) error {
	ref := task.NewID()[:8]
	s.log.Error("a2a request panicked", "ref", ref, "panic", r)
	return a2a.NewError(a2a.ErrInternalError, "internal error (ref "+ref+")")
}

// Start starts push delivery. The HTTP side needs no start: serve the
// Server with any http.Server.
func (s *Server) Start(ctx context.Context) error { return s.pusher.Start(ctx) }

// Stop stops push delivery, waiting for deliveries under way until ctx
// ends. Stopping twice is safe.
func (s *Server) Stop(ctx context.Context) error { return s.pusher.Stop(ctx) }

// Pusher returns the server's push notification deliverer.
func (s *Server) Pusher() *push.Pusher { return s.pusher }

// RequestHandler returns the A2A request handler of the named agent, for
// callers that mount it on transports of their own (NewGRPCServer serves
// the gRPC binding with it).
func (s *Server) RequestHandler(agent string) (a2asrv.RequestHandler, bool) {
	ep, ok := s.agents[agent]
	if !ok {
		return nil, false
	}
	return ep.handler, true
}

// Card returns the 1.0 card of the named agent as served under base (an
// absolute URL; empty uses Options.BaseURL), without the signatures a
// CardSigner adds when it is served.
func (s *Server) Card(agent, base string) (*a2a.AgentCard, bool) {
	ep, ok := s.agents[agent]
	if !ok {
		return nil, false
	}
	if base == "" {
		base = s.opts.BaseURL
	}
	return buildCard(ep.spec, ep.info, joinURL(base, "agents", agent), &s.opts), true
}

// ServeHTTP routes a request to an agent's card or transports.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = withTraceContext(r)
	path := r.URL.Path
	if path == cardsig.JWKSPath && s.opts.CardSigner != nil {
		s.serveJWKS(w, r)
		return
	}
	if rest, ok := strings.CutPrefix(path, "/agents/"); ok {
		name, sub, _ := strings.Cut(rest, "/")
		ep, ok := s.agents[name]
		if !ok {
			s.unknownAgent(w, name)
			return
		}
		s.serveAgent(w, r, ep, "/"+sub, "/agents/"+name)
		return
	}
	s.serveAgent(w, r, s.def, path, "")
}

// unknownAgent answers a request for an agent not served here with 404,
// naming the agents that are, in the message and in the ErrorInfo
// metadata (agents, comma-separated), so that a mistyped URL shows the
// right ones.
func (s *Server) unknownAgent(w http.ResponseWriter, name string) {
	names := slices.Sorted(maps.Keys(s.agents))
	msg := fmt.Sprintf("no agent named %q is served here", name)
	if len(names) > 0 {
		msg += "; the agents served are " + strings.Join(names, ", ") + " (each at /agents/NAME)"
	}
	err := a2a.NewError(a2a.ErrMethodNotFound, msg).WithErrorInfoMeta(map[string]string{"agents": strings.Join(names, ",")})
	wire.WriteStatus(w, http.StatusNotFound, "NOT_FOUND", err, msg)
}

// bearerScheme names the security scheme cards declare with Authenticate.
const bearerScheme a2a.SecuritySchemeName = "bearer"

// authenticate returns r with its caller in the context, or writes 401 and
// returns nil. Without Options.Authenticate every request passes as is.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if s.opts.Authenticate == nil {
		return r
	}
	ctx, err := s.caller(r.Context(), r.Header.Values("Authorization"))
	if err == nil {
		return r.WithContext(ctx)
	}
	if status := bearer.Refuse(w, err); status != http.StatusUnauthorized {
		wire.WriteStatus(w, status, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, err.Error())
		return nil
	}
	wire.WriteStatus(w, http.StatusUnauthorized, "UNAUTHENTICATED", a2a.ErrUnauthenticated, err.Error())
	return nil
}

// caller returns ctx carrying the identity (task.WithIdentity, which
// sets the caller) whose bearer token authorization, the values of a
// request's Authorization header or gRPC metadata, holds. Without
// Options.Authenticate it returns ctx as is. A refusal is told to
// Options.Refused and returned: bearer.ErrNoToken, bearer.ErrInvalidToken
// (a bearer.InvalidTokenError when the check that failed is known) or
// bearer.ErrMultipleHeaders.
func (s *Server) caller(ctx context.Context, authorization []string) (context.Context, error) {
	if s.opts.Authenticate == nil {
		return ctx, nil
	}
	token, err := bearer.FromValues(authorization)
	if err == nil {
		var id task.Identity
		if id, err = s.opts.Authenticate(ctx, token); err == nil {
			return task.WithIdentity(ctx, id), nil
		}
		if !errors.Is(err, bearer.ErrInvalidToken) {
			err = fmt.Errorf("%w: %w", bearer.ErrInvalidToken, err)
		}
	}
	if s.opts.Refused != nil {
		s.opts.Refused(!errors.Is(err, bearer.ErrNoToken))
	}
	return nil, err
}

// serveAgent serves sub (the path below the agent's mount point) of ep.
func (s *Server) serveAgent(w http.ResponseWriter, r *http.Request, ep *endpoint, sub, mount string) {
	switch sub {
	case a2asrv.WellKnownAgentCardPath:
		s.serveCard(w, r, ep, mount, false)
		return
	case "/.well-known/agent.json":
		s.serveCard(w, r, ep, mount, true)
		return
	}
	if h, rest, ok := contractEndpoint(ep, sub); ok {
		s.serveContractEndpoint(w, r, h, rest)
		return
	}
	if digest, ok := strings.CutPrefix(sub, "/contracts/"); ok {
		s.serveContract(w, r, ep, digest)
		return
	}
	rpc := sub == "/"
	if rpc && r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		wire.WriteRPCError(w, http.StatusMethodNotAllowed, nil, a2a.NewError(a2a.ErrInvalidRequest,
			fmt.Sprintf("this is a JSON-RPC endpoint: send requests with POST, not %s (agent cards are at %s)", r.Method, mount+a2asrv.WellKnownAgentCardPath)))
		return
	}
	if r = s.authenticate(w, r); r == nil {
		return
	}
	body, ok := s.readBody(w, r, rpc)
	if !ok {
		return
	}
	if rpc {
		s.serveJSONRPC(w, r, ep, body)
		return
	}
	requested := requestedVersion(r)
	version, ok := negotiate(requested)
	if !ok {
		writeVersionNotSupported(w, false, requested, nil)
		return
	}
	w.Header().Set(a2a.SvcParamVersion, string(version))
	b := wire.REST
	if version != a2a.Version {
		b = wire.REST03
	}
	ep.wire.serveREST(w, r, b, sub, body)
}

// serveJSONRPC serves a JSON-RPC request to ep: the envelope is checked
// (JSON-RPC 2.0 codes, ids echoed as sent), the version negotiated, then
// the dispatcher answers it.
func (s *Server) serveJSONRPC(w http.ResponseWriter, r *http.Request, ep *endpoint, body []byte) {
	q, refusal := wire.ParseRequest(body)
	if refusal != nil {
		wire.WriteRPCError(w, http.StatusOK, refusal.ID, refusal.Err)
		return
	}
	requested := requestedVersion(r)
	version, ok := negotiate(requested)
	if !ok {
		if q.Notification() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeVersionNotSupported(w, true, requested, q.ID)
		return
	}
	w.Header().Set(a2a.SvcParamVersion, string(version))
	if hint := crossVersionHint(version, q.Method); hint != nil {
		if q.Notification() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		wire.WriteRPCError(w, http.StatusOK, q.ID, hint)
		return
	}
	b := wire.JSONRPC
	if version != a2a.Version {
		b = wire.JSONRPC03
	}
	ep.wire.serveRPC(w, r, b, q)
}

// cardMaxAge is how long clients may cache a card (specification §8.6).
const cardMaxAge = 300

// serveCard serves ep's card for an agent mounted at mount; legacy serves
// the 0.3 form. Cards are public: any origin may read them, and they carry
// Cache-Control and an ETag (a matching If-None-Match gets 304).
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request, ep *endpoint, mount string, legacy bool) {
	if !publicRead(w, r, "agent cards") {
		return
	}
	base := s.baseURL(r)
	card := buildCard(ep.spec, ep.info, base+mount, &s.opts)
	var body []byte
	var err error
	if legacy {
		producer, ok := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer)
		if !ok {
			err = errors.New("a2av0 card producer cannot write JSON")
		} else {
			body, err = producer.CardJSON(r.Context())
		}
	} else {
		body, err = json.Marshal(card)
	}
	if err == nil && s.opts.CardSigner != nil {
		body, err = s.signed.sign(s.opts.CardSigner, body, base+cardsig.JWKSPath)
	}
	if err != nil {
		wire.WriteError(w, wire.REST, nil, internalError(r.Context(), s.log, "agent card", err), "")
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", cardMaxAge))
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "*") {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// serveContract serves the canonical JSON of a contract ep's card names,
// by its digest: public, as the card that names it is.
func (s *Server) serveContract(w http.ResponseWriter, r *http.Request, ep *endpoint, digest string) {
	if !publicRead(w, r, "contracts") {
		return
	}
	if ep.info.Contracts != nil {
		for _, c := range ep.info.Contracts.Contracts {
			if c.Digest != digest {
				continue
			}
			w.Header().Set("Content-Type", "application/json")
			// The digest names these bytes: they never change.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			w.Header().Set("ETag", `"`+digest+`"`)
			if r.Method == http.MethodGet {
				_, _ = w.Write(c.Canonical)
			}
			return
		}
	}
	msg := fmt.Sprintf("agent %s honours no contract with digest %q; its card lists the contracts it honours (capabilities.extensions, %s)", ep.spec.Name, digest, ContractsURI)
	wire.WriteStatus(w, http.StatusNotFound, "NOT_FOUND", a2a.ErrMethodNotFound, msg)
}

// contractEndpoint returns the handler of ep's contract endpoint at sub
// (ContractsInfo.Validate, Negotiate) and the path below it.
func contractEndpoint(ep *endpoint, sub string) (http.Handler, string, bool) {
	ci := ep.info.Contracts
	if ci == nil {
		return nil, "", false
	}
	if sub == validatePath && ci.Validate != nil {
		return ci.Validate, "", true
	}
	if rest, ok := strings.CutPrefix(sub, negotiationsPath); ok && ci.Negotiate != nil && (rest == "" || rest[0] == '/') {
		return ci.Negotiate, rest, true
	}
	return nil, "", false
}

// serveContractEndpoint serves a contract endpoint of an agent (h) behind
// the server's authentication and body limit; rest is the path below the
// endpoint.
func (s *Server) serveContractEndpoint(w http.ResponseWriter, r *http.Request, h http.Handler, rest string) {
	if r = s.authenticate(w, r); r == nil {
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = rest, ""
	r2.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	h.ServeHTTP(w, r2)
}

// publicRead answers what any origin may read (cards, the JWKS) for
// methods other than GET and HEAD, and reports whether r is one of those.
// what names the resource in the 405 message.
func publicRead(w http.ResponseWriter, r *http.Request, what string) bool {
	if origin := r.Header.Get("Origin"); origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Add("Vary", "Origin")
	} else {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}
	switch r.Method {
	case http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		w.Header().Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return false
	case http.MethodGet, http.MethodHead:
		return true
	default:
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		wire.WriteStatus(w, http.StatusMethodNotAllowed, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, what+" are read with GET")
		return false
	}
}

// baseURL is Options.BaseURL, or the scheme and Host of r without it.
func (s *Server) baseURL(r *http.Request) string {
	if s.opts.BaseURL != "" {
		return s.opts.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// withTraceContext returns r with the W3C trace context of its traceparent
// (and tracestate) header in its context, so that a task it submits is
// part of the caller's trace (docs/observability.md, "Traces"); r itself
// when it has none.
func withTraceContext(r *http.Request) *http.Request {
	if r.Header.Get("Traceparent") == "" {
		return r
	}
	return r.WithContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
}
