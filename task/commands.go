package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

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

// Submit validates an envelope, records it and queues it (or records its
// rejection). Caller errors (unknown agent, malformed envelope, idempotency
// conflict, an envelope naming another actor than the authenticated caller
// in ctx) return an *Error and store nothing. The submission is a span
// (a child of the span context in ctx, such as an incoming traceparent's)
// whose context is stored with the task for its attempts to continue.
func (c *Coordinator) Submit(ctx context.Context, req SubmitRequest) (*SubmitResult, error) {
	return c.submitSpan(ctx, req, nil)
}

// blocking is what a submission that tells nobody of its task before it
// is stored (SubmitAndWait, SubmitAndFollow) shares with submit: a task
// this node claims at submit is then created speculatively.
type blocking struct {
	// follow: the caller streams the task while it runs (SubmitAndFollow),
	// so its attempt runs on a worker of its own and run stays nil.
	follow bool
	// lost receives the error when the task's speculative creation never
	// commits.
	lost chan error
	// committed, when set, is closed once the speculative creation
	// committed.
	committed chan struct{}
	// speculative, set by submit, says the task was created speculatively:
	// committed or lost will tell how that ended.
	speculative bool
	// run, set by submit, runs the attempt this node claimed for the task
	// and must be called once: the caller waits for the task anyway, so
	// its goroutine runs it rather than a new one (no hand-off there and
	// back).
	run func()
}

// submitSpan is Submit; b is submit's.
func (c *Coordinator) submitSpan(ctx context.Context, req SubmitRequest, b *blocking) (_ *SubmitResult, err error) {
	// The submission's span: a child of the caller's span when a transport
	// put an incoming traceparent in ctx. Its context is stored with the
	// task (Envelope.TraceParent), the parent of every attempt.
	ctx, span := c.tracer.Start(ctx, "submit", submitSpanOpts...)
	var res *SubmitResult
	defer func() {
		if res == nil && span.IsRecording() {
			span.SetName("submit " + orElse(req.Agent, req.Envelope.Action))
		}
		if res != nil && span.IsRecording() {
			span.SetName("submit " + res.Task.Agent)
			span.SetAttributes(AttrTaskID.String(res.Task.ID), AttrAgent.String(res.Task.Agent),
				AttrAction.String(res.Task.Envelope.Action), AttrActor.String(res.Task.Envelope.Actor),
				AttrContextID.String(res.Task.ContextID), AttrState.String(string(res.Task.State)),
				AttrDuplicate.Bool(res.Duplicate))
		}
		endSpan(span, err)
	}()
	res, err = c.submit(ctx, req, b)
	return res, err
}

// submit is Submit inside the submission's span. With b set (a blocking
// submission: SubmitAndWait) a task this node runs at once is created
// speculatively (CreateParams.Speculative): its creation may commit with
// its end, b.lost receives the error if the creation never commits, and
// b.run is its attempt, for the caller to run.
func (c *Coordinator) submit(ctx context.Context, req SubmitRequest, b *blocking) (*SubmitResult, error) {
	env := req.Envelope
	spec, err := c.resolve(req.Agent, env.Action)
	if err != nil {
		return nil, err
	}
	if spec.ChildOnly {
		// Not there for callers: the same answer as for an unknown agent.
		return nil, unknownAgent(req.Agent, env.Action)
	}
	env.Action = spec.Action
	if err := c.validateEnvelope(&env); err != nil {
		return nil, err
	}
	if _, err := ResolveActor(env.Actor, Caller(ctx)); err != nil {
		// An authenticated caller submits only as itself.
		return nil, err
	}
	if env.ParentTaskID != "" || env.Step != "" {
		return nil, Errorf(CodeInvalidArgument, "envelope.parentTaskId and envelope.step are set by pactum when a parent task spawns a child; a submitted task has neither")
	}
	if env.ReplayOf != "" {
		// The link names a task the caller may see: a replay does not
		// tell that another actor's task exists.
		if _, err := c.read(ctx, env.ReplayOf, 0); ErrorCode(err) == CodeNotFound {
			return nil, Errorf(CodeInvalidArgument, "envelope.replayOf: %v", err)
		} else if err != nil {
			return nil, fmt.Errorf("read the task replayed: %w", err)
		}
	}
	t, p, err := c.newTask(ctx, spec, env)
	if err != nil {
		return nil, err
	}
	if c.idemTTL > 0 {
		p.IdempotencyTTL = c.idemTTL
	}
	// With a worker free, claim the task in the same transaction and run it
	// at once: one transaction and no dispatcher round trip saved.
	runCtx, slot := c.trySlot(spec.pool)
	var ann *announcement
	if slot {
		p.Claim = &ClaimParams{Owner: c.nextOwner(), Node: c.node, LeaseFor: c.leaseFor}
		if b != nil && len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].To == StateQueued {
			// Nobody hears of the task before its creation is
			// committed: the caller waits for its end (or, following
			// it, for the commit), and the worker's writes of the task
			// return only once the creation is committed with them or
			// before them. (A task admission refused or held is
			// answered at once: not speculative.)
			p.Speculative = true
			id := t.ID
			ann = &announcement{c: c}
			p.Committed = func(err error) {
				if err == nil {
					ann.committed()
					if b.committed != nil {
						close(b.committed)
					}
					return
				}
				c.log.Error("task creation did not commit; its attempt is stopped", "task", id, "err", err)
				// Remembered if its attempt has not registered yet.
				c.stopAttempt(id, true)
				select {
				case b.lost <- err:
				default:
				}
			}
		}
	}
	stored, err := c.store.CreateTask(ctx, p)
	if slot && (err != nil || stored.State != StateInProgress) {
		c.releaseSlot(spec.pool)
	}
	if errors.Is(err, ErrDuplicate) && stored != nil {
		if stored.PayloadHash != t.PayloadHash {
			return nil, Errorf(CodeConflict, "idempotency key %q of actor %q already names task %s with a different payload", t.Envelope.IdempotencyKey, env.Actor, stored.ID)
		}
		return &SubmitResult{Task: stored, Duplicate: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("submit task: %w", err)
	}
	c.observeSteps(stored.ID, spec.Name, p.Steps)
	switch stored.State {
	case StateInProgress:
		c.observe(spec.Name, StateQueued, StateInProgress)
		c.logStep(stored.ID, spec.Name, StateQueued, StateInProgress, "claimed")
		if ann != nil {
			ann.stored(stored)
			b.speculative = true
			if !b.follow {
				b.run = func() { c.runClaimed(runCtx, stored) }
				break
			}
		} else {
			c.publishStatus(stored)
		}
		c.launch(runCtx, stored)
	case StateQueued:
		c.publishStatus(stored)
		c.kickPool(spec.pool)
	default:
		c.publishStatus(stored)
	}
	return &SubmitResult{Task: stored}, nil
}

// newTask fills in what Submit and a parent's spawn fill in for a new
// task of spec (ids, times, defaults), runs admission and returns the task
// with the CreateParams that store it (no idempotency, no claim).
func (c *Coordinator) newTask(ctx context.Context, spec *AgentSpec, env Envelope) (*Task, CreateParams, error) {
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
	// The span in ctx (a submission's, or the spawning parent's attempt)
	// is what the task's attempts continue.
	env.TraceParent = TraceParent(ctx)
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
	record := map[string]any{"envelope": env, "payloadHash": t.PayloadHash, "agent": spec.Name}
	// A token an identity provider issued is recorded by its subject and
	// issuer (never the token itself): who the provider vouched for.
	if id, ok := IdentityFrom(ctx); ok && id.Actor == env.Actor && id.Issuer != "" {
		record["subject"], record["issuer"] = id.Subject, id.Issuer
	}
	submitted, _ := json.Marshal(record)
	p := CreateParams{
		Task:  t,
		Audit: []AuditInput{{Kind: AuditSubmitted, TaskID: t.ID, Actor: env.Actor, Data: submitted}},
		Node:  c.node,
		Now:   now,
	}
	var err error
	if p.Steps, err = c.admission(ctx, spec, &t.Envelope); err != nil {
		return nil, CreateParams{}, err
	}
	return t, p, nil
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

// announcement publishes a speculatively created task's status once it is
// both stored (committed) and returned to submit, whichever comes last:
// observers (the dashboard, the pusher) read what an event names, so a
// task is announced only once readers can find it.
type announcement struct {
	c    *Coordinator
	mu   sync.Mutex
	snap *Task // set by stored
	done bool  // set by committed
}

// stored hands over the task as CreateTask returned it, before it runs.
func (a *announcement) stored(t *Task) {
	snap := *t
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		a.c.publishStatus(&snap)
		return
	}
	a.snap = &snap
}

// committed says the creation committed.
func (a *announcement) committed() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.snap != nil {
		a.c.publishStatus(a.snap)
		return
	}
	a.done = true
}
