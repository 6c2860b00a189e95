package langgraph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/langgraph/langgraphtest"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/task"
)

// TestDocExample runs the complete example of docs/runtimes.md: its graph
// on the pinned JS Agent Server, its configuration (with the server's
// port), a question and its answer through the core.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "runtimes.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	block := func(name, lang string) string {
		t.Helper()
		s, err := mdblock.Extract(doc, "<!-- "+name+" -->", "<!-- /"+name+" -->", lang, name)
		if err != nil {
			t.Fatalf("docs/runtimes.md: %v", err)
		}
		return s
	}
	graph, manifest, yml := block("langgraph-example-graph", "js"), block("langgraph-example-json", "json"), block("langgraph-example-config", "yaml")
	srv := langgraphtest.StartWith(t, map[string][]byte{"graph.js": []byte(graph), "langgraph.json": []byte(manifest)})

	const docURL = "http://127.0.0.1:2024"
	if !strings.Contains(yml, docURL) {
		t.Fatalf("the example configuration does not name %s", docURL)
	}
	c, err := config.Parse([]byte(strings.ReplaceAll(yml, docURL, srv.URL)), "runtimes.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) != 1 {
		t.Fatalf("%d agents in the example, want 1", len(c.Agents))
	}
	ac := c.Agents[0]
	a, err := agent.New(t.Context(), agent.Spec(c.AgentSpec(ac, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(a)
	coord := agenttest.Coordinator(t, "langgraph-doc", task.AgentSpec{Name: ac.Name, Runner: agent.Runner(a), Timeout: time.Minute,
		Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: 10 * time.Millisecond}})
	tk := agenttest.Run(t, t.Context(), coord, ac.Name, task.TextPart("the weather"))
	if tk.State != task.StateInputRequired {
		t.Fatalf("state = %s (%s), want input_required", tk.State, tk.Reason)
	}
	if q := tk.StatusMessage.Text(); q != "What is your name?" {
		t.Errorf("question = %q", q)
	}
	tk = agenttest.Answer(t, t.Context(), coord, tk.ID, "Ada")
	if tk.State != task.StateSucceeded {
		t.Fatalf("state = %s (%s), want succeeded", tk.State, tk.Reason)
	}
	if got, want := agenttest.PartsText(tk.Artifacts[len(tk.Artifacts)-1].Parts), "Hello, Ada! You asked about: the weather"; got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
}
