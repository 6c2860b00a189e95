package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

var updateTrace = flag.Bool("update", false, "rewrite examples/contract-trace.json from a real run of examples/contract.yaml")

// exampleContract is the contract examples/contract-trace.json was
// recorded against.
var exampleContract = filepath.Join("..", "..", "examples", "contract.yaml")

// The answers of the example run's agents: each meets its step's
// assertions (examples/contract.yaml).
const (
	exampleDocument = "The Q3 report: revenue grew 12% to 4.1M EUR; the Berlin office opened in August; hiring is frozen until January."
	exampleFacts    = `{"title": "Q3 report", "facts": ["Revenue grew 12% to 4.1M EUR.", "The Berlin office opened in August.", "Hiring is frozen until January."]}`
	exampleSummary  = "## Summary\n\nRevenue grew 12% to 4.1M EUR in Q3, the Berlin office opened in August, and hiring is frozen until January.\n\n## Open questions\n\nNone\n"
	exampleReview   = `{"verdict": "approve", "issues": []}`
)

// exampleConfig serves the contract at CONTRACT on three exec agents,
// one per step of examples/contract.yaml, each printing its answer from a
// file under DIR (after reading its input).
const exampleConfig = `agents:
  - name: extract
    type: exec
    exec: {command: [sh, -c, 'cat >/dev/null; cat "$1"', sh, "DIR/extract"], output: json}
  - name: summarize
    type: exec
    exec: {command: [sh, -c, 'cat >/dev/null; cat "$1"', sh, "DIR/summarize"]}
  - name: review
    type: exec
    exec: {command: [sh, -c, 'cat >/dev/null; cat "$1"', sh, "DIR/review"], output: json}
contracts:
  - CONTRACT
`

var runLine = regexp.MustCompile(`(?m)^run ([0-9a-f-]{36}) of contract `)

// runStore runs the contract at path for real, as the product does:
// `pactum contract run` assembles a node (internal/node) from a
// configuration serving the contract (its contracts list) on exec agents,
// over a real SQLite file; the run is the contract's own runner
// (contract.Compiled.Runner) and each step its virtual agent behind its
// RunGate. answers are the agents' answers by agent name. It returns the
// store's DSN, the run's id, and each step's verified result as its gate
// recorded it.
func runStore(t *testing.T, path string, input string, answers map[string]string) (dsn, parentID string, live map[string]*contract.VerifiedResult) {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range answers {
		writeFile(t, filepath.Join(dir, name), text)
	}
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, strings.NewReplacer("DIR", dir, "CONTRACT", abs).Replace(exampleConfig))
	dsn = "sqlite://" + filepath.Join(dir, "pactum.db")
	out := mustRun(t, "contract", "run", abs, input, "--config", cfg, "--store", dsn, "--actor", "alice")
	m := runLine.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "\nrun "+m[1]+" succeeded\n") {
		t.Fatalf("pactum contract run printed:\n%s", out)
	}
	parentID = m[1]
	live, _ = liveVerdicts(t, dsn, parentID)
	return dsn, parentID, live
}

// verify runs `pactum verify` through Main and decodes its --json report.
func verifyJSON(t *testing.T, args ...string) (int, *trace.Report, string) {
	t.Helper()
	code, stdout, stderr := runMain(append([]string{"verify", "--json"}, args...)...)
	if code == 2 {
		return code, nil, stderr
	}
	var rep trace.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("pactum verify --json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	return code, &rep, stderr
}

// resultsOf is what a gate's checks said, without timings.
func resultsOf(vr *contract.VerifiedResult) []contract.ValidationResult {
	if vr == nil {
		return nil
	}
	return append(append([]contract.ValidationResult{}, vr.Verification.PreGate.Results...), vr.Verification.PostGate.Results...)
}

// TestExportVerifyRun: a multi-step run that passed live, exported with
// `tasks export`, passes `verify` offline with every check saying what it
// said live; the same trace with a step's output changed fails on the
// assertion that output breaks; without a step, that step is not run.
func TestExportVerifyRun(t *testing.T) {
	t.Parallel()
	dsn, parentID, live := runStore(t, exampleContract, exampleDocument,
		map[string]string{"extract": exampleFacts, "summarize": exampleSummary, "review": exampleReview})
	for _, s := range []string{"extract", "summarize", "review"} {
		if live[s] == nil || !live[s].Verification.Passed {
			t.Fatalf("step %s did not pass live: %+v", s, live[s])
		}
	}
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "run.json")
	if out := mustRun(t, "tasks", "export", parentID, "--out", tracePath, "--store", dsn); out != "" {
		t.Errorf("tasks export --out printed %q", out)
	}
	// stdout and --out write the same trace but for exportedAt.
	stdoutTrace, err := trace.Decode([]byte(mustRun(t, "tasks", "export", parentID, "--store", dsn)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Decode(data)
	if err != nil {
		t.Fatalf("the exported trace does not decode: %v", err)
	}
	stdoutTrace.ExportedAt = tr.ExportedAt
	if !reflect.DeepEqual(stdoutTrace, tr) {
		t.Error("tasks export to stdout and to --out differ")
	}
	if tr.Version != trace.Version || tr.Task.ID != parentID || len(tr.Children) != 3 || len(tr.Timeline) == 0 {
		t.Fatalf("trace: version %q, task %s, %d children, %d records", tr.Version, tr.Task.ID, len(tr.Children), len(tr.Timeline))
	}
	for i, want := range []string{"extract", "summarize", "review"} {
		k := tr.Children[i]
		if k.Task.Envelope.Step != want || k.Task.State != task.StateSucceeded || len(k.Task.Artifacts) != 1 || !hasEvidence(k.Timeline, task.StateSucceeded, contract.GateStep, "pass") {
			t.Errorf("children[%d]: step %s, %s, %d artifacts; want %s, succeeded with its artifact and its gate's verdict", i, k.Task.Envelope.Step, k.Task.State, len(k.Task.Artifacts), want)
		}
	}

	code, rep, stderr := verifyJSON(t, "--contract", exampleContract, "--trace", tracePath)
	if code != 0 || !rep.Passed || len(rep.Steps) != 3 {
		t.Fatalf("verify of the run: exit %d, %+v\n%s", code, rep, stderr)
	}
	for _, s := range rep.Steps {
		if s.Status != trace.StatusPassed {
			t.Errorf("step %s: %s (%s)", s.Step, s.Status, s.Reason)
		}
		if got, want := resultsOf(s.VerifiedResult), resultsOf(live[s.Step]); !reflect.DeepEqual(got, want) {
			t.Errorf("step %s: offline checks\n%+v\nlive checks\n%+v", s.Step, got, want)
		}
		if got, want := s.VerifiedResult.Verification.ResourcesCreated, live[s.Step].Verification.ResourcesCreated; !reflect.DeepEqual(got, want) {
			t.Errorf("step %s: resources created offline %+v, live %+v", s.Step, got, want)
		}
	}
	out := mustRun(t, "verify", "--contract", exampleContract, "--trace", tracePath)
	for _, want := range []string{
		"contract document-review, trace " + tracePath + " (task " + parentID + ")\n",
		"\nstep extract    passed   task " + tr.Children[0].Task.ID + " (agent document-review/extract, succeeded)  4 checks, ran ",
		"\nstep review     passed   task ",
		"\npassed: 3 of 3 steps passed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify printed\n%s\nwant %q in it", out, want)
		}
	}

	// The review's verdict changed to revise with no issues: the CEL
	// assertion fails, and so does the suggestion (loose: not failing).
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	review := doc["children"].([]any)[2].(map[string]any)["task"].(map[string]any)
	review["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["data"] = map[string]any{"verdict": "revise", "issues": []any{}}
	tampered := filepath.Join(dir, "tampered.json")
	writeJSON(t, tampered, doc)
	code, stdout, stderr := runMain("verify", "--contract", exampleContract, "--trace", tampered)
	if code != 1 {
		t.Fatalf("verify of the tampered trace: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"\nstep extract    passed ",
		"\nstep review     failed   task ",
		"\n  failed   [assert cel] A revise verdict names at least one issue.: expression \"data.verdict == \\\"approve\\\" || size(data.issues) > 0\" is false\n",
		"\n  failed   [suggest jsonpath] The reviewer approves the summary.: $.verdict is \"revise\" in output, want \"approve\"\n",
		"\nfailed: 2 of 3 steps passed\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("verify of the tampered trace printed\n%s\nwant %q in it", stdout, want)
		}
	}
	if want := "pactum: contract document-review not met: review failed\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}

	// Without the summarize step: it is not run, and review, which
	// depends on it, is blocked by its pre-gate. The summary is still in
	// review's input (the run handed it over): what blocks is the
	// dependency, as the live gate reads it from the run's children.
	doc["children"] = []any{doc["children"].([]any)[0], doc["children"].([]any)[2]}
	missing := filepath.Join(dir, "missing.json")
	writeJSON(t, missing, doc)
	code, rep, _ = verifyJSON(t, "--contract", exampleContract, "--trace", missing)
	if code != 1 || rep.Passed || len(rep.Steps) != 3 {
		t.Fatalf("verify without summarize: exit %d, %+v", code, rep)
	}
	if s := rep.Steps[1]; s.Step != "summarize" || s.Status != trace.StatusNotRun || s.Reason != "no task of the trace ran step summarize" || s.VerifiedResult != nil {
		t.Errorf("summarize: %+v", s)
	}
	if s := rep.Steps[2]; s.Status != trace.StatusBlocked || !strings.Contains(s.Reason, "dependency summarize not done") || strings.Contains(s.Reason, "resource summary missing") {
		t.Errorf("review: %+v", s)
	}
	// The summary taken out of review's input as well: review was not
	// handed it, and is blocked for that too.
	input := doc["children"].([]any)[1].(map[string]any)["task"].(map[string]any)["envelope"].(map[string]any)["input"].(map[string]any)
	var kept []any
	for _, p := range input["parts"].([]any) {
		md, _ := p.(map[string]any)["metadata"].(map[string]any)
		if label, _ := md[contract.ResourceKey].(map[string]any); label["resource"] != "summary" {
			kept = append(kept, p)
		}
	}
	if len(kept) != len(input["parts"].([]any))-1 {
		t.Fatalf("review's input holds no summary part: %v", input["parts"])
	}
	input["parts"] = kept
	writeJSON(t, missing, doc)
	code, rep, _ = verifyJSON(t, "--contract", exampleContract, "--trace", missing)
	if code != 1 || rep.Passed || len(rep.Steps) != 3 {
		t.Fatalf("verify without summarize and its summary: exit %d, %+v", code, rep)
	}
	if s := rep.Steps[2]; s.Status != trace.StatusBlocked || !strings.Contains(s.Reason, "dependency summarize not done") || !strings.Contains(s.Reason, "resource summary missing") {
		t.Errorf("review: %+v", s)
	}

	// --step checks one step of the run.
	code, rep, _ = verifyJSON(t, "--contract", exampleContract, "--trace", tracePath, "--step", "summarize")
	if code != 0 || len(rep.Steps) != 1 || rep.Steps[0].Step != "summarize" || rep.Steps[0].Status != trace.StatusPassed {
		t.Errorf("verify --step summarize: exit %d, %+v", code, rep)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

// singleContract is a one-step contract like an agent's inline one.
const singleContract = `version: "1.0"
id: reports
steps:
  - id: write
    agent: writer
    onViolation: fail
    assertions:
      - type: assert
        message: the report is JSON with a title
        check: {type: schema_match, schema: {type: object, required: [title]}}
      - type: suggest
        message: the report mentions the quarter
        check: {type: contains, value: Q3}
`

// singleStore runs one task of an agent behind the one step of the
// contract at path, answering text, on a real Coordinator over a real
// SQLite file; it returns the DSN and the task as it ended.
func singleStore(t *testing.T, path, text string) (dsn string, done *task.Task) {
	t.Helper()
	_, compiled, err := contract.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	step, _ := compiled.Step("write")
	db := filepath.Join(t.TempDir(), "pactum.db")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	st, err := sqlite.Open(ctx, "sqlite://"+db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{ID: "report", Parts: []task.Part{task.TextPart(text)}}}}, nil
	})
	c, err := task.NewCoordinator(task.Options{
		Store:        st,
		Agents:       []task.AgentSpec{{Name: "writer", Runner: writer, Middleware: []task.Middleware{step.Middleware(contract.GateOptions{})}}},
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(context.Background()) }()
	res, err := c.SubmitAndWait(ctx, task.SubmitRequest{Agent: "writer", Envelope: task.Envelope{
		Actor: "alice", Input: task.Message{ID: "in", Parts: []task.Part{task.TextPart("write the report")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return "sqlite://" + db, res.Task
}

// TestExportVerifySingle: a task that passed its gate live passes
// offline; its output changed in the trace, it fails on the assertion; a
// task that failed its gate live fails offline with the same checks.
func TestExportVerifySingle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpath := filepath.Join(dir, "reports.yaml")
	writeFile(t, cpath, singleContract)

	dsn, done := singleStore(t, cpath, `{"title": "Q3 numbers"}`)
	id, state := done.ID, done.State
	if state != task.StateSucceeded {
		t.Fatalf("the task is %s, want succeeded", state)
	}
	tpath := filepath.Join(dir, "ok.json")
	writeFile(t, tpath, mustRun(t, "tasks", "export", id, "--store", dsn))
	out := mustRun(t, "verify", "--contract", cpath, "--trace", tpath)
	if !strings.Contains(out, "\nstep write  passed   task "+id+" (agent writer, succeeded)  2 checks, ran ") || !strings.HasSuffix(out, "\npassed: 1 of 1 step passed\n") {
		t.Errorf("verify printed:\n%s", out)
	}

	// The output replaced by JSON without a title.
	data, err := os.ReadFile(tpath)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"text": "{\"title\": \"Q3 numbers\"}"`, `"text": "{\"body\": \"Q3 numbers\"}"`, 1)
	if bad == string(data) {
		t.Fatalf("the trace does not hold the output as expected:\n%s", data)
	}
	tampered := filepath.Join(dir, "tampered.json")
	writeFile(t, tampered, bad)
	code, stdout, _ := runMain("verify", "--contract", cpath, "--trace", tampered)
	if code != 1 || !strings.Contains(stdout, "\nstep write  failed   task "+id) ||
		!strings.Contains(stdout, "\n  failed   [assert schema_match] the report is JSON with a title: at \"\": missing property 'title'\n") {
		t.Errorf("verify of the tampered trace: exit %d\n%s", code, stdout)
	}

	// A task whose answer broke the contract live fails offline too.
	dsn, done = singleStore(t, cpath, `{"body": "numbers"}`)
	id, state = done.ID, done.State
	if state != task.StateFailed {
		t.Fatalf("the task is %s, want failed", state)
	}
	fpath := filepath.Join(dir, "failed.json")
	mustRun(t, "tasks", "export", id, "--store", dsn, "-o", fpath)
	code, rep, _ := verifyJSON(t, "--contract", cpath, "--trace", fpath)
	if code != 1 || rep.Passed || len(rep.Steps) != 1 || rep.Steps[0].Status != trace.StatusFailed || rep.Steps[0].State != task.StateFailed ||
		!strings.HasPrefix(rep.Steps[0].Reason, "task failed (contract_violation); the report is JSON with a title") {
		t.Errorf("verify of the failed task: exit %d, %+v", code, rep)
	}
}

// TestVerifyUnusableInput: a bad contract, a bad trace, a trace of
// another version, and a step that does not fit exit with status 2 and
// say what is wrong.
func TestVerifyUnusableInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpath := filepath.Join(dir, "reports.yaml")
	writeFile(t, cpath, singleContract)
	dsn, done := singleStore(t, cpath, `{"title": "Q3"}`)
	id := done.ID
	tpath := filepath.Join(dir, "ok.json")
	mustRun(t, "tasks", "export", id, "--store", dsn, "--out", tpath)
	data, err := os.ReadFile(tpath)
	if err != nil {
		t.Fatal(err)
	}

	badContract := filepath.Join(dir, "bad.yaml")
	writeFile(t, badContract, strings.Replace(singleContract, "type: contains", "type: contain", 1))
	v2 := filepath.Join(dir, "v2.json")
	writeFile(t, v2, strings.Replace(string(data), `"pactumTrace": "`+trace.Version+`"`, `"pactumTrace": "2"`, 1))
	badRecord := filepath.Join(dir, "bad-record.json")
	writeFile(t, badRecord, strings.Replace(string(data), `"to": "succeeded"`, `"to": "done"`, 1))
	multi := filepath.Join(dir, "multi.yaml")
	writeFile(t, multi, singleContract+"  - id: check\n    agent: checker\n    dependsOn: [write]\n")
	// A task of the multi-step contract's step write, on its own: its
	// trace names that contract, and does not say which of its steps ran.
	mdsn, mdone := singleStore(t, multi, `{"title": "Q3"}`)
	mpath := filepath.Join(dir, "multi.json")
	mustRun(t, "tasks", "export", mdone.ID, "--store", mdsn, "--out", mpath)
	_, single, err := contract.Load(cpath)
	if err != nil {
		t.Fatal(err)
	}
	_, multiple, err := contract.Load(multi)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad contract", []string{"--contract", badContract, "--trace", tpath},
			"pactum: contract " + badContract + ":\n  " + badContract + `:13: steps[0].assertions[1].check.type: unknown check type "contain" (did you mean "contains"?)` + "\n"},
		{"missing contract", []string{"--contract", filepath.Join(dir, "nope.yaml"), "--trace", tpath}, "no such file or directory"},
		{"trace version", []string{"--contract", cpath, "--trace", v2},
			"pactum: trace " + v2 + ":\n  pactumTrace: trace version 2 is not supported: this pactum reads version 1 traces\n"},
		{"bad record", []string{"--contract", cpath, "--trace", badRecord}, `  timeline[`},
		{"not JSON", []string{"--contract", cpath, "--trace", cpath}, "  not JSON: "},
		{"unknown step", []string{"--contract", cpath, "--trace", tpath, "--step", "wirte"}, `pactum: contract reports has no step "wirte" (its steps: write)` + "\n"},
		{"which step", []string{"--contract", multi, "--trace", mpath},
			"pactum: the trace is one task (" + mdone.ID + ") and contract reports has 2 steps (write, check): name the step it ran with --step\n"},
		{"another contract", []string{"--contract", multi, "--trace", tpath},
			"pactum: the trace was recorded under contract reports (" + single.Digest() + "), not under contract reports (" + multiple.Digest() + ")\n"},
		{"no flags", nil, "pactum: verify needs --contract FILE or --workflow NAME, and --trace FILE\n"},
	} {
		code, stdout, stderr := runMain(append([]string{"verify"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.name, code, stdout, stderr, tc.want)
		}
	}
	if code, _, stderr := runMain("verify", "--contract", cpath, "--trace", badRecord); !strings.Contains(stderr, `.to: unknown state "done"`) {
		t.Errorf("bad record: exit %d, stderr %q", code, stderr)
	}
	// --step with a one-task trace names the step it ran.
	if code, rep, _ := verifyJSON(t, "--contract", multi, "--trace", mpath, "--step", "write"); code != 0 || len(rep.Steps) != 1 || rep.Steps[0].Status != trace.StatusPassed {
		t.Errorf("verify --step write: exit %d, %+v", code, rep)
	}
}

// TestExportVisibility: tasks export of a task that does not exist fails
// as tasks get does; trace.Export reads through the Coordinator, so a
// caller sees only its own tasks: another actor's is not found.
func TestExportVisibility(t *testing.T) {
	t.Parallel()
	dsn, parentID := familyStore(t)
	code, stdout, stderr := runMain("tasks", "export", "00000000-0000-0000-0000-000000000000", "--store", dsn)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "task 00000000-0000-0000-0000-000000000000 not found") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	ctx, c := readStore(t, dsn)
	if _, err := trace.Export(task.WithCaller(ctx, "mallory"), c, parentID, time.Now()); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("another actor's export: %v, want not found", err)
	}
	tr, err := trace.Export(task.WithCaller(ctx, "alice"), c, parentID, time.Now())
	if err != nil || len(tr.Children) != 2 || len(tr.Children[1].Children) != 1 {
		t.Errorf("the owner's export: %v, %+v", err, tr)
	}
}

// TestExportTree: the trace of a parent holds every descendant, nested as
// the tasks are, each with its record and evidence.
func TestExportTree(t *testing.T) {
	t.Parallel()
	dsn, parentID := familyStore(t)
	tr, err := trace.Decode([]byte(mustRun(t, "tasks", "export", parentID, "--store", dsn)))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Task.ID != parentID || len(tr.Children) != 2 || tr.Children[0].Task.Envelope.Step != "fetch" || tr.Children[1].Task.Envelope.Step != "nest" {
		t.Fatalf("trace of the parent: %+v", tr.Node)
	}
	nest := tr.Children[1]
	if len(nest.Children) != 1 || nest.Children[0].Task.Envelope.Step != "leaf" || nest.Children[0].Task.Envelope.ParentTaskID != nest.Task.ID {
		t.Fatalf("nest's children: %+v", nest.Children)
	}
	leaf := nest.Children[0]
	if len(leaf.Task.Artifacts) != 1 || len(leaf.Task.History) == 0 || !hasEvidence(leaf.Timeline, task.StateSucceeded, "check", "pass") {
		t.Errorf("leaf: %d artifacts, %d messages, records %+v", len(leaf.Task.Artifacts), len(leaf.Task.History), leaf.Timeline)
	}
	if !hasEvidence(tr.Children[0].Timeline, task.StateSucceeded, "check", "pass") {
		t.Errorf("fetch's records %+v lack its evidence", tr.Children[0].Timeline)
	}
}

// TestVerifyExample runs the exact command docs/contracts.md and
// examples/contract.yaml show, with the real binary from the repository's
// root: the example trace must stay valid against the example contract.
// With -update it first records the trace from a real run.
func TestVerifyExample(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	if *updateTrace {
		dsn, parentID, _ := runStore(t, exampleContract, exampleDocument,
			map[string]string{"extract": exampleFacts, "summarize": exampleSummary, "review": exampleReview})
		mustRun(t, "tasks", "export", parentID, "--store", dsn, "--out", filepath.Join(root, "examples", "contract-trace.json"))
	}
	bin := pactumBinary(t)
	cmd := exec.Command(bin, "verify", "--contract", "examples/contract.yaml", "--trace", "examples/contract-trace.json")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pactum verify --contract examples/contract.yaml --trace examples/contract-trace.json: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "contract document-review, trace examples/contract-trace.json (task ") ||
		!strings.HasPrefix(lines[1], "step extract    passed   task ") || !strings.HasPrefix(lines[2], "step summarize  passed   task ") ||
		!strings.HasPrefix(lines[3], "step review     passed   task ") || lines[4] != "passed: 3 of 3 steps passed" {
		t.Fatalf("printed:\n%s", out)
	}
}
