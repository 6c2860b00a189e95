package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestSendAnswerOnce: send prints the answer exactly once on stdout and
// what it says about the task (its id, its states) on stderr, streaming
// or not; --json keeps every event on stdout.
func TestSendAnswerOnce(t *testing.T) {
	t.Parallel()
	n := serve(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"stream", []string{n.url + "/agents/echo", "hello once"}, "hello once\n"},
		{"stream, answered later", []string{n.url + "/agents/slow-echo", "later"}, "slow: later\n"},
		{"no stream", []string{"--no-stream", n.url + "/agents/echo", "blocking"}, "blocking\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runMain(append([]string{"send"}, c.args...)...)
			if code != 0 || stdout != c.want {
				t.Fatalf("exit %d, stdout %q; want 0 and the answer once, %q\nstderr:\n%s", code, stdout, c.want, stderr)
			}
			id := sentTaskID(t, stderr)
			if strings.Contains(stderr, strings.TrimSpace(c.want)) {
				t.Errorf("stderr repeats the answer:\n%s", stderr)
			}
			if !strings.Contains(stderr, "→ "+string(a2a.TaskStateCompleted)) && !strings.Contains(stderr, "("+string(a2a.TaskStateCompleted)+")") {
				t.Errorf("stderr does not say the task %s completed:\n%s", id, stderr)
			}
		})
	}
	code, stdout, stderr := runMain("send", "--json", n.url+"/agents/echo", "as json")
	if code != 0 || stderr != "" {
		t.Fatalf("send --json: exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
	}
	for i, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var sr a2a.StreamResponse
		if err := json.Unmarshal([]byte(line), &sr); err != nil || sr.Event == nil {
			t.Fatalf("--json line %d is not a StreamResponse (%v): %s", i+1, err, line)
		}
	}
}

// fakeStreamingAgent serves an A2A agent whose stream sends the task as
// working and then ends, as a server that crashed or dropped the
// connection would.
func fakeStreamingAgent(t *testing.T) string {
	t.Helper()
	var url string
	h := http.NewServeMux()
	h.HandleFunc("GET /.well-known/agent-card.json", func(w http.ResponseWriter, _ *http.Request) {
		card := fmt.Sprintf(`{"name":"cut","description":"cut","version":"1","capabilities":{"streaming":true},
			"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
			"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, url)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, card)
	})
	h.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"task\":{\"id\":\"cut-task\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n", req.ID)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"artifactUpdate\":{\"taskId\":\"cut-task\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"text\":\"half an ans\"}]}}}}\n\n", req.ID)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url = srv.URL
	return url
}

// TestSendStreamEndsUnfinished: a stream that ends while the task is
// still working is an error (exit 1) that says so and how to follow it;
// what had streamed stays on stdout, its line ended.
func TestSendStreamEndsUnfinished(t *testing.T) {
	t.Parallel()
	url := fakeStreamingAgent(t)
	code, stdout, stderr := runMain("send", url, "hi")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	if stdout != "half an ans\n" {
		t.Errorf("stdout %q, want what streamed, its line ended", stdout)
	}
	want := "pactum: the stream ended while task cut-task was TASK_STATE_WORKING; it may go on: follow it with 'pactum tasks watch cut-task'"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	code, stdout, _ = runMain("send", "--json", url, "hi")
	if code != 1 || strings.Count(stdout, "\n") != 2 {
		t.Errorf("send --json of a cut stream: exit %d, stdout %q; want 1 and the two events", code, stdout)
	}
}

// watchConfig serves a slow echo agent and an exec agent that fails after
// a second, twice.
const watchConfig = `agents:
  - name: slow-echo
    type: echo
    echo: {delay: 2s, prefix: "slow: "}
  - name: fail
    type: exec
    exec:
      command: [sh, -c, "sleep 1; echo 'it broke' >&2; exit 3"]
      input: none
    retry: {max_attempts: 2, initial_backoff: 1ms, max_backoff: 1ms, jitter: 0}
`

// TestSendInterruptedThenWatch: Ctrl-C on a `pactum send` (a real
// process, a real SIGINT) exits 130 saying the task goes on and how to
// follow it; `pactum tasks watch ID` in another process re-attaches to it
// through the store and prints its answer once it has one. A failing task
// watched ends the watch with exit 1, each attempt said on the way.
func TestSendInterruptedThenWatch(t *testing.T) {
	t.Parallel()
	bin := pactumBinary(t)
	cfg := filepath.Join(t.TempDir(), "watch.yaml")
	if err := os.WriteFile(cfg, []byte(watchConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	n := serve(t, "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	send := exec.CommandContext(ctx, bin, "send", n.url+"/agents/slow-echo", "keep going")
	var stdout bytes.Buffer
	send.Stdout = &stdout
	errPipe, err := send.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := send.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errPipe)
	if !sc.Scan() {
		t.Fatalf("send printed nothing on stderr (%v)", sc.Err())
	}
	id := sentTaskID(t, sc.Text())
	if err := send.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	err = send.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted send: %v, want exit status 130\nstderr: %s", err, rest.String())
	}
	for _, want := range []string{"interrupted; task " + id + " goes on", "pactum tasks watch " + id, "pactum tasks cancel " + id} {
		if !strings.Contains(rest.String(), want) {
			t.Errorf("interrupted send's stderr lacks %q:\n%s", want, rest.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("interrupted send printed %q on stdout before any answer", stdout.String())
	}

	watch := func(id string) (code int, stdout, stderr string) {
		cmd := exec.CommandContext(ctx, bin, "tasks", "watch", id, "--store", n.dsn)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("tasks watch: %v", err)
		}
		return cmd.ProcessState.ExitCode(), o.String(), e.String()
	}
	code, out, errOut := watch(id)
	if code != 0 || out != "slow: keep going\n" {
		t.Fatalf("tasks watch of the interrupted task: exit %d, stdout %q; want 0 and the answer\nstderr:\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "task "+id+" on slow-echo: ") || !strings.Contains(errOut, "→ succeeded (attempt 1 of 3)") {
		t.Errorf("tasks watch's stderr does not follow the task to succeeded:\n%s", errOut)
	}

	failID, _, _ := mustSend(t, "--no-wait", n.url+"/agents/fail", "fail")
	code, out, errOut = watch(failID)
	if code != 1 || out != "" {
		t.Fatalf("tasks watch of a failing task: exit %d, stdout %q; want 1 and no answer\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"→ in_progress (attempt 2 of 2)", "→ dead_letter (attempt 2 of 2)", "pactum: task " + failID + " ended dead_letter (attempt 2 of 2): agent_failed: attempt 2 of 2 failed"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("tasks watch's stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code, _, errOut := watch("no-such-task"); code != 1 || !strings.Contains(errOut, "no-such-task") {
		t.Errorf("tasks watch of an unknown task: exit %d, stderr %q", code, errOut)
	}
}

// complete runs cobra's hidden __complete command, as a shell's completion
// script does, and returns the candidates and the directive line.
func complete(t *testing.T, args ...string) (cands []string, directive string) {
	t.Helper()
	out := mustRun(t, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// TestFirstHourCLI: --version, shell completion of task ids, states and
// agents, and `tasks get` laid out for reading, against a served store.
func TestFirstHourCLI(t *testing.T) {
	t.Parallel()
	n := serve(t)

	if v, ver := mustRun(t, "--version"), mustRun(t, "version"); v != ver || !strings.HasPrefix(v, "pactum ") {
		t.Errorf("--version printed %q, version %q; want the same \"pactum …\" line", v, ver)
	}

	// A multi-line message: each line of it under its label.
	id, out, _ := mustSend(t, n.url+"/agents/echo", "first line\nsecond line\n\nfourth line")
	if out != "first line\nsecond line\n\nfourth line\n" {
		t.Fatalf("send printed %q", out)
	}
	got := mustRun(t, "tasks", "get", id, "--store", n.dsn)
	for _, want := range []string{
		"\n[user]   first line\n         second line\n\n         fourth line\n",
		"\n[agent]  first line\n         second line\n\n         fourth line\n",
		"\nattempt  1 of 3\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tasks get lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`\nartifact [0-9a-f-]+: first line\n {9}second line\n`).MatchString(got) {
		t.Errorf("tasks get does not indent the artifact's lines under it:\n%s", got)
	}
	slowID, _, _ := mustSend(t, "--no-wait", n.url+"/agents/slow-echo", "slowly")

	// Task ids, newest first, described by agent and state, for every
	// command that takes one.
	for _, cmd := range [][]string{{"tasks", "get"}, {"tasks", "timeline"}, {"tasks", "cancel"}, {"tasks", "retry"}, {"tasks", "watch"}, {"tasks", "export"}} {
		cands, dir := complete(t, append(cmd, "--store", n.dsn, "")...)
		if len(cands) != 2 || !strings.HasPrefix(cands[0], slowID+"\tslow-echo ") || !strings.HasPrefix(cands[1], id+"\techo succeeded ") {
			t.Errorf("%v completes %q, want %s (slow-echo) then %s (echo succeeded)", cmd, cands, slowID, id)
		}
		if dir != ":4" { // ShellCompDirectiveNoFileComp
			t.Errorf("%v: directive %s, want :4", cmd, dir)
		}
	}
	if cands, _ := complete(t, "tasks", "get", "--store", n.dsn, id[:len(id)-3]); len(cands) != 1 || !strings.HasPrefix(cands[0], id+"\t") {
		t.Errorf("a prefix of %s completes %q", id, cands)
	}
	if cands, _ := complete(t, "tasks", "get", "--store", n.dsn, id, ""); len(cands) != 0 {
		t.Errorf("a second task id is completed: %q", cands)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if cands, _ := complete(t, "tasks", "get", "--store", "sqlite://"+missing, ""); len(cands) != 0 {
		t.Errorf("a store that does not exist completes %q", cands)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("completing against a missing SQLite store created it (%v)", err)
	}
	if cands, _ := complete(t, "runs", "report", "--store", n.dsn, ""); len(cands) != 0 {
		t.Errorf("runs report completes %q in a store without runs", cands)
	}

	cands, dir := complete(t, "tasks", "list", "--state", "queued,s")
	if !slices.Equal(cands, []string{"queued,succeeded"}) || dir != ":6" { // NoSpace|NoFileComp
		t.Errorf("--state queued,s completes %q (%s), want queued,succeeded (:6)", cands, dir)
	}
	if cands, _ := complete(t, "tasks", "list", "--state", ""); len(cands) != 10 {
		t.Errorf("--state completes %d states, want the 10: %q", len(cands), cands)
	}
	if cands, _ := complete(t, "tasks", "list", "--agent", ""); !slices.Equal(cands, []string{"echo\techo", "slow-echo\techo"}) {
		t.Errorf("--agent completes %q, want the demo agents", cands)
	}
	if cands, _ := complete(t, "tasks", "list", "--store", n.dsn, "--parent", "ec"); len(cands) != 0 {
		t.Errorf("--parent ec completes %q", cands)
	}
	script := mustRun(t, "completion", "bash")
	if !strings.Contains(script, "__complete") {
		t.Errorf("completion bash printed no script that calls __complete")
	}
}
