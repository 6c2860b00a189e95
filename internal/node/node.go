// Package node assembles a running pactum node from a configuration: the
// store, the agent runtimes, the Coordinator, the A2A transport, metrics and
// health endpoints. The CLI and the public pactum package both build on it.
package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/cardsig"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/negotiation"
	"github.com/pactum/pactum/internal/httpguard"
	"github.com/pactum/pactum/internal/ui"
	"github.com/pactum/pactum/internal/version"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/metrics"
	"github.com/pactum/pactum/policy"
	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"

	_ "github.com/pactum/pactum/agent/builtin"  // registers the config-selectable runtimes
	_ "github.com/pactum/pactum/store/postgres" // registers postgres://
	_ "github.com/pactum/pactum/store/sqlite"   // registers sqlite://
)

// Extra is an agent given in code rather than configuration (pactum.Func).
type Extra struct {
	// Config names the agent and gives its action, timeout, retry policy
	// and card (description, skills, modes), as an agents entry would.
	Config config.Agent
	// Agent is the agent runtime: its Invoke (or Stream) runs each attempt
	// unless Runner is set, its metadata fills the card, and the node
	// closes it on Stop. It may be nil when Runner is set.
	Agent agent.Agent
	// Runner, when set, runs the agent's attempts directly instead of
	// agent.Runner(Agent): the hook for agents that are not a runtime but
	// the core's own decision logic, such as a parent task whose runner
	// spawns and waits for children (task.Result.Spawn) — multi-step
	// contract runs and workflows register their runners here.
	Runner task.Runner
}

// Server is one assembled pactum node.
type Server struct {
	cfg     *config.Config
	log     *slog.Logger
	store   task.Store
	coord   *task.Coordinator
	a2a     *a2aserver.Server
	mcp     *mcpserver.Server
	metrics *metrics.Metrics
	agents  []agent.Agent
	handler http.Handler
	anchor  *audit.Publisher // nil unless audit.anchor names a sink
	// definitions are the agent definitions served as agents (nil
	// without a definitions section); workflows the built-in and
	// configured workflows.
	definitions *workflow.Definitions
	workflows   *workflow.Registry
	// wfKnown are the agents workflows may run: configured agents and
	// definitions.
	wfKnown map[string]bool

	// negotiations are the agents whose contracts can be negotiated, by
	// name.
	negotiations map[string]*negotiable

	stopOnce sync.Once
	stopErr  error
}

// New builds a node from cfg. baseDir resolves relative paths in agent
// settings. Nothing runs until Start.
func New(ctx context.Context, cfg *config.Config, baseDir string, extra []Extra, log *slog.Logger) (_ *Server, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Tokens first: a missing one is a configuration error that should
	// not open (or create) the store.
	authn, err := newAuthenticator(ctx, cfg, baseDir)
	if err != nil {
		return nil, err
	}
	key, err := NegotiationKey(cfg, baseDir)
	if err != nil {
		return nil, err
	}
	// Card signing keys too: a key that does not load stops the node
	// before it opens anything.
	signer, kerrs := cardSigner(cfg, baseDir, log)
	if err := kerrs.Err(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			s.closeAgents()
			if s.store != nil {
				_ = s.store.Close()
			}
		}
	}()
	s.store, err = store.OpenWith(ctx, cfg.Store, store.Options{Logger: log, SkipMigrate: cfg.Migrate != nil && !*cfg.Migrate})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", store.Redact(cfg.Store), err)
	}
	var specs []task.AgentSpec
	var infos []a2aserver.AgentInfo
	gated := map[string]bool{}       // agents with a contract
	negs := map[string]*negotiable{} // agents whose contract can be negotiated
	coordinator := func() *task.Coordinator { return s.coord }
	// add serves b as itself: its name and action, its own contract's
	// gate (b.gate). r, when not nil, runs its attempts instead of its
	// runtime (Extra.Runner).
	add := func(b builtAgent, r task.Runner) {
		ac := b.config
		if b.agent != nil {
			s.agents = append(s.agents, b.agent)
		}
		if _, byDefault := cfg.DryRun(&ac); byDefault {
			log.Warn("sensitive agent runs as a simulation: no approval in policy.approvals covers its action, so tasks succeed without calling it; "+
				"add an approval for the action to run it for real, or set dry_run: false to refuse calls instead",
				"agent", ac.Name, "action", ac.Action)
		}
		gate := b.gate
		info := agentInfo(ac, agent.MetadataOf(b.agent))
		info.Contracts = b.contracts
		if b.own != nil && b.own.remote == "" && r == nil {
			// Its contract can be validated and negotiated, and a task
			// may cite an accepted negotiation (pinnedGate).
			n := newNegotiable(cfg, b, b.own, key)
			negs[ac.Name] = n
			pg := &pinnedGate{own: b.gate, agent: ac.Name, nodes: b.own.nodes != nil, o: b.gateOpts, key: key, coord: coordinator}
			if b.own.step != nil {
				pg.step = b.own.step.Step().ID
			}
			gate = pg
			info.Contracts.Validate = n.svc.ValidateHandler()
			info.Contracts.Negotiate = n.svc.NegotiationsHandler(log)
		}
		specs = append(specs, agentSpec(cfg, b, r, gate, ""))
		if n := negs[ac.Name]; n != nil {
			specs = append(specs, n.spec)
		}
		if gate != nil {
			gated[ac.Name] = true
		}
		infos = append(infos, info)
	}
	// Every agent is built before any error is returned, so that all of
	// them are reported, placed in the file (as Check does).
	built, errs, err := buildAgents(ctx, cfg, baseDir)
	for _, b := range built {
		add(b, nil)
	}
	if err != nil {
		return nil, err
	}
	defs, workflows, derrs, err := checkDefinitions(ctx, cfg, baseDir)
	for _, b := range defs.built {
		add(b, nil) // a definition has neither a ToolSpec nor a contract
	}
	if err != nil {
		return nil, err
	}
	errs = append(errs, derrs...)
	s.definitions, s.workflows = defs.defs, workflows
	served, cerrs := loadContracts(cfg, baseDir, workflowActions(workflows))
	if err := append(errs, cerrs...).Err(); err != nil {
		return nil, err
	}
	byName := make(map[string]builtAgent, len(built))
	for _, b := range built {
		byName[b.config.Name] = b
	}
	contractAgents := map[string]*contract.Compiled{} // agents that run a served contract, and its contract
	stepAgents := map[string]bool{}                   // their steps' virtual agents
	for _, sc := range served {
		run, steps, info := runAgents(sc, byName, cfg, baseDir, func() *task.Coordinator { return s.coord })
		specs = append(specs, run)
		infos = append(infos, info)
		contractAgents[run.Name] = sc.compiled
		for _, st := range steps {
			specs = append(specs, st)
			stepAgents[st.Name] = true
			gated[st.Name] = true
		}
	}
	for i, e := range extra {
		if e.Agent == nil && e.Runner == nil {
			return nil, fmt.Errorf("agent %q (extra[%d]): neither an agent runtime nor a runner given", e.Config.Name, i)
		}
		add(builtAgent{config: e.Config, agent: e.Agent}, e.Runner)
	}
	if len(specs) == 0 {
		return nil, errors.New("no agents configured")
	}
	// Workflows run on the configured agents and the definitions; their
	// agents come last, so that the default agent is a configured one.
	wfAgents := make(map[string]builtAgent, len(byName)+len(defs.built))
	maps.Copy(wfAgents, byName)
	for _, b := range defs.built {
		wfAgents[b.config.Name] = b
	}
	var sw servedWorkflows
	if len(wfAgents) > 0 {
		sw = workflowAgents(s.workflows, wfAgents, cfg, baseDir, func() *task.Coordinator { return s.coord })
	}
	s.wfKnown = make(map[string]bool, len(wfAgents))
	for n := range wfAgents {
		s.wfKnown[n] = true
	}
	taken := make(map[string]bool, len(specs))
	for _, sp := range specs {
		taken[sp.Name] = true
	}
	for _, r := range sw.runs {
		if taken[r.Name] {
			return nil, fmt.Errorf("agent %q: the name is the run agent of workflow %s; rename the agent or the contract", r.Name, strings.TrimPrefix(r.Name, workflow.RunAgent("")))
		}
		specs = append(specs, r)
	}
	infos = append(infos, sw.infos...)
	for _, st := range sw.steps {
		specs = append(specs, st)
		stepAgents[st.Name] = true
		gated[st.Name] = true
	}
	var perms task.Permissions
	if len(cfg.Actors) > 0 {
		perms = task.Permissions{}
		for _, a := range cfg.Actors {
			perms[a.Name] = a.Actions
		}
	}
	stepPermissions(perms, served, cfg)
	negotiationPermissions(perms, negs, cfg)
	workflowPermissions(perms, wfAgents)
	var approvals []policy.Approval
	for _, a := range cfg.Policy.Approvals {
		pa := policy.Approval{ID: a.ID, Actions: a.Actions, Actors: a.Actors, Revoked: a.Revoked}
		if a.Expires != nil {
			pa.Expires = *a.Expires
		}
		approvals = append(approvals, pa)
	}
	s.metrics = metrics.New(s.store, log)
	// A store shared by several nodes carries their events between them.
	var relay task.Relay
	if r, ok := s.store.(interface{ Relay() task.Relay }); ok {
		relay = r.Relay()
	}
	pol := policy.NewStatic(cfg.Policy.Version, approvals)
	workers, pools := workerPools(cfg)
	s.coord, err = task.NewCoordinator(task.Options{
		Store: s.store, Agents: specs, Permissions: perms,
		Policy: pol, Workers: workers, Pools: pools,
		Node: cfg.Node, LeaseFor: cfg.Lease.Duration,
		IdempotencyTTL: idempotencyTTL(cfg.IdempotencyTTL.Duration),
		Observer:       s.metrics, Logger: log, Relay: relay,
	})
	if err != nil {
		return nil, err
	}
	s.metrics.CountSubscribers(s.coord.Broker().Subscribers)
	for name, n := range negs {
		n.svc.Coordinator = s.coord
		// Negotiations are reached through their agent's endpoints and
		// tools, never as agents of their own.
		stepAgents[negotiation.Agent(name)] = true
	}
	s.negotiations = negs
	if s.anchor, err = newAnchor(cfg.Audit.Anchor, s.store, s.coord.Node(), baseDir, log); err != nil {
		return nil, err
	}
	defaultAgent := cfg.DefaultAgent
	if defaultAgent == "" {
		defaultAgent = specs[0].Name
	}
	// Only the tasks of agents with a contract have verified results to
	// read (docs/design.md, "Verified results on the wire").
	var verified func(ctx context.Context, t *task.Task) (any, error)
	if len(gated) > 0 || len(contractAgents) > 0 {
		verified = verifiedResult(s.coord, gated, contractAgents)
	}
	var grpcAddress string
	if cfg.GRPCListen != "" {
		grpcAddress = cmp.Or(cfg.GRPCURL, config.DefaultGRPCURL(cfg.GRPCListen))
	}
	s.a2a, err = a2aserver.New(a2aserver.Options{
		Coordinator: s.coord, Agents: infos, DefaultAgent: defaultAgent, BaseURL: cfg.BaseURL, GRPCAddress: grpcAddress,
		MaxBodyBytes: cfg.MaxBodyBytes, AllowPrivatePush: cfg.Push.AllowPrivate, Logger: log,
		Push: push.Options{
			MaxAttempts: cfg.Push.MaxAttempts, Timeout: cfg.Push.Timeout.Duration,
			Observe: s.metrics.PushDelivery,
		},
		Policy:         pol,
		Authenticate:   authn.authenticate(),
		Scheme:         authn.cardScheme(),
		Refused:        func(invalid bool) { s.metrics.AuthRefused("a2a", invalid) },
		VerifiedResult: verified,
		CardSigner:     signer,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.ready)
	descriptions := map[string]string{}
	for _, in := range infos {
		descriptions[in.Name] = in.Description
	}
	s.mcp = mcpserver.New(s.coord, mcpserver.Options{
		Name: "pactum", Version: version.String(), Logger: log,
		PerAgentTools: cfg.MCP.PerAgentTools, AgentDescriptions: descriptions,
		WaitTimeout: cfg.MCP.WaitTimeout.Duration, VerifiedResult: verified,
		Tools:  append(runTools(slices.Sorted(maps.Keys(contractAgents)), sw.names), negotiationTools(negs)...),
		Hidden: func(agent string) bool { return stepAgents[agent] },
	})
	if !cfg.MCP.Disabled {
		// The node's guard, in front of every route, checks /mcp's Host
		// and Origin; mcpserver's own guard lets guarded requests pass.
		mux.Handle("/mcp", authn.requireMCP(s.mcp.Handler(mcpserver.HTTPOptions{
			MaxBodyBytes: cfg.MaxBodyBytes,
		}), cfg.BaseURL, func(invalid bool) { s.metrics.AuthRefused("mcp", invalid) }))
		if md := authn.mcpResource(cfg.BaseURL); md != nil {
			// Public, as the card is: a client reads it before it has a
			// token. Served at the path-inserted location and at the root.
			prm := auth.ProtectedResourceMetadataHandler(md)
			mux.Handle(protectedResourcePath, prm)
			mux.Handle("/.well-known/oauth-protected-resource", prm)
		}
	}
	runtimes := make(map[string]string, len(cfg.Agents))
	for _, ac := range cfg.Agents {
		runtimes[ac.Name] = ac.Type
	}
	dash, err := ui.New(ui.Options{
		Coordinator: s.coord, Authenticate: authn.authenticate(), Runtimes: runtimes, Logger: log,
		Card: func(agent, base string) (any, bool) { return s.a2a.Card(agent, base) },
	})
	if err != nil {
		return nil, err
	}
	mux.Handle(ui.Prefix, dash)
	// A browser opening the node's root gets the dashboard; A2A clients
	// (JSON-RPC POSTs, JSON requests) reach the default agent as before.
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ui.IsBrowserRoot(r) {
			http.Redirect(w, r, ui.Prefix, http.StatusFound)
			return
		}
		s.a2a.ServeHTTP(w, r)
	}))
	guard, err := httpguard.New(httpguard.Options{
		// mcp.allowed_hosts is an alias of http.allowed_hosts.
		AllowedHosts:   append(slices.Clip(cfg.HTTP.AllowedHosts), cfg.MCP.AllowedHosts...),
		BaseURL:        cfg.BaseURL,
		AllowedOrigins: cfg.HTTP.CORSOrigins,
		Public:         isPublic,
		ReadTimeout:    cfg.HTTP.ReadTimeout.Duration,
		WriteTimeout:   cfg.HTTP.WriteTimeout.Duration,
		Refused:        s.metrics.HTTPRefused,
	})
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	s.handler = guard.Handler(mux)
	return s, nil
}

// isCard reports whether r asks for an agent card, which any web page may
// read: /.well-known/agent-card.json (or the 0.3 agent.json), at the root
// or under /agents/{name}.
func isCard(r *http.Request) bool {
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/agents/"); ok {
		name, sub, _ := strings.Cut(rest, "/")
		if name == "" {
			return false
		}
		p = "/" + sub
	}
	return p == a2asrv.WellKnownAgentCardPath || p == "/.well-known/agent.json"
}

// isPublic reports whether any web page may read r: a card (isCard) or
// the JWKS of the card signing keys.
func isPublic(r *http.Request) bool {
	return isCard(r) || r.URL.Path == cardsig.JWKSPath
}

// MCP returns the node's MCP server (for `pactum mcp` over stdio).
func (s *Server) MCP() *mcpserver.Server { return s.mcp }

// idempotencyTTL maps the config's "0 disables" onto the core's "negative
// disables".
func idempotencyTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func agentInfo(ac config.Agent, md agent.Metadata) a2aserver.AgentInfo {
	info := a2aserver.AgentInfo{
		Name: ac.Name, Description: ac.Description, Version: ac.Version,
		InputModes: ac.InputModes, OutputModes: ac.OutputModes, Streaming: md.Streaming,
	}
	if info.Description == "" {
		info.Description = md.Description
	}
	for _, sk := range ac.Skills {
		info.Skills = append(info.Skills, a2a.AgentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: sk.Tags, Examples: sk.Examples})
	}
	return info
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.store.GetTask(ctx, "readyz-probe", 0); err != nil && !errors.Is(err, task.ErrNotFound) {
		s.log.Warn("readyz: store unavailable", "err", err)
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Coordinator returns the node's Coordinator.
func (s *Server) Coordinator() *task.Coordinator { return s.coord }

// Handler returns the node's HTTP handler (A2A, MCP, metrics, health),
// behind the node's guard: the Host, Origin and content-type checks and the
// per-request read and write deadlines of the http section.
func (s *Server) Handler() http.Handler { return s.handler }

// Start starts the Coordinator and push delivery.
func (s *Server) Start(ctx context.Context) error {
	if err := s.coord.Start(ctx); err != nil {
		return err
	}
	if s.anchor != nil {
		_ = s.anchor.Start(ctx)
	}
	return s.a2a.Start(ctx)
}

// Stop drains running attempts until ctx ends, then closes runtimes and the
// store. Stopping twice is safe.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		err := s.coord.Stop(ctx)
		if perr := s.a2a.Stop(ctx); perr != nil && err == nil {
			err = perr
		}
		if s.anchor != nil {
			_ = s.anchor.Stop(ctx)
		}
		s.closeAgents()
		// The store stays referenced: a mounted Handler may still answer
		// /readyz, which then reports the closed store as unavailable.
		if cerr := s.store.Close(); cerr != nil && err == nil {
			err = cerr
		}
		s.stopErr = err
	})
	return s.stopErr
}

func (s *Server) closeAgents() {
	for _, a := range s.agents {
		if err := agent.Close(a); err != nil {
			s.log.Warn("close agent", "err", err)
		}
	}
	s.agents = nil
}

// Serve listens on the configured address and serves until ctx ends, then
// shuts down gracefully (in-flight requests and attempts get drain time).
func (s *Server) Serve(ctx context.Context, drain time.Duration) error {
	return s.ServeUntil(ctx, nil, Shutdown{Drain: drain})
}

// Shutdown says how a node shuts down once the context it serves under
// ends.
type Shutdown struct {
	// Drain bounds how long running attempts may finish. Attempts still
	// running then are stopped and their tasks released in the store at
	// once (see task.Coordinator.Stop).
	Drain time.Duration
	// Now, when it is closed, cuts the drain short as if Drain had
	// passed: the CLI closes it on a second Ctrl-C. Nil: never.
	Now <-chan struct{}
	// Hint ends the line that says what the drain waits for, e.g.
	// "press Ctrl-C again to stop now" ("" for none).
	Hint string
}

// ServeUntil is Serve on ln (nil: listen on the configured address) with
// the shutdown sd.
func (s *Server) ServeUntil(ctx context.Context, ln net.Listener, sd Shutdown) error {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
		}
	}
	return s.serve(ctx, ln, sd)
}

// Drain stops the node as sd says and logs what it does: how many
// attempts the drain waits for and for how long, then a line once the node
// has stopped. It is what Serve does when its context ends; a caller that
// serves by other means (the stdio MCP node) calls it itself. before, when
// not nil, runs once the node claims no more work, bounded by the drain's
// context (ServeUntil shuts its HTTP server down there).
func (s *Server) Drain(sd Shutdown, before func(ctx context.Context)) error {
	start := time.Now()
	n := s.coord.Drain()
	msg := "shutting down: no task running"
	if n > 0 {
		msg = fmt.Sprintf("draining %d %s (up to %s)", n, plural(n, "task", "tasks"), sd.Drain)
		if sd.Hint != "" {
			msg += "; " + sd.Hint
		}
	}
	s.log.Info(msg, "running", n, "drain", sd.Drain)
	ctx, cancel := context.WithTimeout(context.Background(), sd.Drain)
	defer cancel()
	if sd.Now != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-sd.Now:
				s.log.Info("stopping now: running attempts are stopped and their tasks queued again")
				cancel()
			case <-stop:
			}
		}()
	}
	if before != nil {
		before(ctx)
	}
	err := s.Stop(ctx)
	cut := ctx.Err() != nil
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = nil
	}
	s.log.Info("pactum stopped", "took", time.Since(start).Round(time.Millisecond), "drain_cut", cut)
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readHeaderTimeout bounds reading a request's headers.
const readHeaderTimeout = 10 * time.Second

// connectionsFull is told each time a connection waits for a free slot
// under http.max_connections: it counts it and logs at most once a minute.
func (s *Server) connectionsFull() func() {
	var last atomic.Int64
	return func() {
		s.metrics.ConnectionWaited()
		now := time.Now().UnixNano()
		if prev := last.Load(); now-prev >= int64(time.Minute) && last.CompareAndSwap(prev, now) {
			s.log.Warn("http: connection cap reached; new connections wait until one closes", "max_connections", s.cfg.HTTP.MaxConnections)
		}
	}
}

// ServeListener is Serve on an existing listener.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, drain time.Duration) error {
	return s.serve(ctx, ln, Shutdown{Drain: drain})
}

func (s *Server) serve(ctx context.Context, ln net.Listener, sd Shutdown) error {
	var gln net.Listener
	if s.cfg.GRPCListen != "" {
		var err error
		if gln, err = net.Listen("tcp", s.cfg.GRPCListen); err != nil {
			ln.Close()
			return fmt.Errorf("listen for gRPC on %s: %w", s.cfg.GRPCListen, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		ln.Close()
		if gln != nil {
			gln.Close()
		}
		return err
	}
	// Read and write deadlines are set per request by the guard (package
	// httpguard): the server's own ReadTimeout and WriteTimeout would cut
	// long SSE streams.
	hs := &http.Server{
		Handler: s.handler, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: s.cfg.HTTP.IdleTimeout.Duration,
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	ln = httpguard.LimitListener(ln, s.cfg.HTTP.MaxConnections, s.connectionsFull())
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("pactum serving", "addr", ln.Addr().String(), "base_url", s.cfg.BaseURL, "store", store.Redact(s.cfg.Store), "node", s.coord.Node())
	var gs *a2aserver.GRPCServer
	if gln != nil {
		gs = s.a2a.NewGRPCServer()
		go func() { errc <- gs.Serve(ctx, gln) }()
		s.log.Info("pactum serving A2A over gRPC", "addr", gln.Addr().String(), "grpc_url", cmp.Or(s.cfg.GRPCURL, config.DefaultGRPCURL(s.cfg.GRPCListen)))
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// Both servers stop within the drain, side by side: calls under way
	// end with ctx (their base context), then each waits for its
	// connections until the drain's context ends.
	if err := s.Drain(sd, func(ctx context.Context) {
		var wg sync.WaitGroup
		if gs != nil {
			wg.Go(func() { _ = gs.Shutdown(ctx) })
		}
		_ = hs.Shutdown(ctx)
		wg.Wait()
	}); err != nil {
		s.log.Warn("stop", "err", err)
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return serveErr
}
