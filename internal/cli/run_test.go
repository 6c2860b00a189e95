package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestContractRun runs the real `pactum contract run` on
// examples/contract-run (three exec agents): it prints each step live
// and exits 0 when the run succeeds, and stops at the violated step and
// exits 1 when the writer breaks its contract.
func TestContractRun(t *testing.T) {
	t.Parallel()
	bin := pactumBinary(t)
	src := filepath.Join("..", "..", "examples", "contract-run")
	// The configuration serves the contract already: the run finds it
	// in its contracts list rather than adding it again.
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(input string) (string, string, int) {
		cmd := exec.Command(bin, "contract", "run", filepath.Join(dir, "report.yaml"), input,
			"--config", filepath.Join(dir, "pactum.yaml"), "--store", "sqlite://"+filepath.Join(dir, "run.db"))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return stdout.String(), stderr.String(), 0
		case errors.As(err, &ee):
			return stdout.String(), stderr.String(), ee.ExitCode()
		}
		t.Fatalf("run: %v", err)
		return "", "", -1
	}

	out, errOut, code := run("the river")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, re := range []string{
		`(?m)^run \S+ of contract report \(3 steps\)$`,
		`(?m)^  plan    started  task \S+ on report/plan$`,
		`(?m)^  plan    passed   1 check in \S+ \(pre-gate [0-9.]+ ms, agent [0-9.]+ ms, post-gate [0-9.]+ ms\)$`,
		`(?m)^  draft   passed   `,
		`(?m)^  review  passed   `,
		`(?m)^contract report: every step verified$`,
		`(?m)^run \S+ succeeded$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
	// Each step starts after the one it depends on passed.
	if strings.Index(out, "draft   started") < strings.Index(out, "plan    passed") ||
		strings.Index(out, "review  started") < strings.Index(out, "draft   passed") {
		t.Errorf("steps out of order:\n%s", out)
	}

	out, errOut, code = run("a report with no title")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^  draft   failed   the draft starts with a title \(output does not match /\^# /`).MatchString(out) {
		t.Errorf("output lacks the failed assertion:\n%s", out)
	}
	if strings.Contains(out, "review") {
		t.Errorf("the review ran:\n%s", out)
	}
	// The failure is printed once: the step's line says why, the error
	// names the step and where to read the whole run, without repeating it.
	if !strings.Contains(errOut, "failed at step draft") || !strings.Contains(errOut, "pactum tasks get ") || strings.Contains(errOut, "the draft starts with a title") {
		t.Errorf("stderr %q: want one line naming step draft and how to read the run, not the failed assertion again", errOut)
	}
}
