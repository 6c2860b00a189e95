// Package a2aagent is the "a2a" agent runtime: it makes a remote A2A 1.0
// agent a pactum worker. Each attempt of a task sends the task's newest
// message to the remote agent with the official SDK
// (github.com/a2aproject/a2a-go/v2) and maps what comes back onto the
// domain: artifacts, a status message, a question for the caller, or an
// error that says whether a retry can help. pactum adds what the remote
// agent does not promise: a durable task, bounded retries, a dead-letter
// state and an audit trail.
//
// The agent card is fetched on the first call and cached; the client built
// from it is reused until Close. A card that could not be fetched is asked
// for again on the next call. After a call fails for want of a connection
// (or with a 5xx) the card is fetched again if it is older than 30 seconds,
// so that an agent that moved or changed its interfaces is followed.
//
// # Mapping
//
// The final remote state decides the attempt's outcome:
//
//	COMPLETED                     success: artifacts, and the last status message
//	a Message instead of a Task   success: the message, also as an artifact
//	INPUT_REQUIRED, AUTH_REQUIRED the task waits for the caller (Result.InputRequired)
//	FAILED                        retryable error carrying the remote's status text
//	REJECTED, CANCELED            permanent error
//
// Streamed artifact updates pass through as chunks while the remote task
// runs; the result holds the assembled artifacts. A remote task that has not
// finished when the exchange ends (a blocking call answered early, a stream
// cut short) is polled with GetTask until it does.
//
// Transport failures (connection refused or reset, 5xx, 408, 429, a stream
// cut short, the attempt's timeout) are retryable. Errors the remote agent
// declares about the request itself (invalid params, unsupported operation
// or content type, unauthenticated, ...) and HTTP 4xx are permanent.
//
// # Identity
//
// Every attempt sends a new message whose id derives from the local task id
// and the attempt number, so a resend of the same attempt is recognisable.
// Remote task and context ids are remembered per local task (and remote
// context ids per local context): a retry starts a new remote task in the
// same remote context; the answer to an input-required question continues
// the remote task that asked it. Only ids that came from the remote agent
// are ever sent to it. The question itself carries the remote ids in its
// metadata (key "pactum.a2a.remote"), so the answer reaches the right remote
// task even after pactum restarted. Before answering an AUTH_REQUIRED
// question the runtime looks at the remote task: if authentication happened
// out of band and the task went on, it follows the task to its outcome
// instead of sending the answer.
package a2aagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/google/uuid"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/header"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/task"
)

// Type is the runtime's type name in configuration.
const Type = "a2a"

// historyMetaKey marks the parts of earlier messages sent with
// Settings.History.
const historyMetaKey = "pactum.history"

const (
	// cancelTimeout bounds the cancel of a remote task the runtime gives up
	// on (its own attempt context is over by then).
	cancelTimeout = 5 * time.Second
	// Polling of a remote task that has not finished when the exchange
	// ended (a blocking call answered early, or a stream cut short).
	pollFirst = 200 * time.Millisecond
	pollMax   = 5 * time.Second
	// maxReasonLen bounds the remote text quoted in an error.
	maxReasonLen = 1000
)

// idNamespace scopes the message ids this runtime derives.
var idNamespace = uuid.MustParse("7f1d3c52-9a0e-4c61-8d2b-5e4f6a7b8c9d")

func init() { agent.Register(Type, build) }

func build(_ context.Context, spec agent.Spec) (agent.Agent, error) {
	var s Settings
	if err := spec.DecodeInto(&s); err != nil {
		return nil, err
	}
	return New(s, WithName(spec.Name))
}

// Option adjusts a runtime built by New.
type Option func(*Runtime)

// WithLogger sets the logger of the runtime's records. Default
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(r *Runtime) {
		if l != nil {
			r.log = l
		}
	}
}

// WithName sets the agent name that labels the runtime's log records.
// Default "".
func WithName(name string) Option { return func(r *Runtime) { r.name = name } }

// Compile-time checks of the optional interfaces.
var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.Canceler         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// Runtime is a remote A2A agent as a pactum agent. It is safe for concurrent
// use; build it with New.
type Runtime struct {
	name     string
	cfg      Settings
	log      *slog.Logger
	idle     interface{ CloseIdleConnections() }
	resolver *agentcard.Resolver
	factory  *a2aclient.Factory
	// hc is the client calls and card fetches use (the configured
	// headers on every request).
	hc       *http.Client
	sessions *sessions
	// resolving admits one card resolution at a time.
	resolving chan struct{}

	mu     sync.Mutex
	conn   *conn
	closed bool
}

// New returns a runtime for s, or an error naming the setting that is
// wrong. It applies defaults and expands ${VAR} references in Headers now,
// from the current environment. No network call is made: the agent card is
// fetched on first use.
func New(s Settings, opts ...Option) (*Runtime, error) {
	cfg := s.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	h, err := header.Expand(cfg.Headers, os.LookupEnv, "A2A", reservedHeaders)
	if err != nil {
		return nil, err
	}

	var base http.RoundTripper = http.DefaultTransport
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		// A transport of its own, so that Close can drop its connections.
		base = t.Clone()
	}
	authed, err := clientcreds.Wrap(cfg.OAuth2, traced.Transport(base))
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &httpTransport{base: authed, headers: h}}
	r := &Runtime{
		cfg:       cfg,
		log:       slog.Default(),
		resolver:  agentcard.NewResolver(hc),
		hc:        hc,
		factory:   newFactory(cfg.Transport, hc),
		sessions:  newSessions(),
		resolving: make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(r)
	}
	if c, ok := base.(interface{ CloseIdleConnections() }); ok {
		r.idle = c
	}
	return r, nil
}

// Card returns the remote agent's card: the one the runtime's calls use,
// fetched on first use.
func (r *Runtime) Card(ctx context.Context) (*a2a.AgentCard, error) {
	c, err := r.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer r.release(c)
	return c.card, nil
}

// HTTPClient returns the client the runtime's calls and card fetches use
// (the configured headers on every request), for reading documents the
// remote's card names (a contract).
func (r *Runtime) HTTPClient() *http.Client { return r.hc }

// Invoke runs one attempt and returns its result. Streamed artifact chunks,
// if the remote agent streams, are collected into the result.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream runs one attempt, passing the remote agent's artifact updates to
// emit in the order they arrive. The result's artifacts are the complete
// artifacts (chunks assembled, as the remote agent's final task lists them).
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

// Cancel asks the remote agent to cancel the remote task of the local task
// taskID, if one is known. A remote task that is already finished or gone is
// not an error.
func (r *Runtime) Cancel(ctx context.Context, taskID string) error {
	prev, ok := r.sessions.get(taskID)
	if !ok || prev.TaskID == "" {
		return nil
	}
	defer r.sessions.forget(taskID)
	c, err := r.acquire(ctx)
	if err != nil {
		return fmt.Errorf("a2a: cancel task %s: %w", taskID, err)
	}
	defer r.release(c)
	ctx, rec := withStatusRecorder(ctx)
	_, err = c.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: prev.TaskID})
	if err == nil || errors.Is(err, a2a.ErrTaskNotCancelable) || errors.Is(err, a2a.ErrTaskNotFound) {
		r.log.Info("a2a: forwarded cancel", "agent", r.name, "task", taskID, "remote_task", prev.TaskID, "result", errText(err))
		return nil
	}
	return r.callError(ctx, rec, "CancelTask", err)
}

// Close releases the client and idle connections. Calls in flight finish on
// the client they hold; later calls fail (retryably). Closing twice is safe.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	c := r.conn
	r.conn = nil
	destroy := c != nil && r.retireLocked(c)
	r.mu.Unlock()

	var err error
	if destroy {
		if derr := c.client.Destroy(); derr != nil {
			err = fmt.Errorf("a2a: close client: %w", derr)
		}
	}
	if r.idle != nil {
		r.idle.CloseIdleConnections()
	}
	return err
}

// Metadata describes the remote agent: from its card once a call fetched
// it, from the configuration before.
func (r *Runtime) Metadata() agent.Metadata {
	md := agent.Metadata{
		Type:        Type,
		Description: "remote A2A agent at " + r.cfg.displayURL(),
		Streaming:   r.cfg.Stream == nil || *r.cfg.Stream,
		InputModes:  []string{"text/plain"},
		OutputModes: []string{"text/plain"},
	}
	card, stream := r.cachedCard()
	if card == nil {
		return md
	}
	md.Streaming = stream
	if card.Description != "" {
		md.Description = card.Description
	}
	if len(card.DefaultInputModes) > 0 {
		md.InputModes = slices.Clone(card.DefaultInputModes)
	}
	if len(card.DefaultOutputModes) > 0 {
		md.OutputModes = slices.Clone(card.DefaultOutputModes)
	}
	return md
}

// run is one attempt.
func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.Timeout, errAttemptTimeout)
	defer cancel()
	ctx, rec := withStatusRecorder(ctx)
	log := r.log.With("agent", r.name, "task", req.TaskID, "attempt", req.Attempt)

	c, err := r.acquire(ctx)
	if err != nil {
		log.Debug("a2a: no client", "error", err)
		return nil, err
	}
	defer r.release(c)

	prev := r.sessions.lookup(req)
	a := &attempt{r: r, req: req, emit: emit, index: map[string]int{}}
	a.remote.ContextID = prev.ContextID
	if prev.Open {
		a.remote.TaskID = prev.TaskID
	}
	resumed := false
	if prev.Open && prev.Auth {
		resumed, err = a.resume(ctx, c, rec)
	}
	if !resumed && err == nil {
		send := &a2a.SendMessageRequest{
			Message: r.outgoing(req, prev),
			// Blocking (ReturnImmediately unset): the answer is the finished
			// task, or one that waits for input.
			Config: &a2a.SendMessageConfig{},
		}
		log.Debug("a2a: sending message", "message", send.Message.ID, "remote_task", send.Message.TaskID,
			"remote_context", send.Message.ContextID, "stream", c.stream)
		if c.stream {
			err = a.stream(ctx, c, rec, send)
		} else {
			err = a.send(ctx, c, rec, send)
		}
	}
	if err == nil && !a.final() {
		err = a.await(ctx, c, rec)
	}
	if err != nil {
		r.abandon(ctx, c, a, err, log)
		log.Debug("a2a: attempt failed", "remote_task", a.remote.TaskID, "error", err)
		return nil, err
	}
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errAttemptTimeout) && !a.succeeded() {
		// The caller canceled while the outcome arrived; a remote CANCELED
		// is most likely the echo of that cancel, forwarded by agent.Runner.
		return nil, r.interrupted(ctx, "exchange")
	}
	res, err := a.finish()
	log.Debug("a2a: attempt finished", "remote_task", a.remote.TaskID, "state", a.state.String(), "error", errText(err))
	return res, err
}

// outgoing builds the message of one attempt.
func (r *Runtime) outgoing(req *task.Request, prev remote) *a2a.Message {
	m := a2amap.MessageToA2A(req.Message)
	m.ID = derivedID(req, "message")
	m.Role = a2a.MessageRoleUser
	m.TaskID, m.ContextID = "", prev.ContextID
	if prev.Open {
		m.TaskID = prev.TaskID
	}
	m.ReferenceTasks = r.sessions.remoteTaskIDs(m.ReferenceTasks)
	delete(m.Metadata, remoteMetaKey)
	if r.cfg.History && !prev.Open {
		m.Parts = append(historyParts(req), m.Parts...)
	}
	return m
}

// historyParts returns the parts of the conversation's earlier messages,
// each marked with its message's role and id.
func historyParts(req *task.Request) a2a.ContentParts {
	var out a2a.ContentParts
	for _, h := range req.History {
		if h.ID == req.Message.ID {
			continue
		}
		for _, p := range a2amap.PartsToA2A(h.Parts) {
			if p.Metadata == nil {
				p.Metadata = map[string]any{}
			}
			p.Metadata[historyMetaKey] = map[string]any{"role": string(h.Role), "messageId": h.ID}
			out = append(out, p)
		}
	}
	return out
}

// abandon cleans up after a failed attempt. A remote task left running is
// canceled, so that the retry does not run beside it, unless the caller
// canceled the attempt: then agent.Runner forwards the cancel itself, and
// the remote ids must stay known until it does.
func (r *Runtime) abandon(ctx context.Context, c *conn, a *attempt, err error, log *slog.Logger) {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errAttemptTimeout) {
		return
	}
	if !task.IsPermanent(err) && task.ErrorCode(err) == task.CodeUnavailable {
		r.markStale(c)
	}
	if a.remote.TaskID == "" || !a.observed || a.final() {
		return
	}
	r.sessions.forget(a.req.TaskID)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, cerr := c.client.CancelTask(cctx, &a2a.CancelTaskRequest{ID: a.remote.TaskID}); cerr != nil {
		log.Warn("a2a: could not cancel the abandoned remote task", "remote_task", a.remote.TaskID, "error", cerr)
	}
}

// attempt is the state of one exchange with the remote agent.
type attempt struct {
	r    *Runtime
	req  *task.Request
	emit task.Emit

	remote remote
	// observed is set once the remote agent reported a task state.
	observed bool
	state    a2a.TaskState
	// status is the latest status message the remote agent sent;
	// stateMsg is the message of the latest status, if it had one.
	status, stateMsg *a2a.Message
	// reply is the message the remote agent answered with instead of a task.
	reply *a2a.Message
	// artifacts in the order first seen, assembled from chunks.
	artifacts []task.Artifact
	index     map[string]int
}

// final reports whether the exchange reached an outcome.
func (a *attempt) final() bool {
	return a.reply != nil || a.state.Terminal() ||
		a.state == a2a.TaskStateInputRequired || a.state == a2a.TaskStateAuthRequired
}

// succeeded reports whether the outcome is a success.
func (a *attempt) succeeded() bool {
	return a.reply != nil || a.state == a2a.TaskStateCompleted
}

func (a *attempt) stream(ctx context.Context, c *conn, rec *statusRecorder, send *a2a.SendMessageRequest) error {
	for ev, err := range c.client.SendStreamingMessage(ctx, send) {
		if err != nil {
			return a.r.callError(ctx, rec, "SendStreamingMessage", err)
		}
		if ev == nil {
			continue
		}
		// Leaving the loop stops the iterator, which closes the stream.
		if done, err := a.handle(ev); err != nil || done {
			return err
		}
	}
	return nil
}

func (a *attempt) send(ctx context.Context, c *conn, rec *statusRecorder, send *a2a.SendMessageRequest) error {
	res, err := c.client.SendMessage(ctx, send)
	if err != nil {
		return a.r.callError(ctx, rec, "SendMessage", err)
	}
	if res == nil {
		return task.Errorf(task.CodeAgentFailed, "a2a: SendMessage: %w", a2a.ErrInvalidAgentResponse)
	}
	_, err = a.handle(res)
	return err
}

// resume looks at a remote task that asked for authentication before
// answering it: authentication may have happened out of band, and the task
// moved on. Then the attempt follows the task to its outcome instead of
// sending the caller's message (resumed is true); a task that still waits
// gets the message.
func (a *attempt) resume(ctx context.Context, c *conn, rec *statusRecorder) (resumed bool, err error) {
	t, err := c.client.GetTask(ctx, &a2a.GetTaskRequest{ID: a.remote.TaskID})
	if err != nil {
		return false, a.r.callError(ctx, rec, "GetTask", err)
	}
	if t.Status.State == a2a.TaskStateAuthRequired {
		return false, nil
	}
	a.r.log.Debug("a2a: remote task went on without the answer", "agent", a.r.name, "task", a.req.TaskID,
		"remote_task", a.remote.TaskID, "state", t.Status.State.String())
	_, err = a.handle(t)
	return true, err
}

// await polls a remote task that has not reached an outcome.
func (a *attempt) await(ctx context.Context, c *conn, rec *statusRecorder) error {
	if a.remote.TaskID == "" {
		return task.Errorf(task.CodeUnavailable, "a2a: remote agent ended the exchange without a task or message: %w", a2a.ErrInvalidAgentResponse)
	}
	delay := pollFirst
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for !a.final() {
		select {
		case <-ctx.Done():
			return a.r.interrupted(ctx, "GetTask")
		case <-timer.C:
		}
		t, err := c.client.GetTask(ctx, &a2a.GetTaskRequest{ID: a.remote.TaskID})
		if err != nil {
			if errors.Is(err, a2a.ErrTaskNotFound) && ctx.Err() == nil {
				// The remote agent forgot a task it was running (it
				// restarted, say): a new attempt can still succeed.
				return task.Errorf(task.CodeUnavailable, "a2a: remote agent lost task %s: %w", a.remote.TaskID, err)
			}
			return a.r.callError(ctx, rec, "GetTask", err)
		}
		if _, err := a.handle(t); err != nil {
			return err
		}
		delay = min(2*delay, pollMax)
		timer.Reset(delay)
	}
	return nil
}

// handle takes in one event and reports whether the exchange is over.
func (a *attempt) handle(ev a2a.Event) (bool, error) {
	switch e := ev.(type) {
	case *a2a.Message:
		a.note(e.TaskID, e.ContextID)
		a.reply = e
		return true, nil
	case *a2a.Task:
		a.note(e.ID, e.ContextID)
		for _, art := range e.Artifacts {
			conv, err := a2amap.ArtifactFromA2A(art)
			if err != nil {
				return true, unusable(err)
			}
			a.put(conv, false)
		}
		a.setStatus(e.Status)
	case *a2a.TaskStatusUpdateEvent:
		a.note(e.TaskID, e.ContextID)
		a.setStatus(e.Status)
	case *a2a.TaskArtifactUpdateEvent:
		a.note(e.TaskID, e.ContextID)
		chunk, err := a2amap.ChunkFromA2A(e)
		if err != nil {
			return true, unusable(err)
		}
		a.put(chunk.Artifact, chunk.Append)
		if a.emit != nil {
			if err := a.emit(chunk); err != nil {
				return true, fmt.Errorf("a2a: pass on artifact chunk: %w", err)
			}
		}
		return false, nil
	default:
		return true, unusable(fmt.Errorf("unexpected event %T", ev))
	}
	return a.final(), nil
}

func unusable(err error) error {
	return task.Permanent(task.Errorf(task.CodeAgentFailed, "a2a: remote agent sent unusable content: %w", err))
}

// note records remote ids as soon as they are known, so that Cancel can
// reach the remote task while the attempt still runs.
func (a *attempt) note(taskID a2a.TaskID, contextID string) {
	changed := false
	if taskID != "" && taskID != a.remote.TaskID {
		a.remote.TaskID, changed = taskID, true
	}
	if contextID != "" && contextID != a.remote.ContextID {
		a.remote.ContextID, changed = contextID, true
	}
	if changed {
		a.r.sessions.put(a.req, remote{TaskID: a.remote.TaskID, ContextID: a.remote.ContextID})
	}
}

func (a *attempt) setStatus(s a2a.TaskStatus) {
	a.observed = true
	a.state = s.State
	a.stateMsg = s.Message
	if s.Message != nil {
		a.status = s.Message
	}
}

// put adds an artifact, replaces the one with its id, or (appendParts)
// extends it the way the A2A SDK does: parts appended, metadata merged.
func (a *attempt) put(art task.Artifact, appendParts bool) {
	i, ok := a.index[art.ID]
	switch {
	case !ok:
		a.index[art.ID] = len(a.artifacts)
		a.artifacts = append(a.artifacts, cloneArtifact(art))
	case appendParts:
		ex := &a.artifacts[i]
		ex.Parts = append(ex.Parts, art.Parts...)
		if len(art.Metadata) > 0 {
			if ex.Metadata == nil {
				ex.Metadata = map[string]any{}
			}
			maps.Copy(ex.Metadata, art.Metadata)
		}
	default:
		a.artifacts[i] = cloneArtifact(art)
	}
}

func cloneArtifact(art task.Artifact) task.Artifact {
	art.Parts = slices.Clone(art.Parts)
	art.Metadata = maps.Clone(art.Metadata)
	return art
}

// finish maps the outcome of the exchange onto a result or an error.
func (a *attempt) finish() (*task.Result, error) {
	sess := a.r.sessions
	if a.reply != nil {
		sess.forget(a.req.TaskID)
		msg, err := a.agentMessage(a.reply)
		if err != nil {
			return nil, err
		}
		reply := task.Artifact{ID: derivedID(a.req, "reply"), Name: "reply", Parts: slices.Clone(msg.Parts)}
		return &task.Result{Artifacts: append(a.artifacts, reply), Message: msg}, nil
	}

	switch a.state {
	case a2a.TaskStateCompleted:
		sess.forget(a.req.TaskID)
		msg, err := a.agentMessage(a.status)
		if err != nil {
			return nil, err
		}
		return &task.Result{Artifacts: a.artifacts, Message: msg}, nil

	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		open := remote{TaskID: a.remote.TaskID, ContextID: a.remote.ContextID, Open: true, Auth: a.state == a2a.TaskStateAuthRequired}
		sess.put(a.req, open)
		msg, err := a.agentMessage(a.status)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			what := "input"
			if a.state == a2a.TaskStateAuthRequired {
				what = "authentication"
			}
			msg = &task.Message{
				ID: derivedID(a.req, "question"), Role: task.RoleAgent,
				TaskID: a.req.TaskID, ContextID: a.req.ContextID,
				Parts: []task.Part{task.TextPart("The remote agent requires " + what + ".")},
			}
		}
		if msg.Metadata == nil {
			msg.Metadata = map[string]any{}
		}
		msg.Metadata[remoteMetaKey] = remoteMeta(open)
		return &task.Result{InputRequired: true, Message: msg, Artifacts: a.artifacts}, nil

	case a2a.TaskStateFailed:
		sess.forget(a.req.TaskID)
		return nil, task.Errorf(task.CodeAgentFailed, "a2a: remote agent failed the task: %s", a.reason("no reason given"))

	case a2a.TaskStateRejected:
		sess.forget(a.req.TaskID)
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "a2a: remote agent rejected the task: %s", a.reason("no reason given")))

	case a2a.TaskStateCanceled:
		sess.forget(a.req.TaskID)
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "a2a: remote agent canceled the task: %s", a.reason("no reason given")))
	}
	// final() admits no other state.
	return nil, task.Errorf(task.CodeInternal, "a2a: unexpected remote state %s", a.state)
}

// agentMessage converts a message of the remote agent for the local task: it
// is the agent's message, about the local task in the local context. A
// remote message without an id gets a derived one.
func (a *attempt) agentMessage(m *a2a.Message) (*task.Message, error) {
	if m == nil {
		return nil, nil
	}
	cp := *m
	cp.Role = a2a.MessageRoleAgent
	msg, err := a2amap.MessageFromA2A(&cp)
	if err != nil {
		return nil, unusable(err)
	}
	if msg.ID == "" {
		msg.ID = derivedID(a.req, "status")
	}
	msg.TaskID, msg.ContextID = a.req.TaskID, a.req.ContextID
	msg.ReferenceTasks = nil
	return &msg, nil
}

// reason is the text of the message that came with the final state, for an
// error. (An earlier message, "working on it" say, would mislead.)
func (a *attempt) reason(fallback string) string {
	var b strings.Builder
	if a.stateMsg != nil {
		for _, p := range a.stateMsg.Parts {
			if p == nil {
				continue
			}
			if t := p.Text(); t != "" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(t)
			}
		}
	}
	s := strings.TrimSpace(b.String())
	if s == "" {
		return fallback
	}
	if len(s) > maxReasonLen {
		s = strings.ToValidUTF8(s[:maxReasonLen], "") + "…"
	}
	return s
}

// derivedID is a stable id for something an attempt creates: the same task,
// attempt and kind always give the same id.
func derivedID(req *task.Request, kind string) string {
	name := req.TaskID + "\x00" + strconv.Itoa(req.Attempt) + "\x00" + kind
	return uuid.NewSHA1(idNamespace, []byte(name)).String()
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
