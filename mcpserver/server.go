package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/task"
)

// DefaultWaitTimeout is how long a waiting tool call waits for its task when
// neither the call nor Options.WaitTimeout says.
const DefaultWaitTimeout = 5 * time.Minute

// Options configure a Server.
type Options struct {
	// Name and Version identify the server to clients in the MCP
	// implementation info (default "pactum" and "dev").
	Name    string
	Version string
	// Instructions are sent to clients at initialization (default: a short
	// guide to the tools).
	Instructions string
	// Logger receives internal errors in full (default: discard), and the
	// go-sdk's own records, whose INFO lines (a session connecting,
	// connected, disconnected: three per HTTP call) come at DEBUG. Under
	// RunStdio it must not write to stdout, which carries the protocol.
	Logger *slog.Logger
	// PerAgentTools adds one tool per agent, named AgentToolName(agent),
	// that takes the input and the envelope fields, submits a task to that
	// agent and waits for the result (default false).
	PerAgentTools bool
	// AgentDescriptions describe agents by name, for list_agents and the
	// per-agent tools (default "pactum agent NAME (action ACTION)").
	AgentDescriptions map[string]string
	// Actor returns the authenticated actor of a tool call, or "" when the
	// caller is anonymous. It plays the part of the authenticated A2A user:
	// a submit that names no actor is recorded under it, and list_tasks
	// shows an authenticated caller only its own tasks. Default: the UserID
	// of the bearer token verified by the HTTP handler's middleware
	// (req.Extra.TokenInfo, see the SDK's auth.RequireBearerToken), else
	// "".
	Actor func(ctx context.Context, req *mcp.CallToolRequest) string
	// VerifiedResult, when set, returns the verified result of a task's
	// newest checked attempt (nil when none): what its contract's gates
	// found. get_task answers it as verified_result, and so do submit_task,
	// continue_task and the per-agent tools when they waited for the task
	// to be final; list_tasks does not, so that it costs no extra read per
	// task. The node sets it only for agents with a contract.
	VerifiedResult func(ctx context.Context, t *task.Task) (any, error)
	// WaitTimeout bounds a waiting submit (wait: true, and the per-agent
	// tools) unless the call sets wait_timeout_seconds (default
	// DefaultWaitTimeout). When it passes the tool answers the task as it
	// is then, with wait_timed_out set.
	WaitTimeout time.Duration
	// Tools are the node's own tools (RunTool), served after
	// list_agents and before the per-agent tools, in this order: the node
	// registers run_contract and run_workflow here, with the rules of how
	// its contracts and workflows are served, which mcpserver does not
	// hold. Default: none.
	Tools []Tool
	// Hidden, when set, reports agents list_agents and the per-agent
	// tools leave out: the virtual agents of contract steps, which run
	// only as a run's children.
	Hidden func(agent string) bool
}

// Server is pactum's MCP server: the Coordinator's operations as MCP tools.
// One Server serves any number of sessions, over HTTP (Handler) and stdio
// (RunStdio) at once.
type Server struct {
	coord *task.Coordinator
	opts  Options
	log   *slog.Logger
	mcp   *mcp.Server
	// agentTools maps agent names to their own tool's name (PerAgentTools).
	agentTools map[string]string
}

// Tool names.
const (
	ToolSubmitTask   = "submit_task"
	ToolGetTask      = "get_task"
	ToolListTasks    = "list_tasks"
	ToolCancelTask   = "cancel_task"
	ToolRetryTask    = "retry_task"
	ToolContinueTask = "continue_task"
	ToolListAgents   = "list_agents"
)

const defaultInstructions = "pactum runs delegated tasks durably: every task has an id, a lifecycle " +
	"(queued, in_progress, then succeeded, failed, canceled or dead_letter; input_required when the agent asks), " +
	"bounded retries and an audit trail. list_agents shows what can be called. submit_task with wait=true " +
	"returns the finished task with its artifacts; without wait, follow the task with get_task. " +
	"A task in input_required carries the agent's question in status_message: answer it with continue_task. " +
	"Send an idempotency_key to make a submit safe to repeat."

// New returns the MCP server of coord. It panics if coord is nil.
func New(coord *task.Coordinator, opts Options) *Server {
	if coord == nil {
		panic("mcpserver: New needs a Coordinator")
	}
	if opts.Name == "" {
		opts.Name = "pactum"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Instructions == "" {
		opts.Instructions = defaultInstructions
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = DefaultWaitTimeout
	}
	s := &Server{coord: coord, opts: opts, log: opts.Logger}
	s.mcp = mcp.NewServer(
		&mcp.Implementation{Name: opts.Name, Title: "pactum", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: opts.Instructions,
			Logger:       sdkLogger(opts.Logger),
			// Tools only: no logging capability.
			Capabilities: &mcp.ServerCapabilities{},
		},
	)
	s.mcp.AddReceivingMiddleware(resultMiddleware(opts.Logger))
	s.addTools()
	return s
}

// MCPServer returns the underlying go-sdk server, to serve it over another
// transport (Server.Run, Server.Connect) or to add middleware.
func (s *Server) MCPServer() *mcp.Server { return s.mcp }

// RunStdio serves one session over stdin and stdout (newline-delimited
// JSON-RPC) until ctx ends or the client closes stdin. Nothing else may
// write to stdout meanwhile.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.Run(ctx, &mcp.StdioTransport{})
}

// Run serves one session over t until ctx ends or the peer disconnects.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if err := s.mcp.Run(ctx, t); err != nil {
		return fmt.Errorf("mcpserver: serve session: %w", err)
	}
	return nil
}

func boolPtr(b bool) *bool { return &b }

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolSubmitTask,
		Title: "Submit a task",
		Description: "Delegate a task to an agent (by agent name or by action): the input is text and/or a JSON object, " +
			"with optional envelope fields (actor, matter, resource, policy_ref and approval_ref for sensitive actions, " +
			"correlation_id, context_id, idempotency_key). With wait=true the call returns when the task is finished " +
			"(or asks for input) and reports each state change as a progress notification; otherwise it returns the queued task. " +
			"A task refused by permissions or policy is returned with state failed, rejected=true and its error_code.",
		Annotations: &mcp.ToolAnnotations{Title: "Submit a task", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, scoped(s, s.submitTask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolGetTask,
		Title:       "Get a task",
		Description: "Read a task: its state, attempts, artifacts, status message, failure reason and conversation history.",
		Annotations: &mcp.ToolAnnotations{Title: "Get a task", ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, scoped(s, s.getTask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolListTasks,
		Title:       "List tasks",
		Description: "List tasks, newest first, filtered by context, agent, states, rejection and update time, a page at a time; with parent_task_id, the children a parent task spawned, oldest first.",
		Annotations: &mcp.ToolAnnotations{Title: "List tasks", ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, scoped(s, s.listTasks))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolCancelTask,
		Title:       "Cancel a task",
		Description: "Cancel a task that has not finished; a running attempt is stopped. A finished task answers not_cancelable.",
		Annotations: &mcp.ToolAnnotations{Title: "Cancel a task", DestructiveHint: boolPtr(true), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}, scoped(s, s.cancelTask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolRetryTask,
		Title:       "Retry a task",
		Description: "Queue a failed or dead_letter task again. A manual retry starts a new turn: the task gets its agent's max_attempts again (attempt counts from 1, attempts_total keeps counting). A rejected task cannot be retried: submit a new one.",
		Annotations: &mcp.ToolAnnotations{Title: "Retry a task", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, scoped(s, s.retryTask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  ToolContinueTask,
		Title: "Answer a task that asks for input",
		Description: "Send the answer to a task in input_required (the agent's question is its status_message): the task " +
			"is queued again with the answer in its conversation and runs a new turn. With wait=true the call returns when " +
			"the task is finished or asks again. A task in any other state answers conflict (still working) or " +
			"unsupported (finished).",
		Annotations: &mcp.ToolAnnotations{Title: "Answer a task", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
	}, scoped(s, s.continueTask))
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolListAgents,
		Title:       "List agents",
		Description: "List the agents tasks can be submitted to: name, action, whether the action is sensitive, retry and timeout bounds.",
		Annotations: &mcp.ToolAnnotations{Title: "List agents", ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, scoped(s, s.listAgents))
	for _, t := range s.opts.Tools {
		t.add(s)
	}
	if s.opts.PerAgentTools {
		s.addAgentTools()
	}
}

// Tool is a tool of the node's own that a Server serves next to its task
// tools (Options.Tools). RunTool makes one.
type Tool struct {
	name string
	add  func(s *Server)
}

// Name returns the tool's name.
func (t Tool) Name() string { return t.name }

// Run is what a call of a RunTool submits: a task to Agent on Input (the
// input message and the envelope fields, defaulted as submit_task's are),
// with Metadata on the input message (nil for none), waiting as Wait says.
type Run struct {
	Agent    string
	Input    MessageInput
	Metadata map[string]any
	Wait     WaitInput
}

// RunTool returns a tool that starts a run and waits for it to end: start
// turns a call's arguments (In, from which the SDK derives the tool's
// input schema) into the Run to submit, and the tool then answers as a
// waiting submit_task does (progress notifications, wait timeout,
// verified_result, SubmitTaskOutput). An error from start is the call's
// tool error: a task.Error with an exposed code (task.Code.Exposed) is
// shown as it is, anything else as an internal error. start runs as the
// caller (task.Caller(ctx) is the authenticated actor).
//
// The node serves its contracts and workflows this way (run_contract,
// run_workflow), so the rules of how they are named and started stay with
// the packages that own them.
func RunTool[In any](t *mcp.Tool, start func(ctx context.Context, in In) (*Run, error)) Tool {
	name := t.Name
	return Tool{name: name, add: func(s *Server) {
		mcp.AddTool(s.mcp, t, scoped(s, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, SubmitTaskOutput, error) {
			r, err := start(ctx, in)
			if err != nil {
				return nil, SubmitTaskOutput{}, s.fail(ctx, name, err)
			}
			return s.submitWith(ctx, req, name, r.Agent, "", r.Input, r.Metadata, true, r.Wait)
		}))
	}}
}

// FuncTool returns a tool that answers each call with fn's result: In
// and Out give the tool's input and output schemas (a json.RawMessage in
// either stands for any JSON value), and an error from fn is the call's
// tool error, shown as RunTool's are. fn runs as the caller
// (task.Caller(ctx) is the authenticated actor).
//
// The node serves contract validation and negotiation this way
// (validate_contract, negotiate_contract).
func FuncTool[In, Out any](t *mcp.Tool, fn func(ctx context.Context, in In) (Out, error)) Tool {
	name := t.Name
	if t.InputSchema == nil {
		t.InputSchema = schemaFor[In]()
	}
	if t.OutputSchema == nil {
		t.OutputSchema = schemaFor[Out]()
	}
	return Tool{name: name, add: func(s *Server) {
		mcp.AddTool(s.mcp, t, scoped(s, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			out, err := fn(ctx, in)
			if err != nil {
				var zero Out
				return nil, zero, s.fail(ctx, name, err)
			}
			return nil, out, nil
		}))
	}}
}

// rawSchemas holds the schemas of the types the SDK's inference gets
// wrong: a json.RawMessage is any JSON value, not an array of bytes.
var rawSchemas = map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}

// schemaFor is the JSON Schema of T, as the SDK infers it but for
// rawSchemas. It panics on a type with no schema: a programming error
// the first test of the tool shows.
func schemaFor[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: rawSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	return sch
}

func (s *Server) addAgentTools() {
	s.agentTools = map[string]string{}
	taken := map[string]bool{
		ToolSubmitTask: true, ToolGetTask: true, ToolListTasks: true,
		ToolCancelTask: true, ToolRetryTask: true, ToolContinueTask: true, ToolListAgents: true,
	}
	for _, t := range s.opts.Tools {
		taken[t.name] = true
	}
	for _, a := range s.coord.Agents() {
		if s.hidden(a.Name) {
			continue
		}
		name := AgentToolName(a.Name)
		for i := 2; taken[name]; i++ {
			suffix := fmt.Sprintf("_%d", i)
			name = AgentToolName(a.Name)
			name = name[:min(len(name), maxToolName-len(suffix))] + suffix
		}
		taken[name] = true
		s.agentTools[a.Name] = name
		agentName := a.Name
		desc := fmt.Sprintf("Run agent %q (action %q) on the input and wait for its result. %s", a.Name, a.Action, s.describe(a))
		if a.Sensitive {
			desc += " The action is sensitive: give policy_ref and approval_ref."
		}
		if a.DryRun {
			desc += " It runs as a simulation (dry run): the agent is not called."
		}
		mcp.AddTool(s.mcp, &mcp.Tool{
			Name:        name,
			Title:       "Run " + a.Name,
			Description: desc,
			Annotations: &mcp.ToolAnnotations{Title: "Run " + a.Name, DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		}, scoped(s, func(ctx context.Context, req *mcp.CallToolRequest, in AgentTaskInput) (*mcp.CallToolResult, SubmitTaskOutput, error) {
			return s.submit(ctx, req, name, agentName, "", in.MessageInput, true, in.WaitInput)
		}))
	}
}

// maxToolName is the longest tool name MCP allows.
const maxToolName = 128

// AgentToolName returns the name of an agent's own tool: "agent_" followed
// by the agent's name with every character outside the MCP tool-name set
// (ASCII letters, digits, '_', '-', '.') replaced by '_', cut to 128
// characters. Two agents whose names map to the same tool name get "_2",
// "_3", … on the later ones.
func AgentToolName(agent string) string {
	var b strings.Builder
	b.WriteString("agent_")
	for _, r := range agent {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxToolName {
		name = name[:maxToolName]
	}
	return name
}

func (s *Server) hidden(agent string) bool { return s.opts.Hidden != nil && s.opts.Hidden(agent) }

func (s *Server) describe(a task.AgentSpec) string {
	if d := s.opts.AgentDescriptions[a.Name]; d != "" {
		return d
	}
	return fmt.Sprintf("pactum agent %s (action %s)", a.Name, a.Action)
}

// IdentityKey is the key of the verified token's TokenInfo.Extra under
// which an HTTP handler's middleware may put the caller's task.Identity
// (subject, issuer, granted actions): the tools then act as that
// identity, not only as TokenInfo.UserID's actor.
const IdentityKey = "pactum.identity"

// authActor returns the authenticated actor of a call ("" for none).
func (s *Server) authActor(ctx context.Context, req *mcp.CallToolRequest) string {
	if s.opts.Actor != nil {
		return s.opts.Actor(ctx, req)
	}
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		return req.Extra.TokenInfo.UserID
	}
	return task.Caller(ctx)
}

// scoped runs a tool as its caller: the authenticated actor goes into ctx
// (task.WithCaller), and the Coordinator shows it only its own tasks
// (another actor's task is not_found, as one that does not exist) and lets
// it submit only as itself. Anonymous calls (no authentication configured)
// address any task.
func scoped[In, Out any](s *Server, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if a := s.authActor(ctx, req); a != "" && a != task.Caller(ctx) {
			ctx = task.WithCaller(ctx, a)
			if id, ok := tokenIdentity(req); ok && id.Actor == a {
				ctx = task.WithIdentity(ctx, id)
			}
		}
		ctx = withCallTrace(ctx, req)
		return h(ctx, req, in)
	}
}

// tokenIdentity returns the identity the middleware put in the call's
// TokenInfo (IdentityKey), if any.
func tokenIdentity(req *mcp.CallToolRequest) (task.Identity, bool) {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return task.Identity{}, false
	}
	id, ok := req.Extra.TokenInfo.Extra[IdentityKey].(task.Identity)
	return id, ok
}

// withCallTrace returns ctx with the W3C trace context of a tool call, so
// that a task the tool submits joins the caller's trace. The SDK runs
// tools in the session's context, not the HTTP request's, so it is read
// from the call itself: first the message's params._meta (keys
// traceparent and tracestate, MCP SEP-414 and OpenTelemetry's MCP
// conventions), which works over every transport, stdio included; else
// the traceparent header of the HTTP request that carried the call
// (streamable HTTP). A malformed traceparent is ignored.
func withCallTrace(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil {
		return ctx
	}
	if req.Params != nil {
		if tp, _ := req.Params.Meta["traceparent"].(string); tp != "" {
			c := propagation.MapCarrier{"traceparent": tp}
			if ts, _ := req.Params.Meta["tracestate"].(string); ts != "" {
				c["tracestate"] = ts
			}
			if out := (propagation.TraceContext{}).Extract(ctx, c); trace.SpanContextFromContext(out).IsValid() {
				return out
			}
		}
	}
	if req.Extra != nil && req.Extra.Header.Get("Traceparent") != "" {
		return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(req.Extra.Header))
	}
	return ctx
}

func (s *Server) fail(ctx context.Context, tool string, err error) error {
	return toToolError(ctx, s.log, tool, err)
}

func (s *Server) submitTask(ctx context.Context, req *mcp.CallToolRequest, in SubmitTaskInput) (*mcp.CallToolResult, SubmitTaskOutput, error) {
	return s.submit(ctx, req, ToolSubmitTask, in.Agent, in.Action, in.MessageInput, in.Wait, in.WaitInput)
}

// submit submits a new task exactly as A2A's SendMessage does (see
// submitRequest) and, with wait, follows it until it is final or the wait
// times out.
func (s *Server) submit(ctx context.Context, req *mcp.CallToolRequest, tool, agentName, action string, in MessageInput, wait bool, w WaitInput) (*mcp.CallToolResult, SubmitTaskOutput, error) {
	return s.submitWith(ctx, req, tool, agentName, action, in, nil, wait, w)
}

// submitWith is submit with metadata on the input message.
func (s *Server) submitWith(ctx context.Context, req *mcp.CallToolRequest, tool, agentName, action string, in MessageInput, md map[string]any, wait bool, w WaitInput) (*mcp.CallToolResult, SubmitTaskOutput, error) {
	timeout, err := s.waitTimeout(w)
	if err != nil {
		return nil, SubmitTaskOutput{}, err
	}
	sr, err := submitRequest(agentName, action, in, s.authActor(ctx, req))
	if err != nil {
		return nil, SubmitTaskOutput{}, s.fail(ctx, tool, err)
	}
	sr.Envelope.Input.Metadata = md
	res, err := s.coord.Submit(ctx, sr)
	if err != nil {
		return nil, SubmitTaskOutput{}, s.fail(ctx, tool, err)
	}
	t := res.Task
	out := SubmitTaskOutput{Duplicate: res.Duplicate}
	if wait {
		t, out.WaitTimedOut, err = s.await(ctx, req, t, timeout)
		if err != nil {
			return nil, SubmitTaskOutput{}, s.fail(ctx, tool, err)
		}
	}
	out.TaskInfo = taskInfo(t, 0)
	if wait && t.State.Settled() {
		s.addVerified(ctx, &out.TaskInfo, t)
	}
	s.log.DebugContext(ctx, "mcp submit", "tool", tool, "task", t.ID, "agent", t.Agent, "state", t.State, "duplicate", res.Duplicate)
	return nil, out, nil
}

// maxWaitSeconds bounds wait_timeout_seconds (a day).
const maxWaitSeconds = 24 * 60 * 60

func (s *Server) waitTimeout(w WaitInput) (time.Duration, error) {
	sec := w.WaitTimeoutSeconds
	switch {
	case sec == 0:
		return s.opts.WaitTimeout, nil
	case sec < 0 || math.IsNaN(sec) || sec > maxWaitSeconds:
		return 0, invalidArgument("wait_timeout_seconds must be between 0 and %d, got %v", maxWaitSeconds, sec)
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// await follows t until it is final (terminal or waiting for input) and
// returns it whole (history and artifacts). When timeout passes first it
// returns the task as stored then and true. Each state change it sees is
// reported as a progress notification when the call carries a progress
// token, starting with t's own state.
func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest, t *task.Task, timeout time.Duration) (*task.Task, bool, error) {
	p := s.progress(req)
	p.report(ctx, t)
	if t.State.Settled() {
		// Rejected at submit (the stored task is whole) or a duplicate of
		// a finished task (returned whole by the store).
		return t, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, lastSeq := t.ID, t.Seq
	// fail answers err; the wait timing out is no error: the task is
	// returned as stored then.
	fail := func(err error) (*task.Task, bool, error) {
		if ctx.Err() == nil && wctx.Err() != nil {
			cur, gerr := s.coord.Get(ctx, id, -1)
			if gerr != nil {
				return nil, false, gerr
			}
			return cur, true, nil
		}
		return nil, false, err
	}
	for it, err := range s.coord.Follow(wctx, id) {
		if err != nil {
			return fail(err)
		}
		var cur *task.Task
		switch it.Kind {
		case task.FollowSnapshot, task.FollowResync:
			cur = it.Task
		case task.FollowEvent:
			if it.Event.Kind == task.EventStatus {
				cur = it.Event.Task
			}
		}
		if cur != nil && cur.Seq > lastSeq {
			lastSeq = cur.Seq
			p.report(wctx, cur)
		}
		if !it.Settled() {
			continue
		}
		if whole := it.Whole(); whole != nil {
			return whole, false, nil
		}
		done, err := s.coord.Get(wctx, id, -1)
		if err != nil {
			return fail(err)
		}
		return done, false, nil
	}
	return fail(wctx.Err()) // unreachable: Follow ends settled or with an error
}

// progress sends a tool call's progress notifications.
type progress struct {
	session *mcp.ServerSession
	token   any
	log     *slog.Logger
}

// progress returns the reporter of req, or nil when the client sent no
// progress token.
func (s *Server) progress(req *mcp.CallToolRequest) *progress {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	return &progress{session: req.Session, token: tok, log: s.log}
}

// report notifies the client of t's state. Progress is t's record
// sequence, which grows with every transition.
func (p *progress) report(ctx context.Context, t *task.Task) {
	if p == nil {
		return
	}
	msg := fmt.Sprintf("task %s is %s", t.ID, t.State)
	var details []string
	if t.Rejected {
		details = append(details, "rejected")
	}
	if t.Attempt > 0 {
		details = append(details, t.AttemptSummary())
	}
	if t.ErrorCode != "" {
		details = append(details, string(t.ErrorCode))
	}
	if len(details) > 0 {
		msg += " (" + strings.Join(details, ", ") + ")"
	}
	err := p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token, Progress: float64(t.Seq), Message: msg,
	})
	if err != nil && ctx.Err() == nil {
		p.log.DebugContext(ctx, "mcp progress notification not sent", "task", t.ID, "err", err)
	}
}

func (s *Server) getTask(ctx context.Context, req *mcp.CallToolRequest, in GetTaskInput) (*mcp.CallToolResult, TaskInfo, error) {
	if in.TaskID == "" {
		return nil, TaskInfo{}, invalidArgument("task_id is required")
	}
	hl := -1
	if in.HistoryLength != nil {
		if *in.HistoryLength < 0 {
			return nil, TaskInfo{}, invalidArgument("history_length must not be negative, got %d", *in.HistoryLength)
		}
		hl = *in.HistoryLength
	}
	t, err := s.coord.Get(ctx, in.TaskID, hl)
	if err != nil {
		return nil, TaskInfo{}, s.fail(ctx, ToolGetTask, err)
	}
	info := taskInfo(t, hl)
	s.addVerified(ctx, &info, t)
	return nil, info, nil
}

func (s *Server) listTasks(ctx context.Context, req *mcp.CallToolRequest, in ListTasksInput) (*mcp.CallToolResult, ListTasksOutput, error) {
	pageSize, ok := task.ResolvePageSize(in.PageSize)
	if !ok {
		return nil, ListTasksOutput{}, invalidArgument("%s", task.PageSizeError("page_size", in.PageSize))
	}
	p := task.ListParams{
		ContextID:        in.ContextID,
		Agent:            in.Agent,
		ParentTaskID:     in.ParentTaskID,
		Rejected:         in.Rejected,
		PageSize:         pageSize,
		PageToken:        in.PageToken,
		IncludeArtifacts: in.IncludeArtifacts,
		// An authenticated caller sees the tasks it submitted: the
		// Coordinator filters them.
	}
	for _, v := range in.States {
		st, err := task.ParseState(v)
		if err != nil {
			return nil, ListTasksOutput{}, s.fail(ctx, ToolListTasks, err)
		}
		p.States = append(p.States, st)
	}
	if in.UpdatedAfter != "" {
		at, err := time.Parse(time.RFC3339Nano, in.UpdatedAfter)
		if err != nil {
			return nil, ListTasksOutput{}, invalidArgument("updated_after %q is not an RFC 3339 time", in.UpdatedAfter)
		}
		p.UpdatedAfter = at.UTC()
	}
	if in.HistoryLength != nil {
		if *in.HistoryLength < 0 {
			return nil, ListTasksOutput{}, invalidArgument("history_length must not be negative, got %d", *in.HistoryLength)
		}
		p.HistoryLength = *in.HistoryLength
	}
	page, err := s.coord.List(ctx, p)
	if err != nil {
		return nil, ListTasksOutput{}, s.fail(ctx, ToolListTasks, err)
	}
	out := ListTasksOutput{Tasks: make([]TaskInfo, 0, len(page.Tasks)), NextPageToken: page.NextPageToken, TotalSize: page.TotalSize}
	for _, t := range page.Tasks {
		out.Tasks = append(out.Tasks, taskInfo(t, p.HistoryLength))
	}
	return nil, out, nil
}

func (s *Server) cancelTask(ctx context.Context, req *mcp.CallToolRequest, in CancelTaskInput) (*mcp.CallToolResult, TaskInfo, error) {
	if in.TaskID == "" {
		return nil, TaskInfo{}, invalidArgument("task_id is required")
	}
	// An empty reason records the Coordinator's default.
	t, err := s.coord.Cancel(ctx, in.TaskID, in.Reason)
	if err != nil {
		return nil, TaskInfo{}, s.fail(ctx, ToolCancelTask, err)
	}
	return nil, taskInfo(t, 0), nil
}

func (s *Server) retryTask(ctx context.Context, req *mcp.CallToolRequest, in RetryTaskInput) (*mcp.CallToolResult, TaskInfo, error) {
	if in.TaskID == "" {
		return nil, TaskInfo{}, invalidArgument("task_id is required")
	}
	t, err := s.coord.Retry(ctx, in.TaskID)
	if err != nil {
		return nil, TaskInfo{}, s.fail(ctx, ToolRetryTask, err)
	}
	return nil, taskInfo(t, 0), nil
}

// continueTask answers a task in input_required exactly as an A2A message
// naming the task does (Coordinator.Continue) and, with wait, follows it
// until it is final again.
func (s *Server) continueTask(ctx context.Context, req *mcp.CallToolRequest, in ContinueTaskInput) (*mcp.CallToolResult, ContinueTaskOutput, error) {
	if in.TaskID == "" {
		return nil, ContinueTaskOutput{}, invalidArgument("task_id is required")
	}
	timeout, err := s.waitTimeout(in.WaitInput)
	if err != nil {
		return nil, ContinueTaskOutput{}, err
	}
	msg, err := userMessage(in.MessageID, in.Text, in.Data, "the answer is empty")
	if err != nil {
		return nil, ContinueTaskOutput{}, s.fail(ctx, ToolContinueTask, err)
	}
	t, err := s.coord.Continue(ctx, in.TaskID, msg)
	if err != nil {
		return nil, ContinueTaskOutput{}, s.fail(ctx, ToolContinueTask, err)
	}
	var out ContinueTaskOutput
	if in.Wait {
		t, out.WaitTimedOut, err = s.await(ctx, req, t, timeout)
		if err != nil {
			return nil, ContinueTaskOutput{}, s.fail(ctx, ToolContinueTask, err)
		}
	}
	out.TaskInfo = taskInfo(t, 0)
	if in.Wait && t.State.Settled() {
		s.addVerified(ctx, &out.TaskInfo, t)
	}
	return nil, out, nil
}

// addVerified sets info's verified result from t's newest checked attempt
// (Options.VerifiedResult). A failure to read it is logged, not answered:
// the task itself was read.
func (s *Server) addVerified(ctx context.Context, info *TaskInfo, t *task.Task) {
	if s.opts.VerifiedResult == nil {
		return
	}
	vr, err := s.opts.VerifiedResult(ctx, t)
	if err != nil {
		s.log.WarnContext(ctx, "read verified result", "task", t.ID, "err", err)
		return
	}
	info.VerifiedResult = vr
}

func (s *Server) listAgents(ctx context.Context, req *mcp.CallToolRequest, _ ListAgentsInput) (*mcp.CallToolResult, ListAgentsOutput, error) {
	specs := s.coord.Agents()
	out := ListAgentsOutput{Agents: make([]AgentInfo, 0, len(specs))}
	for _, a := range specs {
		if s.hidden(a.Name) {
			continue
		}
		out.Agents = append(out.Agents, AgentInfo{
			Name:           a.Name,
			Action:         a.Action,
			Description:    s.describe(a),
			Sensitive:      a.Sensitive,
			DryRun:         a.DryRun,
			MaxAttempts:    a.Retry.MaxAttempts,
			TimeoutSeconds: a.Timeout.Seconds(),
			Tool:           s.agentTools[a.Name],
		})
	}
	return nil, out, nil
}
