// Package steprun drives multi-step runs through real nodes of the test
// program crashtest/stepnode and checks, after a crash, what the issue asks
// of them: every run finishes, no child that succeeded ran twice, the steps
// kept their order, the audit chain is intact, nothing is left waiting. The
// crash tests on SQLite (crashtest) and on PostgreSQL (multinode) share it.
// It is for tests only.
package steprun

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
	"github.com/pactum/pactum/task"
)

// Node is the package of the test program: pactum serve plus the parent
// agent "run".
const Node = "github.com/pactum/pactum/internal/e2e/crashtest/stepnode"

// Agent is the parent agent that runs the steps.
const Agent = "run"

// Sequential and Parallel are the steps of a run, as stepnode's plan
// spawns them.
var (
	Sequential = []string{"s1", "s2", "s3"}
	Parallel   = []string{"p1", "p2", "p3"}
)

// StepSeconds is how long one attempt of a step's exec agent works.
const StepSeconds = "0.4"

// Cluster is what the nodes of one test share.
type Cluster struct {
	Bin    string // the stepnode binary
	Dir    string // configs, node logs, the attempts log, run dirs
	Store  string // the store's DSN
	Script string
}

// NewCluster builds stepnode and prepares dir for nodes on store.
func NewCluster(t testing.TB, store string) *Cluster {
	t.Helper()
	return &Cluster{Bin: nodeproc.Build(t, Node), Dir: t.TempDir(), Store: store, Script: attemptlog.Script(t)}
}

// AttemptsLog is the path of the exec agent's log.
func (c *Cluster) AttemptsLog() string { return filepath.Join(c.Dir, "attempts.log") }

// Start starts (or restarts) node name on addr and waits until it is ready.
func (c *Cluster) Start(t testing.TB, name, addr string) *nodeproc.Process {
	t.Helper()
	cfg := filepath.Join(c.Dir, name+".yaml")
	src := attemptlog.Config(addr, c.Store, name, c.Dir, c.Script, StepSeconds)
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return nodeproc.Start(t, c.Bin, addr, filepath.Join(c.Dir, name+".log"), "--config", cfg)
}

// Submit starts a run with input text in over A2A (returning at once) and
// returns its task id.
func Submit(t testing.TB, ctx context.Context, c *a2aclient.Client, in string) a2a.TaskID {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(in))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("submit run %q: %v", in, err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("submit run %q: answer %T, want a task", in, res)
	}
	return tk.ID
}

// MidRun reports whether the log shows at least ends attempts ended and
// at least one running (started, not ended): runs are mid-way.
func MidRun(ends int) func([]attemptlog.Line) bool {
	return func(ls []attemptlog.Line) bool {
		open := map[string]bool{}
		n := 0
		for _, l := range ls {
			k := fmt.Sprintf("%s/%d", l.Task, l.Attempt)
			switch l.Kind {
			case "start":
				open[k] = true
			case "end":
				delete(open, k)
				n++
			}
		}
		return n >= ends && len(open) > 0
	}
}

// unsettled are the states a task must not be left in.
var unsettled = []task.State{task.StateRequested, task.StateValidated, task.StateQueued, task.StateInProgress, task.StateWaiting, task.StateInputRequired}

// WaitSettled polls st until every run is terminal.
func WaitSettled(t testing.TB, ctx context.Context, st task.Store, runs map[a2a.TaskID]string) {
	t.Helper()
	for {
		pending := 0
		for id := range runs {
			tk, err := st.GetTask(ctx, string(id), 0)
			if err != nil {
				t.Fatalf("run %s: %v", id, err)
			}
			if !tk.State.Terminal() {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		select {
		case <-ctx.Done():
			page, _ := st.ListTasks(context.Background(), task.ListParams{States: unsettled, PageSize: 20})
			var some []string
			if page != nil {
				for _, tk := range page.Tasks {
					some = append(some, fmt.Sprintf("%s %s (%s, step %q): %s", tk.ID, tk.State, tk.Agent, tk.Envelope.Step, tk.Reason))
				}
			}
			t.Fatalf("%d of %d runs not terminal in time; unsettled tasks:\n%s", pending, len(runs), strings.Join(some, "\n"))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Kill says which node was killed when.
type Kill struct {
	Node string
	At   time.Time
}

// Verify checks the runs (task id → input) after they settled, the store
// and the attempts log (lines) against the kill, and logs what the crash
// did. See the package doc; each check names what it found.
func Verify(t testing.TB, ctx context.Context, st task.Store, runs map[a2a.TaskID]string, lines []attemptlog.Line, kill Kill) {
	t.Helper()
	byTask := map[string][]int{} // task → indexes of its lines, in log order
	for i, l := range lines {
		byTask[l.Task] = append(byTask[l.Task], i)
	}
	var s stats
	for id, in := range runs {
		verifyRun(t, ctx, st, string(id), in, lines, byTask, kill, &s)
	}
	attemptlog.CheckNoOverlap(t, lines)

	CheckSettled(t, ctx, st)
	all, err := st.ListTasks(ctx, task.ListParams{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(runs) * (1 + len(Sequential) + len(Parallel)); all.TotalSize != want {
		t.Errorf("the store holds %d tasks, want %d (%d runs and their steps)", all.TotalSize, want, len(runs))
	}
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Errorf("audit chain after the crash: %+v, %v", rep, err)
	}
	t.Logf("%d runs: %d mid-way at the kill; %d child attempts of %s cut by the kill, %d of them had already finished their work (result lost with the node) and ran again; %d children retried; parents woke %d times, %d parent attempts cut by the kill; audit: %d entries",
		len(runs), s.midway, s.cut, kill.Node, s.finishedCut, s.retried, s.wakes, s.parentCut, rep.Entries)
	if s.cut == 0 {
		t.Errorf("no child attempt was cut by the kill: the test did not crash a run mid-step")
	}
	if s.midway == 0 {
		t.Errorf("no run had finished a step and not yet finished at the kill: the test did not crash a run mid-way")
	}
}

// CheckSettled fails the test for every task st holds that is left
// waiting, queued, running or otherwise not terminal (the first ten).
func CheckSettled(t testing.TB, ctx context.Context, st task.Store) {
	t.Helper()
	left, err := st.ListTasks(ctx, task.ListParams{States: unsettled, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range left.Tasks {
		t.Errorf("task %s (agent %s, step %q) left %s", tk.ID, tk.Agent, tk.Envelope.Step, tk.State)
	}
}

type stats struct {
	midway, cut, finishedCut, retried, wakes, parentCut int
}

// verifyRun checks one run and its children.
func verifyRun(t testing.TB, ctx context.Context, st task.Store, id, in string, lines []attemptlog.Line, byTask map[string][]int, kill Kill, s *stats) {
	t.Helper()
	p, err := st.GetTask(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != task.StateSucceeded {
		t.Errorf("run %s (%q) ended %s: %s", id, in, p.State, p.Reason)
		return
	}
	kids, err := Children(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	byStep := map[string]*task.Task{}
	for _, k := range kids {
		steps = append(steps, k.Envelope.Step)
		byStep[k.Envelope.Step] = k
	}
	// Children list in spawn order: the parallel phase too, in the order
	// the plan spawned it.
	want := append(slices.Clone(Sequential), Parallel...)
	if p.Children != len(want) || !slices.Equal(steps, want) {
		t.Errorf("run %s: %d children with steps %v (creation order), want %v", id, p.Children, steps, want)
		return
	}

	// The run's artifact names each step's child.
	var listing []string
	for _, step := range want {
		listing = append(listing, step+" "+byStep[step].ID)
	}
	if len(p.Artifacts) != 1 || len(p.Artifacts[0].Parts) == 0 || p.Artifacts[0].Parts[0].Text != strings.Join(listing, "\n") {
		t.Errorf("run %s: artifacts %+v, want one listing %q", id, p.Artifacts, listing)
	}

	// The parent: how often it woke, whether the kill cut one of its
	// attempts.
	precs, err := st.Records(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	for _, r := range precs {
		if r.To == task.StateWaiting {
			waits++
		}
		if r.From == task.StateWaiting && r.To == task.StateQueued {
			s.wakes++
		}
		if r.ErrorCode == task.CodeLeaseExpired {
			s.parentCut++
		}
	}
	if waits < 4 {
		t.Errorf("run %s waited %d times, want at least 4 (after spawning s1, s2, s3 and the parallel phase)", id, waits)
	}

	success := map[string]task.Record{} // step → the record of its success
	doneBeforeKill := false
	for _, step := range want {
		k := byStep[step]
		rec, ok := verifyChild(t, ctx, st, k, in+"/"+step, lines, byTask[k.ID], kill, s)
		if !ok {
			return
		}
		success[step] = rec
		doneBeforeKill = doneBeforeKill || rec.At.Before(kill.At)
	}
	if doneBeforeKill && p.UpdatedAt.After(kill.At) {
		s.midway++
	}

	// Order: each sequential step, and the parallel phase, was created
	// and first started only after the step before it had succeeded.
	after := func(step, prev string) {
		k := byStep[step]
		if k.CreatedAt.Before(success[prev].At) {
			t.Errorf("run %s: step %s created at %s, before step %s succeeded at %s", id, step, k.CreatedAt, prev, success[prev].At)
		}
		firstStart, prevEnd := -1, -1
		for _, i := range byTask[k.ID] {
			if lines[i].Kind == "start" {
				firstStart = i
				break
			}
		}
		for _, i := range byTask[byStep[prev].ID] {
			if lines[i].Kind == "end" && lines[i].Attempt == success[prev].Attempt {
				prevEnd = i
			}
		}
		if firstStart < prevEnd {
			t.Errorf("run %s: step %s started (%q) before step %s's successful attempt ended (%q)", id, step, lines[firstStart].Raw, prev, lines[prevEnd].Raw)
		}
	}
	after("s2", "s1")
	after("s3", "s2")
	for _, step := range Parallel {
		after(step, "s3")
	}
}

// verifyChild checks one step's child: it succeeded with its input, and
// ran to completion once, unless the kill cut an attempt. It returns the
// record of its success.
func verifyChild(t testing.TB, ctx context.Context, st task.Store, k *task.Task, in string, lines []attemptlog.Line, idx []int, kill Kill, s *stats) (task.Record, bool) {
	t.Helper()
	name := fmt.Sprintf("step %s (task %s)", k.Envelope.Step, k.ID)
	if k.State != task.StateSucceeded || k.Agent != "slow" || k.Envelope.Input.Text() != in {
		t.Errorf("%s: %s on agent %s with input %q, want succeeded on slow with %q: %s", name, k.State, k.Agent, k.Envelope.Input.Text(), in, k.Reason)
		return task.Record{}, false
	}
	if len(k.Artifacts) == 0 || !strings.Contains(k.Artifacts[0].Parts[0].Text, in) {
		t.Errorf("%s: artifacts %+v, want the agent's echo of %q", name, k.Artifacts, in)
	}
	a, ok := CheckAttempts(t, ctx, st, k, name, lines, idx, kill)
	if !ok {
		return a.Success, false
	}
	if a.Final > 1 {
		s.retried++
	}
	s.cut += a.Cut
	s.finishedCut += a.FinishedCut
	return a.Success, true
}

// Attempts is what CheckAttempts found of a child's attempts.
type Attempts struct {
	Success task.Record // the record of its success
	Final   int         // the attempt that succeeded
	// Cut counts the attempts the kill cut; FinishedCut those of them
	// that had ended their work (an "end" line) when the node died with
	// their result.
	Cut, FinishedCut int
}

// CheckAttempts checks the attempts of child k, which must have
// succeeded, against its records in st and its lines in the attempts log
// (idx: their indexes in lines, in log order); name names it in failures.
// Every attempt before the one that succeeded must have been cut by the
// kill: claimed on the killed node before it, ended by its lease
// expiring, silent after it (beyond the shims' reaction). No attempt
// started after the successful one ended, and the child ran to completion
// exactly once outside the attempts the kill cut. It returns false when
// the records do not allow the log checks.
func CheckAttempts(t testing.TB, ctx context.Context, st task.Store, k *task.Task, name string, lines []attemptlog.Line, idx []int, kill Kill) (Attempts, bool) {
	t.Helper()
	var a Attempts
	recs, err := st.Records(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	final := k.Attempt
	claims := map[int]task.Record{}
	ends := map[int]task.Record{}
	var success task.Record
	for _, r := range recs {
		switch {
		case r.To == task.StateInProgress:
			claims[r.Attempt] = r
		case r.From == task.StateInProgress:
			ends[r.Attempt] = r
		}
		if r.To == task.StateSucceeded {
			success = r
		}
	}
	if len(claims) != final || success.Attempt != final {
		t.Errorf("%s: %d claims recorded, attempt %d, success recorded for attempt %d", name, len(claims), final, success.Attempt)
		return a, false
	}
	a.Success, a.Final = success, final
	// Every attempt before the last was cut by the kill: claimed by the
	// killed node before it died, ended by its lease expiring, its
	// processes gone with the node.
	cut := map[int]bool{}
	for n := 1; n < final; n++ {
		c, e := claims[n], ends[n]
		if c.Node != kill.Node || !c.At.Before(kill.At) || e.ErrorCode != task.CodeLeaseExpired {
			t.Errorf("%s: attempt %d (claimed on %s at %s, ended %s %s: %s) was retried, but only an attempt the kill cut may be", name, n, c.Node, c.At, e.To, e.ErrorCode, e.Reason)
		}
		cut[n] = true
		a.Cut++
	}
	if c := claims[final]; c.Node == kill.Node && c.At.Before(kill.At) && success.At.After(kill.At) {
		t.Errorf("%s: its last attempt was claimed on the killed node before the kill and yet succeeded after it", name)
	}
	// The log: the successful attempt started and ended; no attempt after
	// it; nothing started after it ended; a cut attempt wrote nothing
	// after the kill (beyond the shims' reaction).
	successEnd := -1
	for _, i := range idx {
		l := lines[i]
		switch {
		case l.Attempt > final:
			t.Errorf("%s: attempt %d ran, but attempt %d is the one recorded as succeeded: %q", name, l.Attempt, final, l.Raw)
		case l.Kind == "start" && successEnd >= 0:
			t.Errorf("%s ran again after its attempt %d had ended successfully: %q", name, final, l.Raw)
		case l.Kind == "end" && l.Attempt == final:
			successEnd = i
		case l.Kind == "end" && cut[l.Attempt]:
			a.FinishedCut++
		}
		if cut[l.Attempt] && l.At.After(kill.At.Add(attemptlog.ShimReaction)) {
			t.Errorf("%s: attempt %d, cut by the kill, wrote %s after it: %q", name, l.Attempt, l.At.Sub(kill.At), l.Raw)
		}
	}
	if successEnd < 0 {
		t.Errorf("%s: no end of its successful attempt %d in the log", name, final)
	}
	completed := 0
	for _, i := range idx {
		if lines[i].Kind == "end" && !cut[lines[i].Attempt] {
			completed++
		}
	}
	if completed != 1 {
		t.Errorf("%s ran to completion %d times outside attempts cut by the kill, want once", name, completed)
	}
	return a, true
}

// Children lists the children of task parent, oldest first, with their
// artifacts.
func Children(ctx context.Context, st task.Store, parent string) ([]*task.Task, error) {
	page, err := st.ListTasks(ctx, task.ListParams{ParentTaskID: parent, PageSize: 100, IncludeArtifacts: true, HistoryLength: 1})
	if err != nil {
		return nil, err
	}
	return page.Tasks, nil
}
