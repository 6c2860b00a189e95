package task

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// RetryPolicy bounds the automatic retries of one agent.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts before dead_letter (default 3).
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt (default 1s).
	InitialBackoff time.Duration
	// MaxBackoff caps the exponential backoff (default 1m).
	MaxBackoff time.Duration
	// Jitter is the random fraction (0..1) taken off each delay (default 0.2).
	Jitter float64
}

// Backoff returns the delay before attempt n+1 after attempt n failed:
// InitialBackoff·2^(n-1), capped at MaxBackoff, less a random jitter.
func (r RetryPolicy) Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(r.InitialBackoff) * math.Pow(2, float64(n-1))
	if max := float64(r.MaxBackoff); max > 0 && d > max {
		d = max
	}
	if r.Jitter > 0 {
		d -= d * r.Jitter * mrand.Float64()
	}
	return time.Duration(d)
}

func (r RetryPolicy) withDefaults() RetryPolicy {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 3
	}
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = time.Second
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = time.Minute
	}
	if r.Jitter < 0 || r.Jitter > 1 {
		r.Jitter = 0.2
	}
	return r
}

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
	// Gates run around every execution, in order.
	Gates []Gate
	// Node names this process in records (default hostname-pid).
	Node string
	// Workers bounds concurrent attempts on this node (default 16).
	Workers int
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
	// Now is the clock (default time.Now).
	Now func() time.Time
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
	gates    []Gate
	node     string
	workers  int
	leaseFor time.Duration
	poll     time.Duration
	idemTTL  time.Duration
	broker   *Broker
	relay    Relay
	observer Observer
	log      *slog.Logger
	clock    func() time.Time

	wake    chan struct{}
	slots   chan struct{}
	claimN  atomic.Uint64
	mu      sync.Mutex
	running map[string]context.CancelFunc
	// backlog says queued work may be waiting for a free worker.
	backlog atomic.Bool
	// stopPending holds tasks whose attempt was to be stopped before it
	// had registered in running (claimed, not yet executing), by when.
	stopPending map[string]time.Time
	started     bool
	stopped     bool
	runCtx      context.Context    // attempts' parent context, set by Start
	stopWork    context.CancelFunc // cancels runCtx: the drain is over
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
		gates:       opts.Gates,
		node:        opts.Node,
		workers:     opts.Workers,
		leaseFor:    opts.LeaseFor,
		poll:        opts.PollInterval,
		idemTTL:     opts.IdempotencyTTL,
		broker:      opts.Broker,
		relay:       opts.Relay,
		observer:    opts.Observer,
		log:         opts.Logger,
		clock:       opts.Now,
		wake:        make(chan struct{}, 1),
		running:     map[string]context.CancelFunc{},
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
		c.clock = time.Now
	}
	c.slots = make(chan struct{}, c.workers)
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

func (c *Coordinator) now() time.Time { return c.clock().UTC().Truncate(time.Microsecond) }

// NewID returns a new UUIDv7 string (RFC 9562): 48 bits of Unix
// milliseconds, then 74 random bits. Time-ordered ids keep the stores'
// B-tree inserts (task ids, their records, messages and artifacts) on the
// newest pages instead of a random page per task, which is most of what a
// group commit writes; they also sort by creation time.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[6:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = (b[6] & 0x0f) | 0x70
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// SubmitRequest asks the Coordinator to run a new task.
type SubmitRequest struct {
	// Envelope describes the task. TaskID, ContextID, CreatedAt and an empty
	// IdempotencyKey (which then defaults to the input message id) are
	// filled in.
	Envelope Envelope
	// Agent names the agent; when empty it is resolved from Envelope.Action.
	// When both are given they must agree.
	Agent string
}

// SubmitResult is the outcome of Submit.
type SubmitResult struct {
	Task *Task
	// Duplicate is true when the idempotency key named an existing task with
	// the same payload: nothing new was run.
	Duplicate bool
}

// Limits on envelope fields, enforced at submit.
const (
	maxFieldLen = 512
	maxParts    = 256
)

// Limits on caller metadata: the envelope's, the input message's (and a
// continuing message's) and each part's metadata object may have at most
// MaxMetadataKeys top-level keys and take at most MaxMetadataBytes as JSON.
// Submit and Continue refuse more with CodeInvalidArgument.
const (
	MaxMetadataKeys  = 256
	MaxMetadataBytes = 64 << 10
)

// Submit validates an envelope, records it and queues it (or records its
// rejection). Caller errors (unknown agent, malformed envelope, idempotency
// conflict, an envelope naming another actor than the authenticated caller
// in ctx) return an *Error and store nothing.
func (c *Coordinator) Submit(ctx context.Context, req SubmitRequest) (*SubmitResult, error) {
	env := req.Envelope
	spec, err := c.resolve(req.Agent, env.Action)
	if err != nil {
		return nil, err
	}
	env.Action = spec.Action
	if err := c.validateEnvelope(&env); err != nil {
		return nil, err
	}
	if _, err := ResolveActor(env.Actor, Caller(ctx)); err != nil {
		// An authenticated caller submits only as itself.
		return nil, err
	}
	now := c.now()
	if env.TaskID == "" {
		env.TaskID = NewID()
	}
	if env.ContextID == "" {
		env.ContextID = NewID()
	}
	if env.IdempotencyKey == "" {
		env.IdempotencyKey = env.Input.ID
	}
	if env.CorrelationID == "" {
		env.CorrelationID = env.TaskID
	}
	env.CreatedAt = now
	env.Input.TaskID = env.TaskID
	env.Input.ContextID = env.ContextID
	if env.Input.Role == "" {
		env.Input.Role = RoleUser
	}

	t := &Task{
		ID:          env.TaskID,
		ContextID:   env.ContextID,
		Agent:       spec.Name,
		Envelope:    env,
		PayloadHash: env.PayloadHash(),
		MaxAttempts: spec.Retry.MaxAttempts,
		History:     []Message{env.Input},
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	submitted, _ := json.Marshal(map[string]any{"envelope": env, "payloadHash": t.PayloadHash, "agent": spec.Name})
	p := CreateParams{
		Task:  t,
		Audit: []AuditInput{{Kind: AuditSubmitted, TaskID: t.ID, Actor: env.Actor, Data: submitted}},
		Node:  c.node,
		Now:   now,
	}
	if c.idemTTL > 0 {
		p.IdempotencyTTL = c.idemTTL
	}
	p.Steps, err = c.admission(ctx, spec, &env)
	if err != nil {
		return nil, err
	}
	// With a worker free, claim the task in the same transaction and run it
	// at once: one transaction and no dispatcher round trip saved.
	runCtx, slot := c.trySlot()
	if slot {
		p.Claim = &ClaimParams{Owner: c.nextOwner(), Node: c.node, LeaseFor: c.leaseFor}
	}
	stored, err := c.store.CreateTask(ctx, p)
	if slot && (err != nil || stored.State != StateInProgress) {
		c.releaseSlot()
	}
	if errors.Is(err, ErrDuplicate) && stored != nil {
		if stored.PayloadHash != t.PayloadHash {
			return nil, Errorf(CodeConflict, "idempotency key %q of actor %q already names task %s with a different payload", env.IdempotencyKey, env.Actor, stored.ID)
		}
		return &SubmitResult{Task: stored, Duplicate: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("submit task: %w", err)
	}
	from := StateRequested
	for _, s := range p.Steps {
		c.observe(spec.Name, from, s.To)
		from = s.To
	}
	switch stored.State {
	case StateInProgress:
		c.observe(spec.Name, StateQueued, StateInProgress)
		c.publishStatus(stored)
		c.launch(runCtx, stored)
	case StateQueued:
		c.publishStatus(stored)
		c.kick()
	default:
		c.publishStatus(stored)
	}
	return &SubmitResult{Task: stored}, nil
}

// trySlot takes a worker slot if the coordinator runs and one is free. The
// slot counts as in flight at once, under the lock Stop takes, so Stop
// always waits for it; give it back with releaseSlot or use it with launch.
func (c *Coordinator) trySlot() (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.stopped {
		return nil, false
	}
	select {
	case c.slots <- struct{}{}:
		c.inflight.Add(1)
		return c.runCtx, true
	default:
		return nil, false
	}
}

func (c *Coordinator) releaseSlot() {
	<-c.slots
	c.inflight.Done()
}

func (c *Coordinator) nextOwner() string {
	return fmt.Sprintf("%s/%d", c.node, c.claimN.Add(1))
}

// launch runs a claimed task on the slot (and in-flight count) its claimer
// took.
func (c *Coordinator) launch(ctx context.Context, t *Task) {
	go func() {
		c.execute(ctx, t)
		c.releaseSlot()
		// Work queued while every worker was busy waits for a free one:
		// wake the dispatcher now rather than at its next poll.
		if c.backlog.Load() {
			c.kick()
		}
	}()
}

func (c *Coordinator) resolve(agentName, action string) (*AgentSpec, error) {
	if agentName != "" {
		spec, ok := c.agents[agentName]
		if !ok {
			return nil, Errorf(CodeNotFound, "no agent named %q", agentName)
		}
		if action != "" && action != spec.Action {
			return nil, Errorf(CodeInvalidArgument, "agent %q serves action %q, not %q", agentName, spec.Action, action)
		}
		return spec, nil
	}
	if action == "" {
		return nil, Errorf(CodeInvalidArgument, "envelope names neither an agent nor an action")
	}
	spec, ok := c.byAction[action]
	if !ok {
		return nil, Errorf(CodeNotFound, "no agent serves action %q", action)
	}
	return spec, nil
}

func (c *Coordinator) validateEnvelope(env *Envelope) error {
	if env.Actor == "" {
		return Errorf(CodeInvalidArgument, "envelope.actor is required")
	}
	fields := map[string]string{
		"actor": env.Actor, "matter": env.Matter, "resource": env.Resource, "action": env.Action,
		"idempotencyKey": env.IdempotencyKey, "policyRef": env.PolicyRef, "approvalRef": env.ApprovalRef,
		"correlationId": env.CorrelationID, "contextId": env.ContextID, "taskId": env.TaskID,
	}
	for name, v := range fields {
		if len(v) > maxFieldLen {
			return Errorf(CodeInvalidArgument, "envelope.%s is longer than %d bytes", name, maxFieldLen)
		}
	}
	if err := checkMetadata(env.Metadata); err != nil {
		return Errorf(CodeInvalidArgument, "envelope.metadata %v", err)
	}
	if err := checkMetadata(env.Input.Metadata); err != nil {
		return Errorf(CodeInvalidArgument, "envelope.input.metadata %v", err)
	}
	if len(env.Input.Parts) == 0 {
		return Errorf(CodeInvalidArgument, "envelope.input has no parts")
	}
	if len(env.Input.Parts) > maxParts {
		return Errorf(CodeInvalidArgument, "envelope.input has more than %d parts", maxParts)
	}
	for i, p := range env.Input.Parts {
		if err := validatePart(p); err != nil {
			return Errorf(CodeInvalidArgument, "envelope.input.parts[%d]: %v", i, err)
		}
	}
	return nil
}

// checkMetadata applies MaxMetadataKeys and MaxMetadataBytes to one
// metadata object; the error reads after the object's name.
func checkMetadata(m map[string]any) error {
	if len(m) == 0 {
		return nil
	}
	if len(m) > MaxMetadataKeys {
		return fmt.Errorf("has %d keys; at most %d are allowed", len(m), MaxMetadataKeys)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("is not JSON: %w", err)
	}
	if len(b) > MaxMetadataBytes {
		return fmt.Errorf("takes %d bytes as JSON; at most %d are allowed", len(b), MaxMetadataBytes)
	}
	return nil
}

func validatePart(p Part) error {
	if err := checkMetadata(p.Metadata); err != nil {
		return fmt.Errorf("metadata %w", err)
	}
	switch p.Kind {
	case PartText:
	case PartData:
		if !json.Valid(p.Data) {
			return errors.New("data is not valid JSON")
		}
	case PartRaw:
	case PartURL:
		if p.URL == "" {
			return errors.New("url is empty")
		}
	default:
		return fmt.Errorf("unknown part kind %q", p.Kind)
	}
	return nil
}

// admission decides, before anything is stored, whether the task is queued
// or rejected, and returns the steps that record the decision.
func (c *Coordinator) admission(ctx context.Context, spec *AgentSpec, env *Envelope) ([]Step, error) {
	reject := func(d Decision, audit []AuditInput) []Step {
		return []Step{{To: StateFailed, ErrorCode: d.Code, Reason: d.Reason, PolicyVersion: d.Version, Rejected: true, Audit: audit}}
	}
	if !c.perms.Allows(env.Actor, spec.Action) {
		d := Decision{Allow: false, Code: CodeForbidden, Reason: fmt.Sprintf("actor %q may not call action %q", env.Actor, spec.Action)}
		return reject(d, []AuditInput{c.decisionAudit(env, StageSubmit, d)}), nil
	}
	if !spec.Sensitive {
		return []Step{{To: StateValidated}, {To: StateQueued}}, nil
	}
	d, err := c.decide(ctx, StageSubmit, spec, env)
	if err != nil {
		return nil, err
	}
	audit := []AuditInput{c.decisionAudit(env, StageSubmit, d)}
	if !d.Allow {
		return reject(d, audit), nil
	}
	return []Step{{To: StateValidated, PolicyVersion: d.Version, Audit: audit}, {To: StateQueued, PolicyVersion: d.Version}}, nil
}

// decide applies the sensitive-action rules: both references are required,
// then the policy engine has the last word.
func (c *Coordinator) decide(ctx context.Context, stage Stage, spec *AgentSpec, env *Envelope) (Decision, error) {
	if spec.DryRun && !c.policyCovers(spec.Action) {
		return Decision{Allow: true, Reason: fmt.Sprintf("simulation: no policy covers action %q, so it runs only as a dry run, without approval", spec.Action)}, nil
	}
	var missing []string
	if env.PolicyRef == "" {
		missing = append(missing, "policyRef")
	}
	if env.ApprovalRef == "" {
		missing = append(missing, "approvalRef")
	}
	if len(missing) > 0 {
		return Decision{Code: CodeApprovalRequired, Reason: fmt.Sprintf("action %q is sensitive and needs %v in the envelope", spec.Action, missing)}, nil
	}
	if c.policy == nil {
		return Decision{Code: CodePolicyDenied, Reason: "no policy engine is configured for sensitive actions"}, nil
	}
	d, err := c.policy.Decide(ctx, PolicyInput{Stage: stage, Envelope: env, Agent: spec.Name, Sensitive: true})
	if err != nil {
		return Decision{}, fmt.Errorf("policy decision: %w", err)
	}
	if !d.Allow && d.Code == "" {
		d.Code = CodePolicyDenied
	}
	return d, nil
}

// policyCovers reports whether the policy engine could allow action.
func (c *Coordinator) policyCovers(action string) bool {
	if c.policy == nil {
		return false
	}
	if pc, ok := c.policy.(PolicyCoverage); ok {
		return pc.Covers(action)
	}
	return true
}

func (c *Coordinator) decisionAudit(env *Envelope, stage Stage, d Decision) AuditInput {
	data, _ := json.Marshal(map[string]any{
		"stage": stage, "action": env.Action, "policyRef": env.PolicyRef, "approvalRef": env.ApprovalRef, "decision": d,
	})
	return AuditInput{Kind: AuditPolicy, TaskID: env.TaskID, Actor: env.Actor, Data: data}
}

// Get returns a task; historyLength < 0 returns the whole history. An
// authenticated caller (WithCaller) gets CodeNotFound for another actor's
// task, as for a task that does not exist; so do Timeline, Cancel, Retry,
// Continue, Subscribe, Wait and the push config operations.
func (c *Coordinator) Get(ctx context.Context, id string, historyLength int) (*Task, error) {
	return c.read(ctx, id, historyLength)
}

func (c *Coordinator) notFound(id string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return &Error{Code: CodeNotFound, Message: fmt.Sprintf("task %s not found", id), Err: err}
	}
	return err
}

// List lists tasks. An authenticated caller (WithCaller) lists only its own
// tasks: p.Actor is set to it, and a p.Actor naming another actor lists
// nothing.
func (c *Coordinator) List(ctx context.Context, p ListParams) (*TaskPage, error) {
	if err := p.resolvePageSize(); err != nil {
		return nil, err
	}
	for _, s := range p.States {
		if !s.Valid() {
			return nil, Errorf(CodeInvalidArgument, "unknown state %q", s)
		}
	}
	if caller := Caller(ctx); caller != "" {
		if p.Actor != "" && p.Actor != caller {
			return &TaskPage{Tasks: []*Task{}}, nil
		}
		p.Actor = caller
	}
	page, err := c.store.ListTasks(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return page, nil
}

// Timeline returns a task's execution record.
func (c *Coordinator) Timeline(ctx context.Context, id string) ([]Record, error) {
	if _, err := c.read(ctx, id, 0); err != nil {
		return nil, err
	}
	return c.store.Records(ctx, id)
}

// Cancel cancels a task that has not finished. A running attempt is stopped.
func (c *Coordinator) Cancel(ctx context.Context, id, reason string) (*Task, error) {
	if reason == "" {
		reason = "canceled by request"
	}
	for range 5 {
		t, err := c.read(ctx, id, 0)
		if err != nil {
			return nil, err
		}
		if !t.State.Cancelable() {
			return t, Errorf(CodeNotCancelable, "task %s is %s and can no longer be canceled", id, t.State)
		}
		nt, err := c.transition(ctx, t, TransitionParams{TaskID: id, From: t.State, To: StateCanceled, Reason: reason, ErrorCode: ""})
		if errors.Is(err, ErrStateConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		c.stopAttempt(id, true)
		return nt, nil
	}
	return nil, Errorf(CodeUnavailable, "task %s kept changing state; cancel again", id)
}

// Retry queues a failed or dead-lettered task again. A manual retry starts
// a new turn: the task gets its agent's MaxAttempts again (attempt 1 of
// MaxAttempts at the next claim), with backoff starting from the initial
// delay; Attempt keeps counting every claim. Rejected tasks are not
// retryable.
func (c *Coordinator) Retry(ctx context.Context, id string) (*Task, error) {
	t, err := c.read(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if t.Rejected {
		return t, Errorf(CodeNotRetryable, "task %s was rejected (%s: %s); submit a new task instead", id, t.ErrorCode, t.Reason)
	}
	if t.State != StateFailed && t.State != StateDeadLetter {
		return t, Errorf(CodeNotRetryable, "task %s is %s; only failed or dead_letter tasks can be retried", id, t.State)
	}
	return c.requeue(ctx, t, TransitionParams{From: t.State, Reason: "manual retry"})
}

// requeue moves t back to queued on a caller's request (retry, answer),
// which starts a new turn (Record.StartsTurn).
func (c *Coordinator) requeue(ctx context.Context, t *Task, p TransitionParams) (*Task, error) {
	p.TaskID, p.To, p.RunAfter, p.NewTurn = t.ID, StateQueued, c.now(), true
	nt, err := c.transition(ctx, t, p)
	if errors.Is(err, ErrStateConflict) {
		return nil, Errorf(CodeConflict, "task %s changed state meanwhile; look again", t.ID)
	}
	return nt, err
}

// Continue delivers the caller's answer to a task waiting in
// input_required and queues it again.
func (c *Coordinator) Continue(ctx context.Context, id string, msg Message) (*Task, error) {
	t, err := c.read(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if t.State != StateInputRequired {
		if t.State.Terminal() {
			return t, Errorf(CodeUnsupported, "task %s is %s and accepts no more messages", id, t.State)
		}
		return t, Errorf(CodeConflict, "task %s is %s, not waiting for input", id, t.State)
	}
	if len(msg.Parts) == 0 {
		return nil, Errorf(CodeInvalidArgument, "message has no parts")
	}
	if err := checkMetadata(msg.Metadata); err != nil {
		return nil, Errorf(CodeInvalidArgument, "message.metadata %v", err)
	}
	for i, p := range msg.Parts {
		if err := validatePart(p); err != nil {
			return nil, Errorf(CodeInvalidArgument, "message.parts[%d]: %v", i, err)
		}
	}
	msg.TaskID, msg.ContextID = t.ID, t.ContextID
	if msg.Role == "" {
		msg.Role = RoleUser
	}
	return c.requeue(ctx, t, TransitionParams{From: StateInputRequired, Reason: "input received", Messages: []Message{msg}})
}

// Subscribe returns the task's stored state and a channel of the events that
// follow it. The channel closes when the subscription is dropped (call
// cancel) or falls behind; a consumer that sees it close early re-reads the
// task. Events already reflected in the snapshot are filtered out.
func (c *Coordinator) Subscribe(ctx context.Context, id string) (*Task, <-chan Event, func(), error) {
	return c.subscribe(ctx, id, -1, subscriberBuffer)
}

func (c *Coordinator) subscribe(ctx context.Context, id string, historyLength, buffer int) (*Task, <-chan Event, func(), error) {
	ch, cancel := c.broker.subscribe(id, buffer)
	t, err := c.read(ctx, id, historyLength)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	out := make(chan Event, 16)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for ev := range ch {
			if ev.Kind == EventStatus && ev.Seq <= t.Seq {
				continue
			}
			select {
			case out <- ev:
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return t, out, func() { once.Do(func() { close(done); cancel() }) }, nil
}

// Wait blocks until the task is terminal or waits for input, and returns it
// with its whole history.
func (c *Coordinator) Wait(ctx context.Context, id string) (*Task, error) {
	for {
		t, ch, cancel, err := c.subscribe(ctx, id, -1, waiterBuffer)
		if err != nil {
			return nil, err
		}
		if t.State.Terminal() || t.State.Interrupted() {
			cancel()
			return t, nil
		}
		final := false
	loop:
		for {
			select {
			case <-ctx.Done():
				cancel()
				return nil, ctx.Err()
			case ev, ok := <-ch:
				if !ok {
					break loop
				}
				if ev.Final {
					final = true
					break loop
				}
			}
		}
		cancel()
		if final {
			return c.Get(ctx, id, -1)
		}
	}
}

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
	nt, err := c.store.Transition(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("task %s %s → %s: %w", p.TaskID, p.From, p.To, err)
	}
	c.observe(t.Agent, p.From, p.To)
	if p.To == StateQueued {
		c.kickAt(p.RunAfter)
	}
	if t.complete {
		// The caller holds the whole task (history and artifacts as
		// stored), so subscribers get it complete and need not read it.
		nt.History = append(slices.Clone(t.History), p.Messages...)
		nt.Artifacts = mergeArtifacts(t.Artifacts, p.Artifacts)
		nt.complete = true
	}
	c.publishStatus(nt)
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

func (c *Coordinator) observe(agent string, from, to State) {
	if c.observer != nil {
		c.observer.Transition(agent, from, to)
	}
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

// SubmitAndWait submits like Submit and waits like Wait. It listens before
// the task exists, so a task that finishes on this node is answered from
// its final event without reading it back.
func (c *Coordinator) SubmitAndWait(ctx context.Context, req SubmitRequest) (*SubmitResult, error) {
	if req.Envelope.TaskID == "" {
		req.Envelope.TaskID = NewID()
	}
	ch, cancel := c.broker.subscribe(req.Envelope.TaskID, waiterBuffer)
	defer cancel()
	res, err := c.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	t := res.Task
	if t.State.Terminal() || t.State.Interrupted() {
		// Rejected at submit, or a duplicate of a finished task: the
		// returned task is whole.
		return res, nil
	}
	if !res.Duplicate {
		whole, err := finalEvent(ctx, ch)
		if err != nil {
			return nil, err
		}
		if whole != nil {
			res.Task = whole
			return res, nil
		}
	}
	// A duplicate still running, a final event without the whole task, or
	// a subscription that fell behind: read it.
	if res.Task, err = c.Wait(ctx, t.ID); err != nil {
		return nil, err
	}
	return res, nil
}

// finalEvent waits for the final event on ch and returns its task when the
// event carries it whole; nil when it does not or ch closed first.
func finalEvent(ctx context.Context, ch <-chan Event) (*Task, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-ch:
			if !ok {
				return nil, nil
			}
			if !ev.Final {
				continue
			}
			if ev.Complete {
				return ev.Task, nil
			}
			return nil, nil
		}
	}
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
	c.runCtx, c.stopWork = context.WithCancel(base)
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

// Stop stops claiming new work and waits for running attempts to finish
// until ctx ends; attempts still running then are canceled and their leases
// left to expire, so another start picks them up. Stopping twice is safe.
func (c *Coordinator) Stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.started || c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	c.mu.Unlock()
	c.stop()
	c.loops.Wait()
	done := make(chan struct{})
	go func() { c.inflight.Wait(); close(done) }()
	select {
	case <-done:
		c.stopWork()
		return nil
	case <-ctx.Done():
		c.stopWork()
		<-done
		return ctx.Err()
	}
}

// kickAt wakes the dispatcher when a task queued for later becomes due, so
// a retry's backoff is not rounded up to the next poll.
func (c *Coordinator) kickAt(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.AfterFunc(d, c.kick)
		return
	}
	c.kick()
}

func (c *Coordinator) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Coordinator) dispatchLoop(ctx context.Context) {
	defer c.loops.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
			// A kick is for work this node queued; its own backoffs wake it
			// through kickAt, so the poll timer keeps running as it is.
			c.claimAndRun(ctx)
			continue
		case <-timer.C:
		}
		c.claimAndRun(ctx)
		// Poll: also catch tasks that other processes queued for later.
		next := c.poll
		if at, err := c.store.NextRunAfter(ctx); err == nil && !at.IsZero() {
			if d := at.Sub(c.clock()); d < next {
				next = max(d, time.Millisecond)
			}
		}
		timer.Reset(next)
	}
}

// claimAndRun claims as many ready tasks as there are free workers and
// starts them, repeating while every claimed slot was filled.
func (c *Coordinator) claimAndRun(ctx context.Context) {
	for ctx.Err() == nil {
		// Assume a backlog until a claim finds fewer tasks than free
		// workers; set before counting the free slots, so an attempt that
		// ends after the count sees it and wakes the dispatcher again.
		c.backlog.Store(true)
		free := 0
		for free < cap(c.slots) {
			select {
			case c.slots <- struct{}{}:
				c.inflight.Add(1)
				free++
				continue
			default:
			}
			break
		}
		if free == 0 {
			return
		}
		tasks, err := c.store.Claim(ctx, ClaimParams{Owner: c.nextOwner(), Node: c.node, Now: c.now(), LeaseFor: c.leaseFor, Limit: free})
		if err != nil && ctx.Err() == nil {
			c.log.Error("claim tasks", "err", err)
		}
		for range free - len(tasks) {
			c.releaseSlot()
		}
		for _, t := range tasks {
			c.observe(t.Agent, StateQueued, StateInProgress)
			c.publishStatus(t)
			c.launch(c.runCtx, t)
		}
		if len(tasks) < free {
			c.backlog.Store(false)
			return
		}
	}
}

func (c *Coordinator) reapLoop(ctx context.Context) {
	defer c.loops.Done()
	every := min(c.leaseFor/2, time.Second)
	lastPurge := time.Now().Add(-purgeEvery) // purge once at start
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.ReapExpired(ctx)
		if time.Since(lastPurge) >= purgeEvery {
			lastPurge = time.Now()
			if n, err := c.store.PurgeIdempotencyKeys(ctx, c.now()); err != nil && ctx.Err() == nil {
				c.log.Warn("purge expired idempotency keys", "err", err)
			} else if n > 0 {
				c.log.Debug("purged expired idempotency keys", "count", n)
			}
		}
	}
}

// purgeEvery is how often expired idempotency keys are deleted.
const purgeEvery = time.Minute

// ReapExpired requeues (or dead-letters, when attempts are spent) tasks whose
// lease ended: their worker crashed or was cut off.
func (c *Coordinator) ReapExpired(ctx context.Context) {
	now := c.now()
	tasks, err := c.store.ExpiredLeases(ctx, now, 100)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list expired leases", "err", err)
		}
		return
	}
	for _, t := range tasks {
		if c.runningHere(t.ID) {
			// This node's attempt has not returned yet (its lease watch
			// is stopping it): a new attempt would run beside it. Its
			// own end records the outcome, or the next reap requeues it.
			continue
		}
		p := TransitionParams{
			TaskID: t.ID, From: StateInProgress, LeaseOwner: t.LeaseOwner, LeaseExpiredBefore: now,
			ErrorCode: CodeLeaseExpired, Reason: fmt.Sprintf("lease of %s expired during attempt %d of %d", t.LeaseOwner, t.TurnAttempt(), t.MaxAttempts),
		}
		used, spent := c.turnAttempts(t)
		if spec, ok := c.agents[t.Agent]; ok && !spent {
			p.To, p.RunAfter = StateQueued, now.Add(spec.Retry.Backoff(used))
		} else if !spent {
			p.To, p.RunAfter = StateQueued, now
		} else {
			p.To = StateDeadLetter
		}
		if _, err := c.transition(ctx, t, p); err != nil && !errors.Is(err, ErrStateConflict) {
			c.log.Error("requeue expired task", "task", t.ID, "err", err)
		}
	}
	if len(tasks) > 0 {
		c.kick()
	}
}

// execute runs one claimed attempt to its recorded end.
func (c *Coordinator) execute(parent context.Context, t *Task) {
	log := c.log.With("task", t.ID, "agent", t.Agent, "attempt", t.Attempt)
	spec, ok := c.agents[t.Agent]
	finish := func(p TransitionParams) {
		p.TaskID, p.From, p.LeaseOwner = t.ID, StateInProgress, t.LeaseOwner
		// The attempt's own context may be canceled; the record must still
		// be written.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 30*time.Second)
		defer cancel()
		if _, err := c.transition(wctx, t, p); err != nil {
			if errors.Is(err, ErrStateConflict) {
				log.Info("attempt result discarded: task moved on (canceled or lease lost)")
				// Whoever moved it may be another process (pactum tasks
				// cancel): tell this node's subscribers where it is now.
				if cur, gerr := c.store.GetTask(wctx, t.ID, 0); gerr == nil {
					c.publishStatus(cur)
				}
				return
			}
			log.Error("record attempt result", "err", err)
		}
	}
	if !ok {
		finish(TransitionParams{To: StateFailed, ErrorCode: CodeNotFound, Reason: fmt.Sprintf("agent %q is not configured on node %s", t.Agent, c.node)})
		return
	}

	ctx, cancel := context.WithTimeout(parent, spec.Timeout)
	defer cancel()
	c.register(t.ID, cancel)
	defer func() {
		c.mu.Lock()
		delete(c.running, t.ID)
		c.mu.Unlock()
	}()
	go c.renewLease(ctx, cancel, t, log)

	req := &Request{TaskID: t.ID, ContextID: t.ContextID, Agent: t.Agent, Attempt: t.Attempt, Envelope: t.Envelope, History: t.History}
	req.Message = t.Envelope.Input
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == RoleUser {
			req.Message = t.History[i]
			break
		}
	}

	var policyVersion string
	var audit []AuditInput
	if spec.Sensitive {
		d, err := c.decide(ctx, StageExecute, spec, &t.Envelope)
		if err != nil {
			finish(c.failure(ctx, spec, t, err))
			return
		}
		policyVersion = d.Version
		audit = append(audit, c.decisionAudit(&t.Envelope, StageExecute, d))
		if !d.Allow {
			finish(TransitionParams{To: StateFailed, ErrorCode: d.Code, Reason: d.Reason, PolicyVersion: policyVersion, Audit: audit})
			return
		}
	}
	if spec.DryRun {
		data, _ := json.Marshal(map[string]any{"dryRun": true, "agent": spec.Name, "action": spec.Action, "policyVersion": policyVersion})
		note := fmt.Sprintf("simulation (dry run): action %q was not performed; agent %q was not called", spec.Action, spec.Name)
		finish(TransitionParams{
			To: StateSucceeded, Reason: "simulation (dry run): agent not called", PolicyVersion: policyVersion, Audit: audit,
			Artifacts: []Artifact{{ID: "dry-run", Name: "dry-run", Description: "simulation: the agent was not called",
				Parts: []Part{TextPart(note), DataPart(data)}}},
		})
		return
	}
	for _, g := range c.gates {
		if err := g.Before(ctx, req); err != nil {
			finish(TransitionParams{To: StateFailed, ErrorCode: CodeGateBlocked, Reason: "pre-gate: " + err.Error(), PolicyVersion: policyVersion, Audit: audit})
			return
		}
	}

	acc := newAccumulator()
	emit := func(ch ArtifactChunk) error {
		if ch.Artifact.ID == "" {
			ch.Artifact.ID = "artifact-1"
		}
		acc.add(ch)
		c.publish(Event{Kind: EventArtifact, TaskID: t.ID, ContextID: t.ContextID, Seq: t.Seq, Chunk: &ch, At: c.now()})
		return ctx.Err()
	}
	start := time.Now()
	res, err := spec.Runner.Run(ctx, req, emit)
	if c.observer != nil {
		c.observer.AttemptFinished(spec.Name, time.Since(start), err)
	}
	if err == nil && res == nil {
		res = &Result{}
	}
	if err == nil {
		for _, g := range c.gates {
			if gerr := g.After(ctx, req, res); gerr != nil {
				finish(TransitionParams{To: StateFailed, ErrorCode: CodeGateBlocked, Reason: "post-gate: " + gerr.Error(), PolicyVersion: policyVersion, Audit: audit})
				return
			}
		}
	}
	if err != nil {
		if parent.Err() != nil {
			// Shutting down: leave the lease to expire so the task is
			// requeued by whoever runs next.
			log.Info("attempt interrupted by shutdown")
			return
		}
		p := c.failure(ctx, spec, t, err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.ErrorCode = CodeTimeout
			p.Reason = fmt.Sprintf("attempt %d of %d exceeded the agent timeout of %s", t.TurnAttempt(), t.MaxAttempts, spec.Timeout)
		}
		p.PolicyVersion, p.Audit = policyVersion, audit
		log.Warn("attempt failed", "to", p.To, "err", err)
		finish(p)
		return
	}
	arts := acc.merge(res.Artifacts)
	p := TransitionParams{To: StateSucceeded, Artifacts: arts, PolicyVersion: policyVersion, Audit: audit, StatusMessage: res.Message}
	if res.Message != nil {
		m := *res.Message
		if m.ID == "" {
			m.ID = NewID()
		}
		m.Role, m.TaskID, m.ContextID = RoleAgent, t.ID, t.ContextID
		p.StatusMessage = &m
		p.Messages = []Message{m}
	}
	if res.InputRequired {
		p.To, p.Reason = StateInputRequired, "agent asked for input"
	}
	finish(p)
}

// failure decides where a failed attempt goes: failed for permanent errors,
// queued with backoff while the turn has attempts left, dead_letter after
// its last.
func (c *Coordinator) failure(ctx context.Context, spec *AgentSpec, t *Task, err error) TransitionParams {
	code := ErrorCode(err)
	if code == CodeInternal {
		code = CodeAgentFailed
	}
	reason := err.Error()
	if len(reason) > 4096 {
		reason = reason[len(reason)-4096:]
	}
	if IsPermanent(err) {
		return TransitionParams{To: StateFailed, ErrorCode: code, Reason: reason}
	}
	used, spent := c.turnAttempts(t)
	if !spent {
		return TransitionParams{To: StateQueued, ErrorCode: code, Reason: reason, RunAfter: c.now().Add(spec.Retry.Backoff(used))}
	}
	return TransitionParams{To: StateDeadLetter, ErrorCode: code, Reason: fmt.Sprintf("attempt %d of %d failed: %s", used, t.MaxAttempts, reason)}
}

// turnAttempts returns how many attempts t's current turn has used and
// whether that is all of them. A turn starts when the task is submitted
// and again each time the caller answers it (input_required → queued) or
// retries it by hand (failed or dead_letter → queued): every turn gets
// MaxAttempts attempts, so a long conversation does not use up its retries
// and a manual retry is more than one try.
func (c *Coordinator) turnAttempts(t *Task) (used int, spent bool) {
	used = t.TurnAttempt()
	return used, used >= t.MaxAttempts
}

func (c *Coordinator) renewLease(ctx context.Context, cancel context.CancelFunc, t *Task, log *slog.Logger) {
	// Renewals come every third of a lease; after a failed one, sooner, so
	// that a passing error gets several more tries before the deadline
	// below gives up on the lease.
	every, retry := c.leaseFor/3, c.leaseFor/12
	next := time.NewTimer(every)
	defer next.Stop()
	// held is when this node's lease ends as far as it can know: the
	// claim's expiry, then each successful renewal's, counted from before
	// the renewal was sent so that it never overstates. Past it another
	// node may claim the task, so an attempt whose renewals kept failing
	// (the store unreachable) is stopped a third of a lease before then,
	// which leaves the runtime time to end it (an exec command's
	// kill_grace) and absorbs some clock skew between nodes.
	held := t.LeaseExpires
	if held.IsZero() {
		held = c.now().Add(c.leaseFor)
	}
	margin := c.leaseFor / 3
	expiry := time.NewTimer(held.Add(-margin).Sub(c.clock()))
	defer expiry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C:
			log.Warn("lease about to end without a renewal; stopping attempt", "lease_expires", held)
			cancel()
			return
		case <-next.C:
		}
		sent := c.now()
		err := c.store.RenewLease(ctx, RenewParams{TaskID: t.ID, Owner: t.LeaseOwner, Now: sent, LeaseFor: c.leaseFor})
		switch {
		case errors.Is(err, ErrStateConflict) || errors.Is(err, ErrNotFound):
			log.Info("lease lost; stopping attempt")
			cancel()
			return
		case err == nil:
			held = sent.Add(c.leaseFor)
			expiry.Reset(held.Add(-margin).Sub(c.clock()))
			next.Reset(every)
		default:
			if ctx.Err() == nil {
				log.Warn("renew lease", "err", err, "lease_expires", held)
			}
			next.Reset(retry)
		}
	}
}

// runningHere reports whether an attempt of task id is still executing on
// this node.
func (c *Coordinator) runningHere(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.running[id]
	return ok
}

// accumulator folds streamed chunks into whole artifacts so that the stored
// result holds what subscribers saw.
type accumulator struct {
	order []string
	byID  map[string]*Artifact
}

func newAccumulator() *accumulator { return &accumulator{byID: map[string]*Artifact{}} }

func (a *accumulator) add(ch ArtifactChunk) {
	cur, ok := a.byID[ch.Artifact.ID]
	if !ok || !ch.Append {
		art := ch.Artifact
		art.Parts = slices.Clone(art.Parts)
		if !ok {
			a.order = append(a.order, art.ID)
		}
		a.byID[art.ID] = &art
		return
	}
	for _, p := range ch.Artifact.Parts {
		n := len(cur.Parts)
		if n > 0 && p.Kind == PartText && cur.Parts[n-1].Kind == PartText {
			cur.Parts[n-1].Text += p.Text
			continue
		}
		cur.Parts = append(cur.Parts, p)
	}
}

// merge returns the streamed artifacts followed by the result's own; a
// result artifact with a streamed ID replaces the streamed one.
func (a *accumulator) merge(final []Artifact) []Artifact {
	out := make([]Artifact, 0, len(a.order)+len(final))
	seen := map[string]bool{}
	for _, f := range final {
		if f.ID != "" {
			seen[f.ID] = true
		}
	}
	for _, id := range a.order {
		if !seen[id] {
			out = append(out, *a.byID[id])
		}
	}
	for i, f := range final {
		if f.ID == "" {
			f.ID = fmt.Sprintf("artifact-%d", len(a.order)+i+1)
		}
		out = append(out, f)
	}
	return out
}
