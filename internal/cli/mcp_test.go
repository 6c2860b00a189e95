package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/store/sqlite"
)

// pactumBinary builds cmd/pactum once per test into a temp dir: `pactum
// mcp` is tested as the real subprocess a desktop client starts.
func pactumBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pactum")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/pactum").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestMCPStdio drives `pactum mcp` as a desktop MCP client does: the
// official go-sdk client starts it as a command and speaks over its stdin
// and stdout. Anything else printed on stdout would break the protocol.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	bin := pactumBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "mcp.db")
	cmd := exec.Command(bin, "mcp", "--store", dsn)
	client := mcp.NewClient(&mcp.Implementation{Name: "pactum-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to pactum mcp: %v", err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"submit_task", "get_task", "list_tasks", "cancel_task", "retry_task", "list_agents"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (got %v)", want, names)
		}
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "submit_task", Arguments: map[string]any{
		"agent": "echo", "text": "over stdio", "wait": true, "idempotency_key": "stdio-1",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("submit_task failed: %+v", res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		ID        string `json:"task_id"`
		State     string `json:"state"`
		Artifacts []struct {
			Text string `json:"text"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	if out.State != "succeeded" || out.ID == "" || len(out.Artifacts) != 1 || out.Artifacts[0].Text != "over stdio" {
		t.Fatalf("submit_task answered %s, want a succeeded task echoing the input", raw)
	}
	if err := session.Close(); err != nil {
		t.Errorf("close session: %v", err)
	}
	// The store outlives the process: the CLI reads the same task back.
	got := mustRun(t, "tasks", "get", out.ID, "--store", dsn, "--json")
	if !strings.Contains(got, `"succeeded"`) {
		t.Errorf("tasks get after pactum mcp exited:\n%s", got)
	}
}

// TestMigrate: `pactum migrate` applies what is pending and nothing twice,
// and `migrate: false` makes serve refuse a store that is not current.
func TestMigrate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "m.db")
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, "store: "+dsn+"\nmigrate: false\nagents: [{name: echo, type: echo}]\n")
	code, _, stderr := runMain("serve", "--config", cfg, "--listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "pactum migrate") {
		t.Fatalf("serve with migrate: false on a new store: exit %d, stderr:\n%s", code, stderr)
	}
	if out := mustRun(t, "migrate", "--config", cfg); !strings.Contains(out, fmt.Sprintf("%d migration(s) applied", sqlite.SchemaVersion())) {
		t.Errorf("first migrate printed %q", out)
	}
	if out := mustRun(t, "migrate", "--config", cfg); !strings.Contains(out, "0 migration(s) applied") {
		t.Errorf("second migrate printed %q", out)
	}
	if code, _, stderr := runMain("migrate", "--store", "nope://x"); code == 0 || !strings.Contains(stderr, "unknown scheme") {
		t.Errorf("migrate on an unknown scheme: exit %d, stderr %q", code, stderr)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
