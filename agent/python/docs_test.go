package python_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	_ "github.com/pactum/pactum/agent/python"
	"github.com/pactum/pactum/agent/python/pythontest"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/task"
)

// TestDocsExample runs the example of docs/runtimes.md ("python"): the
// module and the configuration between their markers, with a real
// virtualenv (made with the standard library's venv, without pip).
func TestDocsExample(t *testing.T) {
	t.Parallel()
	pythontest.Need(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "runtimes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	module, err := mdblock.Extract(doc, "<!-- python-example-module:begin -->", "<!-- python-example-module:end -->", "python", "the python example module's")
	if err != nil {
		t.Fatal(err)
	}
	cfgText, err := mdblock.Extract(doc, "<!-- python-example-config:begin -->", "<!-- python-example-config:end -->", "yaml", "the python example configuration's")
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(module, "# "), "\n")
	if name != "support.py" {
		t.Fatalf("the module's first line names %q, want support.py", name)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(module), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", filepath.Join(dir, ".venv")).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]agent.Agent{}
	for _, a := range cfg.Agents {
		ag, err := agent.New(t.Context(), agent.Spec(cfg.AgentSpec(a, dir)))
		if err != nil {
			t.Fatalf("agent %s: %v", a.Name, err)
		}
		t.Cleanup(func() { _ = agent.Close(ag) })
		agents[a.Name] = ag
	}

	// support streams.
	req := agenttest.Request("where is it?")
	req.Message.Parts = append(req.Message.Parts, task.DataPart([]byte(`{"order":"A-17"}`)))
	req.History = []task.Message{req.Message}
	var rec agenttest.Recorder
	res, err := agents["support"].(agent.Streamer).Stream(t.Context(), req, rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
	if got, want := agenttest.ResultText(t, res), "Order A-17: you asked 'where is it?'"; got != want {
		t.Errorf("support answered %q, want %q", got, want)
	}
	if n := len(rec.Chunks()); n < 5 {
		t.Errorf("support streamed %d chunks, want 5 and the closing one", n)
	}

	// triage answers data.
	res, err = agents["triage"].Invoke(t.Context(), agenttest.Request("I want a refund now"))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Artifacts[0].Parts[0]; p.Kind != task.PartData || string(p.Data) != `{"urgent":true,"words":5}` {
		t.Errorf("triage answered %s %s", p.Kind, p.Data)
	}
}
