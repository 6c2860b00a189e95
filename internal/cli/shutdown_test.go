package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// shutdownConfig serves one slow exec agent: each attempt appends its
// process id to started, then sleeps until killed unless the file fast
// exists, in which case it answers at once. The lease is long (1m), so a
// task queued again before the lease ends can only have been released by
// the node that stopped.
const shutdownConfig = `
listen: %[1]s
base_url: http://%[1]s
store: sqlite://%[2]s/pactum.db
lease: 1m
agents:
  - name: slow
    type: exec
    timeout: 5m
    retry: {max_attempts: 3, initial_backoff: 100ms}
    exec:
      command: ["sh", "-c", "echo $$ >> %[2]s/started; if [ -e %[2]s/fast ]; then echo finished; else exec sleep 600; fi"]
      input: none
      run_dir: %[2]s/runs
`

// TestServeSecondInterruptReleasesTask is the shutdown of issue 13: a
// real `pactum serve` with an attempt running gets SIGINT and says what
// it drains and how to stop now; a second SIGINT stops it at once, with
// the attempt's command gone and its task queued again in the store
// (not left in_progress under a lease); the next start runs it to the end.
func TestServeSecondInterruptReleasesTask(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := nodeproc.Build(t, nodeproc.Pactum)
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(shutdownConfig, addr, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "node1.log")
	node := nodeproc.Start(t, bin, addr, logPath, "serve", "--config", cfgPath)

	client := nodeproc.Client(t, ctx, addr, "slow")
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("take your time"))
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := string(res.(*a2a.Task).ID)
	pids := waitLines(t, filepath.Join(dir, "started"), 1)
	cmdPid, err := strconv.Atoi(pids[0])
	if err != nil {
		t.Fatal(err)
	}

	// First SIGINT: the node drains, saying how many tasks, for how long
	// and how to stop now, and keeps running the attempt.
	if err := syscall.Kill(node.Pid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logPath, "draining 1 task (up to 30s); press Ctrl-C again to stop now")
	time.Sleep(300 * time.Millisecond)
	if node.Exited() {
		t.Fatalf("node exited on the first SIGINT with an attempt running and 30s of drain\n%s", readFile(t, logPath))
	}

	// Second SIGINT: the node stops at once (far within the 30s drain).
	start := time.Now()
	if err := syscall.Kill(node.Pid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waitCh(node):
	case <-time.After(15 * time.Second):
		t.Fatalf("node still running 15s after the second SIGINT\n%s", readFile(t, logPath))
	}
	t.Logf("stopped %s after the second SIGINT", time.Since(start).Round(time.Millisecond))
	if err := syscall.Kill(cmdPid, 0); err == nil {
		t.Errorf("the attempt's command (pid %d) still runs after the node stopped", cmdPid)
	}
	log := readFile(t, logPath)
	if !strings.Contains(log, "pactum stopped") {
		t.Errorf("no shutdown line in the node's log:\n%s", log)
	}

	// The task is queued again at once, not in_progress under the
	// stopped node's lease (which would hold it for a minute).
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.GetTask(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateQueued || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.ErrorCode != task.CodeNodeStopped {
		t.Errorf("after the stop: state %s, lease %q until %v, code %q (%s); want queued, no lease, node_stopped",
			got.State, got.LeaseOwner, got.LeaseExpires, got.ErrorCode, got.Reason)
	}
	recs, err := st.Records(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	for _, r := range recs {
		if r.From == task.StateInProgress && r.To == task.StateQueued && r.ErrorCode == task.CodeNodeStopped {
			released = true
		}
	}
	if !released {
		t.Errorf("no in_progress → queued record with node_stopped: %+v", recs)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// The next start finishes it.
	if err := os.WriteFile(filepath.Join(dir, "fast"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	node2 := nodeproc.Start(t, bin, addr, filepath.Join(dir, "node2.log"), "serve", "--config", cfgPath)
	defer node2.Stop()
	client2 := nodeproc.Client(t, ctx, addr, "slow")
	for {
		tk, err := client2.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status.State == a2a.TaskStateCompleted {
			break
		}
		if tk.Status.State.Terminal() {
			t.Fatalf("task ended %s after the restart", tk.Status.State)
		}
		if ctx.Err() != nil {
			t.Fatalf("task still %s after the restart", tk.Status.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(waitLines(t, filepath.Join(dir, "started"), 2)); n != 2 {
		t.Errorf("%d attempts started; want 2", n)
	}
}

// waitCh returns a channel closed when p has exited.
func waitCh(p *nodeproc.Process) <-chan struct{} {
	ch := make(chan struct{})
	go func() { p.Wait(); close(ch) }()
	return ch
}

// waitLines waits until the file at path has at least n lines and returns
// them.
func waitLines(t *testing.T, path string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		lines := strings.Fields(string(b))
		if len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d lines after 30s; want %d", path, len(lines), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog waits until the file at path contains want.
func waitLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(readFile(t, path), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q not in the log after 15s:\n%s", want, readFile(t, path))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
