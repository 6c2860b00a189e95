package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// phases renders a workflow's phases as "a -> [b c] -> d".
func phases(w *workflow.Workflow) string {
	var parts []string
	for _, p := range w.Phases {
		if p.Parallel() {
			parts = append(parts, "["+strings.Join(p.Agents, " ")+"]")
		} else {
			parts = append(parts, strings.Join(p.Agents, " "))
		}
	}
	return strings.Join(parts, " -> ")
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"feature":  "planner -> code-reviewer -> security-reviewer",
		"bugfix":   "explorer -> code-reviewer",
		"refactor": "architect -> code-reviewer",
		"security": "security-reviewer -> code-reviewer -> architect",
	}
	got := workflow.Builtins()
	if len(got) != len(want) {
		t.Fatalf("%d built-ins, want %d", len(got), len(want))
	}
	for _, w := range got {
		if phases(w) != want[w.Name] {
			t.Errorf("%s = %s, want %s", w.Name, phases(w), want[w.Name])
		}
		if !w.Builtin || w.Description == "" || strings.Contains(w.Description, "\n") {
			t.Errorf("%s: builtin=%v description=%q", w.Name, w.Builtin, w.Description)
		}
		if errs := w.Check(nil); len(errs) > 0 {
			t.Errorf("%s: %v", w.Name, errs)
		}
	}
	// Each call returns new values.
	got[0].Phases[0].Agents[0] = "changed"
	if workflow.Builtins()[0].Phases[0].Agents[0] == "changed" {
		t.Error("Builtins shares its values between calls")
	}
}

func TestCustomWorkflow(t *testing.T) {
	t.Parallel()
	w, err := workflow.CustomWorkflow([]string{"c", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != workflow.Custom || phases(w) != "c -> a -> b" || w.Builtin {
		t.Errorf("custom = %s %s builtin=%v", w.Name, phases(w), w.Builtin)
	}
	for _, tc := range []struct {
		agents []string
		want   string
	}{
		{nil, "no agents given"},
		{[]string{}, "no agents given"},
		{[]string{"a", ""}, "agent 2: empty name"},
		{[]string{"a", "b", "a"}, `agent "a" given twice (1 and 3)`},
		{[]string{"a b"}, `invalid name "a b"`},
	} {
		_, err := workflow.CustomWorkflow(tc.agents)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CustomWorkflow(%q) = %v, want %q", tc.agents, err, tc.want)
		}
	}
}

func TestRunAgent(t *testing.T) {
	t.Parallel()
	if got := workflow.RunAgent("feature"); got != "workflow.feature" {
		t.Errorf("RunAgent = %q", got)
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	review := &workflow.Workflow{Name: "review", Phases: []workflow.Phase{{Agents: []string{"planner"}}, {Agents: []string{"a", "b"}}}, File: "p.yaml", Line: 3}
	feature := &workflow.Workflow{Name: "feature", Description: "mine", Phases: []workflow.Phase{{Agents: []string{"x"}}}, File: "p.yaml", Line: 7}
	r, err := workflow.NewRegistry([]*workflow.Workflow{review, feature})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range r.List() {
		names = append(names, w.Name)
	}
	if got := strings.Join(names, " "); got != "bugfix feature refactor review security" {
		t.Errorf("List = %s", got)
	}
	if w, err := r.Lookup("feature"); err != nil || w != feature || w.Builtin {
		t.Errorf("Lookup(feature) = %+v, %v: the configured one replaces the built-in", w, err)
	}
	if w, err := r.Lookup("bugfix"); err != nil || !w.Builtin {
		t.Errorf("Lookup(bugfix) = %+v, %v", w, err)
	}
	_, err = r.Lookup("reveiw")
	if !errors.Is(err, workflow.ErrUnknownWorkflow) {
		t.Fatalf("Lookup(reveiw) = %v", err)
	}
	if want := `unknown workflow "reveiw" (workflows: "bugfix", "feature", "refactor", "review", "security", "custom") (did you mean "review"?)`; err.Error() != want {
		t.Errorf("Lookup(reveiw) =\n %v\nwant\n %s", err, want)
	}
	if _, err := r.Lookup("custom"); !errors.Is(err, workflow.ErrUnknownWorkflow) || !strings.Contains(err.Error(), "CustomWorkflow") {
		t.Errorf("Lookup(custom) = %v", err)
	}
}

func TestNewRegistryErrors(t *testing.T) {
	t.Parallel()
	one := []workflow.Phase{{Agents: []string{"a"}}}
	_, err := workflow.NewRegistry([]*workflow.Workflow{
		{Name: "custom", Phases: one, File: "p.yaml", Line: 2},
		{Name: "x", Phases: one, File: "p.yaml", Line: 4},
		{Name: "x", Phases: one, File: "p.yaml", Line: 9},
		{Phases: one},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`workflow "custom" at p.yaml:2: the name is reserved`,
		`duplicate workflow "x" at p.yaml:9 (first defined at p.yaml:4)`,
		"workflow without a name",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

func TestWorkflowCheck(t *testing.T) {
	t.Parallel()
	w := &workflow.Workflow{Name: "w", Phases: []workflow.Phase{
		{Agents: []string{"a"}}, {}, {Agents: []string{"b", "a", ""}}, {Agents: []string{"ghost"}},
	}}
	errs := w.Check(func(a string) bool { return a == "a" || a == "b" })
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`workflow "w": step 2: empty phase`,
		`workflow "w": agent "a" appears more than once`,
		`workflow "w": step 3: empty agent name`,
		`workflow "w": step 4: unknown agent "ghost"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := (&workflow.Workflow{Name: "e"}).Check(nil); len(errs) != 1 || !strings.Contains(errs[0].Error(), "no steps") {
		t.Errorf("Check(no phases) = %v", errs)
	}
}
