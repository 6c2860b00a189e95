package a2aagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/internal/clientcreds"
	"github.com/pactum/pactum/agent/internal/clientcreds/cctest"
	"github.com/pactum/pactum/task"
)

// The tests run the runtime against a real A2A peer on loopback: an a2a-go
// server (a2asrv) with an AgentExecutor written here, serving JSON-RPC at
// /jsonrpc, HTTP+JSON at /rest and its card at the well-known path.

// script is what the remote agent does for one message. emit sends an event
// and reports whether the server still listens.
type script func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool)

// received is one message as the remote executor saw it.
type received struct {
	Message   *a2a.Message
	TaskID    a2a.TaskID
	ContextID string
	Continued bool // the message named an existing remote task
}

// executor is the remote agent: it runs a script per message and records
// what it received and which tasks it was asked to cancel.
type executor struct {
	script   script
	canceled chan a2a.TaskID
	// unblock ends scripts that wait, when the test ends.
	unblock chan struct{}

	mu       sync.Mutex
	received []received
}

func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	e.mu.Lock()
	e.received = append(e.received, received{Message: ec.Message, TaskID: ec.TaskID, ContextID: ec.ContextID, Continued: ec.StoredTask != nil})
	e.mu.Unlock()
	return func(yield func(a2a.Event, error) bool) {
		e.script(ctx, ec, func(ev a2a.Event) bool { return yield(ev, nil) })
	}
}

func (e *executor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	select {
	case e.canceled <- ec.TaskID:
	default:
	}
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

func (e *executor) messages() []received {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]received(nil), e.received...)
}

// peerOptions shape the remote agent's server.
type peerOptions struct {
	// streaming is what the card declares.
	streaming bool
	// interceptor, if set, sees every call on the server.
	interceptor a2asrv.CallInterceptor
	// intercept, if set, wraps the protocol endpoints (not the card).
	intercept func(http.Handler) http.Handler
}

// peer is a running remote agent.
type peer struct {
	srv  *httptest.Server
	exec *executor
	card *a2a.AgentCard

	jsonrpcHits, restHits, cardHits atomic.Int32

	mu      sync.Mutex
	headers []http.Header // of every request
}

func newPeer(t *testing.T, s script, opts peerOptions) *peer {
	t.Helper()
	p := &peer{exec: &executor{script: s, canceled: make(chan a2a.TaskID, 8), unblock: make(chan struct{})}}
	t.Cleanup(func() { close(p.exec.unblock) })

	handlerOpts := []a2asrv.RequestHandlerOption{a2asrv.WithLogger(testLogger(t))}
	if opts.interceptor != nil {
		handlerOpts = append(handlerOpts, a2asrv.WithCallInterceptors(opts.interceptor))
	}
	h := a2asrv.NewHandler(p.exec, handlerOpts...)
	wrap := func(next http.Handler) http.Handler {
		if opts.intercept != nil {
			return opts.intercept(next)
		}
		return next
	}
	count := func(n *atomic.Int32, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			p.mu.Lock()
			p.headers = append(p.headers, r.Header.Clone())
			p.mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}

	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.card = &a2a.AgentCard{
		Name:        "remote",
		Description: "a remote agent for tests",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(p.srv.URL+"/jsonrpc", a2a.TransportProtocolJSONRPC),
			a2a.NewAgentInterface(p.srv.URL+"/rest", a2a.TransportProtocolHTTPJSON),
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: opts.streaming},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
	}
	mux.Handle("/jsonrpc", count(&p.jsonrpcHits, wrap(a2asrv.NewJSONRPCHandler(h))))
	mux.Handle("/rest/", count(&p.restHits, wrap(http.StripPrefix("/rest", a2asrv.NewRESTHandler(h)))))
	mux.Handle(DefaultCardPath, count(&p.cardHits, a2asrv.NewStaticAgentCardHandler(p.card)))
	return p
}

// runtime builds a runtime for the peer; edit adjusts the settings.
func (p *peer) runtime(t *testing.T, edit func(*Settings)) *Runtime {
	t.Helper()
	s := Settings{URL: p.srv.URL}
	if edit != nil {
		edit(&s)
	}
	return newRuntime(t, s)
}

func newRuntime(t *testing.T, s Settings) *Runtime {
	t.Helper()
	r, err := New(s, WithName("remote"), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// testLogger logs to the test's output while the test runs. Goroutines of
// the peer outlive their test (the SDK runs executions detached); their late
// records are dropped.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{out: t.Output()}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	out  io.Writer
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	return w.out.Write(p)
}

// transports are the protocol bindings every behaviour is checked on.
var transports = []struct {
	name, setting string
	hits          func(*peer) int32
	other         func(*peer) int32
}{
	{"jsonrpc", TransportJSONRPC, func(p *peer) int32 { return p.jsonrpcHits.Load() }, func(p *peer) int32 { return p.restHits.Load() }},
	{"rest", TransportREST, func(p *peer) int32 { return p.restHits.Load() }, func(p *peer) int32 { return p.jsonrpcHits.Load() }},
}

// checkTransport fails unless all protocol calls went to the expected
// binding.
func checkTransport(t *testing.T, p *peer, tr int) {
	t.Helper()
	if transports[tr].hits(p) == 0 || transports[tr].other(p) != 0 {
		t.Errorf("calls: %s=%d, other=%d; want all on %s", transports[tr].name, transports[tr].hits(p), transports[tr].other(p), transports[tr].name)
	}
}

// start sends the submitted task the first event of a new task must be.
func start(ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) bool {
	if ec.StoredTask != nil {
		return true
	}
	return emit(a2a.NewSubmittedTask(ec, ec.Message))
}

func agentText(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// finishWith is a script that ends the task in state with a status message.
func finishWith(state a2a.TaskState, text string) script {
	return func(_ context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		if start(ec, emit) {
			emit(a2a.NewStatusUpdateEvent(ec, state, agentText(ec, text)))
		}
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	// A guard against hanging, not a timing assertion.
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

func boolPtr(b bool) *bool { return &b }

// request returns attempt n of task-1 whose message holds text.
func request(n int, text string) *task.Request {
	req := agenttest.Request(text)
	req.Attempt = n
	return req
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{})
	a, err := agent.New(t.Context(), agenttest.Spec(t, Type, fmt.Sprintf("url: %s\ntimeout: 10m\nstream: false\ntransport: rest\n", p.srv.URL)))
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })
	r := a.(*Runtime)
	if r.cfg.Timeout != 10*time.Minute || r.cfg.Stream == nil || *r.cfg.Stream || r.cfg.Transport != TransportREST {
		t.Errorf("settings = %+v", r.cfg)
	}
	if _, err := agent.New(t.Context(), agenttest.Spec(t, Type, "url: http://x\ncard: /c.json\n")); err == nil || !strings.Contains(err.Error(), "card") {
		t.Errorf("unknown field: err = %v", err)
	}
	if _, err := agent.New(t.Context(), agenttest.Spec(t, Type, "")); err == nil || !strings.Contains(err.Error(), "url: required") {
		t.Errorf("no settings: err = %v", err)
	}
}

func TestBlockingSendWithArtifacts(t *testing.T) {
	t.Parallel()
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			p := newPeer(t, func(_ context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
				_ = start(ec, emit) &&
					emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentText(ec, "working"))) &&
					emit(a2a.NewArtifactEvent(ec, a2a.NewTextPart("echo: "+ec.Message.Parts[0].Text()))) &&
					emit(a2a.NewArtifactEvent(ec, a2a.NewDataPart(map[string]any{"n": 1}))) &&
					emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentText(ec, "done")))
			}, peerOptions{streaming: true})
			r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting; s.Stream = boolPtr(false) })
			req := request(1, "hello")

			rec := &agenttest.Recorder{}
			res, err := r.Stream(t.Context(), req, rec.Emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if len(rec.Chunks()) != 0 {
				t.Errorf("blocking send emitted %d chunks", len(rec.Chunks()))
			}
			if res.InputRequired || len(res.Artifacts) != 2 {
				t.Fatalf("result = %+v, want two artifacts", res)
			}
			if got := agenttest.PartsText(res.Artifacts[0].Parts); got != "echo: hello" {
				t.Errorf("artifact 0 = %q", got)
			}
			if got := string(res.Artifacts[1].Parts[0].Data); got != `{"n":1}` {
				t.Errorf("artifact 1 data = %s", got)
			}
			if res.Message == nil || res.Message.Text() != "done" || res.Message.Role != task.RoleAgent ||
				res.Message.TaskID != req.TaskID || res.Message.ContextID != req.ContextID {
				t.Errorf("message = %+v, want the agent's \"done\" for the local task", res.Message)
			}

			got := p.exec.messages()
			if len(got) != 1 {
				t.Fatalf("remote received %d messages", len(got))
			}
			m := got[0].Message
			if m.ID != derivedID(req, "message") || m.Role != a2a.MessageRoleUser || m.TaskID != "" || m.ContextID != "" {
				t.Errorf("sent message id=%q role=%s task=%q context=%q; want derived id, user, no ids", m.ID, m.Role, m.TaskID, m.ContextID)
			}
			checkTransport(t, p, i)

			md := r.Metadata()
			if md.Description != "a remote agent for tests" || md.Streaming || len(md.InputModes) != 2 {
				t.Errorf("metadata after the card = %+v", md)
			}
		})
	}
}

func TestStreamingChunksInOrder(t *testing.T) {
	t.Parallel()
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
				first := a2a.NewArtifactEvent(ec, a2a.NewTextPart("a"))
				if !start(ec, emit) || !emit(first) || !emit(a2a.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2a.NewTextPart("b"))) {
					return
				}
				// The rest waits until the client has seen "b": chunks must
				// pass through while the remote task is still running.
				select {
				case <-release:
				case <-ctx.Done():
					return
				}
				last := a2a.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2a.NewTextPart("c"))
				last.LastChunk = true
				_ = emit(last) && emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil))
			}, peerOptions{streaming: true})
			r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting; s.Timeout = 20 * time.Second })

			var once sync.Once
			rec := &agenttest.Recorder{}
			emit := func(c task.ArtifactChunk) error {
				if agenttest.PartsText(c.Artifact.Parts) == "b" {
					once.Do(func() { close(release) })
				}
				return rec.Emit(c)
			}
			res, err := r.Stream(t.Context(), request(1, "go"), emit)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got := strings.Join(rec.Texts(), ","); got != "a,b,c" {
				t.Errorf("chunks = %s, want a,b,c", got)
			}
			agenttest.CheckChunks(t, rec.Chunks(), res)
			if got := agenttest.ResultText(t, res); got != "abc" {
				t.Errorf("assembled artifact = %q, want abc", got)
			}
			if res.Message != nil {
				t.Errorf("message = %+v, want none", res.Message)
			}
			checkTransport(t, p, i)
		})
	}
}

func TestInvokeCollectsStreamedChunks(t *testing.T) {
	t.Parallel()
	p := newPeer(t, func(_ context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		first := a2a.NewArtifactEvent(ec, a2a.NewTextPart("x"))
		_ = start(ec, emit) && emit(first) &&
			emit(a2a.NewArtifactUpdateEvent(ec, first.Artifact.ID, a2a.NewTextPart("y"))) &&
			emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil))
	}, peerOptions{streaming: true})
	res, err := p.runtime(t, nil).Invoke(t.Context(), request(1, "go"))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "xy" {
		t.Errorf("artifact = %q, want xy", got)
	}
}

func TestMessageReply(t *testing.T) {
	t.Parallel()
	p := newPeer(t, func(_ context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		emit(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hi there")))
	}, peerOptions{streaming: true})
	for _, stream := range []bool{false, true} {
		res, err := p.runtime(t, func(s *Settings) { s.Stream = boolPtr(stream) }).Invoke(t.Context(), request(1, "hi"))
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if res.Message == nil || res.Message.Text() != "hi there" || res.Message.Role != task.RoleAgent {
			t.Errorf("stream=%v: message = %+v", stream, res.Message)
		}
		if got := agenttest.ResultText(t, res); got != "hi there" {
			t.Errorf("stream=%v: artifact = %q", stream, got)
		}
	}
}

func TestRemoteFinalStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state     a2a.TaskState
		permanent bool
		want      string
	}{
		{a2a.TaskStateFailed, false, "remote agent failed the task: disk full"},
		{a2a.TaskStateRejected, true, "remote agent rejected the task: disk full"},
		{a2a.TaskStateCanceled, true, "remote agent canceled the task: disk full"},
	}
	for _, tt := range tests {
		for i, tr := range transports {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", tt.state, tr.name, stream), func(t *testing.T) {
					t.Parallel()
					p := newPeer(t, finishWith(tt.state, "disk full"), peerOptions{streaming: true})
					r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting; s.Stream = boolPtr(stream) })
					res, err := r.Invoke(t.Context(), request(1, "go"))
					if err == nil {
						t.Fatalf("result = %+v, want an error", res)
					}
					if !strings.Contains(err.Error(), tt.want) {
						t.Errorf("error %q does not contain %q", err, tt.want)
					}
					if got := task.IsPermanent(err); got != tt.permanent {
						t.Errorf("permanent = %v, want %v (%v)", got, tt.permanent, err)
					}
					if got := task.ErrorCode(err); got != task.CodeAgentFailed {
						t.Errorf("code = %s, want %s", got, task.CodeAgentFailed)
					}
					checkTransport(t, p, i)
				})
			}
		}
	}
}

func TestRetryKeepsRemoteContext(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		state := a2a.TaskStateCompleted
		if calls.Add(1) == 1 {
			state = a2a.TaskStateFailed
		}
		finishWith(state, "try again")(ctx, ec, emit)
	}, peerOptions{})
	r := p.runtime(t, nil)
	if _, err := r.Invoke(t.Context(), request(1, "go")); err == nil || task.IsPermanent(err) {
		t.Fatalf("attempt 1: err = %v, want retryable", err)
	}
	if _, err := r.Invoke(t.Context(), request(2, "go")); err != nil {
		t.Fatalf("attempt 2: %v", err)
	}
	got := p.exec.messages()
	if len(got) != 2 {
		t.Fatalf("remote received %d messages", len(got))
	}
	if got[1].Message.ContextID != got[0].ContextID || got[1].Message.TaskID != "" || got[1].Continued {
		t.Errorf("retry sent context=%q task=%q; want the remote context %q and a new task",
			got[1].Message.ContextID, got[1].Message.TaskID, got[0].ContextID)
	}
	if got[0].Message.ID == got[1].Message.ID {
		t.Errorf("both attempts sent message id %q", got[0].Message.ID)
	}
}

func TestInputRequired(t *testing.T) {
	t.Parallel()
	for i, tr := range transports {
		for _, stream := range []bool{false, true} {
			// fresh continues on a new runtime: the remote ids come back
			// from the stored question, as after a restart.
			for _, fresh := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/stream=%v/fresh=%v", tr.name, stream, fresh), func(t *testing.T) {
					t.Parallel()
					p := newPeer(t, func(_ context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
						if ec.StoredTask == nil {
							_ = start(ec, emit) && emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, agentText(ec, "Which city?")))
							return
						}
						_ = emit(a2a.NewArtifactEvent(ec, a2a.NewTextPart("sunny in "+ec.Message.Parts[0].Text()))) &&
							emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil))
					}, peerOptions{streaming: true})
					edit := func(s *Settings) { s.Transport = tr.setting; s.Stream = boolPtr(stream) }
					r := p.runtime(t, edit)

					req := request(1, "weather?")
					res, err := r.Invoke(t.Context(), req)
					if err != nil {
						t.Fatalf("attempt 1: %v", err)
					}
					if !res.InputRequired || res.Message == nil || res.Message.Text() != "Which city?" ||
						res.Message.Role != task.RoleAgent || res.Message.TaskID != req.TaskID {
						t.Fatalf("attempt 1 = %+v, want the question", res)
					}
					if _, ok := res.Message.Metadata[remoteMetaKey]; !ok {
						t.Errorf("question metadata = %v, want the remote ids", res.Message.Metadata)
					}

					answer := task.Message{ID: "msg-2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("Paris")}}
					req2 := request(2, "")
					req2.Message = answer
					req2.History = []task.Message{req.Message, *res.Message, answer}
					if fresh {
						r = p.runtime(t, edit)
					}
					res2, err := r.Invoke(t.Context(), req2)
					if err != nil {
						t.Fatalf("attempt 2: %v", err)
					}
					if got := agenttest.ResultText(t, res2); got != "sunny in Paris" {
						t.Errorf("answer = %q", got)
					}
					got := p.exec.messages()
					if len(got) != 2 || !got[1].Continued || got[1].Message.TaskID != got[0].TaskID || got[1].Message.ContextID != got[0].ContextID {
						t.Errorf("the answer did not continue remote task %s: %+v", got[0].TaskID, got[1:])
					}
					checkTransport(t, p, i)
				})
			}
		}
	}
}

func TestAuthRequired(t *testing.T) {
	t.Parallel()
	// The remote agent asks for authentication, which then happens out of
	// band; when the caller answers, the runtime finds the remote task
	// already moving and follows it instead of sending the answer.
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			t.Parallel()
			signedIn := make(chan struct{})
			p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
				if !start(ec, emit) || !emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateAuthRequired, agentText(ec, "Sign in first"))) {
					return
				}
				select {
				case <-signedIn:
				case <-ctx.Done():
					return
				}
				_ = emit(a2a.NewArtifactEvent(ec, a2a.NewTextPart("private data"))) &&
					emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil))
			}, peerOptions{streaming: true})
			r := p.runtime(t, nil)

			req := request(1, "my data")
			res, err := r.Invoke(t.Context(), req)
			if err != nil {
				t.Fatalf("attempt 1: %v", err)
			}
			if !res.InputRequired || res.Message.Text() != "Sign in first" {
				t.Fatalf("attempt 1 = %+v, want the request to sign in", res)
			}

			close(signedIn)
			remoteID := p.exec.messages()[0].TaskID
			waitRemoteState(t, p, remoteID, a2a.TaskStateCompleted)

			answer := task.Message{ID: "msg-2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("signed in")}}
			req2 := request(2, "")
			req2.Message = answer
			req2.History = []task.Message{req.Message, *res.Message, answer}
			if fresh {
				r = p.runtime(t, nil)
			}
			res2, err := r.Invoke(t.Context(), req2)
			if err != nil {
				t.Fatalf("attempt 2: %v", err)
			}
			if got := agenttest.ResultText(t, res2); got != "private data" {
				t.Errorf("result = %q", got)
			}
			if n := len(p.exec.messages()); n != 1 {
				t.Errorf("remote received %d messages, want only the first", n)
			}
		})
	}
}

// waitRemoteState polls the peer with the official client until its task
// id reaches state.
func waitRemoteState(t *testing.T, p *peer, id a2a.TaskID, state a2a.TaskState) {
	t.Helper()
	client, err := a2aclient.NewFromCard(t.Context(), p.card)
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 { // a guard against hanging, not a timing assertion
		got, err := client.GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if got.Status.State == state {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("remote task %s never reached %s", id, state)
}

func TestCancelForwarded(t *testing.T) {
	t.Parallel()
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			var exec *executor
			p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
				if !start(ec, emit) || !emit(a2a.NewArtifactEvent(ec, a2a.NewTextPart("started"))) {
					return
				}
				select { // work until canceled
				case <-ctx.Done():
				case <-exec.unblock:
				}
			}, peerOptions{streaming: true})
			exec = p.exec
			r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting })

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			started := make(chan struct{})
			var once sync.Once
			done := make(chan error, 1)
			go func() {
				_, err := agent.Runner(r).Run(ctx, request(1, "go"), func(task.ArtifactChunk) error {
					once.Do(func() { close(started) })
					return nil
				})
				done <- err
			}()
			recv(t, started, "the first chunk")
			cancel()

			remoteID := recv(t, p.exec.canceled, "the remote cancel")
			if got := p.exec.messages(); got[0].TaskID != remoteID {
				t.Errorf("canceled remote task %s, want %s", remoteID, got[0].TaskID)
			}
			if err := recv(t, done, "the attempt to return"); !errors.Is(err, context.Canceled) {
				t.Errorf("attempt error = %v, want context.Canceled", err)
			}
			checkTransport(t, p, i)
		})
	}
}

func TestCancelUnknownTask(t *testing.T) {
	t.Parallel()
	// Nothing was sent for the task: there is nothing to cancel and no
	// call is made.
	r := newRuntime(t, Settings{URL: "http://127.0.0.1:1"})
	if err := r.Cancel(t.Context(), "nope"); err != nil {
		t.Errorf("Cancel = %v", err)
	}
}

func TestAttemptTimeout(t *testing.T) {
	// Not parallel: the timeout must fall on the slow exchange, so the
	// test runs before the package's parallel tests load the machine.
	var exec *executor
	p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		if ec.Message.Parts[0].Text() == "quick" {
			finishWith(a2a.TaskStateCompleted, "ok")(ctx, ec, emit)
			return
		}
		if !start(ec, emit) {
			return
		}
		select {
		case <-ctx.Done():
		case <-exec.unblock:
		}
	}, peerOptions{streaming: true})
	exec = p.exec
	r := p.runtime(t, func(s *Settings) { s.Timeout = 2 * time.Second })
	// The first call resolves the card, so that the timeout below falls on
	// the slow exchange itself.
	if _, err := r.Invoke(t.Context(), request(1, "quick")); err != nil {
		t.Fatalf("warm-up: %v", err)
	}

	_, err := r.Invoke(t.Context(), request(2, "slow"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeTimeout {
		t.Fatalf("err = %v (code %s), want a retryable timeout", err, task.ErrorCode(err))
	}
	// The remote task was left running; the runtime cancels it so that the
	// retry does not run beside it.
	remoteID := recv(t, p.exec.canceled, "the remote cancel")
	if got := p.exec.messages(); got[1].TaskID != remoteID {
		t.Errorf("canceled %s, want %s", remoteID, got[1].TaskID)
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	dead := deadURL(t)

	t.Run("card", func(t *testing.T) {
		t.Parallel()
		r := newRuntime(t, Settings{URL: dead + "/agent-card.json?key=s3cret"})
		_, err := r.Invoke(t.Context(), request(1, "go"))
		if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
			t.Fatalf("err = %v, want retryable unavailable", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("err = %v, shows the URL's query", err)
		}
	})
	for _, tr := range transports {
		t.Run("interface/"+tr.name, func(t *testing.T) {
			t.Parallel()
			// The card is served, but the interface it names is down.
			binding := a2a.TransportProtocolJSONRPC
			if tr.setting == TransportREST {
				binding = a2a.TransportProtocolHTTPJSON
			}
			card := &a2a.AgentCard{Name: "gone", SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(dead, binding)}}
			srv := httptest.NewServer(a2asrv.NewStaticAgentCardHandler(card))
			t.Cleanup(srv.Close)
			r := newRuntime(t, Settings{URL: srv.URL + "/card.json", Transport: tr.setting})
			_, err := r.Invoke(t.Context(), request(1, "go"))
			if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
				t.Fatalf("err = %v, want retryable unavailable", err)
			}
			if !strings.Contains(err.Error(), "refused") {
				t.Errorf("err = %v, want it to say the connection was refused", err)
			}
		})
	}
}

func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		permanent bool
	}{
		{http.StatusServiceUnavailable, false},
		{http.StatusBadGateway, false},
		{http.StatusTooManyRequests, false},
		{http.StatusNotFound, true},
		{http.StatusUnauthorized, true},
		// The statuses the shared policy decides (docs/runtimes.md).
		{http.StatusRequestTimeout, false},
		{http.StatusLocked, false},
		{http.StatusTooEarly, false},
		{http.StatusConflict, true},
		{http.StatusNotImplemented, true},
		{http.StatusHTTPVersionNotSupported, true},
	}
	for _, tt := range tests {
		for _, tr := range transports {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/%s/stream=%v", tt.status, tr.name, stream), func(t *testing.T) {
					t.Parallel()
					p := newPeer(t, finishWith(a2a.TaskStateCompleted, "unreachable"), peerOptions{
						streaming: true,
						intercept: func(http.Handler) http.Handler {
							return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
								http.Error(w, "nope", tt.status)
							})
						},
					})
					r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting; s.Stream = boolPtr(stream) })
					_, err := r.Invoke(t.Context(), request(1, "go"))
					if err == nil {
						t.Fatal("no error")
					}
					if got := task.IsPermanent(err); got != tt.permanent {
						t.Errorf("permanent = %v, want %v (%v)", got, tt.permanent, err)
					}
				})
			}
		}
	}
}

// refuse is a server interceptor that answers every SendMessage and
// SendStreamingMessage with err, the way a remote agent declares errors.
type refuse struct {
	a2asrv.PassthroughCallInterceptor
	err error
}

func (f refuse) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	if strings.Contains(cc.Method(), "Message") {
		return ctx, nil, f.err
	}
	return ctx, nil, nil
}

func TestRemoteDeclaredErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err       error
		permanent bool
		code      task.Code
	}{
		{a2a.ErrInvalidParams, true, task.CodeInvalidArgument},
		{a2a.ErrUnsupportedOperation, true, task.CodeUnsupported},
		{a2a.ErrUnsupportedContentType, true, task.CodeUnsupported},
		{a2a.ErrUnauthenticated, true, task.CodeForbidden},
		{a2a.ErrInternalError, false, task.CodeUnavailable},
	}
	for _, tt := range tests {
		for _, tr := range transports {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", a2a.ErrorReason(tt.err), tr.name, stream), func(t *testing.T) {
					t.Parallel()
					p := newPeer(t, finishWith(a2a.TaskStateCompleted, "unreachable"), peerOptions{
						streaming:   true,
						interceptor: refuse{err: fmt.Errorf("test: %w", tt.err)},
					})
					r := p.runtime(t, func(s *Settings) { s.Transport = tr.setting; s.Stream = boolPtr(stream) })
					_, err := r.Invoke(t.Context(), request(1, "go"))
					if err == nil {
						t.Fatal("no error")
					}
					if got := task.IsPermanent(err); got != tt.permanent {
						t.Errorf("permanent = %v, want %v (%v)", got, tt.permanent, err)
					}
					if got := task.ErrorCode(err); got != tt.code {
						t.Errorf("code = %s, want %s (%v)", got, tt.code, err)
					}
					if !errors.Is(err, tt.err) {
						t.Errorf("err = %v, want it to wrap %v", err, tt.err)
					}
				})
			}
		}
	}
}

func TestCardErrors(t *testing.T) {
	t.Parallel()
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{})
	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		r := newRuntime(t, Settings{URL: p.srv.URL, CardPath: "/nowhere.json"})
		_, err := r.Invoke(t.Context(), request(1, "go"))
		if err == nil || !task.IsPermanent(err) {
			t.Fatalf("err = %v, want permanent", err)
		}
	})
	t.Run("card url", func(t *testing.T) {
		t.Parallel()
		r := newRuntime(t, Settings{URL: p.srv.URL + DefaultCardPath, CardPath: "/ignored"})
		if _, err := r.Invoke(t.Context(), request(1, "go")); err != nil {
			t.Fatalf("Invoke: %v", err)
		}
	})
	t.Run("no usable interface", func(t *testing.T) {
		t.Parallel()
		card := &a2a.AgentCard{Name: "grpc only", SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface("http://x", a2a.TransportProtocolGRPC)}}
		srv := httptest.NewServer(a2asrv.NewStaticAgentCardHandler(card))
		t.Cleanup(srv.Close)
		r := newRuntime(t, Settings{URL: srv.URL})
		_, err := r.Invoke(t.Context(), request(1, "go"))
		if err == nil || !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnsupported {
			t.Fatalf("err = %v, want permanent unsupported", err)
		}
	})
}

func TestTransportAutoFollowsCard(t *testing.T) {
	t.Parallel()
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{})
	p.card.SupportedInterfaces[0], p.card.SupportedInterfaces[1] = p.card.SupportedInterfaces[1], p.card.SupportedInterfaces[0]
	// The card handler serialised the card when the peer started; serve the
	// reordered one from its own path.
	mux := http.NewServeMux()
	mux.Handle("/reordered.json", a2asrv.NewStaticAgentCardHandler(p.card))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	r := newRuntime(t, Settings{URL: srv.URL + "/reordered.json"})
	if _, err := r.Invoke(t.Context(), request(1, "go")); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	checkTransport(t, p, 1) // REST, listed first
}

func TestHeaders(t *testing.T) {
	// t.Setenv: not parallel.
	t.Setenv("PACTUM_A2A_TEST_TOKEN", "s3cret")
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{streaming: true})
	r := p.runtime(t, func(s *Settings) {
		s.Headers = Headers{"Authorization": "Bearer ${PACTUM_A2A_TEST_TOKEN}", "X-Tenant": "acme"}
	})
	if _, err := r.Invoke(t.Context(), request(1, "go")); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.headers) < 2 {
		t.Fatalf("peer saw %d requests, want the card and a call", len(p.headers))
	}
	for i, h := range p.headers {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Tenant") != "acme" {
			t.Errorf("request %d headers = %v", i, h)
		}
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("settings", "headers", r.cfg.Headers)
	for _, s := range []string{fmt.Sprint(r.cfg), fmt.Sprintf("%+v", r.cfg), fmt.Sprintf("%#v", r.cfg), logged.String()} {
		if strings.Contains(s, "s3cret") || !strings.Contains(s, "Authorization") {
			t.Errorf("settings print the secret, or not the header name: %s", s)
		}
	}

	if _, err := New(Settings{URL: "http://x", Headers: Headers{"A": "${PACTUM_A2A_TEST_UNSET}"}}); err == nil ||
		!strings.Contains(err.Error(), "headers.A: environment variable PACTUM_A2A_TEST_UNSET is not set") {
		t.Errorf("unset variable: err = %v", err)
	}
	t.Setenv("PACTUM_A2A_TEST_BAD", "a\nb")
	if _, err := New(Settings{URL: "http://x", Headers: Headers{"A": "${PACTUM_A2A_TEST_BAD}"}}); err == nil ||
		strings.Contains(err.Error(), "a\nb") || !strings.Contains(err.Error(), "headers.A") {
		t.Errorf("bad expanded value: err = %v", err)
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{})
	earlier := []task.Message{
		{ID: "h1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("first question")}},
		{ID: "h2", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("first answer")}},
	}
	for _, history := range []bool{false, true} {
		req := request(1, "second question")
		req.History = append(append([]task.Message(nil), earlier...), req.Message)
		if _, err := p.runtime(t, func(s *Settings) { s.History = history }).Invoke(t.Context(), req); err != nil {
			t.Fatalf("history=%v: %v", history, err)
		}
	}
	got := p.exec.messages()
	if n := len(got[0].Message.Parts); n != 1 {
		t.Errorf("history off: sent %d parts, want 1", n)
	}
	parts := got[1].Message.Parts
	if len(parts) != 3 || parts[0].Text() != "first question" || parts[1].Text() != "first answer" || parts[2].Text() != "second question" {
		t.Fatalf("history on: parts = %v", parts)
	}
	mark, _ := parts[1].Metadata[historyMetaKey].(map[string]any)
	if mark["role"] != "agent" || mark["messageId"] != "h2" {
		t.Errorf("history part metadata = %v", parts[1].Metadata)
	}
	if _, marked := parts[2].Metadata[historyMetaKey]; marked {
		t.Error("the new message is marked as history")
	}
}

func TestCloseTwiceAndAfter(t *testing.T) {
	t.Parallel()
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{})
	r, err := New(Settings{URL: p.srv.URL}, WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), request(1, "go")); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = r.Invoke(t.Context(), request(2, "go"))
	if !errors.Is(err, errClosed) || task.IsPermanent(err) {
		t.Errorf("after Close: err = %v, want retryable errClosed", err)
	}
}

func TestSettingsValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Settings
		want string // "" for valid
	}{
		{"minimal", Settings{URL: "https://agent.example.com"}, ""},
		{"no url", Settings{}, "url: required"},
		{"bad scheme", Settings{URL: "ftp://x"}, "url: scheme"},
		{"no host", Settings{URL: "http:///x"}, "url: missing host"},
		{"credentials", Settings{URL: "https://u:p@x"}, "url: credentials"},
		{"card path", Settings{URL: "http://x", CardPath: "card.json"}, "card_path:"},
		{"transport", Settings{URL: "http://x", Transport: "grpc"}, "transport:"},
		{"timeout", Settings{URL: "http://x", Timeout: -time.Second}, "timeout:"},
		{"header name", Settings{URL: "http://x", Headers: Headers{"Bad Name": "v"}}, "headers.Bad Name:"},
		{"reserved header", Settings{URL: "http://x", Headers: Headers{"content-type": "v"}}, "headers.content-type:"},
		{"header value", Settings{URL: "http://x", Headers: Headers{"X": "a\r\nb"}}, "headers.X:"},
	}
	for _, tt := range tests {
		err := tt.s.withDefaults().validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: err = %v, want prefix %q", tt.name, err, tt.want)
		}
	}
	d := Settings{}.withDefaults()
	if d.CardPath != DefaultCardPath || d.Transport != TransportAuto || d.Timeout != DefaultTimeout || d.Stream != nil || d.History {
		t.Errorf("defaults = %+v", d)
	}
}

func TestCardLocation(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, cardPath, base, path string }{
		{"https://h", DefaultCardPath, "https://h", DefaultCardPath},
		{"https://h/agents/x", DefaultCardPath, "https://h/agents/x", DefaultCardPath},
		{"https://h/agents/x/.well-known/agent-card.json", DefaultCardPath, "https://h", "/agents/x/.well-known/agent-card.json"},
		{"https://h/card.json?k=v", "/ignored", "https://h?k=v", "/card.json"},
	}
	for _, tt := range tests {
		base, path := Settings{URL: tt.url, CardPath: tt.cardPath}.cardLocation()
		if base != tt.base || path != tt.path {
			t.Errorf("%s: got (%s, %s), want (%s, %s)", tt.url, base, path, tt.base, tt.path)
		}
	}
}

func TestMetadataBeforeCard(t *testing.T) {
	t.Parallel()
	r := newRuntime(t, Settings{URL: "https://agent.example.com/a?token=secret", Stream: boolPtr(false)})
	md := r.Metadata()
	if md.Type != Type || md.Streaming || strings.Contains(md.Description, "secret") || !strings.Contains(md.Description, "agent.example.com/a") {
		t.Errorf("metadata = %+v", md)
	}
}

func TestDerivedIDs(t *testing.T) {
	t.Parallel()
	a, b := request(1, "x"), request(2, "x")
	if derivedID(a, "message") != derivedID(request(1, "y"), "message") {
		t.Error("the id depends on more than task and attempt")
	}
	if derivedID(a, "message") == derivedID(b, "message") || derivedID(a, "message") == derivedID(a, "reply") {
		t.Error("ids collide")
	}
}

// answerEarly is a server interceptor that turns every blocking SendMessage
// into a non-blocking one, as a remote agent that answers before it is done
// would behave.
type answerEarly struct {
	a2asrv.PassthroughCallInterceptor
}

func (answerEarly) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if send, ok := req.Payload.(*a2a.SendMessageRequest); ok && cc.Method() == "SendMessage" {
		cfg := a2a.SendMessageConfig{}
		if send.Config != nil {
			cfg = *send.Config
		}
		cfg.ReturnImmediately = true
		send.Config = &cfg
	}
	return ctx, nil, nil
}

func TestUnfinishedTaskIsPolled(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	p := newPeer(t, func(ctx context.Context, ec *a2asrv.ExecutorContext, emit func(a2a.Event) bool) {
		if !start(ec, emit) {
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
			return
		}
		_ = emit(a2a.NewArtifactEvent(ec, a2a.NewTextPart("late"))) &&
			emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, agentText(ec, "finally")))
	}, peerOptions{interceptor: answerEarly{}})
	r := p.runtime(t, func(s *Settings) { s.Timeout = 20 * time.Second })

	done := make(chan struct{})
	var res *task.Result
	var err error
	go func() {
		defer close(done)
		res, err = r.Invoke(t.Context(), request(1, "go"))
	}()
	// The remote task finishes only after the exchange answered early.
	recvPoll(t, p)
	close(release)
	recv(t, done, "the attempt")
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "late" || res.Message.Text() != "finally" {
		t.Errorf("result = %q / %v", got, res.Message)
	}
}

// recvPoll waits until the runtime asked the peer for a task with GetTask.
func recvPoll(t *testing.T, p *peer) {
	t.Helper()
	for range 3000 { // a guard against hanging, not a timing assertion
		p.mu.Lock()
		n := len(p.headers)
		p.mu.Unlock()
		if n >= 3 { // the card, SendMessage, GetTask
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the runtime never polled the remote task")
}

func TestSessions(t *testing.T) {
	t.Parallel()
	s := newSessions()
	req := request(1, "x")
	s.put(req, remote{TaskID: "r1", ContextID: "rc"})
	if got := s.remoteTaskIDs([]a2a.TaskID{"task-1", "unknown"}); len(got) != 1 || got[0] != "r1" {
		t.Errorf("remoteTaskIDs = %v, want [r1]", got)
	}
	s.forget(req.TaskID)
	other := request(1, "y")
	other.TaskID = "task-2"
	if got := s.lookup(other); got != (remote{ContextID: "rc"}) {
		t.Errorf("a task of the same context: lookup = %+v, want the remote context", got)
	}

	for i := range maxSessions * 2 {
		r := request(1, "z")
		r.TaskID, r.ContextID = fmt.Sprint("t", i), fmt.Sprint("c", i)
		s.put(r, remote{TaskID: "r", ContextID: "rc"})
	}
	if n := len(s.byTask); n > maxSessions+maxSessions/8 {
		t.Errorf("%d task entries kept, want at most %d", n, maxSessions+maxSessions/8)
	}
	if _, ok := s.get(fmt.Sprint("t", maxSessions*2-1)); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, ok := s.get("t0"); ok {
		t.Error("the oldest entry was kept")
	}
}

func TestFromHistory(t *testing.T) {
	t.Parallel()
	q := task.Message{ID: "q", Role: task.RoleAgent, Metadata: map[string]any{remoteMetaKey: remoteMeta(remote{TaskID: "r1", ContextID: "rc", Auth: true})}}
	plain := task.Message{ID: "p", Role: task.RoleAgent}
	user := task.Message{ID: "u", Role: task.RoleUser}
	tests := []struct {
		history []task.Message
		want    remote
		ok      bool
	}{
		{[]task.Message{user, q, user}, remote{TaskID: "r1", ContextID: "rc", Open: true, Auth: true}, true},
		{[]task.Message{q, user, plain, user}, remote{}, false}, // a later agent message was no question
		{[]task.Message{user}, remote{}, false},
	}
	for i, tt := range tests {
		got, ok := fromHistory(&task.Request{History: tt.history})
		if got != tt.want || ok != tt.ok {
			t.Errorf("%d: fromHistory = %+v, %v; want %+v, %v", i, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPutArtifact(t *testing.T) {
	t.Parallel()
	a := &attempt{index: map[string]int{}}
	a.put(task.Artifact{ID: "a", Parts: []task.Part{task.TextPart("1")}, Metadata: map[string]any{"k": 1}}, false)
	a.put(task.Artifact{ID: "b", Parts: []task.Part{task.TextPart("x")}}, false)
	a.put(task.Artifact{ID: "a", Parts: []task.Part{task.TextPart("2")}, Metadata: map[string]any{"m": 2}}, true)
	a.put(task.Artifact{ID: "b", Parts: []task.Part{task.TextPart("y")}}, false) // replaces
	a.put(task.Artifact{ID: "c", Parts: []task.Part{task.TextPart("z")}}, true)  // append to unknown: starts it
	if len(a.artifacts) != 3 {
		t.Fatalf("artifacts = %+v", a.artifacts)
	}
	got := []string{agenttest.PartsText(a.artifacts[0].Parts), agenttest.PartsText(a.artifacts[1].Parts), agenttest.PartsText(a.artifacts[2].Parts)}
	if strings.Join(got, ",") != "12,y,z" {
		t.Errorf("texts = %v, want 12,y,z", got)
	}
	if m := a.artifacts[0].Metadata; m["k"] != 1 || m["m"] != 2 {
		t.Errorf("merged metadata = %v", m)
	}
}

func ExampleNew() {
	r, err := New(Settings{URL: "https://agent.example.com/research", Timeout: 10 * time.Minute})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	// Nothing is fetched yet: the card is resolved on the first call.
	fmt.Println(r.Metadata().Description)

	_, err = New(Settings{URL: "https://agent.example.com", Transport: "grpc"})
	fmt.Println(err)
	// Output:
	// remote A2A agent at https://agent.example.com/research
	// transport: must be auto, jsonrpc or rest, not "grpc"
}

func TestReason(t *testing.T) {
	t.Parallel()
	a := &attempt{index: map[string]int{}}
	a.setStatus(a2a.TaskStatus{State: a2a.TaskStateWorking, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("working on it"))})
	a.setStatus(a2a.TaskStatus{State: a2a.TaskStateFailed})
	if got := a.reason("none"); got != "none" {
		t.Errorf("reason = %q; an earlier status message must not explain the failure", got)
	}
	a.setStatus(a2a.TaskStatus{State: a2a.TaskStateFailed, Message: &a2a.Message{Parts: a2a.ContentParts{nil, a2a.NewTextPart(" out of "), a2a.NewDataPart(1), a2a.NewTextPart("memory ")}}})
	if got := a.reason("none"); got != "out of \nmemory" {
		t.Errorf("reason = %q", got)
	}
	a.setStatus(a2a.TaskStatus{State: a2a.TaskStateFailed, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(strings.Repeat("é", maxReasonLen)))})
	if got := a.reason("none"); len(got) > maxReasonLen+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("long reason not cut: %d bytes", len(got))
	}
}

// TestClientCredentials: with oauth2 every request to the remote agent,
// the card fetch included, carries the bearer token of a client
// credentials grant, fetched once and reused, from a stand-in token
// endpoint (cctest; agent/internal/clientcreds tests renewal on 401).
func TestClientCredentials(t *testing.T) {
	// Not parallel: cctest sets the secret's environment variable.
	idp := cctest.Start(t)
	cc := &clientcreds.Settings{TokenURL: idp.URL, ClientID: "pactum", ClientSecretEnv: cctest.SecretEnv}
	p := newPeer(t, finishWith(a2a.TaskStateCompleted, "ok"), peerOptions{streaming: true})
	r := p.runtime(t, func(s *Settings) {
		s.OAuth2 = cc
	})
	for i := 1; i <= 2; i++ {
		if _, err := r.Invoke(t.Context(), request(i, "go")); err != nil {
			t.Fatalf("Invoke %d: %v", i, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.headers) < 3 {
		t.Fatalf("peer saw %d requests, want the card and two calls", len(p.headers))
	}
	for i, h := range p.headers {
		if h.Get("Authorization") != "Bearer tok-1" {
			t.Errorf("request %d: Authorization %q, want the grant's token", i, h.Get("Authorization"))
		}
	}
	if n := idp.Issued(); n != 1 {
		t.Errorf("%d tokens fetched, want 1", n)
	}
	if _, err := New(Settings{URL: "http://x", Headers: Headers{"Authorization": "Bearer x"},
		OAuth2: cc}); err == nil ||
		!strings.Contains(err.Error(), "oauth2: the client credentials grant sets the Authorization header") {
		t.Errorf("oauth2 with an Authorization header: %v", err)
	}
}
