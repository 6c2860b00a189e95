package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

// writeDefs writes name → content files into a new temporary directory
// and returns it.
func writeDefs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// seenRequest is what the fake model server saw of one request.
type seenRequest struct {
	Model, System, User string
}

// fakeModel is an OpenAI-compatible chat completions server written for
// these tests: no model can run on this machine. It records the model and
// the system and user messages of each request and answers "ok from
// MODEL", unstreamed.
func fakeModel(t *testing.T) (url string, seen func() []seenRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("request %s: %v", b, err)
		}
		s := seenRequest{Model: req.Model}
		for _, m := range req.Messages {
			switch m.Role {
			case "system":
				s.System += m.Content
			case "user":
				s.User += m.Content
			}
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, req.Model, "ok from "+req.Model)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), got...)
	}
}

// TestDefinitionServedOnOpenAI: a definition file is an agent with its
// own card; a task sent to it over A2A reaches the model server with the
// definition's role body as the system prompt and its model alias
// resolved through the runtime's models. A definition naming another
// runtime (echo) runs there without the body; one with model inherit
// gets the runtime's model; over MCP a definition is an agent like any.
func TestDefinitionServedOnOpenAI(t *testing.T) {
	t.Parallel()
	modelURL, seen := fakeModel(t)
	dir := writeDefs(t, map[string]string{
		"planner.md":  "---\nname: planner\ndescription: Plans the work in steps.\ntools: Read, Grep\nmodel: sonnet\ncolor: blue\n---\n\nYou plan the work. Answer with a handoff.\n",
		"explorer.md": "---\nname: explorer\ndescription: Explores the code.\nmodel: inherit\n---\nYou explore.\n",
		"echoer.md":   "---\nname: echoer\ndescription: Echoes.\nruntime: offline\n---\nThis body is not sent anywhere.\n",
	})
	n := startNode(t, "", fmt.Sprintf(`agents:
  - {name: echo, type: echo}
definitions:
  dirs: [%q]
  runtime: local
  runtimes:
    local:
      type: openai
      openai: {base_url: %s/v1, model: llama3.2, stream: false, models: {sonnet: "qwen2.5:14b", haiku: llama3.2}}
    offline:
      type: echo
      echo: {prefix: "echo: "}
`, dir, modelURL))
	ctx := t.Context()

	// The card says what the definition says.
	resp, err := http.Get(n.base + "/agents/planner/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Name, Description string
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || card.Description != "Plans the work in steps." {
		t.Errorf("card = %+v, %v", card, err)
	}

	tk := sendText(ctx, t, a2aClient(ctx, t, n.base, "planner"), "Add a login page.", nil)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("planner task %s: %s", tk.Status.State, n.logs.String())
	}
	if got := partsText(tk.Artifacts[0].Parts); got != "ok from qwen2.5:14b" {
		t.Errorf("planner answer = %q", got)
	}
	tk = sendText(ctx, t, a2aClient(ctx, t, n.base, "explorer"), "Why does it crash?", nil)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("explorer task %s: %s", tk.Status.State, n.logs.String())
	}
	want := []seenRequest{
		{Model: "qwen2.5:14b", System: "You plan the work. Answer with a handoff.", User: "Add a login page."},
		{Model: "llama3.2", System: "You explore.", User: "Why does it crash?"},
	}
	if got := seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the model server saw\n %+v\nwant\n %+v", got, want)
	}

	tk = sendText(ctx, t, a2aClient(ctx, t, n.base, "echoer"), "hello", nil)
	if tk.Status.State != a2a.TaskStateCompleted || partsText(tk.Artifacts[0].Parts) != "echo: hello" {
		t.Errorf("echoer task %s %+v", tk.Status.State, tk.Artifacts)
	}

	s := mcpSession(ctx, t, n.base)
	out := callTool(ctx, t, s, "submit_task", map[string]any{"agent": "explorer", "text": "over MCP", "wait": true})
	if out["state"] != "succeeded" {
		t.Errorf("submit_task to a definition: %v", out)
	}
	if got := seen(); len(got) != 3 || got[2] != (seenRequest{Model: "llama3.2", System: "You explore.", User: "over MCP"}) {
		t.Errorf("after MCP the model server saw %+v", got)
	}
}

// checkErr parses src as dir/pactum.yaml and returns node.Check's error
// text ("" when there is none).
func checkErr(t *testing.T, dir, src string) string {
	t.Helper()
	file := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		return err.Error()
	}
	if err := node.Check(t.Context(), c, ""); err != nil {
		return err.Error()
	}
	return ""
}

// TestCheckWorkflowsAndDefinitions: every mistake in the definitions and
// workflows sections is reported by the config check, at file:line.
func TestCheckWorkflowsAndDefinitions(t *testing.T) {
	t.Parallel()
	def := func(name string) string { return "---\nname: " + name + "\n---\nRole of " + name + ".\n" }
	const runtimes = "  runtimes:\n    local: {type: echo}\n"
	tests := []struct {
		name string
		defs map[string]map[string]string // directory → file → content
		yaml string                       // after the agents, DIR1 and DIR2 replaced
		want []string
	}{
		{"unknown step agent",
			map[string]map[string]string{"d": {"planner.md": def("planner")}},
			"definitions:\n  dirs: [d]\n" + runtimes + "workflows:\n  - name: w\n    steps: [planer, {parallel: [echo, ghost]}]\n",
			[]string{
				`pactum.yaml:10:13: workflows[0].steps[0]: unknown agent "planer": neither an agent under agents: nor a definition (did you mean "planner"?)`,
				`pactum.yaml:10:39: workflows[0].steps[1].parallel[1]: unknown agent "ghost"`,
			}},
		{"empty phase", nil,
			"workflows:\n  - name: w\n    steps: [echo, {parallel: []}]\n",
			[]string{`pactum.yaml:6:30: workflows[0].steps[1].parallel: empty phase`}},
		{"duplicate agent in a workflow", nil,
			"workflows:\n  - name: w\n    steps:\n      - echo\n      - {parallel: [other, echo]}\n",
			[]string{`pactum.yaml:8:28: workflows[0].steps[1].parallel[1]: agent "echo" appears more than once in workflow (first at line 7)`}},
		{"duplicate workflow name", nil,
			"workflows:\n  - {name: w, steps: [echo]}\n  - {name: w, steps: [other]}\n",
			[]string{`pactum.yaml:6:12: workflows[1].name: duplicate workflow name "w" (first defined at line 5)`}},
		{"custom", nil,
			"workflows:\n  - {name: custom, steps: [echo]}\n",
			[]string{`pactum.yaml:5:12: workflows[0].name: "custom" is reserved`}},
		{"definition named like an agent",
			map[string]map[string]string{"d": {"echo.md": def("echo"), "ok.md": def("ok")}},
			"definitions:\n  dirs: [d]\n" + runtimes,
			[]string{`d/echo.md:2: definition "echo" has the name of the agent at DIR/pactum.yaml:2 (agents:); rename one of them`}},
		{"duplicate definitions across two dirs",
			map[string]map[string]string{"a": {"p.md": def("planner")}, "b": {"q.md": "---\ndescription: x\nname: planner\n---\nx\n"}},
			"definitions:\n  dirs: [a, b]\n" + runtimes,
			[]string{`DIR/pactum.yaml:5:9: definitions.dirs: duplicate agent definition "planner": defined in DIR/a/p.md:2 and in DIR/b/q.md:3`}},
		{"bad front matter",
			map[string]map[string]string{"d": {"bad.md": "---\nname: bad\ntools: {a: b}\n---\nx\n"}},
			"definitions:\n  dirs: [d]\n" + runtimes,
			[]string{`d/bad.md:3: front matter: tools: expected a list of tool names`}},
		{"definition runtime unknown",
			map[string]map[string]string{"d": {"p.md": "---\nname: p\nruntime: remote\n---\nx\n"}},
			"definitions:\n  dirs: [d]\n" + runtimes,
			[]string{`d/p.md:2: runtime "remote" names no entry of definitions.runtimes (runtimes: "local")`}},
		{"no default runtime",
			map[string]map[string]string{"d": {"p.md": def("p")}},
			"definitions:\n  dirs: [d]\n  runtimes:\n    x: {type: echo}\n    y: {type: echo}\n",
			[]string{`d/p.md:2: no runtime to run it: name one in its front matter (runtime:) or set definitions.runtime (runtimes: "x", "y")`}},
		{"unknown runtime type",
			map[string]map[string]string{"d": {"p.md": def("p")}},
			"definitions:\n  dirs: [d]\n  runtimes:\n    x: {type: ollama}\n",
			[]string{`DIR/pactum.yaml:7:15: definitions.runtimes.x.type: unknown runtime type "ollama"`}},
		{"runtime that does not build",
			map[string]map[string]string{"d": {"p.md": def("p")}},
			"definitions:\n  dirs: [d]\n  runtimes:\n    x: {type: openai, openai: {base_url: http://127.0.0.1:1/v1}}\n",
			[]string{`d/p.md:2: on runtime "x": agent "p" (openai): model: required`}},
		{"missing directory", nil,
			"definitions:\n  dirs: [nowhere]\n" + runtimes,
			[]string{`DIR/pactum.yaml:5:9: definitions.dirs: agent definitions: open DIR/nowhere: no such file or directory`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for sub, files := range tc.defs {
				if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range files {
					if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := checkErr(t, dir, "agents:\n  - {name: echo, type: echo}\n  - {name: other, type: echo}\n"+tc.yaml)
			lines := strings.Split(got, "\n")
			if got == "" || len(lines) != len(tc.want) {
				t.Fatalf("check:\n%s\nwant %d errors:\n%s", got, len(tc.want), strings.Join(tc.want, "\n"))
			}
			for i, w := range tc.want {
				w = strings.ReplaceAll(w, "DIR", dir)
				if !strings.HasPrefix(w, dir) {
					w = dir + "/" + w
				}
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, lines[i], w)
				}
			}
		})
	}
}

// TestDefinitionsFailNew: the problems the check reports stop a node from
// being built.
func TestDefinitionsFailNew(t *testing.T) {
	t.Parallel()
	dir := writeDefs(t, map[string]string{"echo.md": "---\nname: echo\n---\nx\n"})
	src := fmt.Sprintf("store: sqlite://%s/p.db\nagents:\n  - {name: echo, type: echo}\ndefinitions:\n  dirs: [%q]\n  runtimes: {local: {type: echo}}\nworkflows:\n  - {name: w, steps: [ghost]}\n", t.TempDir(), dir)
	c, err := config.Parse([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = node.New(t.Context(), c, "", nil, nil)
	if err == nil {
		t.Fatal("New succeeded")
	}
	for _, want := range []string{
		dir + `/echo.md:2: definition "echo" has the name of the agent at p.yaml:3`,
		`p.yaml:8:23: workflows[0].steps[0]: unknown agent "ghost"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v\nlacks %s", err, want)
		}
	}
}

// TestDefaultAgentMayBeADefinition: with definitions, default_agent may
// name one (the root card is then the definition's); a name that is
// neither an agent nor a definition is still an error at default_agent.
func TestDefaultAgentMayBeADefinition(t *testing.T) {
	t.Parallel()
	dir := writeDefs(t, map[string]string{"planner.md": "---\nname: planner\ndescription: Plans the work.\n---\nPlan it.\n"})
	src := func(def string) string {
		return fmt.Sprintf("store: sqlite://%s/p.db\ndefault_agent: %s\ndefinitions:\n  dirs: [%q]\n  runtimes: {local: {type: echo}}\n", t.TempDir(), def, dir)
	}
	c, err := config.Parse([]byte(src("planner")), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := node.New(t.Context(), c, "", nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:9000/.well-known/agent-card.json", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Plans the work.") {
		t.Fatalf("root card: %d %s", rec.Code, rec.Body.String())
	}

	c, err = config.Parse([]byte(src("planer")), "p.yaml")
	if err != nil {
		t.Fatalf("parse refused a default_agent that may be a definition: %v", err)
	}
	if err := node.Check(t.Context(), c, ""); err == nil || !strings.Contains(err.Error(), `p.yaml:2:16: default_agent: unknown agent "planer"`) {
		t.Fatalf("Check: %v", err)
	}
	if _, err := node.New(t.Context(), c, "", nil, nil); err == nil || !strings.Contains(err.Error(), `default_agent: unknown agent "planer"`) {
		t.Fatalf("New: %v", err)
	}
}
