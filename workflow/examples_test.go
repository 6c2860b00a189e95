package workflow_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// TestExampleDefinitions: examples/definitions holds the five role
// definitions the built-in workflows need, and each tells its agent to
// answer with a handoff headed by its own name.
func TestExampleDefinitions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "examples", "definitions")
	defs, err := workflow.Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	want := []string{"architect", "code-reviewer", "explorer", "planner", "security-reviewer"}
	var got []string
	for _, d := range defs.List() {
		got = append(got, d.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("definitions = %v, want exactly %v", got, want)
	}
	for _, name := range want {
		d, err := defs.Resolve(name)
		if err != nil {
			t.Errorf("Resolve(%q): %v", name, err)
			continue
		}
		if filepath.Base(d.File) != name+".md" {
			t.Errorf("%s is defined in %s, want %s.md", name, d.File, name)
		}
		if d.Description == "" || len(d.Tools) == 0 {
			t.Errorf("%s: description %q, tools %v: want both", name, d.Description, d.Tools)
		}
		for _, s := range []string{
			"## HANDOFF: " + name + " -> ",
			"### Context", "### Findings", "### Files Modified", "### Open Questions", "### Recommendations",
			`"None"`,
		} {
			if !strings.Contains(d.Body, s) {
				t.Errorf("%s: role body lacks %q", name, s)
			}
		}
	}
}
