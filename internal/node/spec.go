package node

import (
	"cmp"
	"slices"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
)

// agentSpec is the one place a node turns an agent's configuration into
// the spec the Coordinator runs it by: the runner (b's runtime, or run
// when it is not nil), the timeout, retry policy, sensitivity and dry run
// of b.config, and the pipeline steps: b's ToolSpec check first (a broken
// mapping is not worth a contract's checks), then gate. Configured agents,
// definitions, agents given in code, the virtual step agents of contracts
// and workflows, and the run agents (runAgentSpec) are all built here, so
// that a step runs its agent exactly as a call of the agent would. The
// callers differ, on purpose, in two parameters:
//
//   - gate: an agent called as itself is checked by its own contract
//     (b.gate; nil without one). A step's gate replaces it (a contract
//     step's RunGate, a workflow step's handoff gate): a step is checked
//     against what the step promises, not what the agent promises when
//     called alone. The ToolSpec check stays: a step calls the same tool.
//   - step: "" for the agent itself, named and called by b.config's name
//     and action. Otherwise the name of a step's virtual agent
//     (contract.StepAgent, workflow.StepAgent), which is its action too
//     and is ChildOnly: it is reached only as a child of its run, so that
//     no caller runs the agent behind a step's gate outside the run, and
//     a call of the agent's own action still reaches the agent itself.
//     Actors are allowed it by stepPermissions and workflowPermissions.
//
// The dry run comes from cfg.DryRun for every one of them; the warning
// that a sensitive agent runs as a simulation is New's, once per agent.
func agentSpec(cfg *config.Config, b builtAgent, run task.Runner, gate task.Middleware, step string) task.AgentSpec {
	ac := b.config
	if run == nil {
		run = agent.Runner(b.agent)
	}
	dryRun, _ := cfg.DryRun(&ac)
	spec := task.AgentSpec{
		Name: ac.Name, Action: ac.Action, Runner: run, Timeout: ac.Timeout.Duration,
		Retry: task.RetryPolicy{
			MaxAttempts: ac.Retry.MaxAttempts, InitialBackoff: ac.Retry.InitialBackoff.Duration,
			MaxBackoff: ac.Retry.MaxBackoff.Duration, Jitter: ac.Retry.Jitter,
		},
		Sensitive: ac.Sensitive, DryRun: dryRun,
		Middleware: slices.DeleteFunc([]task.Middleware{b.tool, gate}, func(m task.Middleware) bool { return m == nil }),
	}
	if step != "" {
		spec.Name, spec.Action, spec.ChildOnly = step, step, true
	}
	if cfg.Workers.All == 0 && b.agent != nil && agent.MetadataOf(b.agent).Processes {
		spec.Pool = processPool
	}
	return spec
}

// processPool names the worker pool of the agents that start a process
// for each attempt (config.Workers.Processes).
const processPool = "processes"

// workerPools turns cfg.Workers into the Coordinator's default pool size
// and its named pools.
func workerPools(cfg *config.Config) (int, map[string]int) {
	if cfg.Workers.All > 0 {
		return cfg.Workers.All, nil
	}
	return cmp.Or(cfg.Workers.Others, config.DefaultOtherWorkers),
		map[string]int{processPool: cmp.Or(cfg.Workers.Processes, config.DefaultWorkers)}
}

// runAgentSpec is the spec of the agent whose tasks are the runs of a
// multi-step run (a served contract, a workflow): run is the run's
// decision logic, which spawns and waits for the steps. It has no
// configuration of its own, so it gets a configured agent's defaults
// (config.NewAgent: timeout, retry policy; neither sensitive nor in dry
// run: its steps are, each under its agent's own settings) and no
// pipeline step (its steps are checked, each by its own gate).
func runAgentSpec(cfg *config.Config, name string, run task.Runner) task.AgentSpec {
	return agentSpec(cfg, builtAgent{config: config.NewAgent(name)}, run, nil, "")
}

// workDir is the directory b's files are read from by a gate (contract
// file resources, a handoff's files): its runtime's working directory
// (exec: its dir) when it has one, else the directory its settings are
// relative to.
func (b builtAgent) workDir(cfg *config.Config, baseDir string) string {
	if wd, ok := b.agent.(interface{ WorkDir() string }); ok && wd.WorkDir() != "" {
		return wd.WorkDir()
	}
	return cfg.AgentSpec(b.config, baseDir).BaseDir
}
