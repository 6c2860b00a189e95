package exec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/agenttest"
	pexec "github.com/pactum/pactum/agent/exec"
	"github.com/pactum/pactum/agent/internal/procgroup/proctest"
	"github.com/pactum/pactum/task"
)

func TestMain(m *testing.M) {
	proctest.Main(m, map[string]proctest.Helper{"attempt": attemptHelper})
}

// longScript records its process id in leader, starts a child that records
// its own in child, and waits.
const longScript = `echo $$ > "$1/leader"; sleep 60 & echo $! > "$1/child"; wait`

// attemptHelper runs one long attempt in the helper process, then retires
// threads as a Go program may, and returns with the attempt running. Its
// kill_grace is long, so that when the group's leader is killed the
// helper does not kill the rest of the group itself before the test kills
// the helper.
func attemptHelper(dir string) error {
	r, err := pexec.New(pexec.Settings{
		Command:   []string{"sh", "-c", longScript, "sh", dir},
		RunDir:    filepath.Join(dir, "runs"),
		KillGrace: 10 * time.Minute,
	})
	if err != nil {
		return err
	}
	go func() { _, _ = r.Invoke(context.Background(), agenttest.Request("")) }()
	proctest.AwaitWritten(dir, "leader", "child")
	proctest.ChurnThreads(200)
	return nil
}

// TestCommandDiesWithServer: an attempt's command survives the Go
// runtime retiring threads and dies as soon as its pactum process is
// killed with SIGKILL, and so does what it started, with no sweep.
func TestCommandDiesWithServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	helper := proctest.Start(t, "attempt", dir)
	leader := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	child := proctest.ReadPID(t, filepath.Join(dir, "child"))
	t.Cleanup(func() { proctest.KillIfRunning(child) })
	if !proctest.Running(leader) || !proctest.Running(child) {
		t.Fatal("the command died while its pactum process was still running (after threads were retired)")
	}
	proctest.KillAndWait(t, helper)
	if !proctest.WaitStopped(leader, 10*time.Second) {
		t.Fatalf("the command (pid %d) still runs 10s after its pactum process was killed", leader)
	}
	if !proctest.WaitStopped(child, 10*time.Second) {
		t.Fatalf("the command's child (pid %d) still runs 10s after its pactum process was killed, before any sweep", child)
	}
}

// TestSweepKillsWhatOutlivedTheGroupLeader: when the group's leader was
// itself killed (the shim on Linux; then the command dies with it but
// what the command started does not) and then its pactum process, what is
// left of the group is killed by the next runtime built on the same
// machine, before that constructor returns.
func TestSweepKillsWhatOutlivedTheGroupLeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	helper := proctest.Start(t, "attempt", dir)
	leader := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	child := proctest.ReadPID(t, filepath.Join(dir, "child"))
	t.Cleanup(func() { proctest.KillIfRunning(child) })
	pgid, err := syscall.Getpgid(leader)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !proctest.WaitStopped(pgid, 10*time.Second) {
		t.Fatalf("the group's leader (pid %d) still runs 10s after SIGKILL", pgid)
	}
	proctest.KillAndWait(t, helper)
	if !proctest.Running(child) {
		t.Fatal("precondition: the command's child should have outlived its group's leader and its pactum process (only the sweep ends it)")
	}
	if _, err := pexec.New(pexec.Settings{Command: []string{"true"}, RunDir: filepath.Join(dir, "runs")}); err != nil {
		t.Fatal(err)
	}
	if proctest.Running(child) {
		t.Fatalf("the command's child (pid %d) still runs after a new runtime swept the records", child)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "runs")); len(left) != 0 {
		t.Errorf("records left after the sweep: %v", left)
	}
}

// killIfRunning ends what a failed test left running.
// TestSweepSparesRunningServers: a runtime built while another one (of
// this very process, so of a running pactum) has an attempt running
// leaves that attempt alone.
func TestSweepSparesRunningServers(t *testing.T) {
	t.Parallel()
	dir, runs := t.TempDir(), t.TempDir()
	r, err := pexec.New(pexec.Settings{Command: []string{"sh", "-c", longScript, "sh", dir}, RunDir: runs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	go func() { _, _ = r.Invoke(context.Background(), agenttest.Request("")) }()
	leader := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	child := proctest.ReadPID(t, filepath.Join(dir, "child"))
	if _, err := pexec.New(pexec.Settings{Command: []string{"true"}, RunDir: runs}); err != nil {
		t.Fatal(err)
	}
	if !proctest.Running(leader) || !proctest.Running(child) {
		t.Fatal("a sweep killed the attempt of a running pactum process")
	}
}

// TestNewAttemptKillsThePrevious: when a task is claimed again while the
// command of its previous attempt still runs here (its lease was lost),
// that command and its children are gone before the new one starts.
func TestNewAttemptKillsThePrevious(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `if [ "$2" = 1 ]; then ` + longScript + `; else
for f in leader child; do p=$(cat "$1/$f"); s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); echo "$f:${s:-gone}"; done; fi`
	r, err := pexec.New(pexec.Settings{Command: []string{"sh", "-c", script, "sh", dir, "{{.Attempt}}"}, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		req := agenttest.Request("")
		req.Attempt = 1
		_, err := r.Invoke(ctx, req)
		first <- err
	}()
	proctest.ReadPID(t, filepath.Join(dir, "child"))
	req := agenttest.Request("")
	req.Attempt = 2
	res, err := r.Invoke(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := agenttest.ResultText(t, res)
	for _, line := range strings.Split(got, "\n") {
		if _, state, _ := strings.Cut(line, ":"); state != "gone" && state != "Z" {
			t.Errorf("attempt 2 started while attempt 1's process ran: %q", got)
		}
	}
	if err := <-first; err == nil {
		t.Error("attempt 1 succeeded; it should have been killed")
	}
}

// TestCloseKillsRunningCommands: Close ends the commands still running and
// their children, and later attempts fail.
func TestCloseKillsRunningCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := pexec.New(pexec.Settings{Command: []string{"sh", "-c", longScript, "sh", dir}, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Invoke(context.Background(), agenttest.Request(""))
		done <- err
	}()
	leader := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	child := proctest.ReadPID(t, filepath.Join(dir, "child"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if proctest.Running(leader) || proctest.Running(child) {
		t.Fatal("processes of the attempt still run after Close returned")
	}
	if err := <-done; err == nil {
		t.Error("the attempt succeeded; Close should have killed it")
	}
	if _, err := r.Invoke(context.Background(), agenttest.Request("")); !errors.Is(err, pexec.ErrClosed) {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}

// TestExitThroughTheShim: what the attempt reports of a command killed by
// a signal, or of one that cannot start, is what os/exec reports of the
// command itself, not of the shim that leads its group.
func TestExitThroughTheShim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noExec := filepath.Join(dir, "noexec.sh")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		command   []string
		want      string
		permanent bool
	}{
		{[]string{"sh", "-c", "kill -TERM $$"}, "command sh was killed by signal terminated", false},
		{[]string{"sh", "-c", "echo why >&2; kill -USR1 $$"}, "command sh was killed by signal user defined signal 1: why", false},
		{[]string{"sh", "-c", "exit 3"}, "command sh exited with code 3", true},
		{[]string{noExec}, "command " + noExec + " cannot start: fork/exec " + noExec + ": permission denied", true},
		{[]string{filepath.Join(dir, "missing")}, "command " + filepath.Join(dir, "missing") + " cannot start: fork/exec " + filepath.Join(dir, "missing") + ": no such file or directory", true},
	} {
		r, err := pexec.New(pexec.Settings{Command: c.command, RunDir: filepath.Join(dir, "runs"), PermanentExitCodes: []int{3}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(context.Background(), agenttest.Request(""))
		if err == nil || err.Error() != c.want || task.IsPermanent(err) != c.permanent {
			t.Errorf("%v: err = %v (permanent %v), want %q (permanent %v)", c.command, err, task.IsPermanent(err), c.want, c.permanent)
		}
	}
}

// TestNewAttemptWhileThePreviousStarts: attempt 2 arrives while attempt
// 1's command has started but the runtime does not know its group yet. It
// must wait for the group, kill it, and run; before, it waited for attempt
// 1 to end by itself (here a minute).
func TestNewAttemptWhileThePreviousStarts(t *testing.T) {
	// Not parallel: the hook is the package's.
	dir := t.TempDir()
	script := `if [ "$2" = 1 ]; then ` + longScript + `; else echo second; fi`
	r, err := pexec.New(pexec.Settings{Command: []string{"sh", "-c", script, "sh", dir, "{{.Attempt}}"}, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	inWindow, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	pexec.SetAfterStart(func() {
		once.Do(func() {
			close(inWindow)
			<-release
		})
	})
	t.Cleanup(func() { pexec.SetAfterStart(nil) })
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		req := agenttest.Request("")
		req.Attempt = 1
		_, err := r.Invoke(ctx, req)
		first <- err
	}()
	<-inWindow
	second := make(chan error, 1)
	var res *task.Result
	go func() {
		req := agenttest.Request("")
		req.Attempt = 2
		var err error
		res, err = r.Invoke(ctx, req)
		second <- err
	}()
	// Let attempt 2 find attempt 1 still starting, then let attempt 1 on.
	time.Sleep(200 * time.Millisecond)
	close(release)
	if err := <-second; err != nil {
		t.Fatalf("attempt 2: %v", err)
	}
	if got := agenttest.ResultText(t, res); strings.TrimSpace(got) != "second" {
		t.Fatalf("attempt 2 answered %q", got)
	}
	if err := <-first; err == nil {
		t.Fatal("attempt 1 ended without an error, want it killed")
	}
}
