package node

import (
	"reflect"
	"testing"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// TestStartWorkflow: what a run_workflow call starts, by package
// workflow's rules: the run agent workflow.RunAgent(name), a custom run's
// agents and any run's arguments in its input's metadata (what
// workflow.CustomAgents and workflow.Arguments read back); and the calls
// it refuses, with their codes and messages.
func TestStartWorkflow(t *testing.T) {
	t.Parallel()
	served := []string{"feature", workflow.Custom}
	tests := []struct {
		name     string
		in       runWorkflowInput
		agent    string
		metadata map[string]any
		code     task.Code
		message  string
	}{
		{name: "builtin", in: runWorkflowInput{Workflow: "feature", Task: "t", Matter: "m"},
			agent: "workflow.feature"},
		{name: "builtin with arguments", in: runWorkflowInput{Workflow: "feature", Task: "t", Arguments: "--fast"},
			agent: "workflow.feature", metadata: map[string]any{"pactum": map[string]any{"arguments": "--fast"}}},
		{name: "custom", in: runWorkflowInput{Workflow: "custom", Task: "t", Agents: []string{"a", "b"}},
			agent: "workflow.custom", metadata: map[string]any{"pactum": map[string]any{"agents": []any{"a", "b"}}}},
		{name: "custom with arguments", in: runWorkflowInput{Workflow: "custom", Task: "t", Agents: []string{"a"}, Arguments: "x"},
			agent: "workflow.custom", metadata: map[string]any{"pactum": map[string]any{"agents": []any{"a"}, "arguments": "x"}}},
		{name: "not served", in: runWorkflowInput{Workflow: "bugfix", Task: "t"},
			code: task.CodeNotFound, message: `no workflow "bugfix" is served (workflows: feature, custom)`},
		{name: "custom without agents", in: runWorkflowInput{Workflow: "custom", Task: "t"},
			code: task.CodeInvalidArgument, message: "workflow custom needs agents: the agents to run, in order"},
		{name: "agents on a builtin", in: runWorkflowInput{Workflow: "feature", Task: "t", Agents: []string{"a"}},
			code: task.CodeInvalidArgument, message: "agents is for the custom workflow; feature has its own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := startWorkflow(served, tt.in)
			if tt.code != "" {
				if task.ErrorCode(err) != tt.code || err.Error() != tt.message {
					t.Fatalf("error %v (%s), want %s: %s", err, task.ErrorCode(err), tt.code, tt.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Agent != tt.agent || !reflect.DeepEqual(r.Metadata, tt.metadata) {
				t.Errorf("run: agent %q metadata %v, want %q %v", r.Agent, r.Metadata, tt.agent, tt.metadata)
			}
			if r.Input.Text != tt.in.Task || r.Input.Matter != tt.in.Matter {
				t.Errorf("input: %+v", r.Input)
			}
			msg := task.Message{Metadata: r.Metadata}
			if args, err := workflow.Arguments(msg); err != nil || args != tt.in.Arguments {
				t.Errorf("workflow.Arguments = %q, %v; want %q", args, err, tt.in.Arguments)
			}
			if tt.in.Workflow == workflow.Custom {
				if agents, err := workflow.CustomAgents(msg); err != nil || !reflect.DeepEqual(agents, tt.in.Agents) {
					t.Errorf("workflow.CustomAgents = %v, %v; want %v", agents, err, tt.in.Agents)
				}
			}
		})
	}
}

// TestStartContract: run_contract runs a served contract on the agent
// named by its id, and refuses one that is not served.
func TestStartContract(t *testing.T) {
	t.Parallel()
	in := runContractInput{Contract: "report", MessageInput: mcpserver.MessageInput{Text: "the river"}, WaitInput: mcpserver.WaitInput{WaitTimeoutSeconds: 3}}
	r, err := startContract([]string{"report"}, in)
	if err != nil || r.Agent != "report" || r.Input.Text != "the river" || r.Wait.WaitTimeoutSeconds != 3 || r.Metadata != nil {
		t.Fatalf("run: %+v, %v", r, err)
	}
	_, err = startContract([]string{"a", "report"}, runContractInput{Contract: "nope"})
	if task.ErrorCode(err) != task.CodeNotFound || err.Error() != `no contract "nope" is served (contracts: a, report)` {
		t.Fatalf("error: %v", err)
	}
}
