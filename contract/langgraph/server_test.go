package langgraph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/langgraph"
	"github.com/pactum/pactum/contract/trace"
)

// TestAgentServerHistory runs the real LangGraph JS Agent Server
// (langgraphjs dev, offline, in memory) on testdata/server/graph.mjs,
// makes the contract from the graph the server describes
// (GET /assistants/ID/graph), runs the graph on a thread, converts the
// thread's history to a trace and verifies it against the contract.
func TestAgentServerHistory(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	modules, err := filepath.Abs(filepath.Join(jsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(modules, "@langchain", "langgraph-cli", "dist", "cli", "cli.mjs")
	if _, err := os.Stat(cli); err != nil {
		missing(t, "@langchain/langgraph-cli is not installed (cd agent/langgraph/testdata/js && npm ci --legacy-peer-deps)")
	}
	// The server resolves the graph's imports from its directory: a copy
	// beside the pinned packages.
	dir := t.TempDir()
	for _, f := range []string{"graph.mjs", "langgraph.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "server", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true, "type": "module"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	var logs bytes.Buffer
	cmd := exec.Command(node, cli, "dev", "--port", fmt.Sprint(port), "--host", "127.0.0.1", "--no-browser", "--n-jobs-per-worker", "1")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "LANGSMITH_TRACING=false", "LANGCHAIN_TRACING_V2=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		if r, err := http.Get(base + "/ok"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the Agent Server did not start:\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	call := func(method, path string, body any) []byte {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
		}
		return b
	}

	graphJSON := call("GET", "/assistants/report/graph", nil)
	if !langgraph.New().Detects(graphJSON) {
		t.Fatalf("the server's graph is not detected: %s", graphJSON)
	}
	c, err := langgraph.New().ToContract(graphJSON, contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || c.Steps[1].DependsOn[0] != "research" {
		t.Fatalf("%s", jsonOf(t, c))
	}
	c.Steps[1].Assertions = []contract.ContractAssertion{{Type: contract.Assert, Message: "a report", Check: contract.Check{Type: "regex", Pattern: `^# Report`}}}
	comp, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}

	var thread struct {
		ThreadID string `json:"thread_id"`
	}
	_ = json.Unmarshal(call("POST", "/threads", map[string]any{}), &thread)
	call("POST", "/threads/"+thread.ThreadID+"/runs/wait", map[string]any{"assistant_id": "report",
		"input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "pactum"}}}})
	h, err := langgraph.DecodeHistory(call("POST", "/threads/"+thread.ThreadID+"/history", map[string]any{"limit": 50}))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := langgraph.HistoryTrace(h, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if tr, err = trace.Decode(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	rep, err := trace.Verify(ctx, comp, tr, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Steps) != 2 {
		t.Fatalf("%s\n%s", jsonOf(t, rep), buf.Bytes())
	}
	if got := tr.Children[0].Task.StatusMessage.Text(); got != "facts: pactum" {
		t.Fatalf("research answered %q", got)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
