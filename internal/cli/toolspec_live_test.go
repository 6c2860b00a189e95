package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/toolspec"
)

// everythingScript returns node and server-everything's entry script as
// agent/mcp's tests install it; it skips the test when they are missing,
// and fails it when PACTUM_REQUIRE_INTEROP=1 (CI sets it).
func everythingScript(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	script, _ = filepath.Abs(filepath.Join("..", "..", "agent", "mcp", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err == nil {
		_, err = os.Stat(script)
	}
	if err != nil {
		if os.Getenv("PACTUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("server-everything is not runnable (%v), and PACTUM_REQUIRE_INTEROP=1", err)
		}
		t.Skipf("server-everything is not runnable (%v); npm ci --prefix agent/mcp/testdata/npm, or set PACTUM_REQUIRE_INTEROP=1 to make this a failure", err)
	}
	return node, script
}

// TestToolSpecVerifyLive runs the real commands against the real
// server-everything: `toolspec lock --config` records its tools as the
// contract mcp-echo; `verify --live` passes against it; with the lock
// edited so that it names a tool the server lacks, `verify --live`
// reports the tool removed (MAJOR) with the agent and ToolSpec it
// affects, and exits 1; a ToolSpec naming a tool the server lacks is a
// breaking finding too.
func TestToolSpecVerifyLive(t *testing.T) {
	t.Parallel()
	node, script := everythingScript(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pactum.yaml")
	writeCfg := func(tool string) {
		writeFile(t, cfg, fmt.Sprintf(`store: sqlite://p.db
agents:
  - name: echo
    type: mcp
    toolspec: echo_ts
    mcp: {command: %q, args: [%q, stdio], tool: %q}
toolspecs:
  - tool_id: echo_ts
    execution_mode: remote
    adapter_id: mcp
    adapter_operation: %s
    input_schema: {type: object, properties: {message: {type: string}}, required: [message]}
`, node, script, tool, tool))
	}
	writeCfg("echo")
	lock := filepath.Join(dir, "pactum-toolspec.lock.json")

	code, stdout, stderr := runMain("toolspec", "lock", "--config", cfg, "--out", lock)
	if code != 0 || stdout != lock+": locked 8 adapter contracts and 1 MCP server (configuration "+cfg+")\n" {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := toolspec.DecodeLock(data)
	if err != nil {
		t.Fatal(err)
	}
	live, err := l.LiveCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Adapters) != 1 || live.Adapters[0].AdapterID != "mcp-echo" || live.Adapters[0].Operations["echo"].InputSchema == nil {
		t.Fatalf("live section: %+v", live.Adapters)
	}

	verify := func() (int, string, string) {
		return runMain("toolspec", "verify", "--live", "--config", cfg, "--lock", lock)
	}
	code, stdout, stderr = verify()
	if code != 0 || stdout != lock+": ok (1 MCP server match the lock)\n" {
		t.Fatalf("verify --live: exit %d\n%s%s", code, stdout, stderr)
	}
	// The catalogue verify ignores the live section.
	if code, stdout, stderr := runMain("toolspec", "verify", "--config", cfg, "--lock", lock); code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}

	// The lock edited: its echo contract names a tool the server lacks
	// (and, through the agent's tool, the agent calls it).
	c := live.Adapters[0]
	c.Operations["vanished"] = c.Operations["echo"]
	if err := l.AddLive(c); err != nil {
		t.Fatal(err)
	}
	data, err = l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, lock, string(data))
	writeCfg("vanished")
	code, stdout, stderr = verify()
	if code != 1 {
		t.Fatalf("verify --live after the edit: exit %d\n%s%s", code, stdout, stderr)
	}
	wantLines(t, stdout,
		"MAJOR mcp-echo.vanished operation_removed: operation \"vanished\" removed\n  affects agent echo (tool vanished)\n  affects ToolSpecs: echo_ts\n",
		`TOOLSPEC mcp-echo: agent echo: assertion 3 (adapter operation) failed for ToolSpec "echo_ts": adapter_operation: the MCP server has no tool "vanished"`)
	wantLines(t, stderr, "2 breaking findings against "+lock)

	// A breaking input change of a locked tool is MAJOR too.
	c.Operations = map[string]toolspec.Operation{}
	for name, op := range live.Adapters[0].Operations {
		c.Operations[name] = op
	}
	var in map[string]any
	raw, _ := json.Marshal(c.Operations["echo"].InputSchema)
	_ = json.Unmarshal(raw, &in)
	in["required"] = []any{}
	c.Operations["echo"] = toolspec.Operation{InputSchema: in, Description: c.Operations["echo"].Description}
	delete(c.Operations, "vanished")
	if err := l.AddLive(c); err != nil {
		t.Fatal(err)
	}
	data, _ = l.Marshal()
	writeFile(t, lock, string(data))
	writeCfg("echo")
	code, stdout, _ = verify()
	if code != 1 {
		t.Fatalf("verify --live after a required input: exit %d\n%s", code, stdout)
	}
	wantLines(t, stdout, "MAJOR mcp-echo.echo input_required_added: input.message: property \"message\" became required\n  affects agent echo (tool echo)\n  affects ToolSpecs: echo_ts\n")
}

// TestToolSpecVerifyLiveNeedsConfig: --live without --config says why.
func TestToolSpecVerifyLiveNeedsConfig(t *testing.T) {
	t.Parallel()
	lock := filepath.Join(t.TempDir(), "l.json")
	if code, stdout, stderr := runMain("toolspec", "lock", "--out", lock); code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr := runMain("toolspec", "verify", "--live", "--lock", lock)
	if code != 1 || !strings.Contains(stderr, "--live needs --config") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
