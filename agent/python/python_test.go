package python

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/python/pythontest"
	"github.com/pactum/pactum/task"
)

// These tests run the embedded worker in a real python3 (the standard
// library is all it needs). They skip when there is no python3, unless
// PACTUM_REQUIRE_PYTHON is set.

func needPython(t *testing.T) {
	t.Helper()
	pythontest.Need(t)
}

// setup writes module as agentmod.py in a new directory and returns a
// runtime for agentmod:<attr>, closed when the test ends.
func setup(t *testing.T, module, attr string, adjust ...func(*Settings)) *Runtime {
	t.Helper()
	needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agentmod.py"), []byte(module), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Settings{Object: "agentmod:" + attr, Dir: dir, RestartBackoff: 10 * time.Millisecond}
	for _, f := range adjust {
		f(&s)
	}
	r, err := New(s, WithName(t.Name()), WithRunDir(filepath.Join(dir, "procs")), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func invoke(t *testing.T, r *Runtime, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := r.Invoke(ctx, agenttest.Request(text))
	if err != nil {
		t.Fatalf("Invoke(%q): %v", text, err)
	}
	return agenttest.ResultText(t, res)
}

func workerPID(t *testing.T, r *Runtime) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		t.Fatal("no worker")
	}
	return r.w.ready.PID
}

func TestCallableRoundTrip(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import asyncio

def sync_agent(inputs):
    """Answers in sync.

    More than the card needs."""
    return "sync: " + inputs["message"] + " ctx=" + inputs["context_id"]

async def async_agent(inputs):
    await asyncio.sleep(0)
    return "async: " + inputs["message"]
`, "sync_agent")
	if got := r.Metadata().Description; got != "Runs the Python object agentmod:sync_agent" {
		t.Errorf("description before the worker started = %q", got)
	}
	if got := invoke(t, r, "héllo"); got != "sync: héllo ctx=ctx-1" {
		t.Errorf("answer = %q", got)
	}
	if got := r.Metadata().Description; got != "Answers in sync." {
		t.Errorf("description = %q, want the docstring's first paragraph", got)
	}
	r2 := setup(t, "import asyncio\nasync def a(inputs):\n    await asyncio.sleep(0)\n    return 'async: ' + inputs['message']\n", "a")
	if got := invoke(t, r2, "x"); got != "async: x" {
		t.Errorf("answer = %q", got)
	}
}

// TestDataInAndOut: a data part holding an object reaches the callable as
// "data"; a dict answer becomes a data part; the conversation so far is
// "history".
func TestDataInAndOut(t *testing.T) {
	t.Parallel()
	r := setup(t, `
def agent(inputs):
    return {"got": inputs["data"], "history": inputs["history"], "n": 1.5}
`, "agent")
	req := agenttest.Request("")
	req.Message.Parts = []task.Part{task.DataPart([]byte(`{"city":"Oslo"}`))}
	earlier := []task.Message{
		{ID: "m0", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
		{ID: "a0", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hello")}},
	}
	req.History = append(earlier, req.Message)
	res, err := r.Invoke(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Artifacts[0].Parts[0]
	want := `{"got":{"city":"Oslo"},"history":[{"role":"user","text":"hi"},{"role":"assistant","text":"hello"}],"n":1.5}`
	if p.Kind != task.PartData || string(p.Data) != want {
		t.Errorf("part = %s %s\nwant data %s", p.Kind, p.Data, want)
	}
}

func TestStreamingAsyncGenerator(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import asyncio
async def agent(inputs):
    for w in inputs["message"].split():
        await asyncio.sleep(0.01)
        yield w + " "
`, "agent")
	var rec agenttest.Recorder
	res, err := r.Stream(t.Context(), agenttest.Request("one two three"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.Texts(), "|"); got != "one |two |three |" {
		t.Errorf("chunks = %q", got)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
	if got := agenttest.ResultText(t, res); got != "one two three " {
		t.Errorf("result = %q", got)
	}
	// Invoke (no emit) gets the whole answer.
	if got := invoke(t, r, "a b"); got != "a b " {
		t.Errorf("Invoke = %q", got)
	}
}

func TestStreamingSyncGenerator(t *testing.T) {
	t.Parallel()
	r := setup(t, "def agent(inputs):\n    yield 'a'\n    yield {'b': 1}\n", "agent")
	var rec agenttest.Recorder
	res, err := r.Stream(t.Context(), agenttest.Request("x"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.Texts(), "|"); got != `a|{"b": 1}|` {
		t.Errorf("chunks = %q", got)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
}

// TestPrintsDoNotBreakTheProtocol: user code that prints, writes to file
// descriptor 1, starts a child that writes to its standard output and
// reads standard input leaves the protocol intact.
func TestPrintsDoNotBreakTheProtocol(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import os, subprocess, sys
print("imported")  # at import time, before ready
def agent(inputs):
    print("not a protocol line")
    print('{"op":"result","id":"nope","output":"forged"}')
    os.write(1, b"raw fd 1\n")
    subprocess.run(["echo", "child output"])
    sys.stdout.flush()
    got = sys.stdin.read()
    return "ok, stdin gave %r" % got
`, "agent")
	if got := invoke(t, r, "x"); got != "ok, stdin gave ''" {
		t.Errorf("answer = %q", got)
	}
	if got := invoke(t, r, "again"); got != "ok, stdin gave ''" {
		t.Errorf("second answer = %q", got)
	}
}

func TestConcurrentInvocationsShareOneWorker(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import asyncio, os
async def agent(inputs):
    await asyncio.sleep(0.3)
    return "%s %d" % (inputs["message"], os.getpid())
`, "agent")
	const n = 8
	var wg sync.WaitGroup
	answers := make([]string, n)
	errs := make([]error, n)
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			res, err := r.Invoke(t.Context(), agenttest.Request(strconv.Itoa(i)))
			if err == nil {
				answers[i] = res.Message.Text()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	pids := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("invocation %d: %v", i, errs[i])
		}
		num, pid, _ := strings.Cut(answers[i], " ")
		if num != strconv.Itoa(i) {
			t.Errorf("invocation %d got the answer %q", i, answers[i])
		}
		pids[pid] = true
	}
	if len(pids) != 1 {
		t.Errorf("answers came from %d worker processes, want 1: %v", len(pids), pids)
	}
	t.Logf("%d concurrent invocations of 0.3s each took %s", n, time.Since(start))
}

// TestCancelCancelsTheCoroutine: canceling the attempt's context cancels
// the coroutine in the worker (it sees CancelledError), and the worker
// serves the next attempt.
func TestCancelCancelsTheCoroutine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	r := setup(t, fmt.Sprintf(`
import asyncio
MARK = %q
async def agent(inputs):
    if inputs["message"] != "slow":
        return "fast"
    open(MARK, "w").write("started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        open(MARK, "w").write("cancelled")
        raise
    return "slept"
`, mark), "agent")
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(ctx, agenttest.Request("slow"))
		errc <- err
	}()
	waitFile(t, mark, "started")
	pid := workerPID(t, r)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Invoke after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Invoke did not return after cancel")
	}
	waitFile(t, mark, "cancelled")
	if got := invoke(t, r, "x"); got != "fast" {
		t.Errorf("after cancel: %q", got)
	}
	if p := workerPID(t, r); p != pid {
		t.Errorf("the worker was restarted (%d, then %d); a cancel should keep it", pid, p)
	}
}

func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %q", path, b, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWorkerCrashFailsRetryably: user code that kills the worker
// (os._exit) fails the attempt with a retryable error quoting the exit;
// the next attempt gets a new worker.
func TestWorkerCrashFailsRetryably(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import os, sys
def agent(inputs):
    if inputs["message"] == "crash":
        sys.stderr.write("about to crash\n")
        sys.stderr.flush()
        os._exit(7)
    return "pid %d" % os.getpid()
`, "agent")
	first := invoke(t, r, "x")
	_, err := r.Invoke(t.Context(), agenttest.Request("crash"))
	if err == nil {
		t.Fatal("Invoke of a crashing worker succeeded")
	}
	if task.IsPermanent(err) {
		t.Errorf("crash error is permanent, want retryable: %v", err)
	}
	if code := task.ErrorCode(err); code != task.CodeUnavailable {
		t.Errorf("code = %s, want %s", code, task.CodeUnavailable)
	}
	for _, want := range []string{"exited", "exit status 7", "about to crash"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	second := invoke(t, r, "x")
	if first == second {
		t.Errorf("the same worker answered before and after the crash: %s", first)
	}
	if !processGone(t, first) {
		t.Errorf("the crashed worker still runs (%s)", first)
	}
}

func processGone(t *testing.T, answer string) bool {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimPrefix(answer, "pid "))
	if err != nil {
		t.Fatalf("answer %q", answer)
	}
	return !running(pid)
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

// TestInFlightCallsFailWhenTheWorkerDies: an attempt waiting on a worker
// that another attempt crashes fails too, retryably.
func TestInFlightCallsFailWhenTheWorkerDies(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import asyncio, os
async def agent(inputs):
    if inputs["message"] == "crash":
        os._exit(1)
    await asyncio.sleep(30)
`, "agent")
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(t.Context(), agenttest.Request("wait"))
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if _, err := r.Invoke(t.Context(), agenttest.Request("crash")); err == nil {
		t.Fatal("crash succeeded")
	}
	select {
	case err := <-errc:
		if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
			t.Errorf("the waiting attempt: %v, want a retryable unavailable error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting attempt did not end with its worker")
	}
}

func TestPythonExceptionIsRetryableAgentFailure(t *testing.T) {
	t.Parallel()
	r := setup(t, "def agent(inputs):\n    raise ValueError('no such city: ' + inputs['message'])\n", "agent")
	_, err := r.Invoke(t.Context(), agenttest.Request("Atlantis"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeAgentFailed {
		t.Fatalf("err = %v, want a retryable agent_failed", err)
	}
	if want := "python: agentmod:agent raised ValueError: no such city: Atlantis"; err.Error() != want {
		t.Errorf("err = %q\nwant %q", err, want)
	}
}

// TestImportErrorsArePermanent: an object that cannot be imported, or is
// missing or unusable, is a permanent error naming the object and the
// last line of the Python traceback.
func TestImportErrorsArePermanent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, module, attr string
		adjust             func(*Settings)
		want               string
	}{
		{"no module", "", "x", func(s *Settings) { s.Object = "nosuchmodule.sub:x" },
			"python: cannot load nosuchmodule.sub:x: ModuleNotFoundError: No module named 'nosuchmodule'"},
		{"no attribute", "y = 1\n", "x", nil,
			"python: cannot load agentmod:x: AttributeError: module 'agentmod' has no attribute 'x'"},
		{"raises at import", "import json\nraise RuntimeError('needs OPENAI_API_KEY')\n", "x", nil,
			"python: cannot load agentmod:x: RuntimeError: needs OPENAI_API_KEY"},
		{"not callable", "x = 42\n", "x", nil,
			"python: cannot load agentmod:x: TypeError: agentmod:x is a int: not a LangGraph graph, a LangChain Runnable, a CrewAI Crew or a callable"},
		{"wrong framework", "def x(i):\n    return 1\n", "x", func(s *Settings) { s.Framework = FrameworkCrewAI },
			"python: cannot load agentmod:x: TypeError: agentmod:x is a function, which has no kickoff_async or kickoff method: not a crewai object"},
		{"syntax error", "def x(:\n", "x", nil, "SyntaxError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var adjust []func(*Settings)
			if tt.adjust != nil {
				adjust = append(adjust, tt.adjust)
			}
			r := setup(t, tt.module, tt.attr, adjust...)
			for range 2 { // and again: each attempt tries, none is retried
				_, err := r.Invoke(t.Context(), agenttest.Request("x"))
				if err == nil || !task.IsPermanent(err) {
					t.Fatalf("err = %v, want a permanent error", err)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %q\nwant it to contain %q", err, tt.want)
				}
			}
		})
	}
}

func TestMissingInterpreterIsPermanent(t *testing.T) {
	t.Parallel()
	r := setup(t, "def x(i):\n    return 1\n", "x", func(s *Settings) { s.Python = "./venv/bin/python" })
	_, err := r.Invoke(t.Context(), agenttest.Request("x"))
	if err == nil || !task.IsPermanent(err) || !strings.Contains(err.Error(), "cannot start the interpreter") {
		t.Fatalf("err = %v, want a permanent error about the interpreter", err)
	}
}

// TestCloseStopsTheWorker: Close returns once the worker's process is
// gone, and fails what was in flight retryably.
func TestCloseStopsTheWorker(t *testing.T) {
	t.Parallel()
	r := setup(t, "import os, time\ndef agent(inputs):\n    if inputs['message'] == 'block':\n        time.sleep(60)\n    return 'pid %d' % os.getpid()\n", "agent")
	pidAnswer := invoke(t, r, "x")
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(t.Context(), agenttest.Request("block"))
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if !processGone(t, pidAnswer) {
		t.Error("the worker runs after Close")
	}
	if err := <-errc; err == nil || task.IsPermanent(err) {
		t.Errorf("in-flight attempt after Close: %v, want a retryable error", err)
	}
	if _, err := r.Invoke(t.Context(), agenttest.Request("x")); !errors.Is(err, errClosed) {
		t.Errorf("Invoke after Close: %v, want errClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, settings, want string
	}{
		{"nothing", "", "object: required"},
		{"no colon", "object: mymod", `object: "mymod" is not package.module:attr`},
		{"bad name", "object: 'my-mod:x'", `object: "my-mod:x" is not package.module:attr`},
		{"blank python", "object: m:x\npython: ' '", "python: must not be blank"},
		{"unknown framework", "object: m:x\nframework: autogen", `framework: "autogen" is not one of auto, langgraph, langchain, crewai, callable`},
		{"input_key with callable", "object: m:x\nframework: callable\ninput_key: q", "input_key: not used with framework callable"},
		{"blank path", "object: m:x\npath: ['']", "path[0]: must not be blank"},
		{"unknown key", "object: m:x\nobjet: y", "objet"},
		{"bad env", "object: m:x\nenv: {'A=B': x}", `env: invalid variable name "A=B"`},
		{"unset variable", "object: m:x\nenv: {K: '${PACTUM_PY_TEST_UNSET}'}", "env.K: environment variable PACTUM_PY_TEST_UNSET is not set"},
		{"missing dir", "object: m:x\ndir: /nonexistent/pactum-py", "dir: stat /nonexistent/pactum-py"},
		{"negative backoff", "object: m:x\nrestart_backoff: -1s", "restart_backoff: must not be negative"},
		{"backoff order", "object: m:x\nrestart_backoff: 2s\nmax_restart_backoff: 1s", "max_restart_backoff: must not be less than restart_backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := agent.New(t.Context(), agenttest.Spec(t, Type, tt.settings))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("agent.New(%q) error = %v, want it to contain %q", tt.settings, err, tt.want)
			}
		})
	}
}

// TestRelativeInterpreterAndPath: python and path are relative to the
// configuration's directory; the interpreter is run as written (a
// virtualenv's bin/python is a symlink that must stay one).
func TestRelativeInterpreterAndPath(t *testing.T) {
	t.Parallel()
	needPython(t)
	base := t.TempDir()
	// The interpreter itself, not a wrapper script (pyenv's shims).
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	py := strings.TrimSpace(string(out))
	if err := os.MkdirAll(filepath.Join(base, "venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py, filepath.Join(base, "venv", "bin", "python")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "src", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "import sys\ndef agent(inputs):\n    return sys.executable\n"
	if err := os.WriteFile(filepath.Join(base, "src", "pkg", "mod.py"), []byte(mod), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := agenttest.Spec(t, Type, "object: pkg.mod:agent\npython: venv/bin/python\npath: [src]\nenv: {PACTUM_PY_X: '1'}")
	spec.BaseDir = base
	a, err := agent.New(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	r := a.(*Runtime)
	t.Cleanup(func() { _ = r.Close() })
	res, err := r.Invoke(t.Context(), agenttest.Request("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Message.Text(), filepath.Join(base, "venv", "bin", "python"); got != want {
		t.Errorf("sys.executable = %q, want %q", got, want)
	}
}

// TestCrashIsRetriedByTheCore: through a Coordinator, an attempt whose
// worker dies is retried and the retry, on a new worker, succeeds; an
// object that cannot be imported fails the task at its first attempt.
func TestCrashIsRetriedByTheCore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := setup(t, fmt.Sprintf(`
import os
MARK = %q
def agent(inputs):
    if not os.path.exists(MARK):
        open(MARK, "w").close()
        os._exit(9)
    return "survived"
`, filepath.Join(dir, "crashed")), "agent")
	broken := setup(t, "", "x", func(s *Settings) { s.Object = "nosuchmodule:x" })
	retry := task.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond}
	coord := agenttest.Coordinator(t, "py",
		task.AgentSpec{Name: "py", Runner: agent.Runner(r), Retry: retry},
		task.AgentSpec{Name: "broken", Runner: agent.Runner(broken), Retry: retry})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tk := agenttest.Run(t, ctx, coord, "py", task.TextPart("x"))
	if tk.State != task.StateSucceeded || tk.Attempt != 2 {
		t.Errorf("task %s after %d attempts, want succeeded after 2", tk.State, tk.Attempt)
	}
	tk = agenttest.Run(t, ctx, coord, "broken", task.TextPart("x"))
	if tk.State != task.StateFailed || tk.Attempt != 1 {
		t.Errorf("broken: task %s after %d attempts, want failed after 1", tk.State, tk.Attempt)
	}
}

// TestWorkerSyntaxPython39: the worker parses as Python 3.9, the oldest
// version it supports (the machine's python3 may be newer).
func TestWorkerSyntaxPython39(t *testing.T) {
	t.Parallel()
	needPython(t)
	cmd := exec.Command("python3", "-c", "import ast, sys; ast.parse(sys.stdin.read(), feature_version=(3, 9))")
	cmd.Stdin = strings.NewReader(workerSource)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("worker.py is not Python 3.9: %v\n%s", err, out)
	}
}

// BenchmarkInvoke is one round trip through the worker: an invoke line
// out, a sync callable run in the thread pool, a result line back.
func BenchmarkInvoke(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("no python3")
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agentmod.py"), []byte("def agent(inputs):\n    return inputs['message']\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	r, err := New(Settings{Object: "agentmod:agent", Dir: dir}, WithRunDir(filepath.Join(dir, "procs")), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	req := agenttest.Request("hello")
	if _, err := r.Invoke(b.Context(), req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := r.Invoke(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSyncCallablesRunInParallel: sync callables that block (on a model,
// an API) run side by side in the worker's thread pool, more of them
// than the machine has CPUs.
func TestSyncCallablesRunInParallel(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import threading, time
lock = threading.Lock()
running = 0
most = 0
def agent(inputs):
    global running, most
    with lock:
        running += 1
        most = max(most, running)
    time.sleep(0.5)
    with lock:
        running -= 1
    return str(most)
`, "agent")
	const n = 12
	var wg sync.WaitGroup
	most := make([]int, n)
	for i := range n {
		wg.Go(func() {
			res, err := r.Invoke(t.Context(), agenttest.Request("x"))
			if err != nil {
				t.Error(err)
				return
			}
			most[i], _ = strconv.Atoi(res.Message.Text())
		})
	}
	wg.Wait()
	if m := slices.Max(most); m < n {
		t.Errorf("at most %d sync calls ran at once, want all %d", m, n)
	}
}

// TestProtocolErrors: the worker ignores request lines it cannot read;
// a worker that writes a line pactum cannot read is stopped, and what was
// in flight on it fails retryably.
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import os, __main__
def agent(inputs):
    if inputs["message"] == "garble":
        # Only the worker knows its protocol descriptor; this reaches it
        # on purpose.
        os.write(__main__._PROTO_OUT, b"{not json\n")
        return "unreachable"
    return "pid %d" % os.getpid()
`, "agent")
	first := invoke(t, r, "x")
	w, err := r.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.stdin.Write([]byte("garbage\n{\"op\":\"launch\"}\n{\"op\":\"invoke\"}\n\n")); err != nil {
		t.Fatal(err)
	}
	if got := invoke(t, r, "x"); got != first {
		t.Errorf("after bad requests: %q, want the same worker's %q", got, first)
	}
	_, err = r.Invoke(t.Context(), agenttest.Request("garble"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable || !strings.Contains(err.Error(), "bad line from the worker") {
		t.Fatalf("err = %v, want a retryable error about a bad line", err)
	}
	if got := invoke(t, r, "x"); got == first {
		t.Errorf("the worker that broke the protocol still serves")
	}
}

// TestLaterAttemptCancelsEarlier: an attempt of a task that arrives while
// an earlier attempt of it still runs here (its lease was lost) cancels
// the earlier one and starts once its coroutine has ended.
func TestLaterAttemptCancelsEarlier(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "mark")
	r := setup(t, fmt.Sprintf(`
import asyncio
MARK = %q
async def agent(inputs):
    if inputs["message"] == "slow":
        open(MARK, "w").write("started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)  # cleanup takes a moment
            open(MARK, "w").write("cancelled")
            raise
    return open(MARK).read()
`, mark), "agent")
	errc := make(chan error, 1)
	go func() {
		_, err := r.Invoke(t.Context(), agenttest.Request("slow"))
		errc <- err
	}()
	waitFile(t, mark, "started")
	second := agenttest.Request("fast")
	second.Attempt = 2
	res, err := r.Invoke(t.Context(), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Message.Text(); got != "cancelled" {
		t.Errorf("attempt 2 ran while attempt 1 was %q", got)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "superseded") {
		t.Errorf("attempt 1: %v, want an error saying it was superseded", err)
	}
}

// TestForkedChildDoesNotHideTheCrash: a process the worker forked holds
// the protocol's pipe open; when the worker dies the attempt still fails
// at once, and the child goes with the worker's group.
func TestForkedChildDoesNotHideTheCrash(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	r := setup(t, fmt.Sprintf(`
import os, time
def agent(inputs):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    open(%q, "w").write(str(pid))
    os._exit(3)
`, pidFile), "agent")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := r.Invoke(ctx, agenttest.Request("x"))
	if err == nil || ctx.Err() != nil || task.ErrorCode(err) != task.CodeUnavailable {
		t.Fatalf("err = %v, want the worker's exit at once", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(10 * time.Second)
	for running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the forked child %d outlived its worker", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLargeAnswer: an answer of several megabytes is one protocol line.
func TestLargeAnswer(t *testing.T) {
	t.Parallel()
	r := setup(t, "def agent(inputs):\n    return 'é' * (3 << 20)\n", "agent")
	if got := invoke(t, r, "x"); got != strings.Repeat("é", 3<<20) {
		t.Errorf("answer of %d bytes, want %d", len(got), len("é")*(3<<20))
	}
}

// TestBlockedLoopRestartsTheWorker: an async function that blocks the
// event loop cannot be canceled; once the worker does not even answer a
// ping it is killed, and the next attempt gets a new one. A coroutine
// that takes its time to end after a cancel, on a loop that answers,
// keeps its worker.
func TestBlockedLoopRestartsTheWorker(t *testing.T) {
	t.Parallel()
	r := setup(t, `
import asyncio, os, time
async def agent(inputs):
    if inputs["message"] == "block":
        time.sleep(30)  # blocks the loop: the bug this guards against
    if inputs["message"] == "slow cleanup":
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(3)
    return "pid %d" % os.getpid()
`, "agent")
	first := invoke(t, r, "x")

	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err := r.Invoke(ctx, agenttest.Request("slow cleanup"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow cleanup: %v, want the deadline", err)
	}
	if got := invoke(t, r, "x"); got != first {
		t.Errorf("a slow but responsive worker was replaced: %s, then %s", first, got)
	}

	ctx, cancel = context.WithTimeout(t.Context(), 500*time.Millisecond)
	_, err = r.Invoke(ctx, agenttest.Request("block"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("block: %v, want the deadline", err)
	}
	got := invoke(t, r, "x")
	if got == first {
		t.Errorf("the blocked worker still serves")
	}
	if !processGone(t, first) {
		t.Errorf("the blocked worker still runs")
	}
}

// TestOutputBeforeReady: what the interpreter's own start prints on
// standard output (a sitecustomize, a .pth file), before the worker has
// taken its descriptor, is logged and skipped.
func TestOutputBeforeReady(t *testing.T) {
	t.Parallel()
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte("print('hello from sitecustomize')\nprint('{\"op\": \"result\"}')\nprint('{\"op\": \"chunk\", \"id\": \"x\"}')\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := setup(t, "def agent(inputs):\n    return 'ok'\n", "agent", func(s *Settings) {
		s.Env = map[string]string{"PYTHONPATH": site}
	})
	if got := invoke(t, r, "x"); got != "ok" {
		t.Errorf("answer = %q", got)
	}
}

// TestDecoratedGenerators: a decorator hides that a function is a
// generator, an async generator or a coroutine function until it is
// called; the answer still streams (or is awaited).
func TestDecoratedGenerators(t *testing.T) {
	t.Parallel()
	const module = `
import asyncio, functools
def plain(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        return f(*a, **k)
    return wrapper

@plain
def gen(inputs):
    yield "a"
    yield "b"

@plain
async def agen(inputs):
    yield "c"
    yield "d"

@plain
async def coro(inputs):
    await asyncio.sleep(0)
    return "e"
`
	for attr, want := range map[string]string{"gen": "a|b|", "agen": "c|d|", "coro": ""} {
		t.Run(attr, func(t *testing.T) {
			t.Parallel()
			r := setup(t, module, attr)
			var rec agenttest.Recorder
			res, err := r.Stream(t.Context(), agenttest.Request("x"), rec.Emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rec.Texts(), "|"); got != want {
				t.Errorf("chunks = %q, want %q", got, want)
			}
			whole := "e" // the coroutine's answer, not streamed
			if want != "" {
				agenttest.CheckChunks(t, rec.Chunks(), res)
				whole = strings.ReplaceAll(want, "|", "")
			}
			if got := agenttest.ResultText(t, res); got != whole {
				t.Errorf("result = %q, want %q", got, whole)
			}
		})
	}
}

// An attempt after feedback gives the worker the whole task: the text
// holds the request, the rejected answer and what to fix, and the data is
// the request's (the feedback message has none).
func TestInputAfterFeedback(t *testing.T) {
	t.Parallel()
	request := task.Message{ID: "m1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("order please"), task.DataPart([]byte(`{"order":"A-7"}`))}}
	rejected := task.Message{ID: "a1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("no order")},
		Metadata: map[string]any{task.RetryKey: task.RetryAnswer}}
	feedback := task.Message{ID: "f1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("name the order")},
		Metadata: map[string]any{task.RetryKey: task.RetryFeedback}}
	req := &task.Request{TaskID: "t", ContextID: "c", Message: feedback, History: []task.Message{request, rejected, feedback}}
	in := inputOf(req)
	if string(in.Data) != `{"order":"A-7"}` {
		t.Errorf("data = %s, want the request's", in.Data)
	}
	for _, want := range []string{"order please", task.RetryAnswerHeading, "no order", task.RetryFeedbackHeading, "name the order"} {
		if !strings.Contains(in.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, in.Text)
		}
	}
}
