package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to tamper with the store

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/cli"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/internal/version"
	"github.com/pactum/pactum/task"
)

// commandTimeout bounds every command a test runs.
const commandTimeout = 30 * time.Second

// run executes one command line through the real command tree and returns
// what it printed on stdout. stderr is kept for failure messages.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	root := cli.NewRoot(&stdout, &stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if stderr.Len() > 0 {
		t.Logf("pactum %s: stderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	return stdout.String(), err
}

// runBoth is run returning stderr too, for commands that say things about
// their work there (send, tasks watch).
func runBoth(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	root := cli.NewRoot(&out, &errb)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// mustSend runs a send that must succeed and returns the task id it
// reported on stderr, and both outputs.
func mustSend(t *testing.T, args ...string) (id, stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runBoth(t, append([]string{"send"}, args...)...)
	if err != nil {
		t.Fatalf("pactum send %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return sentTaskID(t, stderr), stdout, stderr
}

// mustRun is run for commands that must succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("pactum %s: %v\nstdout:\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// runMain runs the command line through Main, as cmd/pactum does, and
// returns the exit code and both outputs.
func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestConfigCheckExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples/*.yaml found")
	}
	for _, f := range files {
		if b := filepath.Base(f); strings.HasPrefix(b, "contract") || b == "toolspecs.yaml" {
			continue // a contract (TestContractCheckExample) or a ToolSpecs file (package toolspec), not a configuration
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			out := mustRun(t, "config", "check", f)
			if !strings.HasPrefix(out, f+": OK (") {
				t.Fatalf("config check %s printed %q, want %q…", f, out, f+": OK (")
			}
		})
	}
}

func TestConfigCheckBroken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		yaml string
		// want are the file:line:col and field-path fragments the error
		// must name (the file name is prepended).
		want []string
	}{
		{
			name: "unknown settings field",
			yaml: "agents:\n  - name: x\n    type: echo\n    echo:\n      prefx: \"a\"\n",
			want: []string{":5:7: agents[0].echo.prefx: unknown field \"prefx\""},
		},
		{
			name: "unknown runtime type",
			yaml: "agents:\n  - name: x\n    type: echoo\n",
			want: []string{":3:11: agents[0].type: unknown runtime type \"echoo\""},
		},
		{
			name: "wrong value type",
			yaml: "agents:\n  - name: x\n    type: echo\n    retry:\n      max_attempts: nope\n",
			want: []string{":5:21: agents[0].retry.max_attempts:"},
		},
		{
			name: "toolspec naming an operation its adapter lacks",
			yaml: "agents:\n  - {name: x, type: echo, toolspec: find}\ntoolspecs:\n  - tool_id: find\n    execution_mode: remote\n    adapter_id: meilisearch\n    adapter_operation: find\n",
			want: []string{":7:24: toolspecs[0].adapter_operation: assertion 3 (adapter operation) failed for ToolSpec \"find\""},
		},
		{
			name: "agent naming an unknown toolspec",
			yaml: "agents:\n  - {name: x, type: echo, toolspec: nope}\n",
			want: []string{":2:37: agents[0].toolspec: unknown toolspec \"nope\""},
		},
		{
			name: "misspelt key, so a required one is missing",
			yaml: "agents:\n  - name: x\n    tipe: echo\n",
			want: []string{":2:5: agents[0].type: required", ":3:5: agents[0].tipe: unknown field \"tipe\""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "pactum.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := run(t, "config", "check", file)
			if err == nil {
				t.Fatalf("config check of a broken file succeeded, printed %q", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), file+w) {
					t.Errorf("error %q does not name %q", err, file+w)
				}
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != file || ce.Line == 0 || ce.Column == 0 || ce.Path == "" {
				t.Errorf("error %#v is not a *config.Error with file, line, column and path", err)
			}
			if code, _, stderr := runMain("config", "check", file); code != 1 || !strings.Contains(stderr, file+tc.want[0]) {
				t.Errorf("Main: exit %d, stderr %q; want exit 1 naming %q", code, stderr, file+tc.want[0])
			}
		})
	}
}

// TestConfigCheckStore: config check refuses a store DSN that serve would
// refuse, naming file:line:col and the field, and opens, creates and
// connects to nothing while checking.
func TestConfigCheckStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dsn  string // %s is a fresh directory
		want string // a fragment of the problem ("" for a valid DSN)
	}{
		{"unknown sqlite parameter", "sqlite://%s/p.db?journal=wal", `unknown parameter "journal"`},
		{"bad sqlite busy_timeout", "sqlite://%s/p.db?busy_timeout=soon", "busy_timeout"},
		{"sqlite in memory", "sqlite://:memory:", "want a plain file path"},
		{"bad postgres port", "postgres://pactum:s3cret@127.0.0.1:notaport/db", "invalid port"},
		{"bad postgres sslmode", "postgres://pactum:s3cret@127.0.0.1/db?sslmode=sometimes", "sslmode"},
		{"unknown scheme", "mysql://%s/db", `unknown store scheme "mysql"`},
		{"valid sqlite", "sqlite://%s/p.db?synchronous=full&busy_timeout=2s", ""},
		{"valid postgres, nothing listening", "postgres://pactum@127.0.0.1:1/db?sslmode=disable", ""},
		{"valid postgresql, scheme in capitals", "POSTGRESQL://pactum@127.0.0.1:1/db", ""},
		{"valid sqlite, scheme in capitals", "SQLite://%s/p.db", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dsn := tc.dsn
			if strings.Contains(dsn, "%s") {
				dsn = fmt.Sprintf(dsn, dir)
			}
			file := filepath.Join(dir, "pactum.yaml")
			writeFile(t, file, fmt.Sprintf("store: %q\nagents: [{name: echo, type: echo}]\n", dsn))
			out, err := run(t, "config", "check", file)
			if entries, rerr := os.ReadDir(dir); rerr != nil || len(entries) != 1 {
				t.Errorf("config check left %v in its directory (%v), want only the config file", entries, rerr)
			}
			if tc.want == "" {
				if err != nil || !strings.HasPrefix(out, file+": OK (") {
					t.Fatalf("config check of a valid store: %v, printed %q", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("config check accepted store %q, printed %q", dsn, out)
			}
			if !strings.Contains(err.Error(), file+":1:8: store: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %s:1:8: store and %q", err, file, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q repeats the password", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != file || ce.Line != 1 || ce.Column != 8 || ce.Path != "store" {
				t.Errorf("error %#v is not a *config.Error at %s:1:8, path store", err, file)
			}
		})
	}
	// What check refuses, serve refuses too.
	dir := t.TempDir()
	file := filepath.Join(dir, "pactum.yaml")
	writeFile(t, file, fmt.Sprintf("store: %q\nagents: [{name: echo, type: echo}]\n", "sqlite://"+dir+"/p.db?journal=wal"))
	if code, _, stderr := runMain("serve", "--config", file, "--listen", "127.0.0.1:0"); code == 0 || !strings.Contains(stderr, `unknown parameter "journal"`) {
		t.Errorf("serve with an unknown SQLite parameter: exit %d, stderr %q; want a refusal naming it", code, stderr)
	}
}

// TestVersion is not parallel: it sets the package-level Version.
func TestVersion(t *testing.T) {
	out := mustRun(t, "version")
	if v, ok := strings.CutPrefix(strings.TrimSpace(out), "pactum "); !ok || strings.TrimSpace(v) == "" {
		t.Fatalf("version printed %q, want \"pactum <version>\"", out)
	}
	old := version.Version
	t.Cleanup(func() { version.Version = old })
	version.Version = "v1.2.3-test"
	if out := mustRun(t, "version"); out != "pactum v1.2.3-test\n" {
		t.Fatalf("version with -X Version printed %q", out)
	}
}

// TestCommandErrors checks that commands refuse bad input with a message
// that says what is wrong, without needing a server.
func TestCommandErrors(t *testing.T) {
	t.Parallel()
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "p.db")
	mustRun(t, "migrate", "--store", dsn) // read-only commands never create a store
	for _, tc := range []struct {
		args []string
		want string
		code task.Code // when set, the domain code the error must carry
	}{
		{args: []string{"no-such-command"}, want: `unknown command "no-such-command"`},
		{args: []string{"tasks", "list", "--store", dsn, "--state", "bogus"}, want: `unknown task state "bogus"`, code: task.CodeInvalidArgument},
		{args: []string{"tasks", "list", "--store", dsn, "--limit", "1000"}, want: "--limit 1000 is out of range: want 1 to 100", code: task.CodeInvalidArgument},
		{args: []string{"tasks", "list", "--store", dsn, "--limit", "0"}, want: "--limit 0 is out of range: want 1 to 100", code: task.CodeInvalidArgument},
		{args: []string{"runs", "list", "--store", dsn, "--limit", "0"}, want: "--limit 0 is out of range: want 1 to 100", code: task.CodeInvalidArgument},
		{args: []string{"runs", "list", "--store", dsn, "--limit", "101"}, want: "--limit 101 is out of range: want 1 to 100", code: task.CodeInvalidArgument},
		{args: []string{"runs", "list", "--store", dsn, "--limit", "-1"}, want: "--limit -1 is out of range: want 1 to 100", code: task.CodeInvalidArgument},
		{args: []string{"tasks", "get", "nope", "--store", dsn}, want: "task nope not found in store " + dsn + " (from --store)", code: task.CodeNotFound},
		{args: []string{"tasks", "cancel", "nope", "--store", dsn}, want: "task nope not found in store " + dsn + " (from --store)", code: task.CodeNotFound},
		{args: []string{"tasks", "get", "--store", dsn}, want: "accepts 1 arg(s), received 0"},
		{args: []string{"tasks", "list", "--store", "mysql://x"}, want: `unknown scheme "mysql"`},
		{args: []string{"audit", "verify", "--store", "pactum.db"}, want: "has no scheme"},
		{args: []string{"send", "http://127.0.0.1:1", "hi", "-H", "no colon"}, want: `--header "no colon": want Name: value`},
		{args: []string{"serve", "--store", dsn, "--log-format", "xml"}, want: `log format "xml": want text or json`},
		{args: []string{"serve", "--store", dsn, "--log-level", "loud"}, want: `log level "loud"`},
		{args: []string{"config", "check", filepath.Join(t.TempDir(), "missing.yaml")}, want: "missing.yaml"},
	} {
		t.Run(tc.args[0]+" "+tc.want, func(t *testing.T) {
			t.Parallel()
			out, err := run(t, tc.args...)
			if err == nil {
				t.Fatalf("pactum %s succeeded, printed %q", strings.Join(tc.args, " "), out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.code != "" {
				if got := task.ErrorCode(err); got != tc.code {
					t.Errorf("error code %q, want %q", got, tc.code)
				}
			}
		})
	}
}

// testNode is a running `pactum serve` (demo agents, SQLite in a temp dir).
type testNode struct {
	url    string // http://127.0.0.1:PORT
	dsn    string // the store DSN, for the offline commands
	dbPath string
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// serve starts `pactum serve` in a goroutine on a free loopback port and
// waits until /readyz answers. It retries on another port if the one it
// picked was taken meanwhile. extra are further serve arguments.
func serve(t *testing.T, extra ...string) *testNode {
	t.Helper()
	dir := t.TempDir()
	for try := 0; ; try++ {
		n := &testNode{dbPath: filepath.Join(dir, "p.db"), stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan error, 1)}
		n.dsn = "sqlite://" + n.dbPath
		addr := freeAddr(t)
		n.url = "http://" + addr
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel = cancel
		root := cli.NewRoot(n.stdout, n.stderr)
		root.SetArgs(append([]string{"serve", "--listen", addr, "--store", n.dsn, "--log-format", "json", "--drain", "5s"}, extra...))
		go func() { n.done <- root.ExecuteContext(ctx) }()
		err := n.waitReady(20 * time.Second)
		if err == nil {
			t.Cleanup(func() {
				if err := n.stop(); err != nil {
					t.Errorf("serve: %v", err)
				}
			})
			return n
		}
		cancel()
		if try < 2 && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		t.Fatalf("pactum serve did not become ready: %v\nstderr:\n%s", err, n.stderr.String())
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// waitReady polls /readyz until it answers 200, serve exits, or the
// deadline passes.
func (n *testNode) waitReady(within time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case err := <-n.done:
			n.done <- err
			return fmt.Errorf("serve exited: %v", err)
		default:
		}
		resp, err := client.Get(n.url + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(body) == "ready\n" {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("timed out")
}

// stop cancels serve's context and waits (bounded) for it to return.
func (n *testNode) stop() error {
	n.once.Do(func() {
		n.cancel()
		select {
		case err := <-n.done:
			n.err = err
		case <-time.After(15 * time.Second):
			n.err = errors.New("serve did not return within 15s of its context being canceled")
		}
	})
	return n.err
}

func (n *testNode) get(t *testing.T, path string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(n.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var taskLine = regexp.MustCompile(`(?m)^task ([0-9a-f-]{36}) \((TASK_STATE_[A-Z_]+)\)$`)

// sentTaskID returns the task id `send` printed (on stderr) on its first
// line.
func sentTaskID(t *testing.T, out string) string {
	t.Helper()
	m := taskLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("send printed no \"task ID (STATE)\" line:\n%s", out)
	}
	return m[1]
}

// getTask runs `tasks get ID --json` and decodes it.
func getTask(t *testing.T, n *testNode, id string) *task.Task {
	t.Helper()
	out := mustRun(t, "tasks", "get", id, "--json", "--store", n.dsn)
	var tk task.Task
	if err := json.Unmarshal([]byte(out), &tk); err != nil {
		t.Fatalf("tasks get --json printed undecodable JSON: %v\n%s", err, out)
	}
	if tk.ID != id {
		t.Fatalf("tasks get %s returned task %q", id, tk.ID)
	}
	return &tk
}

func artifactText(tk *task.Task) string {
	var b strings.Builder
	for _, a := range tk.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// TestServe drives a real `pactum serve` with the other commands, as a user
// would from a second terminal: send, tasks, agents and audit.
func TestServe(t *testing.T) {
	t.Parallel()
	n := serve(t)
	// The steps build on each other: stop at the first that fails.
	step := func(name string, f func(t *testing.T)) {
		t.Helper()
		if !t.Run(name, f) {
			t.FailNow()
		}
	}

	step("startup", func(t *testing.T) {
		for _, a := range []string{"echo", "slow-echo"} {
			want := fmt.Sprintf("%s/agents/%s/.well-known/agent-card.json", n.url, a)
			if !strings.Contains(n.stdout.String(), want) {
				t.Errorf("serve's stdout does not list %s (the base URL must follow --listen):\n%s", want, n.stdout.String())
			}
		}
		// Every card serve lists is served: not the step agents of
		// workflows and contracts, which have none.
		for _, line := range strings.Split(n.stdout.String(), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != "agent" {
				continue
			}
			if code, _ := n.get(t, strings.TrimPrefix(f[2], n.url)); code != http.StatusOK {
				t.Errorf("serve lists agent %s at %s, which answers %d", f[1], f[2], code)
			}
		}
		if code, body := n.get(t, "/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("/healthz = %d %q, want 200 ok", code, body)
		}
		if code, body := n.get(t, "/agents/echo/.well-known/agent-card.json"); code != http.StatusOK || !strings.Contains(body, n.url+"/agents/echo") {
			t.Errorf("card = %d %s, want 200 naming %s/agents/echo", code, body, n.url)
		}
	})

	var echoID string
	step("send", func(t *testing.T) {
		var out, stderr string
		echoID, out, stderr = mustSend(t, n.url+"/agents/echo", "hello pactum")
		if out != "hello pactum\n" {
			t.Fatalf("send printed %q on stdout, want the answer once: \"hello pactum\\n\"", out)
		}
		if strings.Contains(stderr, "hello pactum") || !strings.Contains(stderr, string(a2a.TaskStateCompleted)) {
			t.Fatalf("send's stderr %q: want the task's states, not the answer again", stderr)
		}
		tk := getTask(t, n, echoID)
		if tk.State != task.StateSucceeded || artifactText(tk) != "hello pactum" || tk.Agent != "echo" {
			t.Fatalf("stored task: state %s, agent %s, artifacts %q; want succeeded echo \"hello pactum\"", tk.State, tk.Agent, artifactText(tk))
		}
	})

	step("send --json", func(t *testing.T) {
		out := mustRun(t, "send", "--json", n.url+"/agents/echo", "one two three")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var last a2a.Event
		var id a2a.TaskID
		for i, line := range lines {
			var sr a2a.StreamResponse
			if err := json.Unmarshal([]byte(line), &sr); err != nil || sr.Event == nil {
				t.Fatalf("line %d is not an A2A StreamResponse (%v): %s", i+1, err, line)
			}
			if id == "" {
				id = sr.TaskInfo().TaskID
			}
			if got := sr.TaskInfo().TaskID; got != id || got == "" {
				t.Fatalf("line %d is about task %q, want %q", i+1, got, id)
			}
			last = sr.Event
		}
		var final a2a.TaskState
		switch v := last.(type) {
		case *a2a.Task:
			final = v.Status.State
		case *a2a.TaskStatusUpdateEvent:
			final = v.Status.State
		}
		if final != a2a.TaskStateCompleted {
			t.Fatalf("last event %T ends in %q, want %s", last, final, a2a.TaskStateCompleted)
		}
		if tk := getTask(t, n, string(id)); artifactText(tk) != "one two three" {
			t.Fatalf("stored artifact %q, want \"one two three\"", artifactText(tk))
		}
	})

	var slowID string
	step("send --no-wait, then tasks cancel", func(t *testing.T) {
		// slow-echo answers after two seconds; --no-wait returns at once,
		// so the task is still running when it is canceled.
		var out, stderr string
		slowID, out, stderr = mustSend(t, "--no-wait", n.url+"/agents/slow-echo", "take your time")
		if st := taskLine.FindStringSubmatch(stderr)[2]; st == string(a2a.TaskStateCompleted) || out != "" {
			t.Fatalf("--no-wait returned a finished task: stdout %q, stderr %q", out, stderr)
		}
		out = mustRun(t, "tasks", "cancel", slowID, "--store", n.dsn)
		if want := fmt.Sprintf("task %s is canceled\n", slowID); out != want {
			t.Fatalf("tasks cancel printed %q, want %q", out, want)
		}
		tk := getTask(t, n, slowID)
		if tk.State != task.StateCanceled || tk.Reason != "canceled from the command line" {
			t.Fatalf("task is %s (%q), want canceled with the command line's reason", tk.State, tk.Reason)
		}
		_, err := run(t, "tasks", "cancel", slowID, "--store", n.dsn)
		if task.ErrorCode(err) != task.CodeNotCancelable {
			t.Fatalf("second cancel: err %v (code %q), want %s", err, task.ErrorCode(err), task.CodeNotCancelable)
		}
	})

	step("tasks list", func(t *testing.T) {
		out := mustRun(t, "tasks", "list", "--store", n.dsn)
		rows := map[string][]string{}
		for _, line := range strings.Split(out, "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 3 {
				rows[f[0]] = f
			}
		}
		if len(rows) != 3 {
			t.Errorf("tasks list shows %d tasks, want 3:\n%s", len(rows), out)
		}
		for id, want := range map[string][2]string{echoID: {"echo", "succeeded"}, slowID: {"slow-echo", "canceled"}} {
			if r := rows[id]; r == nil || r[1] != want[0] || r[2] != want[1] {
				t.Errorf("tasks list row of %s = %v, want agent %s, state %s:\n%s", id, r, want[0], want[1], out)
			}
		}
		out = mustRun(t, "tasks", "list", "--store", n.dsn, "--state", "canceled", "--json")
		var page task.TaskPage
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatalf("tasks list --json: %v\n%s", err, out)
		}
		if len(page.Tasks) != 1 || page.Tasks[0].ID != slowID || page.TotalSize != 1 {
			t.Fatalf("tasks list --state canceled = %+v, want only %s", page, slowID)
		}
	})

	step("tasks timeline", func(t *testing.T) {
		want := [][2]string{
			{"requested", "validated"}, {"validated", "queued"}, {"queued", "in_progress"}, {"in_progress", "succeeded"},
		}
		out := mustRun(t, "tasks", "timeline", echoID, "--store", n.dsn)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(want)+1 || !strings.HasPrefix(lines[0], "SEQ") {
			t.Fatalf("timeline has %d lines, want a header and %d transitions:\n%s", len(lines), len(want), out)
		}
		for i, line := range lines[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != fmt.Sprint(i+1) || f[2] != want[i][0] || f[3] != want[i][1] {
				t.Errorf("timeline row %d = %q, want seq %d %s → %s", i+1, line, i+1, want[i][0], want[i][1])
			}
		}
		var recs []task.Record
		if err := json.Unmarshal([]byte(mustRun(t, "tasks", "timeline", echoID, "--json", "--store", n.dsn)), &recs); err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(want) || recs[3].To != task.StateSucceeded || recs[3].Attempt != 1 || recs[3].Node == "" {
			t.Fatalf("timeline --json = %+v", recs)
		}
	})

	step("tasks retry of a succeeded task", func(t *testing.T) {
		out, err := run(t, "tasks", "retry", echoID, "--store", n.dsn)
		if err == nil {
			t.Fatalf("retry of a succeeded task succeeded: %s", out)
		}
		want := fmt.Sprintf("task %s is succeeded; only failed or dead_letter tasks can be retried", echoID)
		if task.ErrorCode(err) != task.CodeNotRetryable || err.Error() != want {
			t.Fatalf("retry error %q (code %q), want %q (%s)", err, task.ErrorCode(err), want, task.CodeNotRetryable)
		}
		code, _, stderr := runMain("tasks", "retry", echoID, "--store", n.dsn)
		if code != 1 || stderr != "pactum: "+want+"\n" {
			t.Fatalf("Main: exit %d, stderr %q", code, stderr)
		}
		if tk := getTask(t, n, echoID); tk.State != task.StateSucceeded {
			t.Fatalf("a refused retry changed the task to %s", tk.State)
		}
	})

	step("agents", func(t *testing.T) {
		out := mustRun(t, "agents")
		for _, want := range []string{
			"echo (default)  echo", "slow-echo       echo",
			"/agents/echo/.well-known/agent-card.json", "/agents/slow-echo/.well-known/agent-card.json",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("agents output lacks %q:\n%s", want, out)
			}
		}
	})

	step("audit verify", func(t *testing.T) {
		out := mustRun(t, "audit", "verify", "--store", n.dsn)
		var entries int
		if _, err := fmt.Sscanf(out, "audit chain OK: %d entries\n", &entries); err != nil || entries < 3 {
			t.Fatalf("audit verify printed %q, want OK with at least 3 entries", out)
		}

		tamper(t, n.dbPath, "DROP TRIGGER audit_log_no_update", "UPDATE audit_log SET actor = 'mallory' WHERE seq = 3")

		code, stdout, stderr := runMain("audit", "verify", "--store", n.dsn)
		if code != 2 {
			t.Fatalf("audit verify of a tampered log: exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if !strings.HasPrefix(stdout, "audit chain BROKEN at entry 3: entry 3 was edited") {
			t.Fatalf("audit verify printed %q, want it to name entry 3 as edited", stdout)
		}
		if stderr != "pactum: exit status 2\n" {
			t.Errorf("stderr %q", stderr)
		}
	})

	step("shutdown", func(t *testing.T) {
		if err := n.stop(); err != nil {
			t.Fatalf("serve returned %v after its context was canceled, want nil", err)
		}
		if _, err := net.DialTimeout("tcp", strings.TrimPrefix(n.url, "http://"), time.Second); err == nil {
			t.Error("the listener still accepts connections after serve returned")
		}
		// --log-format json: every log line is one JSON object.
		var serving bool
		sc := bufio.NewScanner(strings.NewReader(n.stderr.String()))
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("log line is not JSON: %q", sc.Text())
			}
			if rec["msg"] == "pactum serving" && rec["addr"] == strings.TrimPrefix(n.url, "http://") && rec["level"] == "INFO" {
				serving = true
			}
		}
		if !serving {
			t.Errorf("no \"pactum serving\" log record with addr %s:\n%s", n.url, n.stderr.String())
		}
	})
}

// tamper runs statements on the SQLite file directly, as somebody with
// write access to it could.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		res, err := db.Exec(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if strings.HasPrefix(s, "UPDATE") {
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("%s changed %d rows, want 1", s, n)
			}
		}
	}
}

// TestSendWithToken: against a node with auth: bearer, send without a
// token is refused with the server's 401, and --token gets the answer.
func TestSendWithToken(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("cli-secret"))
	cfg := filepath.Join(t.TempDir(), "auth.yaml")
	src := "auth: bearer\nagents:\n  - {name: echo, type: echo}\nactors:\n  - {name: ops, actions: ['*'], token_sha256: " + hex.EncodeToString(sum[:]) + "}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	n := serve(t, "--config", cfg)
	if out, err := run(t, "send", "--token", "", n.url+"/agents/echo", "no token"); err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "pass --token") {
		t.Errorf("send without a token: %v (stdout %q), want the server's 401 and the hint", err, out)
	}
	if _, err := run(t, "send", "--token", "wrong", n.url+"/agents/echo", "bad token"); err == nil || !strings.Contains(err.Error(), "did not accept the bearer token") {
		t.Errorf("send with a wrong token: %v, want a refusal saying so", err)
	}
	out := mustRun(t, "send", "--token", "cli-secret", n.url+"/agents/echo", "with a token")
	if !strings.Contains(out, "with a token") {
		t.Errorf("send --token printed %q, want the echo", out)
	}
}

// TestManualRetryGrantsATurn: a task dead-lettered after 3 of 3 attempts
// and retried with `tasks retry` gets 3 more attempts, and `tasks list`,
// `get` and `timeline` show the attempt within the turn, not "4 of 3".
func TestManualRetryGrantsATurn(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "fail.yaml")
	src := `agents:
  - name: fail
    type: exec
    exec:
      command: [sh, -c, "exit 3"]
      input: none
    retry: {max_attempts: 3, initial_backoff: 1ms, max_backoff: 1ms, jitter: 0}
`
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	n := serve(t, "--config", cfg)
	id, _, _ := mustSend(t, "--no-wait", n.url+"/agents/fail", "fail")
	waitDead := func(attempt int) *task.Task {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			tk := getTask(t, n, id)
			if tk.State == task.StateDeadLetter && tk.Attempt == attempt {
				return tk
			}
			if time.Now().After(deadline) {
				t.Fatalf("task is %s at attempt %d, want dead_letter at attempt %d", tk.State, tk.Attempt, attempt)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitDead(3)
	out := mustRun(t, "tasks", "retry", id, "--store", n.dsn)
	if want := fmt.Sprintf("task %s is queued with a new turn of 3 attempts (3 made so far; a running server picks it up)\n", id); out != want {
		t.Errorf("tasks retry printed %q, want %q", out, want)
	}
	tk := waitDead(6)
	if tk.TurnStart != 3 || !strings.HasPrefix(tk.Reason, "attempt 3 of 3 failed") {
		t.Errorf("after the retried turn: turn start %d, reason %q; want 3, \"attempt 3 of 3 failed…\"", tk.TurnStart, tk.Reason)
	}

	out = mustRun(t, "tasks", "get", id, "--store", n.dsn)
	if !strings.Contains(out, "\nattempt  3 of 3 (6 in all, 1 manual retry)\n") {
		t.Errorf("tasks get does not say \"attempt  3 of 3 (6 in all, 1 manual retry)\":\n%s", out)
	}
	out = mustRun(t, "tasks", "list", "--store", n.dsn)
	if !strings.Contains(out, " 3/3 (6 in all) ") {
		t.Errorf("tasks list does not show the attempt as \"3/3 (6 in all)\":\n%s", out)
	}
	// The timeline: ATTEMPT restarts at the manual retry, IN ALL does not.
	var got [][2]string
	for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "tasks", "timeline", id, "--store", n.dsn)), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 6 && f[3] == "in_progress" {
			got = append(got, [2]string{f[4], f[5]})
		}
	}
	want := [][2]string{{"1", "1"}, {"2", "2"}, {"3", "3"}, {"1", "4"}, {"2", "5"}, {"3", "6"}}
	if !slices.Equal(got, want) {
		t.Errorf("timeline claims (attempt, in all) = %v, want %v", got, want)
	}
}
