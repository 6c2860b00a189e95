package workflow_test

import (
	"fmt"

	"github.com/pactum/pactum/workflow"
)

func ExampleCheckHandoff() {
	answer := `## HANDOFF: planner -> reviewer

### Context
Planned the change.

### Findings
- The cache needs a size bound.

### Files Modified
- cache.go (new)

### Open Questions

### Recommendations
Review the bound.
`
	_, problems := workflow.CheckHandoff(answer, workflow.Expect{From: "planner", To: []string{"code-reviewer"}})
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// the handoff heading names "reviewer" as the next agent, but the next agent is "code-reviewer": write "## HANDOFF: planner -> code-reviewer"
	// section "Open Questions" is empty: write None when there is nothing to say
}

func ExampleBuildReport() {
	h := &workflow.Handoff{From: "explorer", To: []string{"done"}, Context: "Read the code.",
		Findings: "- The crash is a nil map.", FilesModified: "- store.go - fixed", OpenQuestions: "None",
		Recommendations: "Ship it.", TestResults: "PASS"}
	r := workflow.BuildReport("bugfix", "Fix the crash", []string{"explorer"},
		[]workflow.StepOutcome{{Agent: "explorer", State: workflow.StateSucceeded, Handoff: h}})
	fmt.Print(r.Text())
	// Output:
	// INTEGRATION REPORT
	// ====================
	// Workflow: bugfix
	// Task: Fix the crash
	// Agents: explorer
	//
	// SUMMARY
	// -------
	// 1 of 1 agents delivered valid handoffs; 1 file changed; no open questions.
	//
	// AGENT OUTPUTS
	// -------------
	// explorer: The crash is a nil map.
	//
	// FILES CHANGED
	// -------------
	// - store.go
	//
	// TEST RESULTS
	// ------------
	// PASS
	//
	// SECURITY STATUS
	// ---------------
	// NOT RUN
	//
	// RECOMMENDATION
	// --------------
	// SHIP
}
