package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/internal/e2e/mdblock"
	"github.com/pactum/pactum/task"
)

// replayConfig is exampleConfig with quick retries, so that a step whose
// answer breaks its contract under onViolation: retry is dead-lettered at
// once.
var replayConfig = strings.ReplaceAll(exampleConfig, "    type: exec\n",
	"    type: exec\n    retry: {max_attempts: 2, initial_backoff: 10ms, max_backoff: 10ms}\n")

// replayRun is a real run of examples/contract.yaml, as runStore makes
// one, with what a replay test needs: the directory of the agents'
// answers and of the configuration, the store, the run and its steps.
type replayRun struct {
	dir, cfg, dsn, contract string
	run                     string
	steps                   map[string]*task.Task
}

// newReplayRun runs examples/contract.yaml on document with the
// example's answers, each step passing.
func newReplayRun(t *testing.T, document string) *replayRun {
	t.Helper()
	r := &replayRun{dir: t.TempDir()}
	var err error
	if r.contract, err = filepath.Abs(exampleContract); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"extract": exampleFacts, "summarize": exampleSummary, "review": exampleReview} {
		writeFile(t, filepath.Join(r.dir, name), text)
	}
	r.cfg = filepath.Join(r.dir, "pactum.yaml")
	writeFile(t, r.cfg, strings.NewReplacer("DIR", r.dir, "CONTRACT", r.contract).Replace(replayConfig))
	r.dsn = "sqlite://" + filepath.Join(r.dir, "pactum.db")
	out := mustRun(t, "contract", "run", r.contract, document, "--config", r.cfg, "--store", r.dsn, "--actor", "alice")
	m := runLine.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "\nrun "+m[1]+" succeeded\n") {
		t.Fatalf("pactum contract run printed:\n%s", out)
	}
	r.run = m[1]
	_, r.steps = liveVerdicts(t, r.dsn, r.run)
	return r
}

// replay runs pactum tasks replay ID with args on r's configuration and
// store, through Main, and returns the exit status, both outputs and the
// replay's task id (from its first line, which must name task want).
func (r *replayRun) replay(t *testing.T, id, want string, args ...string) (code int, stdout, stderr, replayID string) {
	t.Helper()
	code, stdout, stderr = runMain(append([]string{"tasks", "replay", id, "--config", r.cfg, "--store", r.dsn}, args...)...)
	if m := replayLine.FindStringSubmatch(stdout); m != nil {
		if m[2] != want {
			t.Fatalf("the replay names task %s, want %s:\n%s", m[2], want, stdout)
		}
		replayID = m[1]
	}
	return code, stdout, stderr, replayID
}

var replayLine = regexp.MustCompile(`(?m)^replay ([0-9a-f-]{36}) of task ([0-9a-f-]{36}) `)

// tasksIn lists every task of the store dsn (at most 100).
func tasksIn(t *testing.T, dsn string) []*task.Task {
	t.Helper()
	ctx, coord := readStore(t, dsn)
	page, err := coord.List(ctx, task.ListParams{PageSize: task.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return page.Tasks
}

// TestTasksReplay replays a recorded contract run and its steps with
// pactum tasks replay, on real exec agents over a real SQLite store:
//
//   - the whole run on unchanged agents: exit 0, every step passed
//     again, same answers; the replay is a new run linked to the
//     original (envelope.replayOf, shown by tasks get), visible to its
//     actor only;
//   - one step alone (its child task): only that step's agent runs, on
//     the input the run handed it, judged by the step's contract (the
//     one the configuration serves): exit 0;
//   - the same step after its agent changed so that its answer breaks an
//     assertion: exit 1, the regression named with the assertion, the
//     answers' diff shown;
//   - the whole run on that changed agent, whose step escalates: the
//     wait ends when the step waits for input, exit 1, the step's
//     verdict the regression;
//   - the whole run (--whole-run from a step) after another agent
//     changed: exit 1, the run and its steps' regressions named.
func TestTasksReplay(t *testing.T) {
	t.Parallel()
	r := newReplayRun(t, exampleDocument)

	code, stdout, stderr, whole := r.replay(t, r.run, r.run)
	if code != 0 || whole == "" {
		t.Fatalf("replay of the run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"(agent document-review → document-review, actor alice; verdicts: recorded)\n",
		"                ORIGINAL           REPLAY\n",
		"task            succeeded          succeeded\n",
		"step extract    passed (5 checks)  passed (5 checks)\n",
		"step summarize  passed (6 checks)  passed (6 checks)\n",
		"step review     passed (7 checks)  passed (7 checks)\n",
		"no regression (same answers)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay of the run: no %q in\n%s", want, stdout)
		}
	}
	ctx, coord := readStore(t, r.dsn)
	got, err := coord.Get(ctx, whole, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Envelope.ReplayOf != r.run || got.Envelope.Actor != "alice" || got.Children != 3 || got.Envelope.IdempotencyKey == "" {
		t.Errorf("the replay: replayOf %q, actor %q, %d children, key %q", got.Envelope.ReplayOf, got.Envelope.Actor, got.Children, got.Envelope.IdempotencyKey)
	}
	orig, err := coord.Get(ctx, r.run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Envelope.IdempotencyKey == orig.Envelope.IdempotencyKey || got.ContextID == orig.ContextID {
		t.Errorf("the replay shares the original's idempotency key or context: %q, %q", got.Envelope.IdempotencyKey, got.ContextID)
	}
	if _, err := coord.Get(task.WithCaller(ctx, "bob"), whole, 0); task.ErrorCode(err) != task.CodeNotFound {
		t.Errorf("bob reads alice's replay: %v, want not found", err)
	}
	if _, err := coord.Get(task.WithCaller(ctx, "alice"), whole, 0); err != nil {
		t.Errorf("alice reads her replay: %v", err)
	}
	if out := mustRun(t, "tasks", "get", whole, "--store", r.dsn); !strings.Contains(out, "\nreplays  "+r.run+"\n") {
		t.Errorf("tasks get of the replay does not name the original:\n%s", out)
	}
	entries, err := coord.Store().AuditEntries(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e task.AuditEntry) bool {
		return e.Kind == task.AuditSubmitted && e.TaskID == whole && e.Actor == "alice" && strings.Contains(string(e.Data), `"replayOf":"`+r.run+`"`)
	}) {
		t.Errorf("no audit entry of the replay's submission, linked to the original")
	}

	review := r.steps["review"]
	before := len(tasksIn(t, r.dsn))
	code, stdout, stderr, alone := r.replay(t, review.ID, review.ID)
	if code != 0 || alone == "" {
		t.Fatalf("replay of step review: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"(agent document-review/review → review, actor alice; verdicts: contract document-review)\n",
		"step review  passed (6 checks)  passed (6 checks)\n",
		"no regression (same answers)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay of step review: no %q in\n%s", want, stdout)
		}
	}
	after := tasksIn(t, r.dsn)
	if len(after) != before+1 || after[0].ID != alone || after[0].Agent != "review" || after[0].Children != 0 || after[0].Envelope.ParentTaskID != "" {
		t.Fatalf("replaying step review ran %d tasks, want only its own on agent review: newest %+v", len(after)-before, after[0])
	}
	if got, want := after[0].Envelope.Input.Parts, review.Envelope.Input.Parts; !reflect.DeepEqual(got, want) {
		t.Errorf("the step's replay got\n%+v\nwant the input its run handed it\n%+v", got, want)
	}

	// The reviewer's new version answers "revise" without naming an issue.
	writeFile(t, filepath.Join(r.dir, "review"), `{"verdict": "revise", "issues": []}`)
	code, stdout, stderr, _ = r.replay(t, review.ID, review.ID)
	if code != 1 {
		t.Fatalf("replay of step review on the changed agent: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"step review  passed (6 checks)  failed (6 checks)  regression\n",
		"  now fails  [assert cel] step review: A revise verdict names at least one issue.: expression ",
		"answer differs:\n",
		"@@ -1,4 +1,4 @@\n {\n   \"issues\": [],\n-  \"verdict\": \"approve\"\n+  \"verdict\": \"revise\"\n }\n",
		"regression: step review passed, now failed: [assert cel] A revise verdict names at least one issue.\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay on the changed agent: no %q in\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "pactum: replay ") || !strings.HasSuffix(stderr, ": 1 regression\n") {
		t.Errorf("stderr: %s", stderr)
	}
	code, stdout, _, _ = r.replay(t, review.ID, review.ID, "--json")
	var c trace.Comparison
	if err := json.Unmarshal([]byte(stdout), &c); code != 1 || err != nil {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	if c.Original.TaskID != review.ID || c.Replay.Agent != "review" || c.JudgedBy != "contract document-review" || len(c.Steps) != 1 ||
		!c.Steps[0].Regression || c.Steps[0].Replay.Status != trace.StatusFailed || len(c.Answers) != 1 || c.Answers[0].Same ||
		!reflect.DeepEqual(c.Regressions, []string{"step review passed, now failed: [assert cel] A revise verdict names at least one issue."}) {
		t.Errorf("--json printed %+v", c)
	}
	// The whole run on the changed reviewer: its step escalates (waits
	// for input), which ends the wait for the run.
	code, stdout, stderr, _ = r.replay(t, r.run, r.run)
	if code != 1 {
		t.Fatalf("replay of the run on the changed agent: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"task            succeeded          waiting            regression\n",
		"step summarize  passed (6 checks)  passed (6 checks)\n",
		"step review     passed (7 checks)  failed (7 checks)  regression\n",
		"regression: step review passed, now failed: [assert cel] A revise verdict names at least one issue.\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay of the run on the changed agent: no %q in\n%s", want, stdout)
		}
	}
	writeFile(t, filepath.Join(r.dir, "review"), exampleReview)

	// The summarizer's new version talks about itself: retried, then
	// dead-lettered, so the run fails and review never runs.
	writeFile(t, filepath.Join(r.dir, "summarize"), "As an AI, I summarize.\n\n"+exampleSummary)
	code, stdout, stderr, rerun := r.replay(t, review.ID, r.run, "--whole-run")
	if code != 1 || rerun == "" {
		t.Fatalf("replay of the whole run: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"task            succeeded          failed             regression\n",
		"step extract    passed (5 checks)  passed (5 checks)\n",
		"step summarize  passed (6 checks)  failed (6 checks)  regression\n",
		"step review     passed (7 checks)  not run            regression\n",
		"  now fails  [assert not_contains] step summarize: The summary does not talk about itself.: ",
		"answer of step summarize differs:\n",
		"@@ -1,3 +1,5 @@\n+As an AI, I summarize.\n+\n ## Summary\n",
		"regression: task " + r.run + " succeeded, its replay " + rerun + " is failed\n",
		"regression: step summarize passed, now failed: [assert not_contains] The summary does not talk about itself.\n",
		"regression: step review passed, now not run: no task of the replay ran step review\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("replay of the whole run: no %q in\n%s", want, stdout)
		}
	}
}

// TestReplayTraces replays a directory of recorded traces on an agent's
// new version with pactum replay: the review step of two real runs, one
// on a document the new reviewer still approves and one it now answers
// "revise" without naming an issue. On the agent as it was, both replays
// pass (exit 0); on its new version the second regresses (exit 1), and
// the summary names its trace. The traces are replayed on a store that
// does not hold the recorded tasks: each replay is a task of its own,
// submitted as the recorded actor, with no link to a task it cannot see.
func TestReplayTraces(t *testing.T) {
	t.Parallel()
	r := newReplayRun(t, exampleDocument)
	other := "The Q4 note: revenue fell 3% to 3.9M EUR; hiring resumes in March."
	out := mustRun(t, "contract", "run", r.contract, other, "--config", r.cfg, "--store", r.dsn, "--actor", "alice")
	m := runLine.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "\nrun "+m[1]+" succeeded\n") {
		t.Fatalf("pactum contract run printed:\n%s", out)
	}
	_, steps := liveVerdicts(t, r.dsn, m[1])
	traces := filepath.Join(r.dir, "traces")
	if err := os.Mkdir(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(traces, "a.json"), filepath.Join(traces, "b.json")
	mustRun(t, "tasks", "export", r.steps["review"].ID, "--store", r.dsn, "--out", a)
	mustRun(t, "tasks", "export", steps["review"].ID, "--store", r.dsn, "--out", b)
	writeFile(t, filepath.Join(traces, "notes.txt"), "not a trace: not read")

	// The reviewer's new version approves only the Q3 report.
	writeFile(t, filepath.Join(r.dir, "review-new"), `{"verdict": "revise", "issues": []}`)
	changed := filepath.Join(r.dir, "changed.yaml")
	writeFile(t, changed, strings.Replace(readFile(t, r.cfg),
		`exec: {command: [sh, -c, 'cat >/dev/null; cat "$1"', sh, "`+r.dir+`/review"], output: json}`,
		`exec: {command: [sh, -c, 'if grep -q "The Q3 report:"; then cat "$1"; else cat "$2"; fi', sh, "`+r.dir+`/review", "`+r.dir+`/review-new"], output: json}`, 1))
	if readFile(t, changed) == readFile(t, r.cfg) {
		t.Fatal("the reviewer's new version is the old one")
	}

	fresh := "sqlite://" + filepath.Join(t.TempDir(), "replays.db")
	replay := func(cfg string) (int, string, string) {
		return runMain("replay", "--trace", traces, "--agent", "review", "--contract", r.contract, "--config", cfg, "--store", fresh)
	}
	code, stdout, stderr := replay(r.cfg)
	if code != 0 {
		t.Fatalf("replay on the agent as it was: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := strings.Count(stdout, "\nno regression (same answers)\n"); got != 2 || !strings.HasPrefix(stdout, "trace "+a+"\n") ||
		!strings.Contains(stdout, "\n\ntrace "+b+"\n") || !strings.HasSuffix(stdout, "\nreplayed 2 traces on agent review: no regression\n") {
		t.Errorf("replay on the agent as it was printed:\n%s", stdout)
	}

	code, stdout, stderr = replay(changed)
	if code != 1 {
		t.Fatalf("replay on the new version: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	tableA, tableB, ok := strings.Cut(stdout, "\n\ntrace "+b+"\n")
	if !ok || !strings.HasSuffix(tableA, "\nno regression (same answers)") ||
		!strings.Contains(tableB, "step review  passed (6 checks)  failed (6 checks)  regression\n") ||
		!strings.Contains(tableB, "\nregression: step review passed, now failed: [assert cel] A revise verdict names at least one issue.\n") ||
		!strings.HasSuffix(stdout, "\nreplayed 2 traces on agent review: 1 with a regression ("+b+"), 1 without\n") {
		t.Errorf("replay on the new version printed:\n%s", stdout)
	}
	if want := "pactum: 1 trace regressed on agent review: " + b + "\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if code, stdout, stderr := runMain("audit", "verify", "--store", fresh); code != 0 {
		t.Errorf("audit verify of the replays' store: exit %d\n%s\n%s", code, stdout, stderr)
	}
	replays := tasksIn(t, fresh)
	if len(replays) != 4 {
		t.Fatalf("%d tasks in the replays' store, want 4 (2 replays of 2 traces)", len(replays))
	}
	for _, tk := range replays {
		if tk.Agent != "review" || tk.Envelope.Actor != "alice" || tk.Envelope.ReplayOf != "" || tk.Envelope.ParentTaskID != "" {
			t.Errorf("replay %s: agent %s, actor %s, replayOf %q, parent %q", tk.ID, tk.Agent, tk.Envelope.Actor, tk.Envelope.ReplayOf, tk.Envelope.ParentTaskID)
		}
	}
}

// TestReplayUsage: what cannot be replayed exits 2 with why.
func TestReplayUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"pactumTrace": "1.1"}`)
	dsn := "sqlite://" + filepath.Join(dir, "pactum.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--trace", bad}, "pactum: replay needs --trace FILE|DIR and --agent NAME\n"},
		{[]string{"replay", "--trace", bad, "--agent", "echo"}, "pactum: trace " + bad + ":\n  exportedAt: missing\n"},
		{[]string{"replay", "--trace", dir + "/none", "--agent", "echo"}, "pactum: trace: stat " + dir + "/none: no such file or directory\n"},
		{[]string{"tasks", "replay", "nope", "--store", dsn}, "pactum: task nope not found in store " + dsn + " (from --store)\n"},
	} {
		code, stdout, stderr := runMain(tc.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %q, want %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestReplayDoc runs the example of docs/contracts.md, "Regression
// testing with replay", with the real binary on a copy of
// examples/contract-run, and compares what it prints with what the doc
// shows, task ids aside: each id is numbered by its first appearance, so
// that the same task must be named in the same places.
func TestReplayDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := mdblock.Extract(string(doc), "<!-- replay:begin -->", "<!-- replay:end -->", "sh", "the replay example's")
	if err != nil {
		t.Fatal(err)
	}
	want, err := mdblock.Extract(string(doc), "<!-- replay-output:begin -->", "<!-- replay-output:end -->", "text", "the replay example's output")
	if err != nil {
		t.Fatal(err)
	}
	bin := pactumBinary(t)
	dir := t.TempDir()
	src := filepath.Join("..", "..", "examples", "contract-run")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		writeFile(t, filepath.Join(dir, e.Name()), readFile(t, filepath.Join(src, e.Name())))
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the example: %v\n%s", err, out.String())
	}
	if got, want := numberIDs(out.String()), numberIDs(want); got != want {
		t.Fatalf("the example printed:\n%s\ndocs/contracts.md shows:\n%s", got, want)
	}
}

var taskID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// numberIDs replaces each task id in s by ID1, ID2, … in the order they
// first appear.
func numberIDs(s string) string {
	seen := map[string]string{}
	return taskID.ReplaceAllStringFunc(s, func(id string) string {
		if seen[id] == "" {
			seen[id] = fmt.Sprintf("ID%d", len(seen)+1)
		}
		return seen[id]
	})
}
