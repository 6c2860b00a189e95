package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/config"
)

// TestWorkflowsParseErrors: each mistake in definitions and workflows is
// reported at its line and column with its field path.
func TestWorkflowsParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"name required", "workflows:\n  - steps: [a]\n",
			[]string{`pactum.yaml:3:5: workflows[0].name: required`}},
		{"invalid name", "workflows:\n  - {name: 'a b', steps: [a]}\n",
			[]string{`pactum.yaml:3:12: workflows[0].name: invalid name "a b"`}},
		{"custom reserved", "workflows:\n  - {name: custom, steps: [a]}\n",
			[]string{`pactum.yaml:3:12: workflows[0].name: "custom" is reserved`}},
		{"duplicate name", "workflows:\n  - {name: w, steps: [a]}\n  - {name: w, steps: [b]}\n",
			[]string{`pactum.yaml:4:12: workflows[1].name: duplicate workflow name "w" (first defined at line 3)`}},
		{"steps required", "workflows:\n  - {name: w}\n",
			[]string{`pactum.yaml:3:5: workflows[0].steps: required`}},
		{"steps empty", "workflows:\n  - {name: w, steps: []}\n",
			[]string{`pactum.yaml:3:22: workflows[0].steps: must not be empty`}},
		{"empty phase", "workflows:\n  - name: w\n    steps: [a, {parallel: []}]\n",
			[]string{`pactum.yaml:4:27: workflows[0].steps[1].parallel: empty phase`}},
		{"null phase", "workflows:\n  - name: w\n    steps: [a, {parallel: }]\n",
			[]string{`pactum.yaml:4:16: workflows[0].steps[1].parallel: empty phase`}},
		{"step mapping with another key", "workflows:\n  - name: w\n    steps: [a, {parallel: [b], serial: [c]}]\n",
			[]string{`pactum.yaml:4:32: workflows[0].steps[1].serial: unknown field "serial"`}},
		{"step of a wrong kind", "workflows:\n  - name: w\n    steps: [a, [b]]\n",
			[]string{`pactum.yaml:4:16: workflows[0].steps[1]: expected an agent's name or {parallel: [agents]}`}},
		{"parallel item not a string", "workflows:\n  - name: w\n    steps: [{parallel: [a, {b: c}]}]\n",
			[]string{`pactum.yaml:4:28: workflows[0].steps[0].parallel[1]: expected a string`}},
		{"duplicate agent", "workflows:\n  - name: w\n    steps:\n      - a\n      - parallel: [b, a]\n",
			[]string{`pactum.yaml:6:23: workflows[0].steps[1].parallel[1]: agent "a" appears more than once in workflow (first at line 5)`}},
		{"dirs required", "definitions: {runtime: x, runtimes: {x: {type: echo}}}\n",
			[]string{`pactum.yaml:2:14: definitions.dirs: required`}},
		{"dirs empty", "definitions: {dirs: [], runtimes: {x: {type: echo}}}\n",
			[]string{`pactum.yaml:2:21: definitions.dirs: must not be empty`}},
		{"unknown runtime", "definitions:\n  dirs: [a]\n  runtime: lcoal\n  runtimes: {local: {type: echo}}\n",
			[]string{`pactum.yaml:4:12: definitions.runtime: unknown runtime "lcoal" (runtimes: "local")`}},
		{"runtime entry with a name", "definitions:\n  dirs: [a]\n  runtimes:\n    local: {type: echo, name: x}\n",
			[]string{`pactum.yaml:5:25: definitions.runtimes.local.name: not set on a runtime`}},
		{"runtime entry with a contract", "definitions:\n  dirs: [a]\n  runtimes:\n    local: {type: echo, sensitive: true}\n",
			[]string{`pactum.yaml:5:25: definitions.runtimes.local.sensitive: not allowed on a definitions runtime`}},
		{"runtime entry without type", "definitions:\n  dirs: [a]\n  runtimes:\n    local: {timeout: 1s}\n",
			[]string{`pactum.yaml:5:12: definitions.runtimes.local.type: required`}},
		{"runtime entry settings of another type", "definitions:\n  dirs: [a]\n  runtimes:\n    local: {type: echo, openai: {model: m}}\n",
			[]string{`pactum.yaml:5:25: definitions.runtimes.local.openai: settings for runtime type "openai", but this agent's type is "echo"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(oneAgent+tc.yaml), "pactum.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tc.want) {
				t.Fatalf("errors:\n%s\nwant %d", err, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, got[i], w)
				}
			}
		})
	}
}

// TestDefinitionsWithoutAgents: a configuration whose agents are all
// definitions needs no agents: list; without definitions it still does.
func TestDefinitionsWithoutAgents(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte("definitions:\n  dirs: [agents]\n  runtimes: {local: {type: echo}}\n"), "pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) != 0 || c.Definitions == nil || c.DefaultAgent != "" {
		t.Errorf("agents %v, definitions %v, default agent %q", c.Agents, c.Definitions, c.DefaultAgent)
	}
	_, err = config.Parse([]byte("workflows:\n  - {name: w, steps: [a]}\n"), "pactum.yaml")
	if err == nil || !strings.Contains(err.Error(), "pactum.yaml:1:1: agents: at least one agent is required") {
		t.Errorf("workflows without agents or definitions: %v", err)
	}
}

// TestWorkflowsParse reads both sections into Config.
func TestWorkflowsParse(t *testing.T) {
	t.Parallel()
	src := oneAgent + `definitions:
  dirs: [agents/, /abs/defs, ~/.claude/agents]
  runtimes:
    local:
      type: openai
      timeout: 10s
      openai: {base_url: http://127.0.0.1:11434/v1, model: llama3.2, models: {sonnet: qwen2.5:14b}}
workflows:
  - name: review
    description: Plan, review twice in parallel, then design
    steps: [planner, {parallel: [code-reviewer, security-reviewer]}, architect]
`
	c, err := config.Parse([]byte(src), "/etc/pactum/pactum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.DefinitionDirs(""), []string{"/etc/pactum/agents", "/abs/defs", filepath.Join(home, ".claude/agents")}; !reflect.DeepEqual(got, want) {
		t.Errorf("DefinitionDirs = %q, want %q", got, want)
	}
	if got := c.DefinitionDirs("/srv"); got[0] != "/srv/agents" {
		t.Errorf("DefinitionDirs(/srv) = %q", got)
	}
	rt, name, ok := c.DefinitionRuntime("")
	if !ok || name != "local" || rt.Agent.Type != "openai" || rt.Line != 5 {
		t.Fatalf("default runtime = %+v %q %v: the only entry is the default", rt, name, ok)
	}
	if _, _, ok := c.DefinitionRuntime("other"); ok {
		t.Error("DefinitionRuntime(other) found")
	}
	a := c.DefinitionAgent(rt, "planner", "Plans.")
	if a.Name != "planner" || a.Action != "planner" || a.Description != "Plans." || a.Timeout.Duration.String() != "10s" ||
		a.Retry.MaxAttempts != config.DefaultRetryAttempts || len(a.Skills) != 1 || a.Skills[0].Description != "Plans." {
		t.Errorf("DefinitionAgent = %+v", a)
	}
	// Its settings decode with positions at the runtime entry.
	var bad struct{ BaseURL string }
	err = c.AgentSpec(a, "").DecodeInto(&bad)
	if err == nil || !strings.HasPrefix(err.Error(), "/etc/pactum/pactum.yaml:8:16: definitions.runtimes.local.openai.base_url: unknown field") {
		t.Errorf("settings error = %v", err)
	}
	if len(c.Workflows) != 1 {
		t.Fatalf("workflows = %+v", c.Workflows)
	}
	wf := c.Workflows[0]
	var steps []string
	for _, st := range wf.Steps {
		steps = append(steps, strings.Join(st.Agents, "+")+map[bool]string{true: "(parallel)"}[st.Parallel])
	}
	if wf.Name != "review" || wf.Description == "" || wf.Line != 10 || strings.Join(steps, " ") != "planner code-reviewer+security-reviewer(parallel) architect" {
		t.Errorf("workflow = %+v, steps %s", wf, steps)
	}
	e := c.WorkflowStepError(0, 1, 1, "unknown agent", nil)
	if want := `/etc/pactum/pactum.yaml:12:49: workflows[0].steps[1].parallel[1]: unknown agent`; e.Error() != want {
		t.Errorf("WorkflowStepError = %s\nwant %s", e, want)
	}
	if e := c.DefinitionsError("cannot read", nil); e.Error() != `/etc/pactum/pactum.yaml:3:9: definitions.dirs: cannot read` {
		t.Errorf("DefinitionsError = %s", e)
	}
}

// TestDefinitionsSeveralRuntimes: with several runtimes and no
// definitions.runtime there is no default.
func TestDefinitionsSeveralRuntimes(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte(oneAgent+"definitions:\n  dirs: [a]\n  runtimes:\n    x: {type: echo}\n    y: {type: echo}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, name, ok := c.DefinitionRuntime(""); ok || name != "" {
		t.Errorf("default = %q %v", name, ok)
	}
	if _, _, ok := c.DefinitionRuntime("y"); !ok {
		t.Error("y not found")
	}
	if got := c.RuntimeNames(); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("RuntimeNames = %q", got)
	}
}
