package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/internal/cli"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// The tests of this file hold the CLI to what it says: which store it
// read, what a message held, how a task failed (once), what a retry was.

// TestStoreFromLocalConfig: without --config and --store, the commands
// that read the store use ./pactum.yaml when it exists (its store, beside
// it), else ./pactum.db; a "not found" and an empty listing name the store
// they read and where its name came from. (Not parallel: it changes the
// working directory.)
func TestStoreFromLocalConfig(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, filepath.Join(dir, "pactum.yaml"), "store: sqlite://mine.db\n"+agentsYAML)
	mine := filepath.Join(dir, "mine.db")
	seedStore(t, mine, 2)
	fromYAML := "store sqlite://" + mine + " (from the store: of ./pactum.yaml, found in the working directory)"

	if out := mustRun(t, "tasks", "list"); !strings.Contains(out, "t0") || !strings.Contains(out, "t1") {
		t.Errorf("tasks list beside pactum.yaml: want the tasks of %s, got:\n%s", mine, out)
	}
	_, err := run(t, "tasks", "get", "nope")
	if want := "task nope not found in " + fromYAML; err == nil || err.Error() != want || task.ErrorCode(err) != task.CodeNotFound {
		t.Errorf("tasks get nope: %v (code %q), want %q (not_found)", err, task.ErrorCode(err), want)
	}
	for _, args := range [][]string{{"tasks", "timeline", "nope"}, {"tasks", "export", "nope"}, {"tasks", "watch", "nope"}, {"tasks", "cancel", "nope"}, {"runs", "report", "nope"}} {
		if _, err := run(t, args...); err == nil || !strings.HasSuffix(err.Error(), " not found in "+fromYAML) {
			t.Errorf("pactum %s: %v, want a not found naming %s", strings.Join(args, " "), err, fromYAML)
		}
	}
	if out := mustRun(t, "runs", "list"); out != "no workflow runs in "+fromYAML+"\n" {
		t.Errorf("runs list on a store without runs printed %q", out)
	}
	if out := mustRun(t, "tasks", "list", "--state", "canceled"); out != "no tasks match the filters in "+fromYAML+"\n" {
		t.Errorf("tasks list --state canceled printed %q", out)
	}
	if out := mustRun(t, "audit", "verify"); !strings.HasPrefix(out, "audit chain OK: 6 entries") {
		t.Errorf("audit verify beside pactum.yaml: want the chain of %s (6 entries), got:\n%s", mine, out)
	}
	// --store and --config still win, and say so.
	other := filepath.Join(t.TempDir(), "other.db")
	seedStore(t, other, 0)
	if out := mustRun(t, "tasks", "list", "--store", "sqlite://"+other); out != "no tasks in store sqlite://"+other+" (from --store)\n" {
		t.Errorf("tasks list --store on an empty store printed %q", out)
	}

	// Without pactum.yaml: ./pactum.db.
	if err := os.Remove(filepath.Join(dir, "pactum.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, "tasks", "list")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "pactum.db")) || !strings.Contains(err.Error(), "no --config, --store or ./pactum.yaml") {
		t.Errorf("tasks list with neither pactum.yaml nor pactum.db: %v; want the path of ./pactum.db and why it was chosen", err)
	}
	seedStore(t, filepath.Join(dir, "pactum.db"), 1)
	if out := mustRun(t, "tasks", "list"); !strings.Contains(out, "t0") {
		t.Errorf("tasks list beside pactum.db:\n%s", out)
	}
	_, err = run(t, "tasks", "get", "t9")
	if want := "task t9 not found in store sqlite://" + filepath.Join(dir, "pactum.db") + " (from the default: no --config, --store or ./pactum.yaml)"; err == nil || err.Error() != want {
		t.Errorf("tasks get t9: %v, want %q", err, want)
	}
}

// seedMessages creates, in a new store at path, task m1 whose input is a
// text part then a data part, and task m2 whose input is only a data part,
// and closes the store.
func seedMessages(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, parts := range map[string][]task.Part{
		"m1": {task.TextPart("sum these"), task.DataPart([]byte(`{"a": 2,  "b": [3, 4]}`))},
		"m2": {task.DataPart([]byte(`{"only": "data"}`))},
	} {
		in := task.Message{ID: "in-" + id, Role: task.RoleUser, Parts: parts}
		_, err := s.CreateTask(t.Context(), task.CreateParams{
			Task: &task.Task{ID: id, ContextID: "c", Agent: "echo", MaxAttempts: 1, History: []task.Message{in}, Envelope: task.Envelope{
				TaskID: id, Actor: "alice", Action: "echo", Input: in,
			}},
			Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTasksGetDataParts: tasks get prints a data part of the conversation
// as compact JSON on a line of its own (indented under --verbose), never
// as a blank; a reason without an error code has no stray colon.
func TestTasksGetDataParts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.db")
	seedMessages(t, path)
	dsn := "sqlite://" + path

	out := mustRun(t, "tasks", "get", "m1", "--store", dsn)
	if !strings.Contains(out, "\n[user]   sum these\n         {\"a\":2,\"b\":[3,4]}\n") {
		t.Errorf("tasks get m1: want the text, then the data as compact JSON under it:\n%s", out)
	}
	out = mustRun(t, "tasks", "get", "m2", "--store", dsn)
	if !strings.Contains(out, "\n[user]   {\"only\":\"data\"}\n") {
		t.Errorf("tasks get m2: want the data part, not a blank line:\n%s", out)
	}
	out = mustRun(t, "tasks", "get", "m1", "--verbose", "--store", dsn)
	want := "\n[user]   sum these\n         {\n           \"a\": 2,\n           \"b\": [\n             3,\n             4\n           ]\n         }\n"
	if !strings.Contains(out, want) {
		t.Errorf("tasks get --verbose: want the data indented:\n%s", out)
	}

	mustRun(t, "tasks", "cancel", "m2", "--reason", "not needed", "--store", dsn)
	out = mustRun(t, "tasks", "get", "m2", "--store", dsn)
	if !strings.Contains(out, "\nreason   not needed\n") || strings.Contains(out, "reason   :") {
		t.Errorf("tasks get of a task canceled without an error code: want \"reason   not needed\":\n%s", out)
	}
}

// sumServer is an MCP server on loopback with one tool, get-sum, that
// needs its arguments a and b and answers a text and its structured
// content, as the everything server's get-sum does.
func sumServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sums", Version: "v1"}, nil)
	type args struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	type sum struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "get-sum", Description: "Returns the sum of two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, sum, error) {
			text := fmt.Sprintf("The sum of %g and %g is %g.", in.A, in.B, in.A+in.B)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, sum{in.A + in.B}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSendDataAndFile: send --data adds a data part, so an MCP tool agent
// that needs arguments is reachable from the CLI; its answer's text and
// data print on lines of their own. --file adds a file part. Bad JSON
// names --data; a missing file names its path.
func TestSendDataAndFile(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "pactum.yaml")
	writeFile(t, cfg, fmt.Sprintf("agents:\n  - {name: echo, type: echo}\n  - name: sum\n    type: mcp\n    mcp: {url: %s, tool: get-sum}\n", sumServer(t)))
	n := serve(t, "--config", cfg)

	for _, stream := range []string{"--no-stream=false", "--no-stream"} {
		code, stdout, stderr := runMain("send", stream, n.url+"/agents/sum", "--data", `{"a": 2, "b": 3}`)
		if want := "The sum of 2 and 3 is 5.\n{\"sum\":5}\n"; code != 0 || stdout != want {
			t.Errorf("send %s --data to get-sum: exit %d, stdout %q; want %q (the text, then the data on its own line)\nstderr:\n%s", stream, code, stdout, want, stderr)
		}
	}

	file := filepath.Join(t.TempDir(), "notes.txt")
	writeFile(t, file, "line one\n")
	id, _, _ := mustSend(t, n.url+"/agents/echo", "see the file", "--data", `[1, 2]`, "--file", file)
	tk := getTask(t, n, id)
	parts := tk.Envelope.Input.Parts
	var data bytes.Buffer
	if len(parts) > 1 {
		_ = json.Compact(&data, parts[1].Data)
	}
	if len(parts) != 3 || parts[0].Text != "see the file" || data.String() != "[1,2]" ||
		parts[2].Kind != task.PartRaw || string(parts[2].Raw) != "line one\n" || parts[2].Filename != "notes.txt" || !strings.HasPrefix(parts[2].MediaType, "text/plain") {
		t.Errorf("the stored input's parts = %+v; want the text, the data [1,2] and the file notes.txt (text/plain)", parts)
	}

	_, err := run(t, "send", n.url+"/agents/sum", "--data", `{"a": 2`)
	if err == nil || !strings.HasPrefix(err.Error(), "--data is not JSON: ") {
		t.Errorf("send --data with bad JSON: %v, want an error naming --data", err)
	}
	missing := filepath.Join(t.TempDir(), "nope.txt")
	_, err = run(t, "send", n.url+"/agents/echo", "hi", "--file", missing)
	if want := "--file " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("send --file of a missing file: %v, want %q", err, want)
	}
	if _, err := run(t, "send", n.url+"/agents/echo"); err == nil || !strings.Contains(err.Error(), "--data JSON or --file PATH") {
		t.Errorf("send without a text or a part: %v, want a refusal saying what to send", err)
	}
}

// TestFailurePrintedOnce: a task that fails is said once on stderr by
// send, the error line, with its reason; and once by tasks watch.
func TestFailurePrintedOnce(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "pactum.yaml")
	writeFile(t, cfg, `agents:
  - name: fail
    type: exec
    exec:
      command: [sh, -c, "echo kaboom-reason >&2; exit 3"]
      input: none
    retry: {max_attempts: 1}
`)
	n := serve(t, "--config", cfg)
	for _, args := range [][]string{{"send"}, {"send", "--no-stream"}} {
		code, stdout, stderr := runMain(append(args, n.url+"/agents/fail", "go")...)
		if code != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want 1 and nothing", args, code, stdout)
		}
		if c := strings.Count(stderr, "kaboom-reason"); c != 1 || !regexp.MustCompile(`(?m)^pactum: task \S+ ended TASK_STATE_FAILED: .*kaboom-reason`).MatchString(stderr) {
			t.Errorf("%v: the reason is on stderr %d times, want once, on the error line:\n%s", args, c, stderr)
		}
		id := sentTaskID(t, stderr)
		code, _, stderr = runMain("tasks", "watch", id, "--store", n.dsn)
		if c := strings.Count(stderr, "kaboom-reason"); code != 1 || c != 1 {
			t.Errorf("tasks watch %s: exit %d, reason said %d times, want exit 1 and once:\n%s", id, code, c, stderr)
		}
	}
}

// retryContract is a one-step contract whose step is retried with
// feedback while its answer is not "done"; the agent answers wrongly, at
// length, on its first attempt.
var retryContract = `version: "1.0"
id: again
steps:
  - id: work
    agent: worker
    onViolation: retry
    assertions:
      - type: assert
        message: the answer is done and` + strings.Repeat(" every word counts", 20) + `
        check: {type: regex, target: output, pattern: "^done$"}
`

// TestContractRunPrintsRetries: contract run prints a line for each retry
// of a step with the problem, as pactum run does, cut at a word boundary
// and saying where to read all of it.
func TestContractRunPrintsRetries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpath := filepath.Join(dir, "again.yaml")
	writeFile(t, cpath, retryContract)
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, fmt.Sprintf(`agents:
  - name: worker
    type: exec
    retry: {max_attempts: 3, initial_backoff: 10ms, max_backoff: 10ms}
    exec:
      command: [sh, -c, 'cat >/dev/null; if [ "$1" = 1 ]; then echo "not yet"; else echo done; fi', sh, "{{.Attempt}}"]
contracts:
  - %s
`, cpath))
	out, err := run(t, "contract", "run", cpath, "do it", "--config", cfg, "--store", "sqlite://"+filepath.Join(dir, "p.db"))
	if err != nil {
		t.Fatalf("contract run: %v\n%s", err, out)
	}
	// Cut after a whole word: "every", "word" or "counts", never inside one.
	m := regexp.MustCompile(`(?m)^  work  retried  attempt 1: contract again step work violated: the answer is done and( every word counts)*( every( word)?)?… \(all of it: pactum tasks get (\S+)\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no retry line with the problem cut at a word and the way to read it:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^  work  passed `).MatchString(out) || strings.Index(out, "retried") > strings.Index(out, "  work  passed") {
		t.Errorf("want the retry, then the step passed:\n%s", out)
	}
	if got := mustRun(t, "tasks", "get", m[4], "--store", "sqlite://"+filepath.Join(dir, "p.db")); !strings.Contains(got, "work") {
		t.Errorf("tasks get %s, as the line says, does not show the step:\n%s", m[4], got)
	}
}

// TestWatchBeforeFirstAttempt: tasks watch on a task no node has started
// says it waits for its first attempt, not "attempt none yet".
func TestWatchBeforeFirstAttempt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.db")
	seedStore(t, path, 1)
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stdout, stderr syncbuf.Buffer
	root := cli.NewRoot(&stdout, &stderr)
	root.SetArgs([]string{"tasks", "watch", "t0", "--store", "sqlite://" + path})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	// The watch goes on until the task settles, which it never does here:
	// stop it once it has said what it waits for.
	want := "task t0 on echo: queued, waiting for its first attempt (of 1)\n"
	for deadline := time.Now().Add(commandTimeout / 2); !strings.HasPrefix(stderr.String(), want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	err := <-done
	if !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start %q", stderr.String(), want)
	}
	if err == nil || !strings.Contains(err.Error(), "stopped watching") {
		t.Errorf("err %v, want the watch stopped", err)
	}
}

// TestConfigCheckCounts: config check counts the agent definitions and
// workflows a file serves, not only its agents.
func TestConfigCheckCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	defs := filepath.Join(dir, "defs")
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"planner", "architect"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "definitions", name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(defs, name+".md"), string(b))
	}
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, `agents:
  - {name: echo, type: echo}
definitions:
  dirs: [defs]
  runtime: local
  runtimes:
    local:
      type: openai
      openai: {base_url: "https://models.example.com/v1", model: m}
workflows:
  - name: plan-and-judge
    steps: [planner, architect]
  - name: judge
    steps: [architect]
`)
	out := mustRun(t, "config", "check", cfg)
	if want := cfg + ": OK (1 agent, 2 agent definitions, 2 workflows; runtimes known: "; !strings.HasPrefix(out, want) {
		t.Errorf("config check printed %q, want it to start %q", out, want)
	}
	out = mustRun(t, "config", "check", filepath.Join("..", "..", "examples", "workflows.yaml"))
	if !strings.Contains(out, ": OK (5 agents, 0 agent definitions, 1 workflow; ") {
		t.Errorf("config check examples/workflows.yaml printed %q", out)
	}
}
