package workflow_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// TestDocExample: the definition shown in docs/workflows.md parses, with
// the tools of the comma-separated form and pactum's runtime key.
func TestDocExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "workflows.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```markdown\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("docs/workflows.md has no ```markdown block")
	}
	d, err := workflow.ParseDefinition("docs/workflows.md", []byte(block))
	if err != nil {
		t.Fatalf("the documented definition: %v", err)
	}
	if d.Name != "code-reviewer" || d.Runtime != "local-model" || strings.Join(d.Tools, ",") != "Read,Grep,Glob,Bash" {
		t.Errorf("the documented definition reads as %#v", d)
	}
}
