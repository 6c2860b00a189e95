package workflow_test

import (
	"fmt"
	"strings"

	"github.com/pactum/pactum/workflow"
)

// A configured workflow joins the built-in ones; Lookup finds either, and
// the custom workflow takes the caller's agents.
func ExampleNewRegistry() {
	review := &workflow.Workflow{Name: "review", Phases: []workflow.Phase{
		{Agents: []string{"planner"}},
		{Agents: []string{"code-reviewer", "security-reviewer"}},
	}}
	reg, err := workflow.NewRegistry([]*workflow.Workflow{review})
	if err != nil {
		panic(err)
	}
	for _, w := range reg.List() {
		fmt.Printf("%s (%s): %s\n", w.Name, workflow.RunAgent(w.Name), strings.Join(w.Agents(), ", "))
	}
	_, err = reg.Lookup("featur")
	fmt.Println(err)
	custom, _ := workflow.CustomWorkflow([]string{"explorer", "architect"})
	fmt.Println(custom.Name, custom.Agents())
	// Output:
	// bugfix (workflow.bugfix): explorer, code-reviewer
	// feature (workflow.feature): planner, code-reviewer, security-reviewer
	// refactor (workflow.refactor): architect, code-reviewer
	// review (workflow.review): planner, code-reviewer, security-reviewer
	// security (workflow.security): security-reviewer, code-reviewer, architect
	// unknown workflow "featur" (workflows: "bugfix", "feature", "refactor", "review", "security", "custom") (did you mean "feature"?)
	// custom [explorer architect]
}
