package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	pexec "github.com/pactum/pactum/agent/exec"
	"github.com/pactum/pactum/internal/e2e/attemptlog"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
)

// longConfig serves "slow" as an agent that works for 30 seconds, under
// a 1-second lease.
const longConfig = `
listen: %[1]s
base_url: http://%[1]s
store: sqlite://%[2]s
lease: 1s
workers: 4
log: {level: warn}
agents:
  - name: slow
    type: exec
    timeout: 60s
    retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 1s}
    exec:
      command: ["%[4]s", "%[3]s/attempts.log", "{{.TaskID}}", "{{.Attempt}}", "30"]
      run_dir: %[3]s/runs
`

// TestKill9LongAgentNoTwoAttemptsAtOnce is the scenario of issue 14: a long
// exec agent, kill -9 of the server, a restart with a short lease. The
// first attempt's command dies with the server, and so does what it
// started (the shim that leads the group kills it), and no process of
// attempt 1 is alive when attempt 2 starts.
func TestKill9LongAgentNoTwoAttemptsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	dbPath := filepath.Join(dir, "pactum.db")
	cfgPath := filepath.Join(dir, "pactum.yaml")
	script := attemptlog.Script(t)
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(longConfig, addr, dbPath, dir, script)), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "attempts.log")
	t.Cleanup(func() {
		// Whatever the last server left running goes, through the sweep.
		if _, err := pexec.New(pexec.Settings{Command: []string{"true"}, RunDir: filepath.Join(dir, "runs")}); err != nil {
			t.Errorf("sweep after the test: %v", err)
		}
	})
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := start(t, bin, cfgPath, addr)
	c := nodeproc.Client(t, ctx, addr, "slow")

	const n = 3
	for i := range n {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d", i)))
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}}); err != nil {
			t.Fatal(err)
		}
	}
	first := attemptlog.Wait(t, ctx, logPath, func(ls []attemptlog.Line) bool { return count(ls, "child", 1) == n })
	srv.KillServer()
	for _, l := range first {
		if (l.Kind == "start" || l.Kind == "child") && !waitStopped(l.Pid, 10*time.Second) {
			t.Fatalf("task %s: attempt 1's process (pid %d, %s) still runs 10s after its server was killed", l.Task, l.Pid, l.Kind)
		}
	}

	srv = start(t, bin, cfgPath, addr)
	t.Cleanup(srv.KillServer)
	// Attempt 2 starts once the 1-second lease has run out.
	all := attemptlog.Wait(t, ctx, logPath, func(ls []attemptlog.Line) bool { return count(ls, "start", 2) == n })
	for _, l := range first {
		if running(l.Pid) {
			t.Errorf("task %s: process %d of attempt 1 (%s) runs alongside attempt 2", l.Task, l.Pid, l.Kind)
		}
	}
	attemptlog.CheckNoOverlap(t, all)
}

// count counts the lines of kind for attempt.
func count(ls []attemptlog.Line, kind string, attempt int) int {
	n := 0
	for _, l := range ls {
		if l.Kind == kind && l.Attempt == attempt {
			n++
		}
	}
	return n
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

func waitStopped(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for running(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
