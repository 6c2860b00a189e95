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

// TestDocReportAndHandoffs: the report, handoff and merged handoff shown
// in docs/workflows.md read back as what they claim to be.
func TestDocReportAndHandoffs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "workflows.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for rest := string(doc); ; {
		_, after, ok := strings.Cut(rest, "```text\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "```\n")
		blocks = append(blocks, block)
		rest = tail
	}
	var report, handoff, merged bool
	for _, b := range blocks {
		switch {
		case strings.HasPrefix(b, "INTEGRATION REPORT\n"):
			r, err := workflow.ParseReport(b)
			if err != nil {
				t.Fatalf("the documented report: %v", err)
			}
			if r.Recommendation != workflow.Ship || len(r.Agents) != 3 || len(r.FilesChanged) != 2 {
				t.Errorf("the documented report reads as %+v", r)
			}
			report = true
		case strings.HasPrefix(b, "## HANDOFF: planner -> code-reviewer"):
			if _, problems := workflow.CheckHandoff(b, workflow.Expect{From: "planner", To: []string{"code-reviewer"}}); problems != nil {
				t.Errorf("the documented handoff is not valid: %v", problems)
			}
			handoff = true
		case strings.HasPrefix(b, "## HANDOFF: code-reviewer, security-reviewer -> architect"):
			h, err := workflow.ParseHandoff(b)
			if err != nil || !strings.Contains(h.Context, "#### security-reviewer") {
				t.Errorf("the documented merged handoff reads as %+v, %v", h, err)
			}
			merged = true
		}
	}
	if !report || !handoff || !merged {
		t.Fatalf("docs/workflows.md lacks a block: report %v, handoff %v, merged %v", report, handoff, merged)
	}
}
