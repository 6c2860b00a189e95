package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/internal/e2e/attemptlog"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/internal/e2e/steprun"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// The workflow of TestKill9MidWorkflow: four slow exec agents, the middle
// two in a parallel phase.
const (
	wfName    = "crash"
	wfSeconds = "1" // how long each agent's attempt works
)

var (
	wfFirst    = "plan"
	wfParallel = []string{"code", "test"}
	wfLast     = "verdict"
	wfAgents   = []string{wfFirst, wfParallel[0], wfParallel[1], wfLast}
)

// handoffScript answers a workflow step: a valid handoff under the heading
// the step's input asks for (docs/workflows.md, "What each agent
// receives"), every section present, the empty ones "None".
const handoffScript = `#!/bin/sh
# handoff.sh AGENT: reads a workflow step's input, writes AGENT's handoff.
heading=$(sed -n 's/^Expected heading: //p')
if [ -z "$heading" ]; then
	echo "handoff.sh: no \"Expected heading: \" line in the input" >&2
	exit 1
fi
cat <<EOF
$heading

### Context
$1 did its part of the run.

### Findings
- $1 found nothing to change.

### Files Modified
None

### Open Questions
None

### Recommendations
None
EOF
`

// workflowConfig serves the workflow wfName on node "solo": each agent is
// attemptlog's script (start, child and end lines in dir/attempts.log)
// working wfSeconds, then answering with handoffScript; a 2-second lease.
func workflowConfig(addr, dbPath, dir, attempt, handoff string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `listen: %[1]s
base_url: http://%[1]s
store: sqlite://%[2]s
node: solo
lease: 2s
workers: 8
log: {level: warn}
agents:
`, addr, dbPath)
	for _, a := range wfAgents {
		fmt.Fprintf(&b, `  - name: %[1]s
    type: exec
    timeout: 30s
    retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 1s}
    exec:
      command: ["%[2]s", "%[3]s/attempts.log", "{{.TaskID}}", "{{.Attempt}}", "%[4]s", "sh", "%[5]s", "%[1]s"]
      input: stdin
      run_dir: %[3]s/runs
`, a, attempt, dir, wfSeconds, handoff)
	}
	fmt.Fprintf(&b, `workflows:
  - name: %s
    description: Four slow agents, the middle two side by side.
    steps:
      - %s
      - parallel: [%s]
      - %s
`, wfName, wfFirst, strings.Join(wfParallel, ", "), wfLast)
	return b.String()
}

// TestKill9MidWorkflow is the crash test of issue 12: runs of a workflow of
// four slow exec agents (one, a parallel phase of two, one) submitted over
// A2A to a real `pactum serve` on SQLite, a little apart so that the kill
// finds them at different agents; kill -9 of the server once some agents
// have ended and others run; a restart on the same store. Every run
// finishes with an integration report that recommends SHIP and its four
// steps succeeded; an agent whose success was committed before the kill is
// never called again, and every agent ran to completion exactly once
// outside the attempts the kill cut (steprun.CheckAttempts); the audit
// chain is intact and nothing is left waiting, queued or running.
func TestKill9MidWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	dbPath := filepath.Join(dir, "pactum.db")
	cfgPath := filepath.Join(dir, "pactum.yaml")
	handoff := filepath.Join(dir, "handoff.sh")
	if err := os.WriteFile(handoff, []byte(handoffScript), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := workflowConfig(addr, dbPath, dir, attemptlog.Script(t), handoff)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "attempts.log")
	agent := workflow.RunAgent(wfName)
	bin := nodeproc.Build(t, nodeproc.Pactum)
	built := time.Now()
	srv := start(t, bin, cfgPath, addr)
	c := nodeproc.Client(t, ctx, addr, agent)

	const runs = 3
	ids := map[a2a.TaskID]string{}
	for i := range runs {
		in := fmt.Sprintf("crash run %d: add a --json flag", i)
		ids[steprun.Submit(t, ctx, c, in)] = in
		time.Sleep(700 * time.Millisecond)
	}
	// Kill once four agents have ended and some run, in a lull of the log
	// (no line for 150ms), so that what ended has most likely been
	// committed: an agent whose end the kill overtakes is run again, and
	// the checks below allow that only for an attempt the store records
	// as cut.
	attemptlog.Wait(t, ctx, logPath, func(ls []attemptlog.Line) bool {
		return steprun.MidRun(4)(ls) && time.Since(ls[len(ls)-1].At) > 150*time.Millisecond
	})
	srv.KillServer()
	kill := steprun.Kill{Node: "solo", At: time.Now()}
	before := attemptlog.Read(t, logPath)

	st, err := store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	inFlight, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateInProgress}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateWaiting}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Logf("after kill -9 (%s after start): %d tasks in progress, %d runs waiting", kill.At.Sub(built).Round(time.Millisecond), inFlight.TotalSize, waiting.TotalSize)

	restartAt := time.Now()
	srv = start(t, bin, cfgPath, addr)
	c = nodeproc.Client(t, ctx, addr, agent)
	reports := waitRuns(t, ctx, c, ids)
	finished := time.Now()
	srv.Stop()

	for id, in := range ids {
		r := reports[id]
		if r.Workflow != wfName || r.Task != in || r.Recommendation != workflow.Ship {
			t.Errorf("run %s: report of workflow %q on %q recommends %q (%v), want %q on %q recommending SHIP", id, r.Workflow, r.Task, r.Recommendation, r.Reasons, wfName, in)
		}
		if !slices.Equal(r.Agents, wfAgents) {
			t.Errorf("run %s: report names agents %v, want %v", id, r.Agents, wfAgents)
		}
	}

	st, err = store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lines := attemptlog.Read(t, logPath)
	byTask := map[string][]int{}
	for i, l := range lines {
		byTask[l.Task] = append(byTask[l.Task], i)
	}
	var s wfStats
	for id := range ids {
		verifyWorkflowRun(t, ctx, st, string(id), lines, byTask, kill, &s)
	}
	// Every agent that had ended before the kill: its end was committed
	// (then it never ran again) or its attempt is recorded as cut (then
	// CheckAttempts allowed one more run): nothing else.
	endedBefore := 0
	for _, l := range before {
		if l.Kind == "end" {
			endedBefore++
		}
	}
	if endedBefore != s.committedBefore+s.finishedCut {
		t.Errorf("%d agents ended before the kill: %d committed, %d cut", endedBefore, s.committedBefore, s.finishedCut)
	}
	attemptlog.CheckNoOverlap(t, lines)
	attemptlog.CheckQuietBetween(t, lines, kill.At, restartAt)
	steprun.CheckSettled(t, ctx, st)
	all, err := st.ListTasks(ctx, task.ListParams{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := runs * (1 + len(wfAgents)); all.TotalSize != want {
		t.Errorf("the store holds %d tasks, want %d (%d runs and their agents)", all.TotalSize, want, runs)
	}
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Errorf("audit chain after the crash: %+v, %v", rep, err)
	}
	t.Logf("%d runs: %d mid-way at the kill; %d agents ended before it (%d committed, never called again; %d cut before their result was committed); %d agent attempts cut by the kill; audit: %d entries",
		runs, s.midway, endedBefore, s.committedBefore, s.finishedCut, s.cut, rep.Entries)
	if s.cut == 0 {
		t.Errorf("no agent's attempt was cut by the kill: the test did not crash a run mid-agent")
	}
	if s.midway == 0 || s.committedBefore == 0 {
		t.Errorf("%d runs mid-way, %d agents committed before the kill: the test did not crash a run mid-way", s.midway, s.committedBefore)
	}
	t.Logf("timings: build %s, start to kill %s, restart to all runs finished %s, total %s",
		built.Sub(began).Round(time.Millisecond), kill.At.Sub(built).Round(time.Millisecond),
		finished.Sub(restartAt).Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// waitRuns polls the runs over A2A until each is terminal and returns
// their reports; a run that did not complete, or whose
// integration-report does not parse, fails the test.
func waitRuns(t *testing.T, ctx context.Context, c *a2aclient.Client, ids map[a2a.TaskID]string) map[a2a.TaskID]*workflow.Report {
	t.Helper()
	reports := map[a2a.TaskID]*workflow.Report{}
	for len(reports) < len(ids) {
		for id := range ids {
			if reports[id] != nil {
				continue
			}
			tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatalf("run %s: %v", id, err)
			}
			if !tk.Status.State.Terminal() {
				continue
			}
			if tk.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("run %s ended %s", id, tk.Status.State)
			}
			reports[id] = reportOf(t, tk)
		}
		if len(reports) == len(ids) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d runs finished in time", len(reports), len(ids))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return reports
}

// reportOf parses the text of run tk's integration-report artifact.
func reportOf(t *testing.T, tk *a2a.Task) *workflow.Report {
	t.Helper()
	for _, a := range tk.Artifacts {
		if a.Name != workflow.ReportArtifact {
			continue
		}
		for _, p := range a.Parts {
			if txt := p.Text(); txt != "" {
				r, err := workflow.ParseReport(txt)
				if err != nil {
					t.Fatalf("run %s: report does not parse: %v\n%s", tk.ID, err, txt)
				}
				return r
			}
		}
	}
	t.Fatalf("run %s: no %s artifact with a text part in %+v", tk.ID, workflow.ReportArtifact, tk.Artifacts)
	return nil
}

type wfStats struct {
	midway, cut, finishedCut, committedBefore int
}

// verifyWorkflowRun checks one run and its four agents' children after
// the crash.
func verifyWorkflowRun(t *testing.T, ctx context.Context, st task.Store, id string, lines []attemptlog.Line, byTask map[string][]int, kill steprun.Kill, s *wfStats) {
	t.Helper()
	p, err := st.GetTask(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != task.StateSucceeded || p.Agent != workflow.RunAgent(wfName) {
		t.Errorf("run %s: %s on agent %s, want succeeded on %s: %s", id, p.State, p.Agent, workflow.RunAgent(wfName), p.Reason)
		return
	}
	kids, err := steprun.Children(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	byStep := map[string]*task.Task{}
	for _, k := range kids {
		steps = append(steps, k.Envelope.Step)
		byStep[k.Envelope.Step] = k
	}
	// In spawn order: the parallel phase's two in either order.
	if p.Children != len(wfAgents) || len(kids) != len(wfAgents) || steps[0] != wfFirst || steps[3] != wfLast ||
		!slices.Equal(slices.Sorted(slices.Values(steps[1:3])), slices.Sorted(slices.Values(wfParallel))) {
		t.Errorf("run %s: %d children (recorded %d) with steps %v in creation order, want %v", id, len(kids), p.Children, steps, wfAgents)
		return
	}
	success := map[string]task.Record{}
	doneBeforeKill := false
	for _, step := range wfAgents {
		k := byStep[step]
		name := fmt.Sprintf("run %s agent %s (task %s)", id, step, k.ID)
		if k.State != task.StateSucceeded || k.Agent != workflow.StepAgent(step) {
			t.Errorf("%s: %s on agent %s, want succeeded on %s: %s", name, k.State, k.Agent, workflow.StepAgent(step), k.Reason)
			return
		}
		a, ok := steprun.CheckAttempts(t, ctx, st, k, name, lines, byTask[k.ID], kill)
		if !ok {
			return
		}
		s.cut += a.Cut
		s.finishedCut += a.FinishedCut
		success[step] = a.Success
		if a.Success.At.Before(kill.At) {
			doneBeforeKill = true
			s.committedBefore++
			// Committed before the kill: called once, never again.
			for _, i := range byTask[k.ID] {
				if l := lines[i]; l.At.After(kill.At) || l.Attempt != 1 {
					t.Errorf("%s succeeded before the kill, yet was called again: %q", name, l.Raw)
				}
			}
		}
	}
	if doneBeforeKill && p.UpdatedAt.After(kill.At) {
		s.midway++
	}
	// Each phase was created only once the phase before it had succeeded.
	after := func(step, prev string) {
		if k := byStep[step]; k.CreatedAt.Before(success[prev].At) {
			t.Errorf("run %s: agent %s's step created at %s, before %s succeeded at %s", id, step, k.CreatedAt, prev, success[prev].At)
		}
	}
	for _, step := range wfParallel {
		after(step, wfFirst)
		after(wfLast, step)
	}
}
