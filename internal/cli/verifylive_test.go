package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// readStore opens the SQLite store dsn, for a test to read what a command
// stored, and a Coordinator over it; both are closed when the test ends,
// and ctx bounds the reads.
func readStore(t *testing.T, dsn string) (context.Context, *task.Coordinator) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	t.Cleanup(cancel)
	st, err := sqlite.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	coord, err := task.NewCoordinator(task.Options{Store: st, Node: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, coord
}

// liveVerdicts reads, for each step of the run parentID in dsn, the
// newest verified result its gate recorded, and the step's task.
func liveVerdicts(t *testing.T, dsn, parentID string) (map[string]*contract.VerifiedResult, map[string]*task.Task) {
	t.Helper()
	ctx, coord := readStore(t, dsn)
	kids, err := coord.Children(ctx, parentID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	live, tasks := map[string]*contract.VerifiedResult{}, map[string]*task.Task{}
	for _, k := range kids {
		recs, err := coord.Timeline(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if live[k.Envelope.Step], err = contract.Newest(recs); err != nil {
			t.Fatal(err)
		}
		tasks[k.Envelope.Step] = k
	}
	return live, tasks
}

// TestVerifyEqualsLive runs the words contract for real with a counter
// that passes after a retry, that never passes (dead-lettered), that
// fails at once (onViolation fail) and whose agent fails, exports each
// run and verifies it offline: each step's verdict is the live one,
// check by check, its error and whether it ran included. Before, a
// failed or dead-lettered step was checked offline against an empty
// output.
func TestVerifyEqualsLive(t *testing.T) {
	t.Parallel()
	const retried = `command: [sh, -c, 'if [ "$1" = 1 ]; then cat >/dev/null; echo "I did not count"; else echo "count: $(sed "/^# Your previous answer (rejected)$/,\$d; /^# What to fix$/,\$d" | wc -w)"; fi', sh, "{{.Attempt}}"]`
	for _, tc := range []struct {
		name, counter, policy string
		code                  int
		state                 task.State
		status                trace.Status
	}{
		{"retried", retried, "retry", 0, task.StateSucceeded, trace.StatusPassed},
		{"dead-lettered", `command: [sh, -c, 'cat >/dev/null; echo "I did not count"']`, "retry", 1, task.StateDeadLetter, trace.StatusFailed},
		{"failed", `command: [sh, -c, 'cat >/dev/null; echo "{\"count\": 4}"']`, "fail", 1, task.StateFailed, trace.StatusFailed},
		{"agent failed", `command: [sh, -c, 'cat >/dev/null; echo "no counter here" >&2; exit 3']`, "retry", 1, task.StateDeadLetter, trace.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cpath := filepath.Join(dir, "words.yaml")
			writeFile(t, cpath, strings.Replace(wordsContract, "onViolation: retry", "onViolation: "+tc.policy, 1))
			cfg := filepath.Join(dir, "pactum.yaml")
			counter := regexp.MustCompile(`(?m)^      command: \[sh, -c, 'if .*$`).ReplaceAllLiteralString(wordsConfig, "      "+tc.counter)
			writeFile(t, cfg, strings.ReplaceAll(counter, "CONTRACT", cpath))
			dsn := "sqlite://" + filepath.Join(dir, "pactum.db")
			code, stdout, stderr := runMain("contract", "run", cpath, "the quick brown fox", "--config", cfg, "--store", dsn)
			if code != tc.code {
				t.Fatalf("contract run: exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			m := runLine.FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("no run line:\n%s", stdout)
			}
			live, tasks := liveVerdicts(t, dsn, m[1])
			if got := tasks["count"]; got == nil || got.State != tc.state {
				t.Fatalf("count's task %+v, want %s", got, tc.state)
			}
			tpath := filepath.Join(dir, "run.json")
			mustRun(t, "tasks", "export", m[1], "--store", dsn, "--out", tpath)
			vcode, rep, verr := verifyJSON(t, "--contract", cpath, "--trace", tpath)
			if want := map[bool]int{true: 0, false: 1}[tc.code == 0]; vcode != want || rep == nil {
				t.Fatalf("verify: exit %d, want %d (%s)", vcode, want, verr)
			}
			for _, s := range rep.Steps {
				lv, off := live[s.Step], s.VerifiedResult
				if lv == nil || off == nil {
					t.Fatalf("step %s: live %+v, offline %+v", s.Step, lv, off)
				}
				if got, want := resultsOf(off), resultsOf(lv); !reflect.DeepEqual(got, want) {
					t.Errorf("step %s: offline checks\n%+v\nlive checks\n%+v", s.Step, got, want)
				}
				if off.Executed != lv.Executed || off.Error != lv.Error || off.Verification.Passed != lv.Verification.Passed ||
					off.Contract != lv.Contract || off.ContractDigest != lv.ContractDigest || lv.ContractDigest == "" ||
					!reflect.DeepEqual(off.Verification.ResourcesCreated, lv.Verification.ResourcesCreated) {
					t.Errorf("step %s: offline %+v\nlive %+v", s.Step, off, lv)
				}
			}
			if c := rep.Steps[1]; c.Step != "count" || c.Status != tc.status {
				t.Errorf("count: %s (%s), want %s", c.Status, c.Reason, tc.status)
			}
		})
	}
}

// TestVerifyWorkflowRun: a configured workflow's SHIP run and BLOCKED run,
// exported, are verified offline with --workflow against the contract
// pactum wrote for the workflow, each step's verdict the live one check by
// check; the contract `contract show workflow.NAME` prints is that
// contract (same digest), and verify --contract reads it to the same
// report. Before, no contract of a workflow existed outside the server,
// and a hand-written one failed every step (handoff check: bad config).
func TestVerifyWorkflowRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode string
		runCode    int
		verifyCode int
	}{
		{"ship", "fixlater", 0, 0},
		{"blocked", "noheading", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := scriptedConfig(t, "explorer=ok", "fixer="+tc.mode, "architect=ok")
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, cfg, string(b)+"workflows:\n  - name: fix\n    description: Explore, fix, decide.\n    steps: [explorer, fixer, architect]\n")
			dsn := tempStore(t)
			r := pactumRun(t, dsn, cfg, "fix", "Fix the crash")
			if r.code != tc.runCode {
				t.Fatalf("pactum run: exit %d, want %d", r.code, tc.runCode)
			}
			id := runID(t, r.stdout)
			live, _ := liveVerdicts(t, dsn, id)
			dir := t.TempDir()
			tpath := filepath.Join(dir, "run.json")
			mustRun(t, "tasks", "export", id, "--store", dsn, "--out", tpath)

			code, rep, stderr := verifyJSON(t, "--workflow", "fix", "--config", cfg, "--trace", tpath)
			if code != tc.verifyCode || rep == nil || rep.Contract != "workflow.fix" {
				t.Fatalf("verify --workflow fix: exit %d, want %d, %+v (%s)", code, tc.verifyCode, rep, stderr)
			}
			for _, s := range rep.Steps {
				lv := live[s.Step]
				if lv == nil {
					if s.Status != trace.StatusNotRun {
						t.Errorf("step %s did not run live but is %s offline", s.Step, s.Status)
					}
					continue
				}
				if got, want := resultsOf(s.VerifiedResult), resultsOf(lv); !reflect.DeepEqual(got, want) {
					t.Errorf("step %s: offline checks\n%+v\nlive checks\n%+v", s.Step, got, want)
				}
				if s.VerifiedResult.Error != lv.Error || s.VerifiedResult.Verification.Passed != lv.Verification.Passed || s.VerifiedResult.ContractDigest != lv.ContractDigest {
					t.Errorf("step %s: offline %+v\nlive %+v", s.Step, s.VerifiedResult, lv)
				}
			}
			if tc.name == "blocked" {
				if st := rep.Steps[1]; st.Step != "fixer" || st.Status != trace.StatusFailed || !strings.Contains(st.Reason, "task dead_letter") {
					t.Errorf("fixer: %+v", st)
				}
				if st := rep.Steps[2]; st.Step != "architect" || st.Status != trace.StatusNotRun {
					t.Errorf("architect: %+v", st)
				}
			}

			// The contract show prints is the one the run recorded.
			shown := mustRun(t, "contract", "show", "workflow.fix", "--config", cfg)
			cpath := filepath.Join(dir, "fix.yaml")
			writeFile(t, cpath, shown)
			c, compiled, err := contract.Load(cpath)
			if err != nil {
				t.Fatalf("the shown contract does not load: %v\n%s", err, shown)
			}
			if !strings.HasPrefix(shown, "# contract workflow.fix, digest "+compiled.Digest()+"\n") || compiled.Digest() != live["explorer"].ContractDigest {
				t.Errorf("shown digest %s, recorded %s:\n%s", compiled.Digest(), live["explorer"].ContractDigest, shown)
			}
			if c.Steps[1].Assertions[1].Check.Type != workflow.HandoffCheck || c.Steps[1].Assertions[1].Check.Config["from"] != "fixer" {
				t.Errorf("fixer's handoff check %+v", c.Steps[1].Assertions)
			}
			code2, rep2, _ := verifyJSON(t, "--contract", cpath, "--trace", tpath)
			if code2 != code || len(rep2.Steps) != len(rep.Steps) {
				t.Fatalf("verify --contract of the shown contract: exit %d, %+v", code2, rep2)
			}
			for i := range rep.Steps {
				if rep.Steps[i].Status != rep2.Steps[i].Status || !reflect.DeepEqual(resultsOf(rep.Steps[i].VerifiedResult), resultsOf(rep2.Steps[i].VerifiedResult)) {
					t.Errorf("step %s: --workflow %s, --contract %s", rep.Steps[i].Step, rep.Steps[i].Status, rep2.Steps[i].Status)
				}
			}
		})
	}
}

// TestDocContractShow: the output docs/workflows.md shows for `pactum
// contract show workflow.feature` is what the command prints (up to the
// doc's "…", the digest elided there).
func TestDocContractShow(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "workflows.md"))
	if err != nil {
		t.Fatal(err)
	}
	const cmdLine = "$ pactum contract show workflow.feature\n"
	i := strings.Index(string(doc), cmdLine)
	if i < 0 {
		t.Fatal("docs/workflows.md shows no `pactum contract show workflow.feature`")
	}
	shown, _, ok := strings.Cut(string(doc)[i+len(cmdLine):], "  …\n")
	if !ok {
		t.Fatal("the shown output does not end with its elision")
	}
	out := mustRun(t, "contract", "show", "workflow.feature")
	first, rest, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "# contract workflow.feature, digest sha256:") {
		t.Fatalf("first line %q", first)
	}
	wantFirst, wantRest, _ := strings.Cut(shown, "\n")
	if wantFirst != "# contract workflow.feature, digest sha256:…" || !strings.HasPrefix(rest, wantRest) {
		t.Errorf("docs/workflows.md shows\n%s\npactum contract show workflow.feature prints\n%s", shown, out)
	}
}
