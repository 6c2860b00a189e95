package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/agent/python/pythontest"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
)

// pythonConfig serves "slow" as a python agent (agentmod.py below) under
// a 1-second lease.
const pythonConfig = `
listen: %[1]s
base_url: http://%[1]s
store: sqlite://%[2]s
lease: 1s
workers: 4
log: {level: warn}
agents:
  - name: slow
    type: python
    timeout: 60s
    retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 1s}
    python:
      object: agentmod:agent
`

// pythonAgent logs each attempt's start and end with its process and
// group, and works for 30 seconds the first time it sees a task, briefly
// after that.
const pythonAgent = `
import asyncio, json, os, time
LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attempts.log")

def log(kind, task):
    with open(LOG, "a") as f:
        f.write(json.dumps({"kind": kind, "task": task, "pid": os.getpid(), "pgid": os.getpgid(0), "t": time.time()}) + "\n")

def starts(task):
    try:
        with open(LOG) as f:
            return sum(1 for l in f if json.loads(l)["kind"] == "start" and json.loads(l)["task"] == task)
    except FileNotFoundError:
        return 0

async def agent(inputs):
    task = inputs["task_id"]
    first = starts(task) == 0
    log("start", task)
    await asyncio.sleep(30 if first else 0.2)
    log("done", task)
    return "done: " + inputs["message"]
`

type pyLine struct {
	Kind string  `json:"kind"`
	Task string  `json:"task"`
	Pid  int     `json:"pid"`
	Pgid int     `json:"pgid"`
	T    float64 `json:"t"`
}

func readPyLog(t *testing.T, path string) []pyLine {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pyLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l pyLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue // a line being written
		}
		out = append(out, l)
	}
	return out
}

func waitPyLog(t *testing.T, ctx context.Context, path string, ok func([]pyLine) bool) []pyLine {
	t.Helper()
	for {
		ls := readPyLog(t, path)
		if ok(ls) {
			return ls
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting on %s; it holds %+v", path, ls)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countPy(ls []pyLine, kind string) int {
	n := 0
	for _, l := range ls {
		if l.Kind == kind {
			n++
		}
	}
	return n
}

// groupMembers lists the running processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After ")": state, ppid, pgrp.
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// TestKill9DuringPythonRun: kill -9 of `pactum serve` while a python
// agent's worker runs an attempt. The worker and everything in its
// process group die with the server; after a restart the task is claimed
// again once its lease has run out and completes exactly once, and once
// the server stops nothing of either worker is left running.
func TestKill9DuringPythonRun(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	pythontest.Need(t)
	dir := t.TempDir()
	// The servers record their workers' groups under this test's own
	// cache directory.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	addr := nodeproc.FreeAddr(t)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(pythonConfig, addr, filepath.Join(dir, "pactum.db"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agentmod.py"), []byte(pythonAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "attempts.log")
	bin := nodeproc.Build(t, nodeproc.Pactum)
	// The clock starts once the binary is built: a loaded machine takes
	// minutes for that alone.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := start(t, bin, cfgPath, addr)
	c := nodeproc.Client(t, ctx, addr, "slow")

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("survive"))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a task", res)
	}
	first := waitPyLog(t, ctx, logPath, func(ls []pyLine) bool { return countPy(ls, "start") == 1 })[0]
	if first.Task != string(tk.ID) {
		t.Fatalf("the agent got task %q, want %q", first.Task, tk.ID)
	}

	srv.KillServer()
	killedAt := time.Now()
	deadline := killedAt.Add(10 * time.Second)
	for running(first.Pid) || len(groupMembers(first.Pgid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("10s after kill -9 of the server, the worker (pid %d) or its group %d still runs: %v", first.Pid, first.Pgid, groupMembers(first.Pgid))
		}
		time.Sleep(10 * time.Millisecond)
	}

	t.Logf("worker pid %d (group %d) gone %s after kill -9 of the server", first.Pid, first.Pgid, time.Since(killedAt).Round(time.Millisecond))

	srv = start(t, bin, cfgPath, addr)
	c = nodeproc.Client(t, ctx, addr, "slow")
	for {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			if got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task ended %s: %+v", got.Status.State, got.Status.Message)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("task still %s", got.Status.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ls := readPyLog(t, logPath)
	if n := countPy(ls, "done"); n != 1 {
		t.Errorf("the agent completed the task %d times, want once: %+v", n, ls)
	}
	if n := countPy(ls, "start"); n != 2 {
		t.Errorf("%d attempts started, want 2 (the one the kill cut, the one after): %+v", n, ls)
	}
	second := ls[len(ls)-1]
	if second.Pid == first.Pid {
		t.Errorf("the second attempt ran in the first worker (pid %d)", first.Pid)
	}
	t.Logf("attempt 2 ran in worker pid %d and completed; %d start and %d done lines", second.Pid, countPy(ls, "start"), countPy(ls, "done"))
	if second.T < first.T {
		t.Errorf("log out of order: %+v", ls)
	}

	srv.Stop()
	deadline = time.Now().Add(10 * time.Second)
	for _, l := range []pyLine{first, second} {
		for running(l.Pid) || len(groupMembers(l.Pgid)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after the server stopped, worker %d (group %d) still runs: %v", l.Pid, l.Pgid, groupMembers(l.Pgid))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
