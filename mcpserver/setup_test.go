package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/echo"
	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/policy"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// bundle is what a test needs: a real Coordinator over a real SQLite file,
// the MCP server on a loopback HTTP server, and the gates the test agents
// wait on.
type bundle struct {
	t     testing.TB
	coord *task.Coordinator
	store task.Store
	srv   *mcpserver.Server
	http  *httptest.Server
	url   string
	// gate releases the "slow" agent's attempts (close it, or send once
	// per attempt); started receives the task id of each slow attempt.
	gate        chan struct{}
	started     chan string
	releaseOnce sync.Once
	// echoRuns counts the echo agent's attempts; flakyRuns the flaky one's.
	echoRuns  atomic.Int32
	flakyRuns atomic.Int32
}

type setupConfig struct {
	opts     mcpserver.Options
	httpOpts mcpserver.HTTPOptions
	// agents are registered with the Coordinator after testAgents.
	agents []task.AgentSpec
}

// setup starts everything; tweaks adjust the server's options.
func setup(t testing.TB, tweaks ...func(*setupConfig)) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	b := &bundle{t: t, store: st, gate: make(chan struct{}), started: make(chan string, 16)}
	cfg := &setupConfig{opts: mcpserver.Options{Logger: testLogger(t), Version: "test"}}
	for _, f := range tweaks {
		f(cfg)
	}
	coord, err := task.NewCoordinator(task.Options{
		Store:  st,
		Agents: append(testAgents(b), cfg.agents...),
		Permissions: task.Permissions{
			task.AnonymousActor: {"*"},
			"alice":             {"*"},
			"mallory":           {"echo"},
		},
		Policy:       policy.NewStatic("policy-v1", []policy.Approval{{ID: "approval-7", Actions: []string{"deploy.production"}}}),
		PollInterval: 20 * time.Millisecond,
		Logger:       testLogger(t),
	})
	if err != nil {
		t.Fatalf("new coordinator: %v", err)
	}
	if err := coord.Start(ctx); err != nil {
		t.Fatalf("start coordinator: %v", err)
	}
	b.coord = coord
	b.srv = mcpserver.New(coord, cfg.opts)
	b.http = httptest.NewServer(b.srv.Handler(cfg.httpOpts))
	b.url = b.http.URL
	t.Cleanup(func() {
		b.release()
		b.http.CloseClientConnections()
		b.http.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = coord.Stop(sctx)
	})
	return b
}

// release lets every attempt of the slow agent finish.
func (b *bundle) release() { b.releaseOnce.Do(func() { close(b.gate) }) }

// testAgents are the agents every test server registers.
func testAgents(b *bundle) []task.AgentSpec {
	echoRunner := agent.Runner(echo.New(echo.Settings{}))
	return []task.AgentSpec{
		{Name: "echo", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			b.echoRuns.Add(1)
			return echoRunner.Run(ctx, req, emit)
		})},
		{Name: "slow", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			select {
			case b.started <- req.TaskID:
			default:
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-b.gate:
			}
			return &task.Result{Artifacts: []task.Artifact{{ID: "result", Name: "result", Parts: []task.Part{task.TextPart("done")}}}}, nil
		})},
		// flaky fails its first two attempts (then it is dead-lettered)
		// and succeeds from the third (a manual retry) on.
		{Name: "flaky", Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond},
			Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
				if b.flakyRuns.Add(1) <= 2 {
					return nil, fmt.Errorf("attempt %d failed", req.Attempt)
				}
				return &task.Result{Artifacts: []task.Artifact{{ID: "ok", Parts: []task.Part{task.TextPart("recovered")}}}}, nil
			})},
		{Name: "deploy", Action: "deploy.production", Sensitive: true, Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			return &task.Result{Artifacts: []task.Artifact{{ID: "deployed", Parts: []task.Part{task.DataPart(json.RawMessage(`{"version":"1.2.3","replicas":3}`))}}}}, nil
		})},
		{Name: "ops/tool name", Runner: echoRunner},
		// ask asks for a name on the first turn and greets it on the next;
		// an answer of "again" makes it ask once more.
		{Name: "ask", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
			if len(req.History) == 1 || req.Message.Text() == "again" {
				return &task.Result{InputRequired: true, Message: &task.Message{Parts: []task.Part{task.TextPart("what is your name?")}}}, nil
			}
			return &task.Result{Artifacts: []task.Artifact{{ID: "greeting", Parts: []task.Part{task.TextPart("hello " + req.Message.Text())}}}}, nil
		})},
	}
}

// testLogger logs to the test with MCPSERVER_TEST_LOGS=1 and -v, and
// nowhere otherwise.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() || os.Getenv("MCPSERVER_TEST_LOGS") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// testCtx returns a context that ends with the test, or after a generous
// bound so that a hung call fails instead of stalling the suite.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a session with the go-sdk's own client over streamable
// HTTP.
func (b *bundle) connect(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "v0.0.1"}, opts)
	cs, err := client.Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: b.url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool that must succeed and decodes its structured content.
func call[T any](t testing.TB, cs *mcp.ClientSession, tool string, args any) T {
	t.Helper()
	res := callRaw(t, cs, tool, args, nil)
	if res.IsError {
		t.Fatalf("%s(%v) is a tool error: %s", tool, args, contentText(res))
	}
	return decode[T](t, res)
}

// callErr calls a tool that must answer a tool error and returns it.
func callErr(t testing.TB, cs *mcp.ClientSession, tool string, args any) mcpserver.ErrorInfo {
	t.Helper()
	res := callRaw(t, cs, tool, args, nil)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want a tool error: %s", tool, args, contentText(res))
	}
	info := decode[mcpserver.ErrorInfo](t, res)
	if want := info.Code + ": " + info.Message; contentText(res) != want {
		t.Errorf("%s error text = %q, want %q", tool, contentText(res), want)
	}
	return info
}

// callRaw calls a tool and fails the test on a protocol error.
func callRaw(t testing.TB, cs *mcp.ClientSession, tool string, args any, progressToken any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	res, err := cs.CallTool(testCtx(t), p)
	if err != nil {
		t.Fatalf("call %s: protocol error %v", tool, err)
	}
	return res
}

func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structured content: %v", err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("structured content %s does not decode into %T: %v", raw, out, err)
	}
	return out
}

func contentText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// waitState polls get_task until the task reaches want.
func waitState(t testing.TB, cs *mcp.ClientSession, id string, want string) mcpserver.TaskInfo {
	t.Helper()
	ctx := testCtx(t)
	for {
		ti := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": id})
		if ti.State == want {
			return ti
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s never reached %s (last %s)", id, want, ti.State)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
