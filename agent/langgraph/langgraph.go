// Package langgraph is the "langgraph" agent runtime: it runs a graph
// served by a LangGraph Agent Server (the Python `langgraph dev` and
// deployments, the JS `langgraphjs dev`; they speak one API) as a pactum
// agent.
//
// # Threads
//
// A task's conversation (its context id) is one thread on the server. The
// thread id is derived, not stored: a version 5 UUID of the agent's name
// and the context id. Each attempt creates the thread with if_exists
// do_nothing, so after a restart, or on another node sharing the store,
// the same conversation continues the same thread with no local state.
//
// # Runs
//
// An attempt streams one run (POST /threads/{id}/runs/stream) with the
// configured stream modes. AI message chunks (messages-tuple or messages
// mode) become artifact chunks; the final state becomes the answer: the
// last AI message's text, or the whole state as data (Settings.Output). A
// run that ends with a pending interrupt (__interrupt__) pauses the task in
// input_required with the interrupt's value as the question (text, or data
// for JSON); the question carries the thread and interrupt in its metadata
// (key "pactum.langgraph"), and the caller's answer resumes the run with
// command.resume. Runs on one thread queue behind each other
// (multitask_strategy enqueue), and a run goes on when its stream drops
// (on_disconnect continue).
//
// Every run carries the metadata pactum_turn: the task id and the id of
// the message it answers. Before starting a run an attempt looks for the
// run of its turn: one still pending or running is joined (its stream
// followed to the end), one that finished successfully gives its answer
// from the last checkpoint it wrote (the thread's history filtered by
// pactum_turn). So an attempt that pactum lost (a crash, a
// kill -9) is not run twice: the next attempt completes the same run.
//
// # Errors
//
// HTTP statuses follow the shared policy (internal/httpstatus): 5xx, 408,
// 423, 425 and 429 and transport failures are retryable, other statuses
// permanent (a wrong assistant id is a 404). A run that fails on the
// server (an "error" event, status error) is a retryable agent_failed; the
// task's retry policy decides. Cancel cancels the run on the server, as
// does an attempt that runs past its timeout.
package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/internal/lgstate"
	"github.com/pactum/pactum/task"
)

// Type is the runtime's type name in configuration.
const Type = "langgraph"

// metaKey names the metadata entry of a question message: the thread and
// the interrupt it came from. Messages are stored with the task, so the
// answer resumes the thread even after a restart.
const metaKey = "pactum.langgraph"

// Run metadata keys the runtime sets on every run it starts.
const (
	metaTurn = lgstate.MetaTurn
	metaTask = lgstate.MetaTask
)

// artifactName names the artifact of the answer.
const artifactName = "output"

const (
	// cancelTimeout bounds the cancel of a run the attempt gives up on.
	cancelTimeout = 5 * time.Second
	// settleWait bounds the wait for a run's status to leave running
	// after its stream ended.
	settleWait = 3 * time.Second
)

// Namespaces of the ids the runtime derives.
var (
	threadNamespace = uuid.MustParse("3b0c51f4-7a8e-4f0e-9d5c-2c6a1e8b9f47")
	idNamespace     = uuid.MustParse("a6f2e0d1-4c3b-4e5a-8f9d-1b2c3d4e5f60")
)

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

// WithName sets the agent's name, which scopes its thread ids and labels
// its log records. Default "".
func WithName(name string) Option { return func(r *Runtime) { r.name = name } }

// WithLogger sets the logger of the runtime's records. Default
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(r *Runtime) {
		if l != nil {
			r.log = l
		}
	}
}

// Compile-time checks of the optional interfaces.
var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.Canceler         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ agent.Rejoiner         = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// Runtime runs a graph on a LangGraph Agent Server. It is safe for
// concurrent use; build it with New.
type Runtime struct {
	name      string
	s         Settings
	log       *slog.Logger
	base      string // the URL without a trailing slash
	host      string // for errors and metadata
	header    http.Header
	transport *http.Transport
	client    *http.Client

	mu     sync.Mutex
	active map[string]remoteRun // by local task id
}

// remoteRun names a run on the server.
type remoteRun struct {
	thread, run string
	// canceled is shared by the attempt and Cancel, so that the run is
	// canceled once when both see the attempt end early.
	canceled *atomic.Bool
}

// New returns a runtime for s, or an error naming the setting that is
// wrong. It reads the API key from the environment now. No network call is
// made.
func New(s Settings, opts ...Option) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(s.URL) // validated
	r := &Runtime{
		s:      s,
		log:    slog.Default(),
		base:   strings.TrimSuffix(s.URL, "/"),
		host:   u.Host,
		header: http.Header{},
		active: map[string]remoteRun{},
	}
	r.header.Set("User-Agent", "pactum")
	r.header.Set("Accept", "application/json, text/event-stream")
	if s.APIKeyEnv != "" {
		r.header.Set("X-Api-Key", os.Getenv(s.APIKeyEnv))
	}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		r.transport = t.Clone()
	} else {
		r.transport = &http.Transport{}
	}
	authed, err := clientcreds.Wrap(s.OAuth2, traced.Transport(r.transport))
	if err != nil {
		return nil, err
	}
	r.client = &http.Client{Transport: authed}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	out := []string{"text/plain"}
	if r.s.Output == OutputState {
		out = []string{"application/json"}
	}
	in := []string{"text/plain"}
	if r.s.Input == InputData {
		in = []string{"application/json"}
	}
	return agent.Metadata{
		Type:        Type,
		Description: fmt.Sprintf("LangGraph assistant %q at %s", r.s.Assistant, r.host),
		Streaming:   slices.Contains(r.s.StreamModes, "messages-tuple") || slices.Contains(r.s.StreamModes, "messages"),
		InputModes:  in,
		OutputModes: out,
		Nodes:       true,
	}
}

// Rejoins implements agent.Rejoiner: the next attempt of a task joins
// the run of its turn (findRun), so a shutdown leaves the run going.
func (r *Runtime) Rejoins() bool { return true }

// Close releases idle connections. Closing twice is safe.
func (r *Runtime) Close() error {
	r.transport.CloseIdleConnections()
	return nil
}

// Invoke runs one attempt and returns its result.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream runs one attempt, emitting the AI message text as artifact chunks
// while the run streams. The result's artifact, with the same id, holds
// the answer and replaces the chunks.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

// Cancel cancels the run of the local task taskID on the server, if one is
// running here. A run that already ended is not an error.
func (r *Runtime) Cancel(ctx context.Context, taskID string) error {
	r.mu.Lock()
	rr, ok := r.active[taskID]
	r.mu.Unlock()
	if !ok || rr.run == "" {
		return nil
	}
	return r.cancelRun(ctx, rr)
}

// cancelRun cancels rr on the server, once.
func (r *Runtime) cancelRun(ctx context.Context, rr remoteRun) error {
	if rr.canceled != nil && !rr.canceled.CompareAndSwap(false, true) {
		return nil
	}
	err := r.call(ctx, http.MethodPost, "/threads/"+rr.thread+"/runs/"+rr.run+"/cancel?action=interrupt", nil, nil)
	if task.ErrorCode(err) == task.CodeUnsupported {
		err = nil // 404: the run is gone
	}
	r.log.Info("langgraph: canceled run", "agent", r.name, "thread", rr.thread, "run", rr.run, "error", err)
	return err
}

// ThreadID returns the id of the thread that the conversation contextID of
// the agent named agentName runs on.
func ThreadID(agentName, contextID string) string {
	return uuid.NewSHA1(threadNamespace, []byte(agentName+"\x00"+contextID)).String()
}

func (r *Runtime) threadID(req *task.Request) string {
	c := req.ContextID
	if c == "" {
		c = "task:" + req.TaskID
	}
	return ThreadID(r.name, c)
}

// turnKey names what one attempt answers: the task's newest message.
// Attempts of the same turn (a retry, the attempt after a crash) share it.
func turnKey(req *task.Request) string {
	id := req.Message.ID
	if id == "" {
		id = "attempt-" + strconv.Itoa(req.Attempt)
	}
	return req.TaskID + "/" + id
}

// derivedID is a stable id: the same task and kind always give the same.
func derivedID(req *task.Request, kind string) string {
	return uuid.NewSHA1(idNamespace, []byte(req.TaskID+"\x00"+kind)).String()
}

// run is one attempt.
func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (res *task.Result, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.s.Timeout, errAttemptTimeout)
	defer cancel()
	thread := r.threadID(req)
	turn := turnKey(req)
	log := r.log.With("agent", r.name, "task", req.TaskID, "attempt", req.Attempt, "thread", thread)

	body, err := r.runBody(req, thread, turn)
	if err != nil {
		return nil, err
	}
	if err := r.ensureThread(ctx, thread, req); err != nil {
		return nil, err
	}
	found, status, foundState, err := r.findRun(ctx, thread, turn)
	if err != nil {
		return nil, err
	}

	artID := derivedID(req, "output")
	stream := answer.NewStream(emit, artID, artifactName)
	rn := &run{ID: found}
	if req.OnNode != nil {
		last := time.Now()
		rn.node = func(name string, update any) error {
			now := time.Now()
			n := task.Node{Name: name, Result: lgstate.NodeOutput(req.TaskID+"/"+name, req.ContextID, update), Start: last, End: now}
			last = now
			return req.OnNode(ctx, n)
		}
	}
	canceled := &atomic.Bool{}
	defer func() {
		r.mu.Lock()
		delete(r.active, req.TaskID)
		r.mu.Unlock()
		if err != nil && errors.Is(context.Cause(ctx), task.ErrShutdown) && rn.ID != "" {
			// The node shuts down: the run goes on on the server
			// (on_disconnect continue) and the attempt after the restart
			// joins it or takes its outcome, instead of adding the input
			// to the thread again.
			log.Info("langgraph: shutting down; the run goes on and the next attempt joins it", "run", rn.ID)
			return
		}
		if err != nil && (ctx.Err() != nil || rn.stop != nil) && rn.ID != "" {
			// Timed out, canceled, or stopped by a node's check: stop the
			// run on the server so that the nodes after it do not run and
			// a retry does not run beside it.
			cctx, cc := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
			defer cc()
			if cerr := r.cancelRun(cctx, remoteRun{thread, rn.ID, canceled}); cerr != nil {
				log.Warn("langgraph: could not cancel the run", "run", rn.ID, "error", cerr)
			}
		}
	}()
	track := func() {
		if rn.ID != "" {
			r.mu.Lock()
			r.active[req.TaskID] = remoteRun{thread, rn.ID, canceled}
			r.mu.Unlock()
		}
	}

	switch status {
	case "pending", "running":
		log.Info("langgraph: joining the run of this turn", "run", found, "status", status)
		track()
		err = r.follow(ctx, http.MethodGet, "/threads/"+thread+"/runs/"+found+"/stream", nil, rn, stream, track)
	case "success":
		log.Info("langgraph: the run of this turn already finished", "run", found)
	default:
		log.Debug("langgraph: starting a run", "resume", body.Command != nil)
		err = r.follow(ctx, http.MethodPost, "/threads/"+thread+"/runs/stream", body, rn, stream, track)
	}
	if err != nil {
		return nil, err
	}
	if rn.ID == "" {
		return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: the run stream named no run", r.host)
	}
	if err := stream.Close(); err != nil {
		return nil, err
	}
	return r.finish(ctx, req, thread, turn, rn, foundState, artID)
}

// runRequest is the body of a run.
type runRequest struct {
	AssistantID       string         `json:"assistant_id"`
	Input             any            `json:"input,omitempty"`
	Command           *command       `json:"command,omitempty"`
	StreamMode        []string       `json:"stream_mode"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	OnDisconnect      string         `json:"on_disconnect"`
}

type command struct {
	Resume any `json:"resume"`
}

// runBody builds the run of req: the answer to a pending interrupt
// resumes it, anything else is new input.
func (r *Runtime) runBody(req *task.Request, thread, turn string) (*runRequest, error) {
	body := &runRequest{
		AssistantID:       r.s.Assistant,
		StreamMode:        r.s.StreamModes,
		Metadata:          map[string]any{metaTurn: turn, metaTask: req.TaskID},
		MultitaskStrategy: "enqueue",
		OnDisconnect:      "continue",
	}
	if q, ok := pendingQuestion(req); ok && q.Thread == thread {
		v := resumeValue(req.Message)
		if len(q.Interrupts) > 1 && q.Interrupts[0] != "" {
			// Several interrupts were pending; the question was the first.
			v = map[string]any{q.Interrupts[0]: v}
		}
		body.Command = &command{Resume: v}
		return body, nil
	}
	switch r.s.Input {
	case InputData:
		// On an attempt after feedback the newest message is the
		// feedback, which has no data part: a data graph gets the turn's
		// request again (its state has no place for the feedback).
		orig := req.Original()
		for _, p := range orig.Parts {
			if p.Kind != task.PartData {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(p.Data, &obj); err != nil {
				return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument, "langgraph: input data: want a JSON object: %v", err))
			}
			body.Input = obj
			return body, nil
		}
		return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument, "langgraph: the message has no data part, and input is %q", InputData))
	default:
		body.Input = map[string]any{"messages": []map[string]any{{"role": "user", "content": messageContent(req.Message)}}}
	}
	return body, nil
}

// messageContent is a message as one user message's content: its text
// parts and data parts (as JSON text) in order, joined by blank lines.
func messageContent(m task.Message) string {
	var out []string
	for _, p := range m.Parts {
		switch p.Kind {
		case task.PartText:
			out = append(out, p.Text)
		case task.PartData:
			out = append(out, string(p.Data))
		}
	}
	return strings.Join(out, "\n\n")
}

// resumeValue is the caller's answer as command.resume: its data when the
// message holds only one data part, else its text.
func resumeValue(m task.Message) any {
	if len(m.Parts) == 1 && m.Parts[0].Kind == task.PartData {
		var v any
		if json.Unmarshal(m.Parts[0].Data, &v) == nil {
			return v
		}
	}
	return m.Text()
}

// question is what a question message's metadata records.
type question struct {
	Thread     string
	Run        string
	Interrupts []string
}

func (q question) meta() map[string]any {
	its := make([]any, len(q.Interrupts))
	for i, id := range q.Interrupts {
		its[i] = id
	}
	return map[string]any{"thread": q.Thread, "run": q.Run, "interrupts": its}
}

// pendingQuestion returns the question the latest agent message of the
// conversation asked, if it asked one.
func pendingQuestion(req *task.Request) (question, bool) {
	for i := len(req.History) - 1; i >= 0; i-- {
		m := req.History[i]
		if m.Role != task.RoleAgent {
			continue
		}
		raw, ok := m.Metadata[metaKey].(map[string]any)
		if !ok {
			return question{}, false
		}
		q := question{}
		q.Thread, _ = raw["thread"].(string)
		q.Run, _ = raw["run"].(string)
		if its, ok := raw["interrupts"].([]any); ok {
			for _, v := range its {
				s, _ := v.(string)
				q.Interrupts = append(q.Interrupts, s)
			}
		}
		return q, q.Thread != ""
	}
	return question{}, false
}

// ensureThread creates the conversation's thread unless it exists.
func (r *Runtime) ensureThread(ctx context.Context, thread string, req *task.Request) error {
	body := map[string]any{
		"thread_id": thread,
		"if_exists": "do_nothing",
		"metadata":  map[string]any{"pactum_agent": r.name, "pactum_context": req.ContextID},
	}
	return r.call(ctx, http.MethodPost, "/threads", body, nil)
}

// runInfo is a run as the server lists it.
type runInfo struct {
	RunID    string         `json:"run_id"`
	Status   string         `json:"status"`
	Metadata map[string]any `json:"metadata"`
}

// threadState is a thread's latest state.
type threadState struct {
	Values   json.RawMessage `json:"values"`
	Metadata map[string]any  `json:"metadata"`
	Tasks    []struct {
		Interrupts []interrupt `json:"interrupts"`
	} `json:"tasks"`
}

// findRun looks for the run of turn: one pending or running on the
// thread, else the run that wrote the turn's latest checkpoint if it
// succeeded (then st is that checkpoint's state). It returns "" when the
// turn has no such run.
func (r *Runtime) findRun(ctx context.Context, thread, turn string) (id, status string, st *threadState, err error) {
	for _, want := range []string{"running", "pending"} {
		var runs []runInfo
		if err := r.call(ctx, http.MethodGet, "/threads/"+thread+"/runs?limit=100&status="+want, nil, &runs); err != nil {
			return "", "", nil, err
		}
		for _, ru := range runs {
			if ru.Metadata[metaTurn] == turn && (ru.Status == "running" || ru.Status == "pending") {
				return ru.RunID, ru.Status, nil, nil
			}
		}
	}
	st, err = r.turnState(ctx, thread, turn)
	if err != nil || st == nil {
		return "", "", nil, err
	}
	runID, _ := st.Metadata["run_id"].(string)
	if runID == "" {
		return "", "", nil, nil
	}
	var ru runInfo
	if err := r.call(ctx, http.MethodGet, "/threads/"+thread+"/runs/"+runID, nil, &ru); err != nil {
		if task.ErrorCode(err) == task.CodeUnsupported {
			return "", "", nil, nil // 404: the run was deleted
		}
		return "", "", nil, err
	}
	if ru.Status == "success" {
		return runID, ru.Status, st, nil
	}
	return "", "", nil, nil
}

// turnState returns the latest checkpoint that a run of turn wrote on the
// thread, or nil when there is none. Later runs of other tasks may have
// moved the thread on; the turn's own checkpoint still holds its outcome.
func (r *Runtime) turnState(ctx context.Context, thread, turn string) (*threadState, error) {
	var states []threadState
	body := map[string]any{"limit": 1, "metadata": map[string]any{metaTurn: turn}}
	if err := r.call(ctx, http.MethodPost, "/threads/"+thread+"/history", body, &states); err != nil {
		return nil, err
	}
	if len(states) == 0 || states[0].Metadata[metaTurn] != turn {
		return nil, nil
	}
	return &states[0], nil
}

// follow reads a run stream to its end, recording what it says in rn and
// emitting message text to stream. track is called once the run id is
// known.
func (r *Runtime) follow(ctx context.Context, method, path string, body any, rn *run, stream *answer.Stream, track func()) error {
	resp, err := r.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if rn.ID == "" {
		// Content-Location names the run before the first event does.
		if loc := resp.Header.Get("Content-Location"); loc != "" {
			rn.ID = loc[strings.LastIndexByte(loc, '/')+1:]
			track()
		}
	}
	known := rn.ID
	var emitErr error // a chunk the core could not take
	write := func(text string) error {
		emitErr = stream.Write(text)
		return emitErr
	}
	err = readSSE(resp.Body, func(ev event) error {
		if err := rn.handle(ev, write); err != nil {
			if emitErr != nil || rn.stop != nil {
				return err
			}
			// What the server sent cannot be read: its answer would not
			// be either. The task's retry policy decides.
			return task.Errorf(task.CodeAgentFailed, "langgraph %s: run stream: %v", r.host, err)
		}
		if rn.ID != known {
			known = rn.ID
			track()
		}
		return nil
	})
	var te *task.Error
	switch {
	case err == nil:
		return nil
	case rn.stop != nil:
		// A node's check stopped the attempt: its error, unchanged.
		return rn.stop
	case ctx.Err() != nil:
		return r.interrupted(ctx, "run stream")
	case emitErr != nil:
		return emitErr
	case errors.Is(err, errEventTooLarge):
		return task.Errorf(task.CodeAgentFailed, "langgraph %s: run stream: %w", r.host, err)
	case errors.As(err, &te):
		return err
	}
	// A stream cut short: the run goes on; the next attempt joins it.
	return task.Errorf(task.CodeUnavailable, "langgraph %s: run stream: %w", r.host, err)
}

// finish maps the run's outcome onto a result or an error.
func (r *Runtime) finish(ctx context.Context, req *task.Request, thread, turn string, rn *run, st *threadState, artID string) (*task.Result, error) {
	status, err := r.settledStatus(ctx, thread, rn.ID)
	if err != nil {
		return nil, err
	}
	switch status {
	case "success":
	case "error":
		reason := "no reason given"
		if rn.Err != nil {
			reason = rn.Err.String()
		}
		return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: run %s failed: %s", r.host, rn.ID, truncate(reason))
	case "timeout":
		return nil, task.Errorf(task.CodeTimeout, "langgraph %s: run %s timed out on the server", r.host, rn.ID)
	case "interrupted":
		if ierr := r.interrupted(ctx, "run"); ierr != nil {
			return nil, ierr
		}
		return nil, task.Errorf(task.CodeUnavailable, "langgraph %s: run %s was canceled on the server", r.host, rn.ID)
	case "pending", "running":
		return nil, task.Errorf(task.CodeUnavailable, "langgraph %s: the stream of run %s ended while it was %s; the next attempt joins it", r.host, rn.ID, status)
	default:
		return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: run %s ended with status %q", r.host, rn.ID, status)
	}
	if rn.Err != nil {
		return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: run %s reported an error: %s", r.host, rn.ID, truncate(rn.Err.String()))
	}
	if rn.Values == nil {
		// Joined late, or found finished: the turn's last checkpoint is
		// the outcome.
		if st == nil {
			var err error
			if st, err = r.turnState(ctx, thread, turn); err != nil {
				return nil, err
			}
			if st == nil {
				return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: run %s succeeded but left no checkpoint", r.host, rn.ID)
			}
		}
		if err := json.Unmarshal(st.Values, &rn.Values); err != nil {
			return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: thread state: values: %v", r.host, err)
		}
		rn.Interrupts = nil
		for _, t := range st.Tasks {
			rn.addInterrupts(t.Interrupts)
		}
	}
	if len(rn.Interrupts) > 0 {
		return r.question(req, thread, rn)
	}
	if req.OnNode != nil {
		if err := r.reportNodes(ctx, req, thread, rn); err != nil {
			return nil, err
		}
	}
	return r.answer(rn.Values, artID)
}

// maxHistory bounds the checkpoints read back for a task's nodes.
const maxHistory = 1000

// reportNodes hands req.OnNode the nodes of the task's runs that the
// attempt has not seen in its stream: all of them for a run found
// finished, those before the join for a run joined late, those of the
// runs before an interrupt's answer resumed the graph. They are read from
// the thread's history of the task, by the rule the offline check of the
// same history applies (lgstate.NodeRuns: each node's last run).
func (r *Runtime) reportNodes(ctx context.Context, req *task.Request, thread string, rn *run) error {
	var states []lgstate.ThreadState
	body := map[string]any{"limit": maxHistory, "metadata": map[string]any{metaTask: req.TaskID}}
	if err := r.call(ctx, http.MethodPost, "/threads/"+thread+"/history", body, &states); err != nil {
		return err
	}
	nodes, _, err := lgstate.NodeRuns(lgstate.Latest(states))
	if err != nil {
		return task.Errorf(task.CodeAgentFailed, "langgraph %s: thread history: %v", r.host, err)
	}
	for _, nr := range nodes {
		if rn.seen[nr.Task.Name] {
			continue
		}
		n := task.Node{Name: nr.Task.Name, Start: nr.Start, End: nr.End}
		if nr.Task.Error != nil {
			n.Err = lgstate.ErrorText(nr.Task.Error)
		} else {
			n.Result = lgstate.NodeOutput(req.TaskID+"/"+nr.Task.Name, req.ContextID, nr.Task.Result)
		}
		if err := req.OnNode(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// settledStatus returns the run's status, waiting a little for one that
// still shows running although its stream ended.
func (r *Runtime) settledStatus(ctx context.Context, thread, runID string) (string, error) {
	deadline := time.Now().Add(settleWait)
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		var ru runInfo
		if err := r.call(ctx, http.MethodGet, "/threads/"+thread+"/runs/"+runID, nil, &ru); err != nil {
			return "", err
		}
		if (ru.Status != "running" && ru.Status != "pending") || time.Now().After(deadline) {
			return ru.Status, nil
		}
		select {
		case <-ctx.Done():
			return "", r.interrupted(ctx, "run status")
		case <-time.After(delay):
		}
	}
}

// question pauses the task with the first pending interrupt's value as the
// question.
func (r *Runtime) question(req *task.Request, thread string, rn *run) (*task.Result, error) {
	first := rn.Interrupts[0]
	var v any = ""
	if len(first.Value) > 0 {
		d, err := answer.Decode(first.Value)
		if err != nil {
			return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: interrupt value: %v", r.host, err)
		}
		v = d
	}
	res, err := answer.Question(v)
	if err != nil {
		return nil, err
	}
	q := question{Thread: thread, Run: rn.ID}
	for _, it := range rn.Interrupts {
		q.Interrupts = append(q.Interrupts, it.ID)
	}
	res.Message.ID = derivedID(req, "question:"+rn.ID)
	res.Message.Metadata = map[string]any{metaKey: q.meta()}
	return res, nil
}

// answer turns the final state into the result.
func (r *Runtime) answer(values map[string]json.RawMessage, artID string) (*task.Result, error) {
	if r.s.Output == OutputText {
		if text, ok := lastAIText(values); ok {
			return answer.Text(artID, artifactName, text), nil
		}
	}
	b, err := json.Marshal(values)
	if err != nil {
		return nil, task.Errorf(task.CodeInternal, "langgraph: encode state: %v", err)
	}
	v, err := answer.Decode(b)
	if err != nil {
		return nil, task.Errorf(task.CodeAgentFailed, "langgraph %s: state: %v", r.host, err)
	}
	if v == nil {
		v = map[string]any{}
	}
	return answer.Value(artID, artifactName, v)
}

// maxReasonLen bounds the server's text quoted in an error.
const maxReasonLen = 1000

func truncate(s string) string {
	if len(s) > maxReasonLen {
		return strings.ToValidUTF8(s[:maxReasonLen], "") + "…"
	}
	return s
}
