package node_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/toolspec"
)

// everythingServer returns node and the entry script of
// @modelcontextprotocol/server-everything as agent/mcp's tests install it
// (npm ci --prefix agent/mcp/testdata/npm). It skips the test when they
// are missing, and fails it when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func everythingServer(t *testing.T) (nodeBin, script string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("%s, and PACTUM_REQUIRE_INTEROP=1", why)
		}
		t.Skipf("%s; set PACTUM_REQUIRE_INTEROP=1 to make this a failure", why)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		missing(fmt.Sprintf("node is not on PATH (%v)", err))
	}
	script, err = filepath.Abs(filepath.Join("..", "..", "agent", "mcp", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		missing(fmt.Sprintf("server-everything is not installed (%v); run from the repository root: npm ci --prefix agent/mcp/testdata/npm", err))
	}
	return nodeBin, script
}

// liveConfig is a configuration of three MCP agents on server-everything
// whose ToolSpecs take the server as their adapter contract: echo maps
// its echo tool as it is; stale maps echo with an input schema the tool
// no longer matches (text instead of message); gone maps a tool the
// server lacks.
func liveConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	nodeBin, script := everythingServer(t)
	mcpAgent := func(name, tool, ts string) string {
		return fmt.Sprintf("  - name: %s\n    type: mcp\n    retry: {max_attempts: 2, initial_backoff: 10ms, max_backoff: 10ms}\n    toolspec: %s\n    mcp: {command: %q, args: [%q, stdio], tool: %q}\n", name, ts, nodeBin, script, tool)
	}
	src := fmt.Sprintf("store: sqlite://%s\nagents:\n%s%s%s", filepath.Join(dir, "p.db"),
		mcpAgent("echo", "echo", "echo_ts"), mcpAgent("stale", "echo", "stale_ts"), mcpAgent("gone", "no-such-tool", "gone_ts")) + `toolspecs:
  - tool_id: echo_ts
    execution_mode: remote
    adapter_id: mcp
    adapter_operation: echo
    input_schema: {type: object, properties: {message: {type: string}}, required: [message]}
  - tool_id: stale_ts
    execution_mode: remote
    adapter_id: mcp
    adapter_operation: echo
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
  - tool_id: gone_ts
    execution_mode: remote
    adapter_id: mcp
    adapter_operation: no-such-tool
`
	cfg, err := config.Parse([]byte(src), "live.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestToolSpecLiveMCP: against the real server-everything, the live check
// passes for a ToolSpec of its echo tool, reports a ToolSpec whose input
// schema the tool no longer matches and one naming a tool it lacks; and a
// served agent whose ToolSpec names a missing tool fails its attempt with
// toolspec_violation while the echo agent's passes.
func TestToolSpecLiveMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := liveConfig(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	ls, err := node.LiveServers(ctx, cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 {
		t.Fatalf("%d servers, want 3: %+v", len(ls), ls)
	}
	violations := map[string][]toolspec.Violation{}
	for _, s := range ls {
		if s.Err != nil {
			t.Fatalf("agent %s: %v", s.Agent, s.Err)
		}
		if s.ToolSpec == nil || s.Contract.AdapterID != "mcp-"+s.Agent || len(s.Contract.Operations) != len(s.Tools) {
			t.Fatalf("agent %s: toolspec %v, contract %q with %d operations for %d tools", s.Agent, s.ToolSpec, s.Contract.AdapterID, len(s.Contract.Operations), len(s.Tools))
		}
		violations[s.Agent] = toolspec.CheckLive(*s.ToolSpec, s.Tools)
	}
	if _, ok := ls[0].Contract.Operations["echo"]; !ok || len(ls[0].Tools) < 2 || len(violations["echo"]) != 0 {
		t.Errorf("echo: %d tools listed, violations %+v", len(ls[0].Tools), violations["echo"])
	}
	stale := violations["stale"]
	if len(stale) == 0 || stale[0].Assertion != toolspec.VersionCompatible || stale[0].Field != "input_schema" ||
		!strings.Contains(toolspec.ViolationsMessage(stale), `required property "message" added`) {
		t.Errorf("stale: %+v", stale)
	}
	gone := violations["gone"]
	if len(gone) != 1 || gone[0].Assertion != toolspec.OperationExists || !strings.Contains(gone[0].Fix, "echo") {
		t.Errorf("gone: %+v", gone)
	}

	srv, err := node.New(ctx, cfg, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	run := func(action string) *task.Task {
		t.Helper()
		res, err := srv.Coordinator().SubmitAndWait(ctx, task.SubmitRequest{Envelope: task.Envelope{
			Actor: "alice", Action: action, Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart("hello")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	tk := run("echo")
	if tk.State != task.StateSucceeded {
		t.Fatalf("echo: %s %s %s", tk.State, tk.ErrorCode, tk.Reason)
	}
	recs, err := srv.Coordinator().Timeline(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev := recs[len(recs)-1].Evidence; len(ev) != 1 || ev[0].Step != "toolspec" || ev[0].Outcome != "pass" {
		t.Errorf("echo evidence %+v", ev)
	}
	tk = run("gone")
	if tk.State != task.StateFailed || tk.ErrorCode != task.CodeToolspecViolation || tk.Attempt != 1 || !strings.Contains(tk.Reason, "assertion 3") {
		t.Fatalf("gone: state %s, code %s, attempt %d, reason %q", tk.State, tk.ErrorCode, tk.Attempt, tk.Reason)
	}
}

// TestToolSpecLiveNeedsMCPAgent: a ToolSpec whose contract is the MCP
// server cannot be named by an agent of another type.
func TestToolSpecLiveNeedsMCPAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf(`store: sqlite://%s
agents:
  - {name: a, type: echo, toolspec: t}
toolspecs:
  - {tool_id: t, execution_mode: remote, adapter_id: mcp, adapter_operation: echo}
`, filepath.Join(dir, "p.db"))), "l.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = node.Check(t.Context(), cfg, dir)
	if err == nil || !strings.Contains(err.Error(), "l.yaml:3:37: agents[0].toolspec: toolspec \"t\" has adapter_id mcp") {
		t.Fatalf("Check = %v", err)
	}
}
