package adapters_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
	"github.com/pactum/pactum/contract/adapters"
	"github.com/pactum/pactum/contract/mcp"
	"github.com/pactum/pactum/contract/specwright"
)

const (
	a2aJSON  = `{"task": {"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}, "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}`
	bareTask = `{"id": "t1", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}`
	// seedTask is the 0.2 shape the seed documents write: the task's
	// message, parts with "type", sessionId.
	seedTask = `{"task": {"id": "t2", "sessionId": "s", "status": {"state": "submitted"}, "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}, {"type": "data", "data": {"n": 1}}, {"type": "file", "file": {"uri": "https://h/a.csv", "mimeType": "text/csv", "name": "a.csv"}}]}}}`
	// seedMessageOnly is a 0.2 task that is only its message.
	seedMessageOnly = `{"task": {"message": {"role": "user", "parts": [{"kind": "text", "text": "hi"}]}}}`
	mcpJSON         = `{"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "calls": [{"name": "echo", "arguments": {"x": 1}}]}`
	specJSON        = `{"spec": {"id": "s", "title": "S"}, "chunks": [{"id": "c1", "title": "C", "description": "d"}]}`
	a2aAndMCP       = `{"task": {"id": "t1", "status": {"state": "TASK_STATE_SUBMITTED"}}, "tools": [], "calls": []}`
	allThree        = `{"task": {"id": "t1"}, "tools": [], "spec": {}, "chunks": []}`
	langGraph       = `{"nodes": [], "edges": []}`
	taskNotObj      = `{"task": "t1"}`
)

func TestDefault(t *testing.T) {
	r := adapters.Default()
	if got := strings.Join(r.Protocols(), ","); got != "a2a,autogen,crewai,langgraph,mcp,specwright" {
		t.Fatalf("Protocols = %s", got)
	}
	if adapters.Default() != r {
		t.Fatal("Default is not shared")
	}
	fresh, err := adapters.New()
	if err != nil || fresh == r || !fresh.Supports("specwright") {
		t.Fatalf("New: %v", err)
	}
	if !contract.KnownCheck(specwright.FileExport) {
		t.Fatal("file-export is not registered")
	}
	for _, a := range adapters.Builtin() {
		if a.Version() == "" || a.Description() == "" {
			t.Fatalf("%s: no version or description", a.Protocol())
		}
	}
}

func TestDetect(t *testing.T) {
	r := adapters.Default()
	var m map[string]any
	_ = json.Unmarshal([]byte(specJSON), &m)
	task := &a2asdk.Task{ID: "t", Status: a2asdk.TaskStatus{State: a2asdk.TaskStateWorking}}
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"a2a JSON", []byte(a2aJSON), "a2a"},
		{"a2a bare task JSON", json.RawMessage(bareTask), "a2a"},
		{"a2a 0.2 task JSON", []byte(seedTask), "a2a"},
		{"a2a 0.2 message-only task JSON", []byte(seedMessageOnly), "a2a"},
		{"a2a workflow", a2a.Workflow{Task: task}, "a2a"},
		{"a2a *task", task, "a2a"},
		{"mcp JSON", []byte(mcpJSON), "mcp"},
		{"mcp sequence", &mcp.Sequence{Tools: []*mcpsdk.Tool{{Name: "x"}}}, "mcp"},
		{"specwright JSON", []byte(specJSON), "specwright"},
		{"specwright decoded", m, "specwright"},
		{"specwright workflow", specwright.Workflow{Spec: specwright.Spec{ID: "s"}}, "specwright"},
	}
	for _, tc := range cases {
		a, err := r.Detect(tc.in)
		if err != nil || a.Protocol() != tc.want {
			t.Fatalf("%s: %v, %v", tc.name, a, err)
		}
		// What Detect chose converts.
		if _, err := a.ToContract(tc.in, contract.AdapterOptions{}); err != nil && tc.name != "mcp sequence" {
			t.Fatalf("%s: ToContract: %v", tc.name, err)
		}
	}

	_, err := r.Detect([]byte(a2aAndMCP))
	if !errors.Is(err, contract.ErrAmbiguousWorkflow) || !strings.Contains(err.Error(), "a2a and mcp") {
		t.Fatalf("a2a and mcp: %v", err)
	}
	_, err = r.Detect([]byte(allThree))
	if !errors.Is(err, contract.ErrAmbiguousWorkflow) || !strings.Contains(err.Error(), "a2a and mcp and specwright") {
		t.Fatalf("all three: %v", err)
	}
	for _, in := range []any{[]byte(langGraph), []byte(taskNotObj), []byte(`[]`), []byte(`null`), nil, "text", 7, struct{ X int }{1}} {
		_, err := r.Detect(in)
		if !errors.Is(err, contract.ErrUnknownWorkflow) {
			t.Fatalf("%v: %v", in, err)
		}
		for _, p := range adapters.Builtin() {
			if !strings.Contains(err.Error(), p.Protocol()+": "+p.(contract.Detector).LooksFor()) {
				t.Fatalf("%v: %q does not say what %s looked for", in, err, p.Protocol())
			}
		}
	}
}

// FuzzDetect: Detect, and ToContract and FromContract of whatever it
// chose, never panic on any input; every adapter's ToContract does not
// either, and a contract it makes compiles.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{a2aJSON, bareTask, seedTask, seedMessageOnly, mcpJSON, specJSON, a2aAndMCP, allThree, langGraph, taskNotObj, `[]`, `null`, `{}`, `"x"`,
		`{"task": {"id": "x", "history": [null, {"parts": [null]}], "artifacts": [null]}, "agentCard": {"skills": [{}]}}`,
		`{"tools": [null], "calls": [{"name": "a"}]}`, `{"tools": [{"name": "a", "outputSchema": 1}], "calls": [{"name": "a"}]}`,
		`{"tools": [{"name": "a", "outputSchema": {"type": 5}}], "calls": [{"name": "a"}]}`,
		`{"spec": {"id": "s", "contract": "{\"types\": [{}]}"}, "chunks": [{"id": "c", "assertions": [{"check": {"type": "regex", "pattern": "("}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(graphJSON))
	for _, p := range []string{"crewai/testdata/crew.yaml", "crewai/testdata/tasks.yaml", "autogen/testdata/swarm.json"} {
		if b, err := os.ReadFile(filepath.Join("..", p)); err == nil {
			f.Add(b)
		}
	}
	r, err := adapters.New()
	if err != nil {
		f.Fatal(err)
	}
	opts := []contract.AdapterOptions{{}, {AutoAssertions: true, PreserveMetadata: true, MaxSteps: 1}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if a, err := r.Detect(data); err == nil {
			if c, err := a.ToContract(data, contract.AdapterOptions{}); err == nil {
				if _, err := a.FromContract(c); err != nil {
					t.Fatalf("%s: FromContract of its own contract: %v", a.Protocol(), err)
				}
			}
		}
		var decoded any
		_ = json.Unmarshal(data, &decoded)
		for _, a := range adapters.Builtin() {
			for _, o := range opts {
				for _, in := range []any{data, decoded} {
					c, err := a.ToContract(in, o)
					if err != nil {
						continue
					}
					if c.Protocol != a.Protocol() || len(c.Steps) == 0 && a.Protocol() != "specwright" {
						t.Fatalf("%s: contract %+v", a.Protocol(), c)
					}
					_, _ = contract.Compile(c)
					if _, err := a.FromContract(c); err != nil {
						t.Fatalf("%s: FromContract of its own contract: %v", a.Protocol(), err)
					}
				}
			}
			_, _ = a.ExtractResources(data, &contract.ContractStep{ID: "s"})
			_ = a.(contract.Detector).Detects(decoded)
		}
	})
}
