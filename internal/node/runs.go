package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/agent"
	mcpagent "github.com/pactum/pactum/agent/mcp"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// servedContract is an entry of the configuration's contracts list, loaded
// and compiled: served as an agent named by its id whose tasks are runs.
type servedContract struct {
	entry    config.ContractFile
	contract *contract.AgentContract
	compiled *contract.Compiled
}

// loadContracts reads, validates and compiles every contract of the
// contracts list. Problems are placed in the contract file (its own, with
// file:line) or at the entry (a file that cannot be read, an id that is
// already an agent's name or another contract's). Steps must name
// configured agents. An action an actor names that is neither an agent's
// nor a contract's is an error unless runs (a workflow's run agent) knows
// it.
func loadContracts(cfg *config.Config, baseDir string, runs func(action string) bool) ([]servedContract, config.Errors) {
	var out []servedContract
	var errs config.Errors
	names := map[string]string{} // agent or contract name → what it is
	for _, a := range cfg.Agents {
		names[a.Name] = fmt.Sprintf("agent %q (line %d)", a.Name, a.Line)
	}
	for i := range cfg.Contracts {
		entry := cfg.ContractFile(i, baseDir)
		c, compiled, err := contract.LoadWith(entry.File, contract.ValidateOptions{KnownAgent: func(name string) bool {
			_, ok := cfg.Agent(name)
			return ok
		}})
		if err != nil {
			var ces contract.Errors
			if errors.As(err, &ces) && len(ces) > 0 && ces[0].File != "" {
				for _, fe := range ces {
					errs = append(errs, &config.Error{File: fe.File, Line: fe.Line, Path: fe.Path, Msg: fe.Msg, Err: err})
				}
				continue
			}
			errs = append(errs, entry.Error(err.Error(), err))
			continue
		}
		var bad bool
		for _, s := range c.Steps {
			if s.Agent == "" {
				// Validate asks for agents only with several steps.
				errs = append(errs, entry.Error(fmt.Sprintf("contract %s: step %q names no agent; a served contract runs each step on a configured agent", c.ID, s.ID), nil))
				bad = true
				continue
			}
			if cs, _ := compiled.Step(s.ID); cs != nil && cs.Bridged() {
				if ac, _ := cfg.Agent(s.Agent); ac.Type != mcpagent.Type {
					errs = append(errs, entry.Error(fmt.Sprintf("contract %s: step %q is a bridge into an MCP tool (metadata %s: %s), but its agent %q is of type %q, not %q",
						c.ID, s.ID, contract.BridgeKey, contract.BridgeMCP, s.Agent, ac.Type, mcpagent.Type), nil))
					bad = true
				}
			}
		}
		if what, dup := names[c.ID]; dup {
			errs = append(errs, entry.Error(fmt.Sprintf("contract id %q is already the name of %s; a served contract is an agent named by its id", c.ID, what), nil))
			bad = true
		}
		names[c.ID] = fmt.Sprintf("contract %s (%s)", c.ID, entry.Path)
		if !bad {
			out = append(out, servedContract{entry: entry, contract: c, compiled: compiled})
		}
	}
	ids := map[string]bool{}
	for _, sc := range out {
		ids[sc.contract.ID] = true
	}
	errs = append(errs, cfg.UnknownActions(func(a string) bool { return ids[a] || runs(a) })...)
	return out, errs
}

// runAgents returns the agents a served contract adds: the contract's own
// (its runner is the run's decision logic, contract.Compiled.Runner) and a
// virtual agent per step, named contract.StepAgent(id, step), that runs
// the step's agent (agentSpec: its runtime, timeout, retry, dry run and
// ToolSpec check) behind the step's gate, not the agent's own. Only the
// contract's agent is published (its card); the steps' are reached only as
// children of a run.
func runAgents(sc servedContract, byName map[string]builtAgent, cfg *config.Config, baseDir string, coord func() *task.Coordinator) (run task.AgentSpec, steps []task.AgentSpec, info a2aserver.AgentInfo) {
	id := sc.contract.ID
	workDir := map[string]string{}
	for _, s := range sc.contract.Steps {
		workDir[s.ID] = byName[s.Agent].workDir(cfg, baseDir)
	}
	siblings := childrenOf(coord)
	run = runAgentSpec(cfg, id, sc.compiled.Runner(contract.RunOptions{
		MaxParallel: sc.entry.MaxParallel,
		WorkDir:     func(s *contract.ContractStep) string { return workDir[s.ID] },
		Verified: func(ctx context.Context, k *task.Task) (*contract.VerifiedResult, error) {
			return stepVerified(ctx, coord(), k)
		},
	}))
	for _, s := range sc.contract.Steps {
		cs, _ := sc.compiled.Step(s.ID)
		gopts := contract.GateOptions{WorkDir: workDir[s.ID]}
		if cs.Bridged() {
			gopts.Tool = bridgeTool(byName[s.Agent].agent)
		}
		gate := cs.RunGate(gopts, siblings)
		steps = append(steps, agentSpec(cfg, byName[s.Agent], nil, gate, contract.StepAgent(id, s.ID)))
	}
	info = a2aserver.AgentInfo{
		Name: id, Description: sc.contract.Description,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain", "application/json"},
		Contracts:   contractsInfo(sc.compiled, stepIDs(sc.compiled), false, sc.entry.ExtensionRequired),
	}
	if info.Description == "" {
		info.Description = fmt.Sprintf("Runs contract %s: %d verified steps", id, len(sc.contract.Steps))
	}
	for _, s := range sc.contract.Steps {
		desc := s.Description
		if desc == "" {
			desc = fmt.Sprintf("step %s, run by agent %s", s.ID, s.Agent)
		}
		if len(s.DependsOn) > 0 {
			desc += " (after " + strings.Join(s.DependsOn, ", ") + ")"
		}
		info.Skills = append(info.Skills, a2a.AgentSkill{
			ID: s.ID, Name: s.ID, Description: desc, Tags: []string{"contract-step", s.Agent},
		})
	}
	return run, steps, info
}

// toolLister is the mcp runtime as a bridge step's gate sees it.
type toolLister interface {
	ToolName() string
	Tools(ctx context.Context) ([]mcpagent.Tool, error)
}

// bridgeTool returns how a bridge step's gate reads the tool its agent
// calls: tools/list on the agent's own session, at every attempt, so
// that the arguments are checked against the schema the server holds
// when the tool is called.
func bridgeTool(a agent.Agent) func(ctx context.Context, _ *task.Attempt) (*contract.BridgeTool, error) {
	return func(ctx context.Context, _ *task.Attempt) (*contract.BridgeTool, error) {
		rt, ok := a.(toolLister)
		if !ok {
			return nil, task.Permanent(fmt.Errorf("agent runtime %T lists no MCP tools", a))
		}
		tools, err := rt.Tools(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			if t.Name == rt.ToolName() {
				return &contract.BridgeTool{Name: t.Name, InputSchema: t.InputSchema}, nil
			}
		}
		return nil, task.Permanent(task.Errorf(task.CodeInvalidArgument, "mcp: the server does not list tool %q", rt.ToolName()))
	}
}

// stepPermissions lets an actor that may call a step's agent's action
// call the step's virtual agent too: a run's children are admitted as
// the run's actor, who must be allowed every agent the contract runs.
func stepPermissions(perms task.Permissions, served []servedContract, cfg *config.Config) {
	behind := map[string]string{}
	for _, sc := range served {
		for _, s := range sc.contract.Steps {
			ac, _ := cfg.Agent(s.Agent)
			behind[contract.StepAgent(sc.contract.ID, s.ID)] = ac.Action
		}
	}
	allowBehind(perms, behind)
}

// allowBehind lets every actor allowed an action call the virtual agents
// that stand behind it (behind maps each to its action): the steps of
// contracts and workflows, the negotiations of an agent's contract. The
// configuration's lists stay as they are.
func allowBehind(perms task.Permissions, behind map[string]string) {
	if perms == nil {
		return
	}
	for actor, actions := range perms {
		actions = slices.Clip(actions)
		for virtual, action := range behind {
			if perms.Allows(actor, action) {
				actions = append(actions, virtual)
			}
		}
		perms[actor] = actions
	}
}

// runResults returns what a contract run's steps verified so far, read
// from its children: the verified result a run's task shows (A2A
// metadata, MCP verified_result, pactum tasks get), whether the run
// finished or not. c is the run's compiled contract; c.Results holds the
// rule of whether the run passed, the same the run's final artifact uses.
func runResults(ctx context.Context, coord *task.Coordinator, c *contract.Compiled, t *task.Task) (*contract.RunResults, error) {
	kids, err := coord.Children(ctx, t.ID, 0, false)
	if err != nil {
		return nil, err
	}
	return c.Results(ctx, t.State == task.StateSucceeded, kids, func(ctx context.Context, k *task.Task) (*contract.VerifiedResult, error) {
		return stepVerified(ctx, coord, k)
	})
}

// stepVerified returns the newest verified result of a run's step's task
// k, read from its execution record (nil when no attempt was checked).
func stepVerified(ctx context.Context, coord *task.Coordinator, k *task.Task) (*contract.VerifiedResult, error) {
	recs, err := coord.Timeline(ctx, k.ID)
	if err != nil {
		return nil, err
	}
	return contract.Newest(recs)
}

// childrenOf returns the read a step's gate checks its dependencies with:
// the children of a run (task.Coordinator.Children), through the node's
// Coordinator once it exists.
func childrenOf(coord func() *task.Coordinator) func(ctx context.Context, parent string) ([]*task.Task, error) {
	return func(ctx context.Context, parent string) ([]*task.Task, error) {
		return coord().Children(ctx, parent, 0, false)
	}
}
