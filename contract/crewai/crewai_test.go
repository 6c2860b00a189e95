package crewai_test

import (
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/crewai"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fromJSON(t *testing.T, c *contract.AgentContract) *contract.AgentContract {
	t.Helper()
	var out contract.AgentContract
	if err := json.Unmarshal([]byte(jsonOf(t, c)), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// twoFiles is the project of testdata/agents.yaml and tasks.yaml.
func twoFiles(t *testing.T) contract.Documents {
	return contract.Documents{{Name: "agents.yaml", Data: read(t, "agents.yaml")}, {Name: "tasks.yaml", Data: read(t, "tasks.yaml")}}
}

func TestMappingTable(t *testing.T) {
	t.Parallel()
	c, err := crewai.New().ToContract(twoFiles(t), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := contract.Compile(c); err != nil {
		t.Fatalf("the contract does not compile: %v", err)
	}
	if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if c.Protocol != "crewai" || !strings.HasPrefix(c.ID, crewai.ContractIDPrefix) {
		t.Fatalf("protocol %q id %q", c.Protocol, c.ID)
	}
	type row struct {
		id, agent, desc string
		deps, consumes  []string
		creates         []string
		assertions      []string // type:check
	}
	want := []row{
		{"research_task", "researcher", "Conduct a thorough research about {topic} Make sure you find any interesting and relevant information given the current year is {current_year}.",
			nil, []string{"inputs"}, nil, []string{"suggest:regex"}},
		{"reporting_task", "reporting_analyst", "Review the context you got and expand each topic into a full section for a report.",
			[]string{"research_task"}, []string{"inputs"}, []string{"file_report_md"}, []string{"assert:exists", "suggest:regex"}},
		{"summary_task", "reporting_analyst", "Summarize the research for an executive.",
			[]string{"research_task"}, []string{"inputs"}, nil, []string{"suggest:regex"}},
	}
	if len(c.Steps) != len(want) {
		t.Fatalf("%d steps", len(c.Steps))
	}
	for i, w := range want {
		st := c.Steps[i]
		var as []string
		for _, a := range st.Assertions {
			as = append(as, string(a.Type)+":"+a.Check.Type)
		}
		got := row{st.ID, st.Agent, st.Description, st.DependsOn, st.Consumes, st.Creates, as}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("step %d:\n got  %+v\n want %+v", i, got, w)
		}
	}
	// The summary's placeholders come from its agent's role and goal.
	if got := c.Steps[2].Metadata[crewai.MetaPlaceholders]; !reflect.DeepEqual(got, []any{"topic"}) {
		t.Errorf("summary placeholders %v", got)
	}
	in := c.Resources[0]
	if in.ID != "inputs" || in.Type != contract.ResourceData || !reflect.DeepEqual(in.Schema["required"], []any{"topic", "current_year"}) {
		t.Errorf("inputs resource %+v", in)
	}
	file := c.Resources[1]
	if file.ID != "file_report_md" || file.Type != contract.ResourceFile || file.Location != "report.md" || file.Format != "markdown" {
		t.Errorf("file resource %+v", file)
	}
	a := c.Steps[1].Assertions[1]
	if !strings.HasPrefix(a.Condition, "A fully fledged report") || a.Message != "expected output: "+a.Condition {
		t.Errorf("expected_output assertion %+v", a)
	}
	if c.Steps[1].Metadata[crewai.MetaTask].(map[string]any)["markdown"] != true {
		t.Errorf("other task fields: %v", c.Steps[1].Metadata)
	}
	agents := c.Metadata[crewai.MetaAgents].([]any)
	if len(agents) != 2 || agents[0].(map[string]any)["extra"].(map[string]any)["llm"] != "openai/gpt-4o" {
		t.Errorf("agents %v", agents)
	}

	// The run's input satisfies the inputs schema; a missing member fails.
	comp, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.InputResources(); !reflect.DeepEqual(got, []string{"inputs"}) {
		t.Errorf("InputResources %v", got)
	}
}

// TestOneFile: the one-file form, with its process, maps the same way.
func TestOneFile(t *testing.T) {
	t.Parallel()
	a := crewai.New()
	if !a.Detects(read(t, "crew.yaml")) {
		t.Fatal("crew.yaml not detected")
	}
	c, err := a.ToContract(read(t, "crew.yaml"), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || c.Steps[1].DependsOn[0] != "draft" || c.Metadata[crewai.MetaProcess] != "sequential" ||
		c.Steps[1].Creates[0] != "file_notes_md" || len(c.Steps[1].Consumes) != 0 || c.Steps[0].Consumes[0] != "inputs" {
		t.Fatalf("%s", jsonOf(t, c))
	}
	// Hierarchical: no implied order, the manager runs tasks without an agent.
	h := strings.Replace(string(read(t, "crew.yaml")), "process: sequential", "process: hierarchical", 1)
	h = strings.Replace(h, "    agent: editor\n", "", 1)
	c, err = a.ToContract([]byte(h), contract.AdapterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps[1].DependsOn != nil || c.Steps[1].Agent != crewai.Manager {
		t.Fatalf("%s", jsonOf(t, c.Steps))
	}
	roundTrip(t, c)
}

// roundTrip: ToContract(FromContract(c)) is c, in memory and read back
// from JSON; the project also survives being written as YAML.
func roundTrip(t *testing.T, c *contract.AgentContract) {
	t.Helper()
	if _, err := contract.Compile(c); err != nil {
		t.Fatalf("the contract does not compile: %v", err)
	}
	for _, from := range []*contract.AgentContract{c, fromJSON(t, c)} {
		p, err := crewai.FromContract(from)
		if err != nil {
			t.Fatal(err)
		}
		again, err := crewai.ToContract(p, contract.AdapterOptions{})
		if err != nil {
			t.Fatalf("its own project: %v", err)
		}
		if a, b := jsonOf(t, fromJSON(t, c)), jsonOf(t, fromJSON(t, again)); a != b {
			t.Fatalf("ToContract(FromContract(c)) differs:\n c:     %s\n again: %s", a, b)
		}
		y, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := crewai.Parse(y)
		if err != nil {
			t.Fatalf("its own YAML: %v\n%s", err, y)
		}
		again, err = crewai.ToContract(p2, contract.AdapterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := jsonOf(t, fromJSON(t, c)), jsonOf(t, fromJSON(t, again)); a != b {
			t.Fatalf("through YAML:\n%s\n c:     %s\n again: %s", y, a, b)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []any{twoFiles(t), read(t, "crew.yaml")} {
		c, err := crewai.New().ToContract(in, contract.AdapterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, c)
	}
	// Random projects.
	rng := rand.New(rand.NewSource(29))
	for range 300 {
		p := randomProject(rng)
		c, err := crewai.ToContract(p, contract.AdapterOptions{})
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		roundTrip(t, c)
	}
}

func randomProject(rng *rand.Rand) crewai.Project {
	words := []string{"alpha", "{topic}", "beta", "{year}", "gamma\ndelta", ""}
	w := func() string {
		return strings.TrimSpace(words[rng.Intn(len(words))] + " " + words[rng.Intn(len(words))])
	}
	var p crewai.Project
	switch rng.Intn(3) {
	case 1:
		p.Process = crewai.Sequential
	case 2:
		p.Process = crewai.Hierarchical
	}
	for i := range 1 + rng.Intn(3) {
		a := crewai.Agent{Name: "agent" + string(rune('a'+i)), Role: w(), Goal: w(), Backstory: w()}
		if rng.Intn(2) == 0 {
			a.Extra = map[string]any{"verbose": true, "max_iter": 3.0}
		}
		p.Agents = append(p.Agents, a)
	}
	n := 1 + rng.Intn(5)
	for i := range n {
		t := crewai.Task{Name: "task" + string(rune('a'+i)), Description: w(), ExpectedOutput: w(), Agent: p.Agents[rng.Intn(len(p.Agents))].Name}
		if p.Process == crewai.Hierarchical && rng.Intn(3) == 0 {
			t.Agent = ""
		}
		if i > 0 && rng.Intn(2) == 0 {
			t.Context = []string{}
			for j := range i {
				if rng.Intn(2) == 0 {
					t.Context = append(t.Context, "task"+string(rune('a'+j)))
				}
			}
		}
		if rng.Intn(3) == 0 {
			t.OutputFile = "out/" + t.Name + ".md"
		}
		if rng.Intn(3) == 0 {
			t.Extra = map[string]any{"async_execution": false}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

// TestErrors: problems in the files are placed at file, line and field.
func TestErrors(t *testing.T) {
	t.Parallel()
	a := crewai.New()
	_, err := a.ToContract(contract.Documents{
		{Name: "agents.yaml", Data: read(t, "agents.yaml")},
		{Name: "tasks.yaml", Data: []byte("write:\n  description: Write\n  expected_output: [a, b]\n  agent: researcher\n")},
	}, contract.AdapterOptions{})
	var es contract.Errors
	if !errors.As(err, &es) || es.Error() != "tasks.yaml:3: write.expected_output: not a string" {
		t.Fatalf("%v", err)
	}
	_, err = a.ToContract(contract.Documents{{Name: "crew.yaml", Data: []byte("process: parallel\ntasks:\n  a:\n    description: d\n    agent: x\n    context: b\n")}}, contract.AdapterOptions{})
	if err == nil || err.Error() != "crew.yaml:1: process: \"parallel\" is not a process (sequential or hierarchical)\ncrew.yaml:4: tasks.a.expected_output: required\ncrew.yaml:6: tasks.a.context: not a list of task names" {
		t.Fatalf("%v", err)
	}
	for in, want := range map[string]string{
		"tasks:\n  a: {description: d, expected_output: e}\n":                                             "task a: no agent",
		"agents:\n  w: {role: r, goal: g}\ntasks:\n  a: {description: d, expected_output: e, agent: x}\n": `agent "x" is not in agents.yaml (agents: w)`,
		"tasks:\n  a: {description: d, expected_output: e, agent: x, context: [z]}\n":                     `context names no task "z"`,
		"w: {role: r, goal: g}\n": "no tasks",
		"- 1\n":                   "not a mapping",
		"a: [\n":                  "invalid YAML: did not find expected node content",
	} {
		if _, err := a.ToContract([]byte(in), contract.AdapterOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := a.ToContract(contract.Documents{{Name: "t.yaml", Data: read(t, "tasks.yaml")}, {Name: "t2.yaml", Data: read(t, "tasks.yaml")}}, contract.AdapterOptions{}); err == nil || err.Error() != "crewai: t2.yaml: tasks given twice" {
		t.Errorf("twice: %v", err)
	}
}

func TestDetects(t *testing.T) {
	t.Parallel()
	a := crewai.New()
	for _, name := range []string{"agents.yaml", "tasks.yaml", "crew.yaml"} {
		if !a.Detects(read(t, name)) {
			t.Errorf("%s not detected", name)
		}
	}
	if !a.Detects(twoFiles(t)) || a.Detects(contract.Documents{}) {
		t.Error("Documents")
	}
	var m map[string]any
	_ = yaml.Unmarshal(read(t, "crew.yaml"), &m)
	if !a.Detects(m) {
		t.Error("decoded crew.yaml not detected")
	}
	for _, in := range []string{`{}`, `a: 1`, `a: {role: r}`, `a: {description: d}`, `tasks: {}`, `tasks: {a: {description: d, expected_output: e}}
agents: [x]`, `{"task": {"id": "t"}}`, `{"nodes": [{"id": "__start__"}], "edges": []}`, "a: {role: r, goal: g}\nb: {description: d, expected_output: e}\n"} {
		if a.Detects([]byte(in)) {
			t.Errorf("%s detected", in)
		}
	}
}

func TestResources(t *testing.T) {
	t.Parallel()
	a := crewai.New()
	st := &contract.ContractStep{ID: "edit", Metadata: map[string]any{crewai.MetaOutputFile: "notes.md", crewai.MetaPlaceholders: []any{"version"}}}
	rs, err := a.ExtractResources([]byte(`{"raw": "done", "json_dict": {"a": 1}}`), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].ID != "output_edit" || rs[1].ID != "data_edit" || rs[2].ID != "file_notes_md" {
		t.Fatalf("%+v", rs)
	}
	// Content where the output holds it; the output file is on the crew's disk.
	if d, _ := rs[1].Data.(map[string]any); rs[0].Text != "done" || d["a"] != float64(1) || rs[2].Text != "" || rs[2].Data != nil {
		t.Fatalf("content: %+v", rs)
	}
	in, err := a.InjectContext(st, []contract.Resource{
		{ContractResource: contract.ContractResource{ID: "inputs", Type: contract.ResourceData}, Data: map[string]any{"version": "1.2", "other": 1}},
		{ContractResource: contract.ContractResource{ID: "output_draft", Type: contract.ResourceMessage, Format: "text"}, Text: "- fixed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, in), `{"context":"Context from previous steps:\n- output_draft: message (text)\n  - fixed","version":"1.2"}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// FuzzParse: any document parses or is refused without a panic; a
// project that converts gives a contract that validates and comes back.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"agents.yaml", "tasks.yaml", "crew.yaml"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	for _, s := range []string{"a: &x {description: d, expected_output: e, agent: q}\nb: *x\n", "tasks:\n  a: {description: '{x}{y}', expected_output: e, agent: q, context: [a]}\n", "{}", "- x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := crewai.New()
		_ = a.Detects(data)
		p, err := crewai.Parse(data)
		if err != nil {
			return
		}
		c, err := crewai.ToContract(p, contract.AdapterOptions{})
		if err != nil {
			return
		}
		if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
			// A context may name the task itself or close a cycle: the
			// contract's validation says so.
			return
		}
		back, err := crewai.FromContract(c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := crewai.ToContract(back, contract.AdapterOptions{})
		if err != nil {
			t.Fatalf("its own project: %v", err)
		}
		if x, y := jsonOf(t, fromJSON(t, c)), jsonOf(t, fromJSON(t, again)); x != y {
			t.Fatalf("round trip of %q:\n %s\n %s", data, x, y)
		}
	})
}
