package node

import (
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// servedWorkflows are the agents the workflows add to a node: one per
// workflow whose agents all exist (workflow.RunAgent(name), its runs),
// the custom workflow's, and one virtual step agent per agent
// (workflow.StepAgent(name)): the agent's runtime, timeout, retry and
// ToolSpec check behind the handoff gate, reached only as a run's child.
type servedWorkflows struct {
	runs  []task.AgentSpec
	steps []task.AgentSpec
	infos []a2aserver.AgentInfo
	// names are the run agents' names, for MCP's run_workflow.
	names []string
}

// workflowAgents builds the agents of the workflows in reg, running on
// the agents in byName (configured agents and definitions).
func workflowAgents(reg *workflow.Registry, byName map[string]builtAgent, cfg *config.Config, baseDir string, coord func() *task.Coordinator) servedWorkflows {
	var out servedWorkflows
	siblings := childrenOf(coord)
	known := func(a string) bool { _, ok := byName[a]; return ok }
	for _, w := range reg.List() {
		if !slices.ContainsFunc(w.Agents(), func(a string) bool { return !known(a) }) {
			spec, info := workflowRun(cfg, w, workflow.Runner(w, workflow.RunOptions{}))
			out.runs = append(out.runs, spec)
			out.infos = append(out.infos, info)
			out.names = append(out.names, w.Name)
		}
	}
	custom := &workflow.Workflow{Name: workflow.Custom, Description: "Runs the agents a run lists (metadata pactum.agents), in order, with validated handoffs and a final report"}
	spec, info := workflowRun(cfg, custom, workflow.CustomRunner(known, workflow.RunOptions{}))
	info.Skills = []a2a.AgentSkill{{
		ID: workflow.Custom, Name: workflow.Custom, Tags: []string{"workflow"},
		Description: `Runs the agents listed in the message's metadata {"pactum": {"agents": ["a", "b"]}} in order; the message's text is the task description.`,
	}}
	out.runs = append(out.runs, spec)
	out.infos = append(out.infos, info)
	out.names = append(out.names, workflow.Custom)

	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b := byName[n]
		// The handoff gate replaces the agent's own contract gate: a
		// step's output is a handoff.
		gate := workflow.Gate(workflow.GateOptions{WorkDir: b.workDir(cfg, baseDir), Siblings: siblings})
		out.steps = append(out.steps, agentSpec(cfg, b, nil, gate, workflow.StepAgent(n)))
	}
	return out
}

// workflowRun is the run agent of w and its card.
func workflowRun(cfg *config.Config, w *workflow.Workflow, r task.Runner) (task.AgentSpec, a2aserver.AgentInfo) {
	name := workflow.RunAgent(w.Name)
	spec := runAgentSpec(cfg, name, r)
	info := a2aserver.AgentInfo{
		Name: name, Description: w.Description,
		InputModes:  []string{"text/plain"},
		OutputModes: []string{"text/plain", "application/json"},
	}
	agents := w.Agents()
	if info.Description == "" {
		info.Description = fmt.Sprintf("Runs workflow %s: %s, with validated handoffs and a final report", w.Name, strings.Join(agents, " -> "))
	}
	for i, p := range w.Phases {
		for _, a := range p.Agents {
			desc := fmt.Sprintf("phase %d of %d", i+1, len(w.Phases))
			if p.Parallel() {
				desc += ", in parallel with " + strings.Join(slices.DeleteFunc(slices.Clone(p.Agents), func(x string) bool { return x == a }), ", ")
			}
			info.Skills = append(info.Skills, a2a.AgentSkill{ID: a, Name: a, Description: desc, Tags: []string{"workflow-step"}})
		}
	}
	return spec, info
}

// workflowPermissions lets an actor that may call an agent's action call
// its step agent too: a run's children are admitted as the run's actor,
// who must be allowed every agent the workflow runs.
func workflowPermissions(perms task.Permissions, byName map[string]builtAgent) {
	behind := make(map[string]string, len(byName))
	for n, b := range byName {
		behind[workflow.StepAgent(n)] = b.config.Action
	}
	allowBehind(perms, behind)
}

// Workflow returns the workflow a run of name runs: a served workflow,
// or, for custom, the agents given, in order. A workflow whose agents do
// not all exist is refused, naming the missing ones.
func (s *Server) Workflow(name string, agents []string) (*workflow.Workflow, error) {
	known := func(a string) bool { return s.wfKnown[a] }
	if name == workflow.Custom {
		var unknown []string
		for _, a := range agents {
			if !known(a) {
				unknown = append(unknown, a)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("workflow custom: unknown agents %s (agents: %s)", strings.Join(unknown, ", "), strings.Join(s.knownAgents(), ", "))
		}
		return workflow.CustomWorkflow(agents)
	}
	if s.workflows == nil {
		return nil, fmt.Errorf("%w %q", workflow.ErrUnknownWorkflow, name)
	}
	w, err := s.workflows.Lookup(name)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, a := range w.Agents() {
		if !known(a) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("workflow %s runs %s, but no agent or definition is named %s: configure agents with these names, or load definitions (definitions: {dirs: [examples/definitions]})",
			w.Name, strings.Join(w.Agents(), " -> "), strings.Join(missing, ", "))
	}
	return w, nil
}

func (s *Server) knownAgents() []string {
	out := make([]string, 0, len(s.wfKnown))
	for a := range s.wfKnown {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// workflowActions reports whether an action an actor names is a workflow's
// run agent (reg's workflows and custom): an actor may be allowed to run a
// workflow by naming it.
func workflowActions(reg *workflow.Registry) func(action string) bool {
	return func(a string) bool {
		name, ok := strings.CutPrefix(a, workflow.RunAgent(""))
		if !ok {
			return false
		}
		if name == workflow.Custom {
			return true
		}
		if reg == nil {
			return false
		}
		_, err := reg.Lookup(name)
		return err == nil
	}
}
