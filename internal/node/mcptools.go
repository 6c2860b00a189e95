package node

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// The node's own MCP tools (mcpserver.Options.Tools).
const (
	toolRunContract = "run_contract"
	toolRunWorkflow = "run_workflow"
)

// runContractInput is the input of run_contract.
type runContractInput struct {
	Contract string `json:"contract" jsonschema:"id of a served contract (the agent that runs it has the same name)"`
	mcpserver.MessageInput
	mcpserver.WaitInput
}

// runWorkflowInput is the input of run_workflow.
type runWorkflowInput struct {
	Workflow       string   `json:"workflow" jsonschema:"name of a served workflow (feature, bugfix, refactor, security, a configured one, or custom)"`
	Task           string   `json:"task" jsonschema:"the task description every agent gets"`
	Agents         []string `json:"agents,omitempty" jsonschema:"the agents of a custom workflow, in order (only with workflow custom)"`
	Arguments      string   `json:"arguments,omitempty" jsonschema:"a string given to every agent of the run, in its input under '# Arguments' (and as {{.Arguments}} in exec and webhook templates)"`
	MessageID      string   `json:"message_id,omitempty" jsonschema:"id of the input message; default a fresh id. Without idempotency_key it is also the idempotency key"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"resending the same key (per actor) with the same payload returns the existing run instead of starting a new one"`
	Actor          string   `json:"actor,omitempty" jsonschema:"who asks; default the authenticated caller, else anonymous"`
	Matter         string   `json:"matter,omitempty" jsonschema:"on whose behalf (a case, customer or project reference)"`
	CorrelationID  string   `json:"correlation_id,omitempty" jsonschema:"caller's id to correlate the run with; default the task id"`
	ContextID      string   `json:"context_id,omitempty" jsonschema:"conversation context to submit in; default a new context"`
	mcpserver.WaitInput
}

func boolPtr(b bool) *bool { return &b }

// runTools returns the MCP tools that run the node's served contracts
// (run_contract, when contracts holds any: each the id of a contract,
// served as the agent of that name) and workflows (run_workflow, when
// workflows holds any: each a workflow's name, served as
// workflow.RunAgent(name)).
func runTools(contracts, workflows []string) []mcpserver.Tool {
	var out []mcpserver.Tool
	if len(contracts) > 0 {
		out = append(out, mcpserver.RunTool(&mcp.Tool{
			Name:  toolRunContract,
			Title: "Run a contract",
			Description: "Run a multi-step contract on an input and wait for the run to end: each step runs on its agent, " +
				"checked before and after by the step's assertions, in dependsOn order, each consuming what earlier steps created. " +
				"The answer is the run's task with verified_result, every step's verified result; a violated step fails the run, " +
				"and the failure names the step and the assertion. Contracts: " + strings.Join(contracts, ", ") + ".",
			Annotations: &mcp.ToolAnnotations{Title: "Run a contract", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		}, func(_ context.Context, in runContractInput) (*mcpserver.Run, error) {
			return startContract(contracts, in)
		}))
	}
	if len(workflows) > 0 {
		out = append(out, mcpserver.RunTool(&mcp.Tool{
			Name:  toolRunWorkflow,
			Title: "Run a workflow",
			Description: "Run a workflow on a task description and wait for its final report: its agents run in order " +
				"(a parallel phase at once), each given the description and every prior handoff, each answer checked as a handoff " +
				"(## HANDOFF: a -> b with " + strings.Join(workflow.HandoffSections, ", ") + ") and retried with " +
				"feedback when malformed. The answer is the run's task; its artifact " + workflow.ReportArtifact + " holds the report as text " +
				"and data, with the recommendation " + string(workflow.Ship) + ", " + string(workflow.NeedsWork) + " or " + string(workflow.Blocked) + ". Workflow " + workflow.Custom + " runs the agents given in agents. " +
				"arguments, when given, reaches every agent of the run. " +
				"Workflows: " + strings.Join(workflows, ", ") + ".",
			Annotations: &mcp.ToolAnnotations{Title: "Run a workflow", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		}, func(_ context.Context, in runWorkflowInput) (*mcpserver.Run, error) {
			return startWorkflow(workflows, in)
		}))
	}
	return out
}

// startContract is what a run_contract call starts: a run of a served
// contract, on the agent named by its id.
func startContract(contracts []string, in runContractInput) (*mcpserver.Run, error) {
	if !slices.Contains(contracts, in.Contract) {
		return nil, task.Errorf(task.CodeNotFound, "no contract %q is served (contracts: %s)", in.Contract, strings.Join(contracts, ", "))
	}
	return &mcpserver.Run{Agent: in.Contract, Input: in.MessageInput, Wait: in.WaitInput}, nil
}

// startWorkflow is what a run_workflow call starts: a run of a served
// workflow on its run agent (workflow.RunAgent), whose input's metadata
// lists a custom run's agents (workflow.CustomInput) and holds any run's
// arguments (workflow.WithArguments).
func startWorkflow(workflows []string, in runWorkflowInput) (*mcpserver.Run, error) {
	if !slices.Contains(workflows, in.Workflow) {
		return nil, task.Errorf(task.CodeNotFound, "no workflow %q is served (workflows: %s)", in.Workflow, strings.Join(workflows, ", "))
	}
	var md map[string]any
	switch {
	case in.Workflow == workflow.Custom && len(in.Agents) == 0:
		return nil, task.Errorf(task.CodeInvalidArgument, "workflow %s needs agents: the agents to run, in order", workflow.Custom)
	case in.Workflow != workflow.Custom && len(in.Agents) > 0:
		return nil, task.Errorf(task.CodeInvalidArgument, "agents is for the %s workflow; %s has its own", workflow.Custom, in.Workflow)
	case len(in.Agents) > 0:
		md = workflow.CustomInput(in.Agents)
	}
	return &mcpserver.Run{
		Agent: workflow.RunAgent(in.Workflow),
		Input: mcpserver.MessageInput{Text: in.Task, MessageID: in.MessageID, IdempotencyKey: in.IdempotencyKey, Actor: in.Actor,
			Matter: in.Matter, CorrelationID: in.CorrelationID, ContextID: in.ContextID},
		Metadata: workflow.WithArguments(md, in.Arguments),
		Wait:     in.WaitInput,
	}, nil
}
