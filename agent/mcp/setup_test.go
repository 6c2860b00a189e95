package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/task"
)

// callTimeout bounds one call in the tests; a cold node start of a server
// takes about half a second.
const callTimeout = 30 * time.Second

// npmServers are the MCP servers of testdata/npm, by package name.
const (
	serverEverything = "server-everything"
	serverFilesystem = "server-filesystem"
)

// npmInstall is the command that installs the test servers.
const npmInstall = "npm ci --prefix agent/mcp/testdata/npm"

// nodeServer returns node's path and the entry script of one of the npm
// MCP servers. It skips the test when node or the servers are missing,
// and fails it instead when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func nodeServer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, fmt.Sprintf("node is not on PATH (%v)", err))
	}
	script, err = filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		// A fresh checkout: install the pinned servers once, as the
		// interop tests install their client.
		installOnce.Do(func() { installErr = npmCI() })
		if _, err := os.Stat(script); err != nil {
			missing(t, fmt.Sprintf("the MCP test servers are not installed (%v; npm ci: %v); run from the repository root: %s", err, installErr, npmInstall))
		}
	}
	return node, script
}

var (
	installOnce sync.Once
	installErr  error
)

// npmCI runs npm ci in testdata/npm (bounded).
func npmCI() error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = filepath.Join("testdata", "npm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
		t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
	}
	t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
}

// bundle is what a test needs: the runtime and its captured logs.
type bundle struct {
	r    *Runtime
	logs *syncbuf.Buffer
}

// setup builds a runtime from YAML settings the way configuration does,
// logging at debug level into a buffer, and closes it when the test ends.
func setup(t *testing.T, settings string) *bundle {
	t.Helper()
	b := &bundle{logs: &syncbuf.Buffer{}}
	spec := agenttest.Spec(t, Type, settings)
	var s Settings
	if err := spec.DecodeInto(&s); err != nil {
		t.Fatalf("decode settings: %v", err)
	}
	log := slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r, err := New(s, WithName("test"), WithLogger(log))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.r = r
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("runtime logs:\n%s", b.logs.String())
		}
	})
	return b
}

// everything is a runtime calling tool on server-everything over stdio.
func everything(t *testing.T, tool string, extra ...string) *bundle {
	t.Helper()
	node, script := nodeServer(t, serverEverything)
	return setup(t, fmt.Sprintf("command: %q\nargs: [%q, stdio]\ntool: %q\n%s", node, script, tool, strings.Join(extra, "\n")))
}

// starts counts the sessions the runtime started.
func (b *bundle) starts() int { return strings.Count(b.logs.String(), "mcp: session started") }

// invoke runs one bounded attempt with a text message.
func (b *bundle) invoke(t *testing.T, text string) (*task.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	return b.r.Invoke(ctx, agenttest.Request(text))
}

// text runs one bounded attempt with a text message and returns the text
// of its output, failing the test if the call fails.
func (b *bundle) text(t *testing.T, text string) string {
	t.Helper()
	res, err := b.invoke(t, text)
	return mustText(t, res, err)
}

// invokeData runs one bounded attempt with a JSON data part.
func (b *bundle) invokeData(t *testing.T, data string) (*task.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	return b.r.Invoke(ctx, dataRequest(data))
}

// dataRequest is a first-attempt request whose message holds one data part.
func dataRequest(data string) *task.Request {
	req := agenttest.Request("")
	req.Message.Parts = []task.Part{task.DataPart([]byte(data))}
	req.Envelope.Input = req.Message
	req.History = []task.Message{req.Message}
	return req
}

// mustText returns the text of a successful result's output artifact.
func mustText(t *testing.T, res *task.Result, err error) string {
	t.Helper()
	if err != nil {
		t.Fatalf("call failed: %v", err)
	}
	return agenttest.ResultText(t, res)
}

// serverPID is the process id of the current session's server, 0 if none.
func (b *bundle) serverPID() int {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	if b.r.sess == nil {
		return 0
	}
	return b.r.sess.pid()
}

// serverProcess returns the server program's own process for the process
// the runtime started (pid): on Linux a shim leads the group and the server
// is its one child (agent/internal/procgroup), elsewhere pid itself.
func serverProcess(t *testing.T, pid int) int {
	t.Helper()
	if pid == 0 {
		return 0
	}
	if argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil || !strings.HasPrefix(string(argv), "pactum-procgroup-shim\x00") {
		return pid
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return pid
	}
	if f := strings.Fields(string(b)); len(f) == 1 {
		child, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatal(err)
		}
		return child
	}
	return pid
}

// waitGone waits until process pid has exited and been reaped.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d is still there", pid)
}

// wantPermanent fails the test unless err is permanent with code and its
// message contains every one of substrings.
func wantPermanent(t *testing.T, err error, code task.Code, substrings ...string) {
	t.Helper()
	wantError(t, err, true, code, substrings...)
}

// wantRetryable is wantPermanent for errors a retry may cure.
func wantRetryable(t *testing.T, err error, code task.Code, substrings ...string) {
	t.Helper()
	wantError(t, err, false, code, substrings...)
}

func wantError(t *testing.T, err error, permanent bool, code task.Code, substrings ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("call succeeded, want an error")
	}
	t.Logf("error: %v", err)
	if task.IsPermanent(err) != permanent {
		t.Errorf("IsPermanent = %v, want %v (err: %v)", task.IsPermanent(err), permanent, err)
	}
	if got := task.ErrorCode(err); got != code {
		t.Errorf("code = %s, want %s (err: %v)", got, code, err)
	}
	for _, s := range substrings {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// newAgent builds the agent that YAML settings describe through the
// registry, as configuration does.
func newAgent(t *testing.T, settings string) agent.Agent {
	t.Helper()
	a, err := agent.New(t.Context(), agenttest.Spec(t, Type, settings))
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	t.Cleanup(func() { _ = agent.Close(a) })
	return a
}
