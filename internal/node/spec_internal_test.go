package node

import (
	"context"
	"slices"
	"testing"
	"time"

	echoagent "github.com/pactum/pactum/agent/echo"
	execagent "github.com/pactum/pactum/agent/exec"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/task"
)

// TestAgentSpec: agentSpec gives an agent called as itself and a step
// of a run the same runtime, timeout, retry policy, sensitivity, dry run
// and ToolSpec check, and differs only where its callers say: the gate
// given (a step's replaces the agent's own) and, for a step, the virtual
// agent's name as name and action, child only. A run agent
// (runAgentSpec) gets a configured agent's defaults and no step.
func TestAgentSpec(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`store: sqlite://unused.db
agents:
  - name: deploy
    type: echo
    action: ship
    sensitive: true
    timeout: 7s
    retry: {max_attempts: 5, initial_backoff: 2s, max_backoff: 9s, jitter: 0}
  - {name: plain, type: echo}
`), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	deploy, _ := cfg.Agent("deploy")
	plain, _ := cfg.Agent("plain")
	tool, own, stepGate := step("toolspec"), step("contract"), step("step-gate")
	withTool := builtAgent{config: deploy, tool: tool, gate: own}
	// The retry policy, timeout, sensitivity and dry run every spec of
	// deploy has: sensitive, and no approval covers ship, so a simulation.
	deployRetry := task.RetryPolicy{MaxAttempts: 5, InitialBackoff: 2 * time.Second, MaxBackoff: 9 * time.Second}
	defaults := task.RetryPolicy{
		MaxAttempts: config.DefaultRetryAttempts, InitialBackoff: config.DefaultInitialBackoff,
		MaxBackoff: config.DefaultMaxBackoff, Jitter: config.DefaultJitter,
	}
	run := &fixedRunner{}
	for _, tc := range []struct {
		name       string
		spec       task.AgentSpec
		wantName   string
		wantAction string
		timeout    time.Duration
		retry      task.RetryPolicy
		sensitive  bool
		dryRun     bool
		childOnly  bool
		steps      []string
		ownRunner  bool // the runner given, not the runtime's
	}{
		{name: "agent as itself", spec: agentSpec(cfg, withTool, nil, withTool.gate, ""),
			wantName: "deploy", wantAction: "ship", timeout: 7 * time.Second, retry: deployRetry,
			sensitive: true, dryRun: true, steps: []string{"toolspec", "contract"}},
		{name: "contract or workflow step", spec: agentSpec(cfg, withTool, nil, stepGate, "c/s"),
			wantName: "c/s", wantAction: "c/s", timeout: 7 * time.Second, retry: deployRetry,
			sensitive: true, dryRun: true, childOnly: true, steps: []string{"toolspec", "step-gate"}},
		{name: "step of an agent without a ToolSpec", spec: agentSpec(cfg, builtAgent{config: plain}, nil, stepGate, "workflow.step.plain"),
			wantName: "workflow.step.plain", wantAction: "workflow.step.plain", timeout: config.DefaultAgentTimeout, retry: defaults,
			childOnly: true, steps: []string{"step-gate"}},
		{name: "agent given in code with a runner", spec: agentSpec(cfg, builtAgent{config: config.NewAgent("fn")}, run, nil, ""),
			wantName: "fn", wantAction: "fn", timeout: config.DefaultAgentTimeout, retry: defaults, ownRunner: true},
		{name: "run agent", spec: runAgentSpec(cfg, "workflow.feature", run),
			wantName: "workflow.feature", wantAction: "workflow.feature", timeout: config.DefaultAgentTimeout, retry: defaults, ownRunner: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			if s.Name != tc.wantName || s.Action != tc.wantAction {
				t.Errorf("name %q, action %q; want %q, %q", s.Name, s.Action, tc.wantName, tc.wantAction)
			}
			if s.Timeout != tc.timeout || s.Retry != tc.retry {
				t.Errorf("timeout %s, retry %+v; want %s, %+v", s.Timeout, s.Retry, tc.timeout, tc.retry)
			}
			if s.Sensitive != tc.sensitive || s.DryRun != tc.dryRun || s.ChildOnly != tc.childOnly {
				t.Errorf("sensitive %v, dry run %v, child only %v; want %v, %v, %v", s.Sensitive, s.DryRun, s.ChildOnly, tc.sensitive, tc.dryRun, tc.childOnly)
			}
			var names []string
			for _, m := range s.Middleware {
				names = append(names, m.Name())
			}
			if !slices.Equal(names, tc.steps) {
				t.Errorf("pipeline steps %q, want %q", names, tc.steps)
			}
			if r, ok := s.Runner.(*fixedRunner); ok != tc.ownRunner || (ok && r != run) {
				t.Errorf("runner %T, want the one given: %v", s.Runner, tc.ownRunner)
			}
			if s.Runner == nil {
				t.Error("no runner")
			}
		})
	}
}

// step is a pipeline step that only has a name.
func step(name string) task.Middleware {
	return task.MiddlewareFunc(name, func(ctx context.Context, _ *task.Attempt, next task.Next) (*task.Result, error) {
		return next(ctx)
	})
}

type fixedRunner struct{ _ int }

func (*fixedRunner) Run(context.Context, *task.Request, task.Emit) (*task.Result, error) {
	return &task.Result{}, nil
}

// TestAgentSpecPool: with the default workers, an agent whose runtime
// starts a process per attempt (exec) is in the processes pool, its
// steps too, and every other agent and run agent in the default pool;
// with `workers: N` every agent is in the one default pool.
func TestAgentSpecPool(t *testing.T) {
	t.Parallel()
	cmd, err := execagent.New(execagent.Settings{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{"": processPool, "workers: 8\n": ""} {
		cfg, err := config.Parse([]byte(doc+"store: sqlite://unused.db\nagents:\n  - {name: e, type: echo}\n"), "pool.yaml")
		if err != nil {
			t.Fatal(err)
		}
		command := builtAgent{config: config.NewAgent("cmd"), agent: cmd}
		echo := builtAgent{config: config.NewAgent("e"), agent: echoagent.New(echoagent.Settings{})}
		for name, s := range map[string]task.AgentSpec{
			"exec":        agentSpec(cfg, command, nil, nil, ""),
			"exec's step": agentSpec(cfg, command, nil, nil, "workflow.step.cmd"),
			"echo":        agentSpec(cfg, echo, nil, nil, ""),
			"a run agent": runAgentSpec(cfg, "run", &fixedRunner{}),
		} {
			wantPool := ""
			if name == "exec" || name == "exec's step" {
				wantPool = want
			}
			if s.Pool != wantPool {
				t.Errorf("%q: %s's pool = %q, want %q", doc, name, s.Pool, wantPool)
			}
		}
		workers, pools := workerPools(cfg)
		if doc == "" && (workers != config.DefaultOtherWorkers || pools[processPool] != config.DefaultWorkers || len(pools) != 1) {
			t.Errorf("default pools = %d, %v", workers, pools)
		}
		if doc != "" && (workers != 8 || pools != nil) {
			t.Errorf("workers: 8 pools = %d, %v", workers, pools)
		}
	}
}
