package procgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/internal/procgroup/proctest"
)

func TestMain(m *testing.M) {
	proctest.Main(m, map[string]proctest.Helper{"group": groupHelper})
}

// familyScript records its process id in leader, starts a child that
// records its own in grandchild (the grandchild of the process that
// started the script), and waits.
const familyScript = `echo $$ > "$1/leader"; sleep 300 & echo $! > "$1/grandchild"; wait`

// groupHelper starts familyScript with Start in the helper process, with
// no record and so no sweep, then retires threads as a Go program may.
func groupHelper(dir string) error {
	cmd := exec.Command("sh", "-c", familyScript, "sh", dir)
	if err := Start(cmd); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	proctest.AwaitWritten(dir, "leader", "grandchild")
	proctest.ChurnThreads(200)
	return nil
}

// TestGroupDiesWithParent: when the process that started a group is
// killed with SIGKILL, the whole group dies at once, what the command
// started included, with no sweep.
func TestGroupDiesWithParent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	helper := proctest.Start(t, "group", dir)
	leader := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	grandchild := proctest.ReadPID(t, filepath.Join(dir, "grandchild"))
	t.Cleanup(func() { proctest.KillIfRunning(grandchild) })
	if !proctest.Running(leader) || !proctest.Running(grandchild) {
		t.Fatal("the group died while its parent was still running (after threads were retired)")
	}
	proctest.KillAndWait(t, helper)
	if !proctest.WaitStopped(leader, 10*time.Second) {
		t.Fatalf("the command (pid %d) still runs 10s after its parent was killed", leader)
	}
	if !proctest.WaitStopped(grandchild, 10*time.Second) {
		t.Fatalf("what the command started (pid %d) still runs 10s after its parent was killed", grandchild)
	}
}

// TestShimLeadsTheGroup: through the shim, the started process leads the
// group and is the command's parent; directly, it is the command.
func TestShimLeadsTheGroup(t *testing.T) {
	t.Parallel()
	for _, shim := range []bool{false, true} {
		cmd := exec.Command("sh", "-c", `echo $$ $PPID $(cut -d' ' -f5 /proc/$$/stat)`)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := startGroup(cmd, shim); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		var pid, ppid, pgid int
		if _, err := fmt.Sscan(out.String(), &pid, &ppid, &pgid); err != nil {
			t.Fatalf("output %q: %v", out.String(), err)
		}
		leader := cmd.Process.Pid
		if pgid != leader {
			t.Errorf("shim=%v: the command is in group %d, want %d", shim, pgid, leader)
		}
		if shim && (pid == leader || ppid != leader) {
			t.Errorf("shim=%v: command %d with parent %d; want a child of the shim %d", shim, pid, ppid, leader)
		}
		if !shim && pid != leader {
			t.Errorf("shim=%v: command %d, want %d", shim, pid, leader)
		}
	}
}

// outcome is what the caller of Start sees of a command.
type outcome struct {
	startErr       string
	code           int
	signaled       bool
	sig            syscall.Signal
	stdout, stderr string
	extra          string
}

type passRow struct {
	name   string
	script string
	stdin  string
	env    []string // nil: inherit
	dir    bool     // run in a temporary directory
	extra  bool     // pass a pipe as fd 3
	term   bool     // send SIGTERM to the group once "$D/ready" exists
	path   string   // run this program instead of sh -c script
	want   outcome  // the fields that matter (stdout and stderr when set)
}

// TestShimPassesThrough: a command run through the shim looks to its
// caller exactly as one run directly: exit code, signal, input, output,
// environment, extra files and start errors; and the shim's variable is
// not in the command's environment.
func TestShimPassesThrough(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	noExec := filepath.Join(tmp, "noexec")
	noMagic := filepath.Join(tmp, "nomagic")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noMagic, []byte{0, 1, 2, 3, 4, 5, 6, 7}, 0o700); err != nil {
		t.Fatal(err)
	}
	rows := []passRow{
		{name: "exit 0", script: "exit 0"},
		{name: "exit 3", script: "exit 3", want: outcome{code: 3}},
		{name: "exit 255", script: "exit 255", want: outcome{code: 255}},
		{name: "killed by SIGTERM", script: "kill -TERM $$", want: outcome{code: -1, signaled: true, sig: syscall.SIGTERM}},
		{name: "killed by SIGKILL", script: "kill -KILL $$", want: outcome{code: -1, signaled: true, sig: syscall.SIGKILL}},
		{name: "killed by SIGUSR1", script: "kill -USR1 $$", want: outcome{code: -1, signaled: true, sig: syscall.SIGUSR1}},
		{name: "killed by SIGUSR2", script: "kill -USR2 $$", want: outcome{code: -1, signaled: true, sig: syscall.SIGUSR2}},
		{name: "killed by SIGHUP", script: "kill -HUP $$", want: outcome{code: -1, signaled: true, sig: syscall.SIGHUP}},
		{name: "stdin read", script: "cat", stdin: "hello\nworld", want: outcome{stdout: "hello\nworld"}},
		{name: "stdout and stderr", script: "echo out; echo err >&2; exit 5", want: outcome{code: 5, stdout: "out\n", stderr: "err\n"}},
		{name: "env set", script: `echo "$PG_TEST_VAR ${PACTUM_PROCGROUP_SHIM-unset}"`, env: []string{"PG_TEST_VAR=x", "PATH=" + os.Getenv("PATH")}, want: outcome{stdout: "x unset\n"}},
		{name: "env empty", script: `echo "${HOME-nohome} ${PACTUM_PROCGROUP_SHIM-unset}"`, env: []string{}, path: "/bin/sh", want: outcome{stdout: "nohome unset\n"}},
		{name: "env inherited", script: `echo "${HOME-nohome} ${PACTUM_PROCGROUP_SHIM-unset}"`, want: outcome{stdout: os.Getenv("HOME") + " unset\n"}},
		{name: "dir and PWD", script: `test "$PWD" = "$(pwd)" && echo same`, dir: true, want: outcome{stdout: "same\n"}},
		{name: "extra file", script: "echo extra >&3", extra: true, want: outcome{extra: "extra\n"}},
		{name: "SIGTERM to the group", script: `echo $$ > "$D/ready"; exec sleep 60`, term: true, want: outcome{code: -1, signaled: true, sig: syscall.SIGTERM}},
		{name: "SIGTERM to the group, trapped", script: `trap 'exit 7' TERM; echo $$ > "$D/ready"; sleep 60 & wait`, term: true, want: outcome{code: 7}},
		{name: "no such program", path: filepath.Join(tmp, "missing"), want: outcome{startErr: "fork/exec " + filepath.Join(tmp, "missing") + ": no such file or directory"}},
		{name: "not executable", path: noExec, want: outcome{startErr: "fork/exec " + noExec + ": permission denied"}},
		{name: "not a program", path: noMagic, want: outcome{startErr: "fork/exec " + noMagic + ": exec format error"}},
		{name: "not in PATH", path: "no-such-program-pactum", want: outcome{startErr: `exec: "no-such-program-pactum": executable file not found in $PATH`}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			direct := runRow(t, row, false)
			shim := runRow(t, row, true)
			if shim != direct {
				t.Errorf("through the shim:\n%+v\ndirectly:\n%+v", shim, direct)
			}
			got := direct
			if row.want.stdout == "" {
				got.stdout = ""
			}
			if row.want.stderr == "" {
				got.stderr = ""
			}
			if got != row.want {
				t.Errorf("directly: %+v, want %+v", got, row.want)
			}
		})
	}
	// The missing Dir fails when the shim itself starts; the error names
	// the command, not the shim.
	for _, shim := range []bool{false, true} {
		cmd := exec.Command("/bin/true")
		cmd.Dir = filepath.Join(tmp, "missing-dir")
		err := startGroup(cmd, shim)
		if want := "fork/exec /bin/true: no such file or directory"; err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("shim=%v, missing dir: Start = %v, want %q", shim, err, want)
		}
	}
}

func runRow(t *testing.T, row passRow, shim bool) outcome {
	t.Helper()
	dir := t.TempDir()
	var cmd *exec.Cmd
	switch {
	case row.path == "":
		cmd = exec.Command("sh", "-c", row.script)
	case row.script != "":
		cmd = exec.Command(row.path, "-c", row.script)
	default:
		cmd = exec.Command(row.path)
	}
	if row.env != nil {
		cmd.Env = row.env
	}
	if row.term {
		cmd.Env = append(os.Environ(), "D="+dir)
	}
	if row.dir {
		cmd.Dir = dir
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin = strings.NewReader(row.stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var extraR *os.File
	if row.extra {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		cmd.ExtraFiles = []*os.File{w}
		extraR = r
	}
	if err := startGroup(cmd, shim); err != nil {
		return outcome{startErr: err.Error()}
	}
	pgid := cmd.Process.Pid
	stop := time.AfterFunc(30*time.Second, func() { _ = Signal(pgid, syscall.SIGKILL) })
	defer stop.Stop()
	if row.term {
		proctest.ReadPID(t, filepath.Join(dir, "ready"))
		if err := Signal(pgid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	var extra string
	if extraR != nil {
		_ = cmd.ExtraFiles[0].Close()
		b, _ := io.ReadAll(extraR)
		extra = string(b)
	}
	err := cmd.Wait()
	_ = Kill(context.Background(), pgid)
	var o outcome
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("Wait: %v", err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	o.code, o.signaled = cmd.ProcessState.ExitCode(), ws.Signaled()
	if o.signaled {
		o.sig = ws.Signal()
	}
	o.stdout, o.stderr, o.extra = stdout.String(), stderr.String(), extra
	return o
}

// TestShimKillsGroupWhenParentGoneAtStart: a shim whose parent is not the
// pactum process that meant to start it (it died before the shim could
// catch its parent-death signal) kills its group and starts nothing.
func TestShimKillsGroupWhenParentGoneAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(selfExe, "/bin/sh", "sh", "-c", `echo $$ > "$0"; exec sleep 300`, marker)
	cmd.Args[0] = shimArg0
	cmd.Env = append(os.Environ(), shimEnv+"=1,0") // the expected parent is init, not this process
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group: the shim kills it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	pgid := cmd.Process.Pid
	stop := time.AfterFunc(30*time.Second, func() { _ = Signal(pgid, syscall.SIGKILL) })
	defer stop.Stop()
	err = cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("shim ended with %v, want killed by SIGKILL", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the shim started the command although its parent was gone")
	}
}

// TestShimIgnoresStrayDeathSignal: the shim's parent-death signal sent by
// someone else while pactum lives (a command that signals its own group)
// kills nothing.
func TestShimIgnoresStrayDeathSignal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `echo $$ > "$0/leader"; exec sleep 300`, dir)
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = Kill(context.Background(), cmd.Process.Pid); <-exited })
	command := proctest.ReadPID(t, filepath.Join(dir, "leader"))
	if command == cmd.Process.Pid {
		t.Fatal("precondition: the command runs through the shim")
	}
	if err := cmd.Process.Signal(shimDeathSig); err != nil {
		t.Fatal(err)
	}
	if proctest.WaitStopped(command, 2*time.Second) {
		t.Fatal("the command died when the shim got its parent-death signal while its parent lived")
	}
	if !proctest.Running(cmd.Process.Pid) {
		t.Fatal("the shim died of a stray parent-death signal")
	}
}

// BenchmarkStart measures starting a command and waiting for it, directly
// and through the shim.
func BenchmarkStart(b *testing.B) {
	for _, shim := range []bool{false, true} {
		b.Run("shim="+strconv.FormatBool(shim), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := startGroup(cmd, shim); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestShimRefusesToLeadNoGroup: a process with the shim's variable that
// does not lead its own process group refuses to act as the shim (its
// group is someone else's to kill) and starts nothing.
func TestShimRefusesToLeadNoGroup(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(selfExe, "/bin/sh", "sh", "-c", `echo $$ > "$0"`, marker)
	cmd.Args[0] = shimArg0
	cmd.Env = append(os.Environ(), shimEnv+"="+strconv.Itoa(os.Getpid())+",0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 127 || !strings.Contains(stderr.String(), "not the leader of its process group") {
		t.Errorf("Run = %v (%s), want exit status 127 and a message", err, stderr.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// TestProbeShim: the probe tells this executable, which has the shim,
// from one that does not answer as the shim or cannot be started.
func TestProbeShim(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		exe       string
		ok, final bool
	}{
		{selfExe, true, true},
		{"/bin/true", false, true},
		{filepath.Join(t.TempDir(), "missing"), false, true},
	} {
		if ok, final := probeShim(c.exe); ok != c.ok || final != c.final {
			t.Errorf("probeShim(%s) = %v, %v; want %v, %v", c.exe, ok, final, c.ok, c.final)
		}
	}
}
