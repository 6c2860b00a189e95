package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// AgentSpec registers an agent with the Coordinator: the capability
// (action → agent) and how to run it.
type AgentSpec struct {
	Name string
	// Action is the capability name callers ask for (default Name).
	Action string
	Runner Runner
	// Timeout bounds one attempt (default 5m).
	Timeout time.Duration
	Retry   RetryPolicy
	// Sensitive actions need a policy reference and an approval reference,
	// checked at submit and again just before execution.
	Sensitive bool
	// DryRun records the policy decision and succeeds without calling the
	// agent: the task is a simulation. A sensitive action in dry run that
	// the policy does not cover (see PolicyCoverage) needs no approval.
	DryRun bool
	// Middleware are this agent's own pipeline steps, in order, run inside
	// the global ones (Options.Middleware). See Middleware.
	Middleware []Middleware
	// ChildOnly agents run only as children a parent spawns (the steps of
	// a contract run, each under its step's gate): Submit answers for them
	// as for an agent that does not exist, so no caller can run a step
	// outside its run.
	ChildOnly bool
	// Pool names the worker pool whose slots the agent's attempts take
	// (Options.Pools); "" is the default pool, of Options.Workers slots.
	Pool string

	// pipeline is every step of the agent's attempts, outermost first.
	pipeline []Middleware
	// pool is Pool's slots.
	pool *pool
}

// Observer is told about every committed transition and finished attempt
// (metrics plug in here). Calls happen on the worker's goroutine and must be
// quick.
type Observer interface {
	Transition(agent string, from, to State)
	AttemptFinished(agent string, d time.Duration, err error)
}

// Options configure a Coordinator.
type Options struct {
	Store  Store
	Agents []AgentSpec
	// Permissions maps actors to the actions they may call (nil: all).
	Permissions Permissions
	// Policy decides on sensitive actions. Nil refuses every sensitive
	// action that reaches it.
	Policy PolicyEngine
	// Middleware are the global steps of every agent's execution
	// pipeline, in order: after the built-in policy and dry_run steps,
	// before the agent's own (AgentSpec.Middleware). See Middleware.
	Middleware []Middleware
	// Node names this process in records (default hostname-pid).
	Node string
	// Workers bounds the concurrent attempts of the agents in the default
	// worker pool (AgentSpec.Pool "") on this node (default 16).
	Workers int
	// Pools are further worker pools by name, each with its bound on
	// concurrent attempts (at least 1): the agents whose AgentSpec.Pool
	// names one take their slots from it and never wait for a slot of
	// another pool. An agent that runs a process per attempt, say, shares
	// a small pool with its kind, while in-process agents share a large
	// one.
	Pools map[string]int
	// LeaseFor is the lease on a claimed task (default 30s); it is renewed
	// every LeaseFor/3 while the agent runs.
	LeaseFor time.Duration
	// PollInterval is the longest the dispatcher sleeps between store scans
	// (default 1s).
	PollInterval time.Duration
	// IdempotencyTTL is how long (actor, key) names one task (default 24h;
	// negative disables).
	IdempotencyTTL time.Duration
	// Broker carries events; default a new in-process broker.
	Broker *Broker
	// Relay carries events to and from other nodes on the same store (nil:
	// this node alone).
	Relay    Relay
	Observer Observer
	Logger   *slog.Logger
	// Clock tells the time and sets every timer the Coordinator waits on
	// (default RealClock{}); tests pass one they advance by hand.
	Clock Clock
	// Now, when Clock is nil, replaces only the real clock's current time
	// (default time.Now).
	Now func() time.Time
	// TracerProvider makes the spans of submissions, attempts, pipeline
	// steps and runtime calls (default otel's global provider, a no-op
	// unless the process configured one; docs/observability.md, "Traces").
	TracerProvider trace.TracerProvider
}

// Coordinator is the one orchestration core every transport calls: it
// validates and records submissions, runs tasks through their lifecycle with
// leases and retries, and publishes events.
type Coordinator struct {
	store    Store
	agents   map[string]*AgentSpec
	byAction map[string]*AgentSpec
	order    []string
	perms    Permissions
	policy   PolicyEngine
	node     string
	workers  int
	leaseFor time.Duration
	poll     time.Duration
	idemTTL  time.Duration
	broker   *Broker
	relay    Relay
	observer Observer
	log      *slog.Logger
	clock    Clock
	tracer   trace.Tracer

	wake chan struct{}
	// pools are the worker pools, the default pool first.
	pools   []*pool
	claimN  atomic.Uint64
	mu      sync.Mutex
	running map[string]*runEntry
	// stopPending holds tasks whose attempt was to be stopped before it
	// had registered in running (claimed, not yet executing), by when.
	stopPending map[string]time.Time
	started     bool
	stopped     bool // no more claims: Drain or Stop began
	stopCalled  bool
	runCtx      context.Context    // attempts' parent context, set by Start
	stopWork    context.CancelFunc // cancels runCtx with ErrShutdown: the drain is over
	stop        context.CancelFunc // stops the dispatcher and the reaper
	loops       sync.WaitGroup
	inflight    sync.WaitGroup
}

// NewCoordinator checks opts and returns a Coordinator; call Start to run
// tasks.
func NewCoordinator(opts Options) (*Coordinator, error) {
	if opts.Store == nil {
		return nil, errors.New("task: Options.Store is required")
	}
	c := &Coordinator{
		store:       opts.Store,
		agents:      map[string]*AgentSpec{},
		byAction:    map[string]*AgentSpec{},
		perms:       opts.Permissions,
		policy:      opts.Policy,
		node:        opts.Node,
		workers:     opts.Workers,
		leaseFor:    opts.LeaseFor,
		poll:        opts.PollInterval,
		idemTTL:     opts.IdempotencyTTL,
		broker:      opts.Broker,
		relay:       opts.Relay,
		observer:    opts.Observer,
		log:         opts.Logger,
		clock:       opts.Clock,
		tracer:      tracerOf(opts.TracerProvider),
		wake:        make(chan struct{}, 1),
		running:     map[string]*runEntry{},
		stopPending: map[string]time.Time{},
	}
	if c.node == "" {
		h, _ := os.Hostname()
		c.node = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if c.workers <= 0 {
		c.workers = 16
	}
	if c.leaseFor <= 0 {
		c.leaseFor = 30 * time.Second
	}
	if c.poll <= 0 {
		c.poll = time.Second
	}
	if c.idemTTL == 0 {
		c.idemTTL = 24 * time.Hour
	}
	if c.broker == nil {
		c.broker = NewBroker()
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = RealClock{}
		if opts.Now != nil {
			c.clock = nowClock{now: opts.Now}
		}
	}
	pools := map[string]*pool{"": {slots: make(chan struct{}, c.workers)}}
	c.pools = []*pool{pools[""]}
	for _, name := range slices.Sorted(maps.Keys(opts.Pools)) {
		n := opts.Pools[name]
		if name == "" || n <= 0 {
			return nil, fmt.Errorf("task: worker pool %q needs a name and a positive size (%d)", name, n)
		}
		pools[name] = &pool{name: name, slots: make(chan struct{}, n)}
		c.pools = append(c.pools, pools[name])
	}
	for _, a := range opts.Agents {
		a := a
		if a.Name == "" || a.Runner == nil {
			return nil, fmt.Errorf("task: agent %q needs a name and a runner", a.Name)
		}
		if a.Action == "" {
			a.Action = a.Name
		}
		if a.Timeout <= 0 {
			a.Timeout = 5 * time.Minute
		}
		a.Retry = a.Retry.withDefaults()
		a.pipeline = append([]Middleware{policyStep{c: c}, dryRunStep{}}, opts.Middleware...)
		a.pipeline = append(a.pipeline, a.Middleware...)
		for _, m := range a.pipeline {
			if m == nil || m.Name() == "" {
				return nil, fmt.Errorf("task: agent %q has a pipeline step without a name", a.Name)
			}
		}
		if a.pool = pools[a.Pool]; a.pool == nil {
			return nil, fmt.Errorf("task: agent %q names worker pool %q, which Options.Pools does not size", a.Name, a.Pool)
		}
		if a.Pool != "" {
			a.pool.agents = append(a.pool.agents, a.Name)
			pools[""].except = append(pools[""].except, a.Name)
		}
		if _, dup := c.agents[a.Name]; dup {
			return nil, fmt.Errorf("task: agent %q registered twice", a.Name)
		}
		if _, dup := c.byAction[a.Action]; dup {
			return nil, fmt.Errorf("task: action %q served by two agents", a.Action)
		}
		c.agents[a.Name] = &a
		c.byAction[a.Action] = &a
		c.order = append(c.order, a.Name)
	}
	return c, nil
}

// Node returns the node name written on records.
func (c *Coordinator) Node() string { return c.node }

// Broker returns the event broker.
func (c *Coordinator) Broker() *Broker { return c.broker }

// Store returns the store.
func (c *Coordinator) Store() Store { return c.store }

// Agents returns the registered agents in registration order.
func (c *Coordinator) Agents() []AgentSpec {
	out := make([]AgentSpec, 0, len(c.order))
	for _, n := range c.order {
		out = append(out, *c.agents[n])
	}
	return out
}

// Agent returns the agent registered under name.
func (c *Coordinator) Agent(name string) (AgentSpec, bool) {
	a, ok := c.agents[name]
	if !ok {
		return AgentSpec{}, false
	}
	return *a, true
}

func (c *Coordinator) now() time.Time { return c.clock.Now().UTC().Truncate(time.Microsecond) }

// transition applies a conditional transition and publishes it.
func (c *Coordinator) transition(ctx context.Context, t *Task, p TransitionParams) (*Task, error) {
	if err := CheckTransition(p.From, p.To); err != nil {
		return nil, err
	}
	if p.Now.IsZero() {
		p.Now = c.now()
	}
	if p.Node == "" {
		p.Node = c.node
	}
	if p.Envelope == nil && t.ID == p.TaskID && t.Envelope.TaskID == t.ID {
		// The caller read the task whole: the store need not decode
		// the (immutable) envelope again.
		p.Envelope = &t.Envelope
	}
	nt, err := c.store.Transition(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("task %s %s → %s: %w", p.TaskID, p.From, p.To, err)
	}
	nt.LastEvidence = p.Evidence
	c.observe(t.Agent, p.From, p.To)
	c.logTransition(t.Agent, p, nt)
	switch {
	case p.To == StateQueued:
		c.kickAt(p.RunAfter, c.poolOf(t.Agent))
	case nt.State == StateQueued:
		// A parent's move to waiting found no child left to wait for.
		c.observe(t.Agent, p.To, nt.State)
		c.kickAt(nt.RunAfter, c.poolOf(t.Agent))
	}
	if t.complete {
		// The caller holds the whole task (history and artifacts as
		// stored), so subscribers get it complete and need not read it.
		nt.History = append(slices.Clone(t.History), p.Messages...)
		nt.Artifacts = mergeArtifacts(t.Artifacts, p.Artifacts)
		nt.complete = true
	}
	c.publishStatus(nt)
	if len(p.Spawn) > 0 {
		c.spawned(ctx, nt.ID, p.Spawn)
	}
	if p.To.Terminal() && (nt.Envelope.ParentTaskID != "" || nt.Children > 0) {
		c.settled(ctx, nt)
	}
	return nt, nil
}

// mergeArtifacts returns stored with each of added replacing the artifact of
// the same ID in place or appended, as the store does.
func mergeArtifacts(stored, added []Artifact) []Artifact {
	out := slices.Clone(stored)
	for _, a := range added {
		if i := slices.IndexFunc(out, func(b Artifact) bool { return b.ID == a.ID }); i >= 0 {
			out[i] = a
		} else {
			out = append(out, a)
		}
	}
	return out
}

// logTransition logs a committed transition at debug level and, when it
// settled the task (a terminal state), one info line with what an operator
// asks first: which task, which agent, how it ended, how long it took, how
// many attempts it used.
func (c *Coordinator) logTransition(agent string, p TransitionParams, nt *Task) {
	ctx := context.Background()
	if c.log.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{slog.String("task", nt.ID), slog.String("agent", agent), slog.String("from", string(p.From)), slog.String("to", string(nt.State)), slog.Int("attempt", nt.Attempt)}
		if p.ErrorCode != "" {
			attrs = append(attrs, slog.String("code", string(p.ErrorCode)))
		}
		if p.Reason != "" {
			attrs = append(attrs, slog.String("reason", p.Reason))
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "task transition", attrs...)
	}
	if !nt.State.Terminal() {
		return
	}
	attrs := []slog.Attr{slog.String("task", nt.ID), slog.String("agent", agent), slog.String("state", string(nt.State)), slog.Duration("duration", nt.UpdatedAt.Sub(nt.CreatedAt)), slog.Int("attempts", nt.Attempt)}
	if nt.ErrorCode != "" {
		attrs = append(attrs, slog.String("code", string(nt.ErrorCode)))
	}
	c.log.LogAttrs(ctx, slog.LevelInfo, "task settled", attrs...)
}

func (c *Coordinator) observe(agent string, from, to State) {
	if c.observer != nil {
		c.observer.Transition(agent, from, to)
	}
}

// observeSteps observes (and logs at debug level) the transitions task
// id's creation made.
func (c *Coordinator) observeSteps(id, agent string, steps []Step) {
	from := StateRequested
	for _, s := range steps {
		c.observe(agent, from, s.To)
		c.logStep(id, agent, from, s.To, s.Reason)
		from = s.To
	}
}

// logStep logs at debug level a transition the store made outside
// transition: a creation's steps and a claim.
func (c *Coordinator) logStep(id, agent string, from, to State, reason string) {
	ctx := context.Background()
	if !c.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("task", id), slog.String("agent", agent), slog.String("from", string(from)), slog.String("to", string(to))}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "task transition", attrs...)
}

func (c *Coordinator) publishStatus(t *Task) {
	snap := *t
	if !t.complete {
		snap.History, snap.Artifacts = nil, nil
	}
	c.publish(Event{
		Kind: EventStatus, TaskID: t.ID, ContextID: t.ContextID, Seq: t.Seq,
		State: t.State, Task: &snap, Complete: t.complete, Message: t.StatusMessage,
		Final: t.State.Terminal() || t.State.Interrupted(), At: t.UpdatedAt,
	})
}

// Start runs the dispatcher and the lease reaper until Stop.
func (c *Coordinator) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("task: coordinator already started")
	}
	c.started = true
	base := context.WithoutCancel(ctx)
	// Attempts outlive the loops: Stop ends the loops at once and lets
	// running attempts finish until its own deadline.
	runCtx, stopWork := context.WithCancelCause(base)
	c.runCtx, c.stopWork = runCtx, func() { stopWork(ErrShutdown) }
	ctx, c.stop = context.WithCancel(base)
	c.loops.Add(2)
	go c.dispatchLoop(ctx)
	go c.reapLoop(ctx)
	if c.relay != nil {
		c.loops.Add(1)
		go c.relayLoop(ctx)
	}
	return nil
}

// Drain stops claiming new work (the dispatcher, the lease reaper and the
// relay end) and returns how many attempts are still running on this node,
// the ones Stop then waits for. Stop calls it; call it first to tell an
// operator what the shutdown waits for. Draining twice is safe.
func (c *Coordinator) Drain() int {
	c.mu.Lock()
	if !c.started {
		c.mu.Unlock()
		return 0
	}
	if !c.stopped {
		c.stopped = true
		c.stop()
	}
	c.mu.Unlock()
	c.loops.Wait()
	return c.attempts()
}

// Stop stops claiming new work and waits for running attempts to finish
// until ctx ends. Attempts still running then are canceled; once each has
// returned (an exec agent's process group is gone) its task is released
// in the store at once: queued again, or dead-lettered when that was its
// last attempt, with the code node_stopped, so that another node or the
// next start takes it over without waiting for its lease to expire. Stop
// returns ctx's error when the drain was cut. Stopping twice is safe.
func (c *Coordinator) Stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.started || c.stopCalled {
		c.mu.Unlock()
		return nil
	}
	c.stopCalled = true
	c.mu.Unlock()
	c.Drain()
	done := make(chan struct{})
	go func() { c.inflight.Wait(); close(done) }()
	select {
	case <-done:
		c.stopWork()
		return nil
	case <-ctx.Done():
		if n := c.attempts(); n > 0 {
			c.log.Warn("drain over: stopping running attempts and queueing their tasks again", "attempts", n)
		}
		c.stopWork()
		<-done
		return ctx.Err()
	}
}
