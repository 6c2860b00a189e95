package a2aserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// bundle is what a test needs: a real Coordinator over a real SQLite file,
// the A2A server on loopback, and the gates the test agents wait on.
type bundle struct {
	t     testing.TB
	coord *task.Coordinator
	store *faultyStore
	srv   *a2aserver.Server
	http  *httptest.Server
	url   string
	// gate releases the "slow" agent's attempts (close it, or send once
	// per attempt).
	gate chan struct{}
	// started receives the task id of each "slow" attempt once it runs.
	started     chan string
	releaseOnce sync.Once
}

type setupConfig struct {
	opts    a2aserver.Options
	baseURL func(serverURL string) string
	// agents are registered with the Coordinator after testAgents (the
	// server serves those that opts.Agents names).
	agents []task.AgentSpec
	// policy is the Coordinator's policy engine (default none); the server
	// gets it too (Options.Policy) unless opts.Policy is set.
	policy task.PolicyEngine
}

// setup starts everything; options tweak the server's Options.
func setup(t testing.TB, tweak ...func(*setupConfig)) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })

	b := &bundle{t: t, store: &faultyStore{Store: st}, gate: make(chan struct{}), started: make(chan string, 16)}
	cfg := &setupConfig{opts: a2aserver.Options{
		Agents: []a2aserver.AgentInfo{
			{Name: "echo", Description: "Echoes its input.", Version: "1.2.3"},
			{Name: "slow", Streaming: true},
			{Name: "failing"},
			{Name: "flaky"},
			{Name: "ask"},
			{Name: "chunks", Streaming: true},
			{Name: "guarded"},
		},
		DefaultAgent: "echo",
		Logger:       testLogger(t),
		KeepAlive:    -1,
	}}
	for _, f := range tweak {
		f(cfg)
	}
	coord, err := task.NewCoordinator(task.Options{
		Store:        b.store,
		Agents:       append(testAgents(b), cfg.agents...),
		Policy:       cfg.policy,
		PollInterval: 50 * time.Millisecond,
		Logger:       testLogger(t),
	})
	if err != nil {
		t.Fatalf("new coordinator: %v", err)
	}
	if err := coord.Start(ctx); err != nil {
		t.Fatalf("start coordinator: %v", err)
	}
	b.coord = coord
	cfg.opts.Coordinator = coord
	if cfg.opts.Policy == nil {
		cfg.opts.Policy = cfg.policy
	}
	srv, err := a2aserver.New(cfg.opts)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("start server: %v", err)
	}
	b.srv = srv
	b.http = httptest.NewServer(srv)
	b.url = b.http.URL
	t.Cleanup(func() {
		// Release anything still waiting, then stop in dependency order.
		b.releaseAll()
		b.http.CloseClientConnections()
		b.http.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(sctx)
		_ = coord.Stop(sctx)
	})
	return b
}

// faultyStore lets a test make the store's reads fail.
type faultyStore struct {
	task.Store
	failGet atomic.Bool
	// Push configuration lookups, counted.
	listPush, hasPush atomic.Int64
	// beforePutPush, when set, runs before each PutPushConfig.
	beforePutPush atomic.Pointer[func(context.Context, task.PushConfig)]
}

// PutPushConfig implements task.Store.
func (s *faultyStore) PutPushConfig(ctx context.Context, c task.PushConfig, audit []task.AuditInput) error {
	if f := s.beforePutPush.Load(); f != nil {
		(*f)(ctx, c)
	}
	return s.Store.PutPushConfig(ctx, c, audit)
}

// ListPushConfigs implements task.Store.
func (s *faultyStore) ListPushConfigs(ctx context.Context, taskID string) ([]task.PushConfig, error) {
	s.listPush.Add(1)
	return s.Store.ListPushConfigs(ctx, taskID)
}

// HasPushConfigs implements task.Store.
func (s *faultyStore) HasPushConfigs(ctx context.Context) (bool, error) {
	s.hasPush.Add(1)
	return s.Store.HasPushConfigs(ctx)
}

// errDiskOnFire is the store failure tests inject.
var errDiskOnFire = errors.New("read tasks: disk on fire at /var/lib/pactum/pactum.db")

// GetTask implements task.Store.
func (s *faultyStore) GetTask(ctx context.Context, id string, historyLength int) (*task.Task, error) {
	if s.failGet.Load() {
		return nil, errDiskOnFire
	}
	return s.Store.GetTask(ctx, id, historyLength)
}

// releaseAll lets every attempt of the slow agent finish.
func (b *bundle) releaseAll() { b.releaseOnce.Do(func() { close(b.gate) }) }

// testAgents are the agents every test server registers.
func testAgents(b *bundle) []task.AgentSpec {
	return []task.AgentSpec{
		{Name: "echo", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			text := req.Message.Text()
			return &task.Result{
				Artifacts: []task.Artifact{{ID: "echo", Name: "echo", Parts: []task.Part{task.TextPart(text)}}},
				Message:   &task.Message{Parts: []task.Part{task.TextPart("echo: " + text)}},
			}, nil
		})},
		{Name: "slow", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "progress", Parts: []task.Part{task.TextPart("started")}}}); err != nil {
				return nil, err
			}
			select {
			case b.started <- req.TaskID:
			default:
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-b.gate:
			}
			return &task.Result{Artifacts: []task.Artifact{{ID: "result", Parts: []task.Part{task.TextPart("done")}}}}, nil
		})},
		{Name: "failing", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			return nil, task.Permanent(errors.New("the agent broke"))
		})},
		{Name: "flaky", Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
				return nil, fmt.Errorf("attempt %d failed", req.Attempt)
			})},
		{Name: "ask", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			users := 0
			for _, m := range req.History {
				if m.Role == task.RoleUser {
					users++
				}
			}
			if users < 2 {
				return &task.Result{InputRequired: true, Message: &task.Message{Parts: []task.Part{task.TextPart("What is your name?")}}}, nil
			}
			return &task.Result{
				Artifacts: []task.Artifact{{ID: "greeting", Parts: []task.Part{task.TextPart("Hello, " + req.Message.Text())}}},
			}, nil
		})},
		{Name: "chunks", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			for i, word := range []string{"one", "two", "three"} {
				ch := task.ArtifactChunk{Artifact: task.Artifact{ID: "words", Name: "words", Parts: []task.Part{task.TextPart(word)}}, Append: i > 0, LastChunk: i == 2}
				if err := emit(ch); err != nil {
					return nil, err
				}
			}
			return &task.Result{}, nil
		})},
		{Name: "guarded", Sensitive: true, Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			return &task.Result{}, nil
		})},
	}
}

// testLogger logs to the test when -v is given, and nowhere otherwise.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() || os.Getenv("A2ASERVER_TEST_LOGS") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// transports are the two A2A 1.0 HTTP bindings every client test runs over.
var transports = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}

// client returns an a2a-go client for agent, resolved from its card and
// bound to proto.
func (b *bundle) client(agent string, proto a2a.TransportProtocol) *a2aclient.Client {
	b.t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, b.url+"/agents/"+agent)
	if err != nil {
		b.t.Fatalf("resolve card of %s: %v", agent, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{proto}}))
	if err != nil {
		b.t.Fatalf("client for %s over %s: %v", agent, proto, err)
	}
	b.t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// ctx returns a context that ends with the test (or after a generous bound,
// so that a hung call fails instead of stalling the suite).
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// userMessage returns a user message with one text part.
func userMessage(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

// sendReq wraps a message in a SendMessageRequest.
func sendReq(m *a2a.Message) *a2a.SendMessageRequest { return &a2a.SendMessageRequest{Message: m} }

// send sends req with c and asserts that the result is a task.
func send(ctx context.Context, t *testing.T, c *a2aclient.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("send message: %v", err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("send message returned %T, want *a2a.Task", res)
	}
	return tk
}

// pactumMeta returns the metadata.pactum object of a task or event.
func pactumMeta(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	p, ok := m["pactum"].(map[string]any)
	if !ok {
		t.Fatalf("metadata.pactum missing or not an object: %#v", m)
	}
	return p
}

// artifactText joins the text of an artifact's parts.
func artifactText(a *a2a.Artifact) string {
	var sb strings.Builder
	for _, p := range a.Parts {
		sb.WriteString(p.Text())
	}
	return sb.String()
}

// waitState polls the core until the task reaches want (state changes are
// asynchronous; the bound only keeps a broken run from hanging).
func (b *bundle) waitState(id string, want task.State) *task.Task {
	b.t.Helper()
	ctx := testCtx(b.t)
	for {
		tk, err := b.coord.Get(ctx, id, -1)
		if err == nil && tk.State == want {
			return tk
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("task %s never reached %s (last: %v, %v)", id, want, tk, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitStarted waits until the slow agent runs an attempt and returns its
// task id.
func (b *bundle) waitStarted() string {
	b.t.Helper()
	select {
	case id := <-b.started:
		return id
	case <-testCtx(b.t).Done():
		b.t.Fatal("the slow agent never started")
		return ""
	}
}

// slogTo returns a logger writing text to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
