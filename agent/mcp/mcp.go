package mcpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/header"
	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/agent/internal/tmpl"
	"github.com/pactum/pactum/agent/internal/traced"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "mcp"

// Artifact names.
const (
	artifactName = "output"
	progressName = "progress"
)

func init() { agent.Register(Type, build) }

func build(_ context.Context, spec agent.Spec) (agent.Agent, error) {
	var s Settings
	if err := spec.DecodeInto(&s); err != nil {
		return nil, err
	}
	if s.Command != "" {
		s.Dir = spec.WorkDir(s.Dir)
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
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// errClosed is returned by calls on a closed runtime. It is retryable: the
// task runs again on a runtime that is open.
var errClosed = errors.New("mcp: runtime is closed")

// Runtime is one tool of an MCP server as a pactum agent. It is safe for
// concurrent use; build it with New and release it with Close.
type Runtime struct {
	name   string
	s      Settings
	log    *slog.Logger
	client *sdk.Client

	// Stdio servers.
	env   []string // the server's environment; nil inherits pactum's
	procs *procgroup.Dir
	// HTTP servers.
	httpClient *http.Client
	idle       interface{ CloseIdleConnections() }

	// ctx ends when the runtime is closed; calls and connects derive from
	// it so that Close does not wait for them.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// connecting admits one session start at a time.
	connecting chan struct{}
	// progress maps the progress tokens of calls in flight to their sinks.
	progress sync.Map
	// bg tracks goroutines that end sessions, for Close to wait for.
	bg sync.WaitGroup

	mu          sync.Mutex
	sess        *session
	closed      bool
	failures    int       // failures in a row to start or keep a session
	lastFailure time.Time // when the latest of them happened
	lastErr     error     // and what it was
	description string    // the tool's description, once listed
}

// New returns a runtime for s, or an error naming the setting that is
// wrong. It expands ${VAR} references in Env and Headers now, from the
// current environment. Nothing is started and no connection is made: the
// session opens on the first call.
func New(s Settings, opts ...Option) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{s: s, log: slog.Default(), connecting: make(chan struct{}, 1)}
	if s.Command != "" {
		env, err := tmpl.ExpandEnvList(s.Env, os.LookupEnv)
		if err != nil {
			return nil, err
		}
		switch {
		case s.InheritEnv != nil && !*s.InheritEnv:
			r.env = env
		case len(env) > 0:
			// Later entries win in os/exec, so Env overrides inherited values.
			r.env = append(os.Environ(), env...)
		}
	} else {
		h, err := header.Expand(s.Headers, os.LookupEnv, "MCP", reservedHeaders)
		if err != nil {
			return nil, err
		}
		var base http.RoundTripper = http.DefaultTransport
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			// A transport of its own, so that Close can drop its connections.
			t = t.Clone()
			base, r.idle = t, t
		}
		// No client timeout: responses stream for as long as a tool runs,
		// and every call carries the attempt's deadline.
		authed, err := clientcreds.Wrap(s.OAuth2, traced.Transport(base))
		if err != nil {
			return nil, err
		}
		r.httpClient = &http.Client{Transport: &httpTransport{base: authed, header: h, onProgress: r.dispatchProgress}}
	}
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("agent", r.name, "runtime", Type)
	if s.Command != "" {
		// Kill what servers of a pactum process that is gone left running
		// before this one starts its own.
		var err error
		if r.procs, err = procgroup.Open(""); err != nil {
			return nil, fmt.Errorf("mcp: process record directory: %w", err)
		}
		if _, err := r.procs.Sweep(context.Background(), r.log); err != nil {
			return nil, fmt.Errorf("mcp: kill what a stopped pactum left running in %s: %w", r.procs.Path(), err)
		}
	}
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	r.client = sdk.NewClient(&sdk.Implementation{Name: "pactum", Version: version()}, &sdk.ClientOptions{
		Logger: r.log,
		// No roots, sampling or elicitation: pactum has none to offer. (A
		// nil Capabilities would advertise roots.)
		Capabilities:                &sdk.ClientCapabilities{},
		ProgressNotificationHandler: r.onProgress,
		ToolListChangedHandler:      r.onToolListChanged,
	})
	return r, nil
}

// version is pactum's module version, for the client information sent to
// servers.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	const path = "github.com/pactum/pactum"
	if bi.Main.Path == path && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "devel"
}

// Metadata implements agent.MetadataProvider. The description is the
// tool's own once a session has listed it.
func (r *Runtime) Metadata() agent.Metadata {
	r.mu.Lock()
	desc := r.description
	r.mu.Unlock()
	if desc == "" {
		desc = fmt.Sprintf("Calls the MCP tool %s of %s", r.s.Tool, r.s.server())
	}
	return agent.Metadata{
		Type:        Type,
		Description: desc,
		Streaming:   true,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain", "application/json"},
	}
}

// Invoke calls the tool once and returns its result.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream calls the tool once, asking the server for progress
// notifications; each becomes a line of the "progress" artifact, emitted
// as it arrives.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	// A request that never left pactum (its session had already ended) is
	// sent once more, on a new session.
	for resend := true; ; resend = false {
		s, err := r.acquire(ctx)
		if err != nil {
			return nil, err
		}
		tool, err := s.lookup(ctx, r)
		if err != nil {
			return nil, err
		}
		// A tool cannot act on feedback: an attempt after feedback calls it
		// again with the turn's request (docs/runtimes.md).
		orig := req.Original()
		args, err := arguments(&orig, r.s, tool)
		if err != nil {
			return nil, err
		}
		var sink *progressSink
		if emit != nil {
			sink = newProgressSink(emit)
		}
		res, err := r.call(ctx, s, args, sink)
		if err == nil {
			r.succeeded()
			return r.result(res, sink)
		}
		if resend && notSent(err) && ctx.Err() == nil && r.ctx.Err() == nil {
			r.log.Info("mcp: session had ended; sending the call on a new one", "err", err)
			r.endSession(s, err, true)
			continue
		}
		return nil, r.callError(ctx, s, err)
	}
}

// call calls the tool on s. Closing the runtime cancels the call.
func (r *Runtime) call(ctx context.Context, s *session, args json.RawMessage, sink *progressSink) (*sdk.CallToolResult, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(r.ctx, func() { cancel(errClosed) })
	defer stop()
	params := &sdk.CallToolParams{Name: r.s.Tool, Arguments: args}
	if sink != nil {
		token := "pactum-" + answer.NewID()
		params.SetProgressToken(token)
		r.progress.Store(token, sink)
		defer r.progress.Delete(token)
	}
	// A GenAI "execute_tool" span (OpenTelemetry GenAI semantic
	// conventions), the parent of the HTTP request's own span.
	cctx, span := traced.Start(cctx, "github.com/pactum/pactum/agent/mcp", "execute_tool "+r.s.Tool, trace.SpanKindInternal,
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", r.s.Tool),
		attribute.String("gen_ai.tool.type", "extension"))
	// The call's own trace context goes in its message too (_meta keys
	// traceparent and tracestate, MCP SEP-414): over stdio there is no
	// header to carry it.
	meta := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(cctx, meta)
	for k, v := range meta {
		if params.Meta == nil {
			params.Meta = sdk.Meta{}
		}
		params.Meta[k] = v
	}
	res, err := s.cs.CallTool(cctx, params)
	if err == nil && res != nil && res.IsError && span.IsRecording() {
		span.SetStatus(codes.Error, "tool returned an error result")
	}
	traced.End(span, err)
	return res, err
}

// result maps a tool result to the attempt's result, or to a permanent
// error when the tool reported one.
func (r *Runtime) result(res *sdk.CallToolResult, sink *progressSink) (*task.Result, error) {
	progress, err := sink.finish()
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, toolError(r.s.Tool, res)
	}
	out, err := mapResult(res)
	if err != nil {
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "mcp: tool %q: %w", r.s.Tool, err))
	}
	if progress != nil {
		out.Artifacts = append([]task.Artifact{*progress}, out.Artifacts...)
	}
	return out, nil
}

// Close ends the session, if any, and stops the server program; it returns
// once the program is gone. Calls in flight are canceled. A session that
// cannot be ended cleanly (an HTTP server that is already gone) is only
// logged, so Close always returns nil. Closing twice is safe.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	s := r.sess
	r.sess = nil
	r.mu.Unlock()

	r.cancel(errClosed)
	// A session being started stops its server when the start fails,
	// which canceling r.ctx makes it do: wait for that, and keep the slot
	// so that no start follows.
	r.connecting <- struct{}{}
	if s != nil {
		s.closing.Store(true)
		_ = s.close()
	}
	r.bg.Wait()
	if r.idle != nil {
		r.idle.CloseIdleConnections()
	}
	return nil
}

// onProgress hands a progress notification to the call it belongs to. It
// is the SDK's handler; most notifications have already been seen on the
// wire by a progressTap (see there), and the sink drops the repeats.
func (r *Runtime) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req != nil && req.Params != nil {
		r.dispatchProgress(req.Params)
	}
}

// onToolListChanged makes the next call list the tools again.
func (r *Runtime) onToolListChanged(_ context.Context, req *sdk.ToolListChangedRequest) {
	r.mu.Lock()
	s := r.sess
	r.mu.Unlock()
	if s != nil && req != nil && req.Session == s.cs {
		s.markStale()
	}
}

// httpTransport adds the configured headers to every request, records the
// status of responses to POST requests for error classification, and taps
// event streams for progress notifications.
type httpTransport struct {
	base       http.RoundTripper
	header     http.Header
	onProgress func(*sdk.ProgressNotificationParams)
}

// RoundTrip implements http.RoundTripper.
func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.header {
			req.Header[k] = v
		}
	}
	rec, _ := req.Context().Value(statusKey{}).(*statusRecorder)
	if req.Method != http.MethodPost {
		rec = nil
	}
	if rec != nil {
		// A request that gets no response leaves no status behind.
		rec.status.Store(0)
	}
	resp, err := t.base.RoundTrip(req)
	if resp == nil {
		return resp, err
	}
	if rec != nil {
		rec.status.Store(int32(resp.StatusCode))
	}
	if isEventStream(resp.Header.Get("Content-Type")) && t.onProgress != nil {
		resp.Body = &tapBody{progressTap: progressTap{r: resp.Body, on: t.onProgress}, body: resp.Body}
	}
	return resp, err
}
