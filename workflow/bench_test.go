package workflow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// benchHandoff is a handoff of realistic size: a dozen findings, five
// files, a few lines per section.
func benchHandoff(from, to string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "I reviewed the change.\n\n## HANDOFF: %s -> %s\n\n### Context\nReviewed the plan against the code in internal/cli.\nThe change is small.\n\n### Findings\n", from, to)
	for i := range 12 {
		fmt.Fprintf(&b, "%d. Finding %d: the flag is parsed in `tasks.go` and printed as JSON.\n", i+1, i+1)
	}
	b.WriteString("\n### Files Modified\n")
	for i := range 5 {
		fmt.Fprintf(&b, "- internal/cli/file%d.go\n", i)
	}
	b.WriteString("\n### Open Questions\nNone\n\n### Recommendations\n- Merge once the tests pass.\n- Document the flag.\n\n### Test Results\nPASS: 42 tests\n")
	return b.String()
}

// BenchmarkHandoffGate is what the handoff gate adds to a step: the
// post-gate of the contract a workflow compiles to (a sections check and
// the handoff check) on a valid handoff.
func BenchmarkHandoffGate(b *testing.B) {
	w := &workflow.Workflow{Name: "feature", Phases: []workflow.Phase{{Agents: []string{"planner"}}, {Agents: []string{"code-reviewer"}}}}
	c, err := contract.Compile(w.Contract())
	if err != nil {
		b.Fatal(err)
	}
	s, _ := c.Step("planner")
	in := &contract.Input{Result: &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart(benchHandoff("planner", "code-reviewer"))}}}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if g := s.PostGate(ctx, in); !g.Passed {
			b.Fatalf("gate failed: %+v", g.Results)
		}
	}
}

// BenchmarkMergeAndReport merges a parallel phase of three handoffs and
// builds and renders the report of a five-agent run: what a run's last
// decision does besides reading its children.
func BenchmarkMergeAndReport(b *testing.B) {
	agents := []string{"a", "b", "c", "d", "e"}
	hs := make([]*workflow.Handoff, len(agents))
	for i, a := range agents {
		h, err := workflow.ParseHandoff(benchHandoff(a, "next"))
		if err != nil {
			b.Fatal(err)
		}
		hs[i] = h
	}
	steps := make([]workflow.StepOutcome, len(agents))
	for i, a := range agents {
		steps[i] = workflow.StepOutcome{Agent: a, State: "succeeded", Handoff: hs[i], Attempts: 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		m := workflow.Merge(agents[1:4], hs[1:4], []string{"e"})
		if m.Markdown() == "" {
			b.Fatal("empty merge")
		}
		r := workflow.BuildReport("review", "Add a flag", agents, steps)
		if r.Recommendation != workflow.Ship || r.Text() == "" {
			b.Fatalf("report %s", r.Recommendation)
		}
	}
}
