// Package proctest helps test that subprocesses die with the process that
// started them: it runs the test binary again as a helper process (which
// the test can kill with SIGKILL) and tells whether a process still runs.
package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv names the helper to run in the test binary's environment; its
// value is the helper's working directory.
const helperEnv = "PACTUM_PROCTEST_HELPER"

// Helper is a function run in a helper process; it returns when the
// helper's work is set up (files it writes for the test are there), and
// the helper then waits to be killed.
type Helper func(dir string) error

// Main is a TestMain: when the test binary runs as the helper named in
// its environment, it runs that helper instead of the tests.
func Main(m *testing.M, helpers map[string]Helper) {
	name, dir, ok := strings.Cut(os.Getenv(helperEnv), ":")
	if !ok {
		os.Exit(m.Run())
	}
	h := helpers[name]
	if h == nil {
		os.Stderr.WriteString("proctest: no helper " + name + "\n")
		os.Exit(2)
	}
	if err := h(dir); err != nil {
		os.Stderr.WriteString("proctest: helper " + name + ": " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600); err != nil {
		os.Exit(1)
	}
	select {} // until killed
}

// Start runs helper name in a new process (the test binary) with dir as
// its directory, and waits until it is ready. The process is killed when
// the test ends.
func Start(t *testing.T, name, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name+":"+dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			return cmd
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("helper %s exited before it was ready: %v", name, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper %s not ready after 30s", name)
		}
	}
}

// KillAndWait sends SIGKILL to the helper and waits until it is gone.
func KillAndWait(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for Running(cmd.Process.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
}

// Running reports whether process pid exists and is not a zombie (a dead
// process its parent has not reaped, or never will: a container's init
// may not reap orphans).
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// WaitStopped waits up to d for process pid to stop running and reports
// whether it did.
func WaitStopped(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for Running(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// ReadPID waits up to 10s for file to hold a process id and returns it.
func ReadPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process id in %s after 10s (%v)", file, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ChurnThreads retires OS threads the way a Go program may at any time:
// n goroutines each lock themselves to a thread and exit without
// unlocking, which makes the runtime end that thread. A child whose
// parent-death signal is tied to one of those threads gets it now.
func ChurnThreads(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			time.Sleep(time.Millisecond)
		}()
	}
	wg.Wait()
}

// AwaitWritten waits until each named file in dir holds a whole line, as
// the test scripts write their pids. It is for helper processes, which
// have no testing.T; the test that started the helper bounds the wait.
func AwaitWritten(dir string, names ...string) {
	for _, f := range names {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.HasSuffix(string(b), "\n") {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// KillIfRunning sends SIGKILL to pid if it still runs (test cleanup).
func KillIfRunning(pid int) {
	if Running(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
