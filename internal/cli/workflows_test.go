package cli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAgentsListsDefinitionsAndWorkflows: `pactum agents` lists the agent
// definitions with their files and runtimes, and the built-in and
// configured workflows with their agents and those neither configured
// nor defined.
func TestAgentsListsDefinitionsAndWorkflows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	defs := filepath.Join(dir, "agents")
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"planner.md":       "---\nname: planner\ndescription: Plans.\nmodel: sonnet\n---\nYou plan.\n",
		"code-reviewer.md": "---\ndescription: Reviews code.\nname: code-reviewer\n---\nYou review.\n",
	} {
		if err := os.WriteFile(filepath.Join(defs, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "pactum.yaml")
	src := `agents:
  - {name: architect, type: echo}
definitions:
  dirs: [agents]
  runtimes:
    local: {type: echo}
workflows:
  - name: review
    steps: [planner, {parallel: [code-reviewer, architect]}]
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "agents", "--config", file)
	// Rows compared with their columns separated by one space: the
	// widths depend on the temporary directory's name.
	var rows []string
	for line := range strings.SplitSeq(out, "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{
		"architect (default) echo architect false false http://127.0.0.1:9000/agents/architect/.well-known/agent-card.json",
		"DEFINITION RUNTIME MODEL FILE CARD",
		"code-reviewer local - " + filepath.Join(defs, "code-reviewer.md") + ":3 http://127.0.0.1:9000/agents/code-reviewer/.well-known/agent-card.json",
		"planner local sonnet " + filepath.Join(defs, "planner.md") + ":2 http://127.0.0.1:9000/agents/planner/.well-known/agent-card.json",
		"WORKFLOW AGENTS MISSING",
		"bugfix (built-in) explorer -> code-reviewer explorer",
		"feature (built-in) planner -> code-reviewer -> security-reviewer security-reviewer",
		"refactor (built-in) architect -> code-reviewer -",
		"review planner -> [code-reviewer, architect] -",
		"security (built-in) security-reviewer -> code-reviewer -> architect security-reviewer",
	} {
		if !slices.Contains(rows, want) {
			t.Errorf("agents output lacks the row %q:\n%s", want, out)
		}
	}

	// A definition file that does not load is the command's error, at
	// its line.
	if err := os.WriteFile(filepath.Join(defs, "bad.md"), []byte("---\nname: [x]\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "agents", "--config", file); err == nil || !strings.Contains(err.Error(), filepath.Join(defs, "bad.md")+":2: front matter: name: expected a string") {
		t.Errorf("agents with a bad definition: %v\n%s", err, out)
	}
}
