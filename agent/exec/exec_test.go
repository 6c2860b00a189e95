package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	pexec "github.com/pactum/pactum/agent/exec"
	"github.com/pactum/pactum/task"
)

// stuck bounds every test: a runtime that fails to stop its command fails
// the test instead of hanging it. It is never what a test measures.
const stuck = 30 * time.Second

type bundle struct {
	agent agent.Agent
	ctx   context.Context
}

// setup builds an exec agent from YAML settings, as configuration does,
// with testdata as the configuration's directory.
func setup(t *testing.T, settings string) bundle {
	t.Helper()
	base, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	spec := agenttest.Spec(t, "exec", settings)
	spec.BaseDir = base
	a, err := agent.New(context.Background(), spec)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stuck)
	t.Cleanup(cancel)
	return bundle{agent: a, ctx: ctx}
}

func (b bundle) invoke(t *testing.T, text string) *task.Result {
	t.Helper()
	res, err := b.agent.Invoke(b.ctx, agenttest.Request(text))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res
}

func TestStdinInput(t *testing.T) {
	t.Parallel()
	b := setup(t, `command: [./stdin.sh]`)
	res := b.invoke(t, "hello\nworld")
	if got := agenttest.ResultText(t, res); got != "got: hello\nworld" {
		t.Errorf("text = %q", got)
	}
	if res.Artifacts[0].Name != "output" || res.Message.Text() != "got: hello\nworld" || res.Message.Role != task.RoleAgent {
		t.Errorf("result = %+v", res)
	}
}

func TestArgInput(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./args.sh, --flag]\ninput: arg\n")
	if got := agenttest.ResultText(t, b.invoke(t, "two words")); got != "--flag\ntwo words" {
		t.Errorf("text = %q", got)
	}
}

func TestTemplating(t *testing.T) {
	t.Parallel()
	b := setup(t, `
command:
  - ./args.sh
  - "--task={{.TaskID}}"
  - "{{.ContextID}}"
  - "{{.Attempt}}"
  - "{{.Action}} by {{.Actor}}"
  - "{{.Data}}"
  - "{{.Input}}"
  - "{{json .Input}}"
input: none
`)
	req := agenttest.Request(`say "hi"`)
	req.Attempt = 3
	req.Message.Parts = append(req.Message.Parts, task.DataPart(json.RawMessage(`{"k":1}`)))
	res, err := b.agent.Invoke(b.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"--task=task-1", "ctx-1", "3", "ask by alice", `{"k":1}`, `say "hi"`, `"say \"hi\""`}, "\n")
	if got := agenttest.ResultText(t, res); got != want {
		t.Errorf("text =\n%s\nwant\n%s", got, want)
	}
}

func TestJSONOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		answer string
		kind   task.PartKind
		want   string
	}{
		{answer: "/msg", kind: task.PartText, want: "plain <tag> & more"},
		{answer: "/result/text", kind: task.PartText, want: "hello from json"},
		{answer: "/result", kind: task.PartData, want: `{"score":0.9,"text":"hello from json"}`},
		{answer: "/items", kind: task.PartData, want: `["a","b"]`},
		{answer: "/items/1", kind: task.PartText, want: "b"},
		{answer: "/n", kind: task.PartText, want: "7"},
		{answer: "", kind: task.PartData, want: `{"result": {"text": "hello from json", "score": 0.9}, "items": ["a", "b"], "msg": "plain <tag> & more", "n": 7}`},
	}
	for _, tt := range tests {
		b := setup(t, "command: [./json.sh]\noutput: json\nanswer: "+strconv.Quote(tt.answer))
		res := b.invoke(t, "")
		p := res.Artifacts[0].Parts[0]
		if p.Kind != tt.kind {
			t.Errorf("answer %q: part kind = %s, want %s", tt.answer, p.Kind, tt.kind)
			continue
		}
		got := p.Text
		if p.Kind == task.PartData {
			got = string(p.Data)
			if !jsonEqual(t, got, tt.want) {
				t.Errorf("answer %q: data = %s, want %s", tt.answer, got, tt.want)
			}
			if !jsonEqual(t, res.Message.Text(), tt.want) {
				t.Errorf("answer %q: message = %s, want the JSON", tt.answer, res.Message.Text())
			}
			continue
		}
		if got != tt.want || res.Message.Text() != tt.want {
			t.Errorf("answer %q: text = %q, message %q; want %q", tt.answer, got, res.Message.Text(), tt.want)
		}
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestJSONOutputErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./json.sh]\noutput: json\nanswer: /nope")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
	if err == nil || !strings.Contains(err.Error(), `"/nope"`) || task.IsPermanent(err) {
		t.Errorf("missing answer: err = %v, want a retryable error naming the pointer", err)
	}
	b = setup(t, "command: [./args.sh]\ninput: arg\noutput: json")
	_, err = b.agent.Invoke(b.ctx, agenttest.Request("not json"))
	if err == nil || !strings.Contains(err.Error(), "invalid JSON") {
		t.Errorf("non-JSON output: err = %v", err)
	}
}

func TestStreamLinesArriveWhileRunning(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./lines.sh]\ninput: arg\nstream: true")
	flag := filepath.Join(t.TempDir(), "go-on")
	var rec agenttest.Recorder
	emit := func(c task.ArtifactChunk) error {
		// lines.sh cannot print its second line, let alone exit, before
		// this file exists: the first chunk arrived while it ran.
		if len(rec.Chunks()) == 0 {
			if err := os.WriteFile(flag, nil, 0o600); err != nil {
				t.Error(err)
			}
		}
		return rec.Emit(c)
	}
	res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(flag), emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Texts(); !reflect.DeepEqual(got, []string{"first\n", "second\n", ""}) {
		t.Errorf("chunks = %q", got)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
	if got := agenttest.ResultText(t, res); got != "first\nsecond" {
		t.Errorf("result = %q", got)
	}
	if m := agent.MetadataOf(b.agent); !m.Streaming || m.Type != "exec" {
		t.Errorf("metadata = %+v", m)
	}
}

func TestStreamOffEmitsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./args.sh, a, b]\ninput: none")
	var rec agenttest.Recorder
	res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(""), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Chunks()); n != 0 {
		t.Errorf("stream: false emitted %d chunks", n)
	}
	if got := agenttest.ResultText(t, res); got != "a\nb" {
		t.Errorf("result = %q", got)
	}
}

func TestStreamPartialLastLine(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [printf, 'one\\ntwo']\ninput: none\nstream: true")
	var rec agenttest.Recorder
	res, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(""), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Texts(); !reflect.DeepEqual(got, []string{"one\n", "two", ""}) {
		t.Errorf("chunks = %q", got)
	}
	agenttest.CheckChunks(t, rec.Chunks(), res)
}

// startChild runs spawn.sh-like scripts through Stream and cancels the
// attempt as soon as the script has reported its child's pid.
func startChild(t *testing.T, b bundle, ctx context.Context, cancel context.CancelFunc) (int, error) {
	t.Helper()
	pid := 0
	_, err := b.agent.(agent.Streamer).Stream(ctx, agenttest.Request(""), func(c task.ArtifactChunk) error {
		if pid == 0 {
			p, err := strconv.Atoi(strings.TrimSpace(agenttest.PartsText(c.Artifact.Parts)))
			if err != nil {
				t.Errorf("pid line: %v", err)
			}
			pid = p
			if cancel != nil {
				cancel()
			}
		}
		return nil
	})
	if pid == 0 {
		t.Fatalf("the script never reported its child (err %v)", err)
	}
	return pid, err
}

// waitGone waits until pid has exited (a zombie counts: it runs no more and
// only waits for its new parent to reap it).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(stuck)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// The state follows the parenthesized command name.
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d is still running", pid)
}

func TestCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./spawn.sh]\ninput: none\nstream: true")
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	pid, err := startChild(t, b, ctx, cancel)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	waitGone(t, pid)
}

func TestCanceledBeforeStart(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./args.sh]")
	ctx, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err := b.agent.Invoke(ctx, agenttest.Request(""))
	if !errors.Is(err, context.Canceled) || task.IsPermanent(err) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCancelEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./stubborn.sh]\ninput: none\nstream: true\nkill_grace: 50ms")
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	pid, err := startChild(t, b, ctx, cancel)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	waitGone(t, pid)
}

func TestTimeoutKills(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./spawn.sh]\ninput: none\nstream: true\ntimeout: 200ms")
	pid, err := startChild(t, b, b.ctx, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 200ms") || task.IsPermanent(err) {
		t.Errorf("err = %v, want a retryable timeout", err)
	}
	if b.ctx.Err() != nil {
		t.Fatal("the test's own deadline ended the attempt")
	}
	waitGone(t, pid)
}

func TestNonZeroExit(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./fail.sh, '4']\ninput: none")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "exited with code 4") || !strings.HasSuffix(msg, "the real reason") {
		t.Errorf("err = %q, want the exit code and the end of stderr", msg)
	}
	if strings.Contains(msg, "noise line 000") || len(msg) > 2300 {
		t.Errorf("err holds %d bytes and the start of stderr; want only its last ~2 KiB", len(msg))
	}
	if task.IsPermanent(err) {
		t.Error("exit code 4 is not listed as permanent")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Errorf("errors.As ExitError = %v", exit)
	}
}

func TestPermanentExitCodes(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./fail.sh, '3']\ninput: none\npermanent_exit_codes: [2, 3]")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "exited with code 3") {
		t.Errorf("err = %v, want a permanent failure", err)
	}
}

func TestCommandNotFound(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"pactum-test-no-such-command", "./no-such-script.sh", "/nonexistent/agent"} {
		b := setup(t, "command: ["+cmd+"]")
		_, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), cmd) {
			t.Errorf("%s: err = %v, want a permanent error naming it", cmd, err)
		}
	}
}

func TestEnv(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("PACTUM_TEST_SECRET", "s3cret")
	b := setup(t, `
command: [./env.sh]
env:
  GREETING: hello
  TOKEN: "Bearer ${PACTUM_TEST_SECRET}"
`)
	home, ok := os.LookupEnv("HOME")
	if !ok {
		home = "unset"
	}
	if got := agenttest.ResultText(t, b.invoke(t, "")); got != "hello|Bearer s3cret|"+home {
		t.Errorf("inherited env: %q", got)
	}
	b = setup(t, `
command: [/bin/sh, ./env.sh]
inherit_env: false
env: {GREETING: hi}
`)
	if got := agenttest.ResultText(t, b.invoke(t, "")); got != "hi||unset" {
		t.Errorf("env without inheritance: %q", got)
	}
	b = setup(t, "command: [/bin/sh, ./env.sh]\ninherit_env: false")
	if got := agenttest.ResultText(t, b.invoke(t, "")); got != "||unset" {
		t.Errorf("empty env without inheritance: %q", got)
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	pwd, err := filepath.Abs("testdata/pwd.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dir, want string }{
		{"", base},
		{"work", filepath.Join(base, "work")},
		{filepath.Join(base, "work"), filepath.Join(base, "work")},
	} {
		spec := agenttest.Spec(t, "exec", "command: ["+pwd+"]\ndir: "+strconv.Quote(tt.dir))
		spec.BaseDir = base
		a, err := agent.New(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Invoke(context.Background(), agenttest.Request(""))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := filepath.EvalSymlinks(agenttest.ResultText(t, res))
		want, _ := filepath.EvalSymlinks(tt.want)
		if got != want {
			t.Errorf("dir %q: ran in %q, want %q", tt.dir, got, want)
		}
	}
}

func TestOutputLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./flood.sh]\nmax_output_bytes: 1000")
	_, err := b.agent.Invoke(b.ctx, agenttest.Request(""))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "max_output_bytes") {
		t.Errorf("err = %v, want a permanent output limit error", err)
	}
	b = setup(t, "command: [./args.sh, fits]\ninput: none\nmax_output_bytes: 6")
	if got := agenttest.ResultText(t, b.invoke(t, "")); got != "fits" {
		t.Errorf("output at the limit: %q", got)
	}
}

func TestEmitErrorStopsCommand(t *testing.T) {
	t.Parallel()
	b := setup(t, "command: [./flood.sh]\nstream: true")
	boom := errors.New("subscriber gone")
	_, err := b.agent.(agent.Streamer).Stream(b.ctx, agenttest.Request(""), func(task.ArtifactChunk) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"input: stdin", "command: required"},
		{"command: ['']", "command: required"},
		{"command: [a]\ninput: file", "input: must be stdin, arg or none"},
		{"command: [a]\noutput: xml", "output: must be text or json"},
		{"command: [a]\nanswer: /x", "answer: needs output: json"},
		{"command: [a]\noutput: json\nanswer: x", "answer: JSON pointer"},
		{"command: [a]\ninput_required: /needs_input", "input_required: needs output: json"},
		{"command: [a]\noutput: text\ninput_required: /needs_input", "input_required: needs output: json"},
		{"command: [a]\noutput: json\ninput_required: needs_input", "input_required: JSON pointer"},
		{"command: [a]\noutput: json\ninput_required: /a~2", "input_required: JSON pointer"},
		{"command: [a]\noutput: json\nstream: true\ninput_required: /needs_input", "input_required: cannot be combined with stream: true"},
		{"command: [a, '{{.Nope}}']", "command[1]:"},
		{"command: [a, '{{.Input']", "command[1]:"},
		{"command: [a]\ntimeout: -1s", "timeout: must not be negative"},
		{"command: [a]\nkill_grace: -1s", "kill_grace: must not be negative"},
		{"command: [a]\nmax_output_bytes: -1", "max_output_bytes: must not be negative"},
		{"command: [a]\npermanent_exit_codes: [0]", "permanent_exit_codes[0]"},
		{"command: [a]\nenv: {X: '${PACTUM_TEST_SURELY_UNSET}'}", "env.X: environment variable PACTUM_TEST_SURELY_UNSET is not set"},
		{"command: [a]\ndir: no-such-dir", "dir:"},
		{"command: [a]\ndir: args.sh", "dir:"},
		{"command: [a]\ntimeout: 5", "time.Duration"},
		{"command: [a]\ncomand: [b]", "comand"},
	}
	base, _ := filepath.Abs("testdata")
	for _, tt := range tests {
		spec := agenttest.Spec(t, "exec", tt.yaml)
		spec.BaseDir = base
		_, err := agent.New(context.Background(), spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("settings %q: err = %v, want it to contain %q", tt.yaml, err, tt.want)
		}
	}
}

func TestNewForGo(t *testing.T) {
	t.Parallel()
	r, err := pexec.New(pexec.Settings{Command: []string{"testdata/args.sh", "{{.Action}}"}, Input: pexec.InputNone})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Invoke(context.Background(), agenttest.Request(""))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "ask" {
		t.Errorf("text = %q", got)
	}
	if m := r.Metadata(); m.Streaming || m.Description != "Runs args.sh" {
		t.Errorf("metadata = %+v", m)
	}
}
