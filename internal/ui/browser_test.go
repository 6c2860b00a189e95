package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// browserTools returns the Chromium executable and node, and the browser
// test's directory with playwright-core installed (npm ci). Without them
// the test skips, unless PACTUM_REQUIRE_BROWSER=1 (as in CI), where it
// fails.
func browserTools(t *testing.T) (chromium, node, dir string) {
	t.Helper()
	chromium = os.Getenv("PACTUM_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	dir, err := filepath.Abs("browsertest")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, "Chromium ("+chromium+"; apt-get install chromium)")
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (npm ci in internal/ui/browsertest)")
	}
	if len(missing) > 0 {
		msg := "browser test needs " + strings.Join(missing, ", ")
		if os.Getenv("PACTUM_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg + " (PACTUM_REQUIRE_BROWSER=1)")
		}
		t.Skip(msg + "; set PACTUM_REQUIRE_BROWSER=1 to make this a failure")
	}
	return chromium, node, dir
}

// screenshots returns where the browser test saves its screenshots:
// $PACTUM_SCREENSHOTS when set (docs/dashboard/ takes them from there),
// else a temporary directory.
func screenshots(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PACTUM_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// runScript starts the browser script with env and returns its stdin, a
// line reader of its stdout, and a function that waits for it to end.
func runScript(t *testing.T, node, dir string, env []string) (io.WriteCloser, *bufio.Scanner, func() error, *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, node, "dashboard.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	var werr error
	wait := func() error {
		once.Do(func() {
			werr = cmd.Wait()
			cancel()
		})
		return werr
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = wait() })
	return stdin, bufio.NewScanner(stdout), wait, stderr
}

// TestBrowser opens the dashboard in a real headless Chromium: the task
// list updates live while tasks submitted after the page loaded run; a
// failed contract step shows its failed assertion; a workflow run's
// report shows its recommendation; audit and agents pages load. It saves
// a screenshot of each page.
func TestBrowser(t *testing.T) {
	chromium, node, dir := browserTools(t)
	shots := screenshots(t)
	b := setup(t, false)
	failed := b.submit(t, "carol", "summarize", "summarize this", true)
	run := b.submit(t, "carol", workflow.RunAgent("review"), "Add a --verbose flag to the CLI", true)
	if failed.State != task.StateFailed || run.State != task.StateSucceeded {
		t.Fatalf("setup: summarize %s, review %s", failed.State, run.State)
	}
	b.submit(t, "carol", "echo", "hello", true)

	stdin, out, wait, stderr := runScript(t, node, dir, []string{
		"BASE=" + b.base, "CHROMIUM=" + chromium, "SHOTS=" + shots, "MODE=open",
		"FAILED_ID=" + failed.ID, "RUN_ID=" + run.ID, "ASSERTION=" + failedAssertion,
	})
	ready := false
	for out.Scan() {
		if out.Text() == "READY" {
			ready = true
			break
		}
	}
	if !ready {
		err := wait()
		t.Fatalf("the browser script did not get ready: %v\n%s", err, stderr.String())
	}
	// Tasks submitted after the page loaded, that run for a while.
	var ids []string
	for range 3 {
		ids = append(ids, b.submit(t, "carol", "slow", "live", false).ID)
		time.Sleep(100 * time.Millisecond)
	}
	line, _ := json.Marshal(ids)
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	_ = stdin.Close()
	if err := wait(); err != nil {
		t.Fatalf("browser script: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{"tasks", "task-failed-contract", "task-workflow-run", "workflows", "audit", "agents"} {
		if fi, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || fi.Size() < 1000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", shots)
}

// TestBrowserAuth: with auth: bearer the page asks for a token, refuses a
// wrong one, then shows the actor's tasks live and offers retry on a
// failed one, which works.
func TestBrowserAuth(t *testing.T) {
	chromium, node, dir := browserTools(t)
	shots := screenshots(t)
	b := setup(t, true)
	failed := b.submit(t, "alice", "summarize", "alice's text", true)
	other := b.submit(t, "bob", "echo", "bob's text", true)
	_, _, wait, stderr := runScript(t, node, dir, []string{
		"BASE=" + b.base, "CHROMIUM=" + chromium, "SHOTS=" + shots, "MODE=auth",
		"FAILED_ID=" + failed.ID, "OTHER_ID=" + other.ID, "TOKEN=" + aliceToken, "ASSERTION=" + failedAssertion,
	})
	if err := wait(); err != nil {
		t.Fatalf("browser script: %v\n%s", err, stderr.String())
	}
	tk, err := b.coord.Get(context.Background(), failed.ID, 0)
	if err != nil || tk.Attempt < 2 {
		t.Errorf("the retry from the page did not run: %+v %v", tk, err)
	}
}
