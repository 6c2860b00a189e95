package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/workflow"
)

// examplesWorkflows is the offline workflow example, its five exec agents
// run from examples/scripts/workflow.
var examplesWorkflows = filepath.Join("..", "..", "examples", "workflows.yaml")

// runTimeout bounds every `pactum run` of these tests (--timeout).
const runTimeout = "60s"

// wfRun is one `pactum run` (or runs) through Main: its exit code and
// outputs.
type wfRun struct {
	code           int
	stdout, stderr string
}

// pactumRun runs `pactum run WORKFLOW DESC extra...` through Main with
// the store in dsn.
func pactumRun(t *testing.T, dsn, config, name, desc string, extra ...string) wfRun {
	t.Helper()
	args := append([]string{"run", name, desc, "--config", config, "--store", dsn, "--timeout", runTimeout}, extra...)
	code, out, errOut := runMain(args...)
	t.Logf("pactum %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	return wfRun{code, out, errOut}
}

// tempStore is a new SQLite store DSN in a temporary directory.
func tempStore(t *testing.T) string {
	t.Helper()
	return "sqlite://" + filepath.Join(t.TempDir(), "runs.db")
}

// printedReport parses the report pactum run printed after its live
// lines.
func printedReport(t *testing.T, out string) (*workflow.Report, string) {
	t.Helper()
	i := strings.Index(out, "INTEGRATION REPORT\n")
	if i < 0 {
		t.Fatalf("no report printed:\n%s", out)
	}
	text := out[i:]
	r, err := workflow.ParseReport(text)
	if err != nil {
		t.Fatalf("the printed report does not parse: %v\n%s", err, text)
	}
	return r, text
}

// liveLine finds the live line of agent with status ("started",
// "retried", "valid", ...) and returns its offset in out, or -1.
func liveLine(out, agent, status string) int {
	re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(agent) + ` +` + regexp.QuoteMeta(status) + ` +\S`)
	loc := re.FindStringIndex(out)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// runID is the run's id from the first line pactum run prints.
func runID(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^run (\S+) of workflow `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run line in:\n%s", out)
	}
	return m[1]
}

// TestWorkflowBuiltinsEndToEnd runs every built-in workflow, custom and
// the configured parallel workflow review on the exec agents of
// examples/workflows.yaml: each exits 0 (SHIP), shows every agent start
// and deliver a valid handoff in the workflow's order, and prints a
// report that parses with the workflow's agents.
func TestWorkflowBuiltinsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		extra  []string
		agents []string
	}{
		{name: "feature", agents: []string{"planner", "code-reviewer", "security-reviewer"}},
		{name: "bugfix", agents: []string{"explorer", "code-reviewer"}},
		{name: "refactor", agents: []string{"architect", "code-reviewer"}},
		{name: "security", agents: []string{"security-reviewer", "code-reviewer", "architect"}},
		{name: "custom", extra: []string{"--agents", "explorer,architect"}, agents: []string{"explorer", "architect"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			desc := "Add a --json flag to tasks list"
			r := pactumRun(t, tempStore(t), examplesWorkflows, tc.name, desc, tc.extra...)
			if r.code != 0 {
				t.Fatalf("exit %d, want 0 (SHIP)", r.code)
			}
			if want := fmt.Sprintf("of workflow %s: %s\n", tc.name, strings.Join(tc.agents, " -> ")); !strings.Contains(r.stdout, want) {
				t.Errorf("the first line lacks %q", want)
			}
			prev := -1
			for _, a := range tc.agents {
				started, valid := liveLine(r.stdout, a, "started"), liveLine(r.stdout, a, "valid")
				if started < 0 || valid < 0 {
					t.Errorf("no started and valid lines for %s", a)
					continue
				}
				if started < prev || valid < started {
					t.Errorf("%s out of order: started at %d, valid at %d, the previous agent valid at %d", a, started, valid, prev)
				}
				prev = valid
				if !regexp.MustCompile(`(?m)^  ` + a + ` +valid +handoff valid, 1 attempt, in `).MatchString(r.stdout) {
					t.Errorf("%s's valid line does not say 1 attempt", a)
				}
			}
			if strings.Contains(r.stdout, "retried") {
				t.Errorf("an agent was retried")
			}
			rep, _ := printedReport(t, r.stdout)
			if !slices.Equal(rep.Agents, tc.agents) || rep.Workflow != tc.name || rep.Task != desc || rep.Recommendation != workflow.Ship {
				t.Errorf("report: workflow %q task %q agents %v recommendation %s", rep.Workflow, rep.Task, rep.Agents, rep.Recommendation)
			}
			if len(rep.AgentOutputs) != len(tc.agents) {
				t.Errorf("agent outputs: %+v", rep.AgentOutputs)
			}
		})
	}

	// review: the two reviewers run as one parallel phase, after the
	// planner and before the architect.
	t.Run("review", func(t *testing.T) {
		t.Parallel()
		r := pactumRun(t, tempStore(t), examplesWorkflows, "review", "Add a --json flag to tasks list")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0 (SHIP)", r.code)
		}
		pl := liveLine(r.stdout, "planner", "valid")
		ar := liveLine(r.stdout, "architect", "started")
		for _, a := range []string{"code-reviewer", "security-reviewer"} {
			s, v := liveLine(r.stdout, a, "started"), liveLine(r.stdout, a, "valid")
			if pl < 0 || s < pl || v < s || ar < v {
				t.Errorf("%s: started at %d, valid at %d; planner valid at %d, architect started at %d", a, s, v, pl, ar)
			}
		}
		if liveLine(r.stdout, "architect", "valid") < ar {
			t.Errorf("no architect valid line after it started")
		}
		rep, _ := printedReport(t, r.stdout)
		want := []string{"planner", "code-reviewer", "security-reviewer", "architect"}
		if !slices.Equal(rep.Agents, want) || rep.Recommendation != workflow.Ship {
			t.Errorf("report agents %v recommendation %s", rep.Agents, rep.Recommendation)
		}
		// Both reviewers' optional sections reach the report.
		if !strings.HasPrefix(rep.TestResults, "PASS") || !strings.HasPrefix(rep.SecurityStatus, "CLEAN") {
			t.Errorf("test results %q, security status %q", rep.TestResults, rep.SecurityStatus)
		}
	})
}

// agentScript is an exec agent for these tests. It is called as
// `sh agent.sh ROLE MODE STATE_DIR` and answers with a handoff under the
// heading its message expects. MODE:
//
//   - ok: a valid handoff, every section "None" but Context and Findings;
//   - question: the same with an Open Question;
//   - noheading: never a handoff (no heading), whatever it is sent;
//   - fixlater: first a handoff without "### Open Questions"; when run
//     again it checks that its standard input is the whole task again
//     (its first input, the rejected answer, the feedback naming the
//     section) and answers with the whole handoff, under the heading the
//     docs' one-liner reads from that input.
const agentScript = `#!/bin/sh
set -eu
role=$1 mode=$2 state=$3
input=$(cat)
heading=$(printf '%s\n' "$input" | sed -n 's/^Expected heading: //p')
questions=None
case $mode in
noheading)
	echo "I looked at it and it is fine."
	exit 0 ;;
question)
	questions="- Should the flag also apply to tasks get?" ;;
fixlater)
	if [ ! -f "$state/$role.tried" ]; then
		: >"$state/$role.tried"
		printf '%s\n\n### Context\nFirst try.\n\n### Findings\n- Something.\n\n### Files Modified\nNone\n\n### Recommendations\nNone\n' "$heading"
		exit 0
	fi
	case $input in
	"# Task"*"# Your handoff"*"Expected heading: ## HANDOFF: $role -> "*"# Your previous answer (rejected)"*"### Context"*"First try."*"# What to fix"*"Your previous answer did not meet its contract"*"Open Questions"*) ;;
	*) echo "the retry's input is not the whole task: $input" >&2; exit 3 ;;
	esac ;;
esac
printf '%s\n\n### Context\n%s answered.\n\n### Findings\n- %s looked.\n\n### Files Modified\nNone\n\n### Open Questions\n%s\n\n### Recommendations\nNone\n' "$heading" "$role" "$role" "$questions"
`

// scriptedConfig writes agent.sh and a configuration whose agents are
// role=mode pairs of it (retry max_attempts 2) into a temporary
// directory and returns the configuration's path.
func scriptedConfig(t *testing.T, agents ...string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	writeFile(t, script, agentScript)
	var b strings.Builder
	b.WriteString("agents:\n")
	for _, a := range agents {
		role, mode, _ := strings.Cut(a, "=")
		fmt.Fprintf(&b, `  - name: %s
    type: exec
    timeout: 30s
    retry: {max_attempts: 2, initial_backoff: 10ms}
    exec: {command: [sh, %q, %s, %s, %q], input: stdin}
`, role, script, role, mode, dir)
	}
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, b.String())
	return cfg
}

// TestWorkflowRunNeedsWork: an agent that leaves an open question makes
// the report NEEDS WORK, exit 1, its reasons naming the agent and the
// question.
func TestWorkflowRunNeedsWork(t *testing.T) {
	t.Parallel()
	cfg := scriptedConfig(t, "explorer=ok", "asker=question", "architect=ok")
	r := pactumRun(t, tempStore(t), cfg, "custom", "Add a --json flag", "--agents", "explorer,asker,architect")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (NEEDS WORK)", r.code)
	}
	for _, a := range []string{"explorer", "asker", "architect"} {
		if liveLine(r.stdout, a, "valid") < 0 {
			t.Errorf("no valid line for %s", a)
		}
	}
	rep, _ := printedReport(t, r.stdout)
	if rep.Recommendation != workflow.NeedsWork || len(rep.Reasons) != 1 ||
		!strings.Contains(rep.Reasons[0], "asker left open questions") || !strings.Contains(rep.Reasons[0], "Should the flag also apply to tasks get?") {
		t.Errorf("recommendation %s, reasons %q", rep.Recommendation, rep.Reasons)
	}
	if !strings.Contains(r.stderr, "NEEDS WORK") {
		t.Errorf("stderr does not say NEEDS WORK: %s", r.stderr)
	}
}

// TestWorkflowRunBlocked: an agent that never writes a handoff is
// retried once with the problem shown, then stops the run: exit 2, the
// report BLOCKED naming it, and the agents after it not run.
func TestWorkflowRunBlocked(t *testing.T) {
	t.Parallel()
	cfg := scriptedConfig(t, "explorer=ok", "mute=noheading", "architect=ok", "closer=ok")
	r := pactumRun(t, tempStore(t), cfg, "custom", "Fix the crash", "--agents", "explorer,mute,architect,closer")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (BLOCKED)", r.code)
	}
	if liveLine(r.stdout, "explorer", "valid") < 0 {
		t.Errorf("explorer did not deliver")
	}
	// The retried line says which attempt failed and why.
	if !regexp.MustCompile(`(?m)^  mute +retried +attempt 1: contract workflow.custom step mute violated: .*missing section "Context"`).MatchString(r.stdout) {
		t.Errorf("no retried line with the problem for mute")
	}
	if liveLine(r.stdout, "mute", "valid") >= 0 || liveLine(r.stdout, "mute", "dead_letter") < 0 {
		t.Errorf("mute did not end dead-lettered")
	}
	for _, a := range []string{"architect", "closer"} {
		if liveLine(r.stdout, a, "started") >= 0 {
			t.Errorf("%s started after a blocked step", a)
		}
	}
	rep, _ := printedReport(t, r.stdout)
	if rep.Recommendation != workflow.Blocked {
		t.Errorf("recommendation %s", rep.Recommendation)
	}
	outputs := map[string]string{}
	for _, o := range rep.AgentOutputs {
		outputs[o.Agent] = o.Summary
	}
	if outputs["architect"] != "not run" || outputs["closer"] != "not run" || !strings.HasPrefix(outputs["mute"], "dead_letter") {
		t.Errorf("agent outputs %q", outputs)
	}
	if len(rep.Reasons) == 0 || !strings.HasPrefix(rep.Reasons[0], "mute did not deliver a valid handoff") {
		t.Errorf("reasons %q", rep.Reasons)
	}
}

// TestWorkflowRunRetriedThenValid: an agent whose first handoff misses a
// section gets its whole task again on its standard input (the task, the
// prior handoffs, the expected heading, its rejected answer and the
// feedback), reads its heading with the docs' one-liner, fixes the
// handoff, and the run goes on to SHIP.
func TestWorkflowRunRetriedThenValid(t *testing.T) {
	t.Parallel()
	cfg := scriptedConfig(t, "explorer=ok", "fixer=fixlater", "architect=ok")
	r := pactumRun(t, tempStore(t), cfg, "custom", "Fix the crash", "--agents", "explorer,fixer,architect")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (SHIP)", r.code)
	}
	retried := liveLine(r.stdout, "fixer", "retried")
	valid := liveLine(r.stdout, "fixer", "valid")
	if retried < 0 || valid < retried {
		t.Fatalf("want a retried line then a valid line for fixer")
	}
	if !regexp.MustCompile(`(?m)^  fixer +retried +attempt 1: .*missing section "Open Questions"`).MatchString(r.stdout) {
		t.Errorf("the retried line does not name the missing section")
	}
	if !regexp.MustCompile(`(?m)^  fixer +valid +handoff valid, 2 attempts, in `).MatchString(r.stdout) {
		t.Errorf("the valid line does not say 2 attempts")
	}
	if liveLine(r.stdout, "architect", "started") < valid {
		t.Errorf("architect started before fixer's handoff was valid")
	}
	rep, _ := printedReport(t, r.stdout)
	if rep.Recommendation != workflow.Ship || !slices.Equal(rep.Agents, []string{"explorer", "fixer", "architect"}) {
		t.Errorf("recommendation %s agents %v reasons %q", rep.Recommendation, rep.Agents, rep.Reasons)
	}
}

// TestWorkflowRunErrors: a run that cannot start exits 2 with a message
// that says why.
func TestWorkflowRunErrors(t *testing.T) {
	t.Parallel()
	partial := scriptedConfig(t, "planner=ok", "code-reviewer=ok")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		want   []string
	}{
		{"unknown workflow", examplesWorkflows, []string{"featur"},
			[]string{`unknown workflow "featur"`, `did you mean "feature"`}},
		{"custom without agents", examplesWorkflows, []string{"custom"},
			[]string{"workflow custom needs --agents"}},
		{"agents with a named workflow", examplesWorkflows, []string{"feature", "--agents", "planner"},
			[]string{"--agents is for the custom workflow; feature has its own agents"}},
		{"custom with an unknown agent", examplesWorkflows, []string{"custom", "--agents", "explorer,plannr"},
			[]string{"unknown agents plannr"}},
		{"built-in agents not configured", partial, []string{"feature"},
			[]string{"workflow feature runs planner -> code-reviewer -> security-reviewer", "no agent or definition is named security-reviewer:"}},
		{"empty description", examplesWorkflows, []string{"feature", " "},
			[]string{"the task description is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := tc.args
			desc := "Add a --json flag"
			if len(args) > 1 && !strings.HasPrefix(args[1], "--") {
				desc, args = args[1], append([]string{args[0]}, args[2:]...)
			}
			r := pactumRun(t, tempStore(t), tc.config, args[0], desc, args[1:]...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stdout, "INTEGRATION REPORT") {
				t.Errorf("a report was printed")
			}
		})
	}
}

// TestWorkflowRunsListAndReport: runs list shows each run with its
// workflow and recommendation; runs report prints the report pactum run
// printed and exits by its recommendation; a task that is not a run is
// refused.
func TestWorkflowRunsListAndReport(t *testing.T) {
	t.Parallel()
	dsn := tempStore(t)
	cfg := scriptedConfig(t, "explorer=ok", "asker=question", "architect=ok", "code-reviewer=ok", "planner=ok", "security-reviewer=ok")
	ship := pactumRun(t, dsn, cfg, "bugfix", "Fix the crash in tasks list")
	if ship.code != 0 {
		t.Fatalf("bugfix exit %d", ship.code)
	}
	work := pactumRun(t, dsn, cfg, "custom", "Add a --json flag", "--agents", "explorer,asker")
	if work.code != 1 {
		t.Fatalf("custom exit %d", work.code)
	}
	shipID, workID := runID(t, ship.stdout), runID(t, work.stdout)

	code, out, errOut := runMain("runs", "list", "--config", cfg, "--store", dsn)
	if code != 0 {
		t.Fatalf("runs list: exit %d: %s", code, errOut)
	}
	var rows []string
	for line := range strings.SplitSeq(out, "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	if len(rows) < 3 || rows[0] != "ID WORKFLOW STATE RECOMMENDATION CREATED TASK" ||
		!strings.HasPrefix(rows[1], workID+" custom succeeded NEEDS WORK ") || !strings.HasSuffix(rows[1], " Add a --json flag") ||
		!strings.HasPrefix(rows[2], shipID+" bugfix succeeded SHIP ") || !strings.HasSuffix(rows[2], " Fix the crash in tasks list") {
		t.Errorf("runs list, newest first:\n%s", out)
	}

	code, out, errOut = runMain("runs", "list", "--json", "--limit", "1", "--config", cfg, "--store", dsn)
	var listed []struct {
		ID, Workflow, State, Recommendation, Task string
	}
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil {
		t.Fatalf("runs list --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(listed) != 1 || listed[0].ID != workID || listed[0].Recommendation != "NEEDS WORK" || listed[0].Workflow != "custom" {
		t.Errorf("runs list --json --limit 1: %+v", listed)
	}

	for _, tc := range []struct {
		id   string
		run  wfRun
		code int
	}{{shipID, ship, 0}, {workID, work, 1}} {
		code, out, errOut := runMain("runs", "report", tc.id, "--config", cfg, "--store", dsn)
		if code != tc.code {
			t.Errorf("runs report %s: exit %d, want %d: %s", tc.id, code, tc.code, errOut)
		}
		_, printed := printedReport(t, tc.run.stdout)
		if out != printed {
			t.Errorf("runs report %s printed\n%s\npactum run printed\n%s", tc.id, out, printed)
		}
		code, out, _ = runMain("runs", "report", tc.id, "--json", "--config", cfg, "--store", dsn)
		var rep workflow.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != tc.code || len(rep.Steps) != 2 {
			t.Errorf("runs report --json %s: exit %d, %v, %d steps", tc.id, code, err, len(rep.Steps))
		}
	}

	// A step of a run is a task, but not a run.
	m := regexp.MustCompile(`(?m)^  explorer +started +task (\S+)$`).FindStringSubmatch(ship.stdout)
	if m == nil {
		t.Fatalf("no explorer step in:\n%s", ship.stdout)
	}
	code, _, errOut = runMain("runs", "report", m[1], "--config", cfg, "--store", dsn)
	if code == 0 || !strings.Contains(errOut, fmt.Sprintf("task %s is not a workflow run (its agent is workflow/explorer)", m[1])) {
		t.Errorf("runs report on a step: exit %d: %s", code, errOut)
	}
	code, _, errOut = runMain("runs", "report", "no-such-run", "--config", cfg, "--store", dsn)
	if code == 0 || !strings.Contains(errOut, "no-such-run") {
		t.Errorf("runs report on an unknown id: exit %d: %s", code, errOut)
	}
}
