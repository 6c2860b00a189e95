// Package bridge is the evidence of the cross-protocol bridge
// (docs/contracts.md, "The cross-protocol bridge"): real remote A2A agents
// — a second pactum serving an echo agent, and the official A2A
// JavaScript SDK's server (../interop/js/agent-server.mjs) — answer with
// the arguments of a real MCP tool, @modelcontextprotocol/server-everything
// (pinned in agent/mcp/testdata/npm), which the bridge calls through the
// Go API (contract/bridge) and as a step of a contract served by pactum.
// An answer that does not fit the tool's input schema is refused, naming
// the schema path, and the tool is not called. The tests skip only when
// node or npm is missing and PACTUM_REQUIRE_INTEROP is not 1 (CI sets it).
package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/bridge"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
)

// timeout bounds each exchange of the tests (a cold node start of a
// server takes about a second).
const timeout = 60 * time.Second

// missing skips the test, or fails it when PACTUM_REQUIRE_INTEROP=1.
func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
		t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
	}
	t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
}

// npmCI runs npm ci in dir unless want (a file under it) is there.
func npmCI(t *testing.T, dir, want string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, want)); err == nil {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(t, fmt.Sprintf("%s is not installed and npm is not on PATH (%v)", want, err))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

var installMu sync.Mutex

// tools is what the tests run: node, server-everything's entry script,
// the interop JS directory (with @a2a-js/sdk) and the pactum binary.
type tools struct {
	node, everything, jsDir, pactum string
}

var (
	buildOnce sync.Once
	built     tools
	buildErr  error
)

func setup(t *testing.T) tools {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node is not on PATH (%v)", err))
	}
	installMu.Lock()
	npmDir, _ := filepath.Abs(filepath.Join("..", "..", "..", "agent", "mcp", "testdata", "npm"))
	npmCI(t, npmDir, filepath.Join("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	jsDir, _ := filepath.Abs(filepath.Join("..", "interop", "js"))
	npmCI(t, jsDir, filepath.Join("node_modules", "@a2a-js", "sdk", "package.json"))
	installMu.Unlock()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pactum-bridge-")
		if err != nil {
			buildErr = err
			return
		}
		built.pactum = filepath.Join(dir, "pactum")
		if out, err := exec.Command("go", "build", "-o", built.pactum, nodeproc.Pactum).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build pactum: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return tools{node: node, everything: filepath.Join(npmDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		jsDir: jsDir, pactum: built.pactum}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.pactum != "" {
		_ = os.RemoveAll(filepath.Dir(built.pactum))
	}
	os.Exit(code)
}

// jsAgent starts ../interop/js/agent-server.mjs and returns its base URL.
func jsAgent(t *testing.T, tl tools) string {
	t.Helper()
	cmd := exec.Command(tl.node, "agent-server.mjs")
	cmd.Dir = tl.jsDir
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
			}
		}
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p
	case <-time.After(timeout):
		t.Fatal("agent-server.mjs did not listen")
	}
	return ""
}

// remotePactum starts a second pactum serving an echo agent and returns
// the agent's URL.
func remotePactum(t *testing.T, tl tools) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "remote.yaml")
	if err := os.WriteFile(cfg, []byte("agents:\n  - {name: echo, type: echo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := nodeproc.FreeAddr(t)
	nodeproc.Start(t, tl.pactum, addr, filepath.Join(dir, "remote.log"), "serve", "--config", cfg, "--listen", addr,
		"--base-url", "http://"+addr, "--store", "sqlite://"+filepath.Join(dir, "remote.db"))
	return "http://" + addr + "/agents/echo"
}

// ask sends one part to the A2A agent at url (from its card) and returns
// the task it answered with.
func ask(t *testing.T, url string, part *a2a.Part) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(ctx, url)
	if err != nil {
		t.Fatalf("card of %s: %v", url, err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, part)})
	if err != nil {
		t.Fatalf("send to %s: %v", url, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("%s answered %#v, want a completed task", url, res)
	}
	return task
}

// everything is a session with server-everything over stdio; calls
// counts the tools/call requests sent on it.
func everything(t *testing.T, tl tools) (*sdk.ClientSession, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	c := sdk.NewClient(&sdk.Implementation{Name: "pactum-bridge-test", Version: "1"}, nil)
	c.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/call" {
				calls.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(tl.node, tl.everything, "stdio")}, nil)
	if err != nil {
		t.Fatalf("start server-everything: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, calls
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestBridgeGo: what each real remote A2A agent answers goes through the
// Go bridge to server-everything's tools; an answer that does not fit a
// tool's input schema is refused with the schema path, before any call.
func TestBridgeGo(t *testing.T) {
	t.Parallel()
	tl := setup(t)
	remotes := map[string]string{"pactum": remotePactum(t, tl), "js-sdk": jsAgent(t, tl)}
	cs, calls := everything(t, tl)
	for name, url := range remotes {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			task := ask(t, url, a2a.NewDataPart(map[string]any{"a": 2, "b": 3}))
			res, err := bridge.Call(ctx, cs, task, "get-sum")
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != "The sum of 2 and 3 is 5." {
				t.Fatalf("get-sum said %q", got)
			}
			task = ask(t, url, a2a.NewTextPart("hello, bridge"))
			if res, err = bridge.Call(ctx, cs, task, "echo"); err != nil || resultText(res) != "Echo: hello, bridge" {
				t.Fatalf("echo: %v %+v", err, res)
			}

			before := calls.Load()
			task = ask(t, url, a2a.NewDataPart(map[string]any{"a": "2", "b": 3}))
			_, err = bridge.Call(ctx, cs, task, "get-sum")
			var ae *contract.ArgumentsError
			if !errors.Is(err, bridge.ErrRefused) || !errors.As(err, &ae) || ae.Path != "/a" || ae.SchemaPath != "/properties/a/type" ||
				!strings.Contains(err.Error(), "/a: got string, want number (schema /properties/a/type)") {
				t.Fatalf("err %v, want a refusal naming /a and /properties/a/type", err)
			}
			t.Logf("refused: %v", err)
			if n := calls.Load() - before; n != 0 {
				t.Fatalf("%d tools/call sent after a refusal", n)
			}
		})
	}
}
