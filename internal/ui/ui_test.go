package ui_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// failedAssertion is the message of the summarize agent's contract
// assertion, which its answer fails.
const failedAssertion = "the answer is a JSON object with a summary"

// roles are the offline agents of examples/workflows.yaml.
var roles = []string{"planner", "code-reviewer", "security-reviewer", "explorer", "architect"}

// bundle is a running node for the dashboard's tests.
type bundle struct {
	base  string
	srv   *node.Server
	coord *task.Coordinator
}

// tokens of the auth: bearer node's actors.
const (
	aliceToken = "alice-secret-token"
	bobToken   = "bob-secret-token"
)

// setup starts a node on loopback with a real SQLite store: "echo" (the
// echo runtime), "slow" (an exec agent that sleeps, then echoes),
// "summarize" (an exec agent behind a contract its answer fails), the
// example's workflow roles and the workflow "review". With auth it runs
// auth: bearer with actors alice and bob.
func setup(t *testing.T, auth bool) *bundle {
	t.Helper()
	scripts, err := filepath.Abs(filepath.Join("..", "..", "examples", "scripts", "workflow"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if auth {
		b.WriteString("auth: bearer\nactors:\n")
		for _, a := range []struct{ name, token string }{{"alice", aliceToken}, {"bob", bobToken}} {
			sum := sha256.Sum256([]byte(a.token))
			fmt.Fprintf(&b, "  - {name: %s, actions: ['*'], token_sha256: %s}\n", a.name, hex.EncodeToString(sum[:]))
		}
	}
	b.WriteString("agents:\n")
	b.WriteString("  - {name: echo, type: echo}\n")
	b.WriteString("  - {name: slow, type: exec, timeout: 30s, exec: {command: [sh, -c, 'sleep 1.5; cat'], input: stdin}}\n")
	fmt.Fprintf(&b, `  - name: summarize
    type: exec
    retry: {max_attempts: 1}
    exec: {command: [sh, -c, "cat >/dev/null; echo 'this is not JSON'"]}
    contract:
      onViolation: fail
      assertions:
        - type: assert
          message: %s
          check: {type: schema_match, target: output, schema: {type: object, required: [summary]}}
`, failedAssertion)
	for _, r := range roles {
		fmt.Fprintf(&b, "  - {name: %s, type: exec, timeout: 30s, retry: {max_attempts: 2, initial_backoff: 10ms}, exec: {command: [sh, %q], input: stdin}}\n",
			r, filepath.Join(scripts, r+".sh"))
	}
	b.WriteString("workflows:\n  - {name: review, steps: [planner, {parallel: [code-reviewer, security-reviewer]}, architect]}\n")

	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("listen: %s\nstore: %q\n%s", ln.Addr(), "sqlite://"+filepath.Join(dir, "pactum.db"), b.String())
	cfg, err := config.Parse([]byte(src), "dashboard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := node.New(ctx, cfg, dir, nil, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &bundle{base: "http://" + ln.Addr().String(), srv: srv, coord: srv.Coordinator()}
}

// submit submits text to agent as actor (empty: none) and returns the
// task; wait waits for it to settle.
func (b *bundle) submit(t *testing.T, actor, agent, text string, wait bool) *task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Agent: agent, Envelope: task.Envelope{
		Actor: actor, Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(text)}},
	}})
	if err != nil {
		t.Fatalf("submit to %s: %v", agent, err)
	}
	if !wait {
		return res.Task
	}
	tk, err := b.coord.Wait(ctx, res.Task.ID)
	if err != nil {
		t.Fatalf("wait for %s: %v", agent, err)
	}
	return tk
}

// get GETs path with the given headers and returns the status, headers
// and body.
func (b *bundle) get(t *testing.T, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	return b.do(t, http.MethodGet, path, hdr)
}

func (b *bundle) do(t *testing.T, method, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(body)
}

func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, body)
		}
	}
}

func TestPagesWithoutAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	ok := b.submit(t, "carol", "echo", "hello <script>alert(1)</script>", true)
	bad := b.submit(t, "carol", "summarize", "summarize this", true)
	if bad.State != task.StateFailed || bad.ErrorCode != task.CodeContractViolation {
		t.Fatalf("summarize: %s %s %q", bad.State, bad.ErrorCode, bad.Reason)
	}
	run := b.submit(t, "carol", workflow.RunAgent("review"), "Add a --verbose flag", true)
	if run.State != task.StateSucceeded {
		t.Fatalf("review run: %s %q", run.State, run.Reason)
	}

	t.Run("tasks", func(t *testing.T) {
		status, hdr, body := b.get(t, "/ui/", nil)
		if status != 200 {
			t.Fatalf("GET /ui/: %d %s", status, body)
		}
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
		if hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("X-Content-Type-Options %q", hdr.Get("X-Content-Type-Options"))
		}
		mustContain(t, "task list", body, ok.ID, bad.ID, run.ID, `data-state="failed"`, "contract_violation", `data-events="/ui/events?`, "read-only")
		if strings.Contains(body, `data-action=`) {
			t.Error("the read-only dashboard offers actions")
		}
		// Filters go to the core: state and agent.
		_, _, body = b.get(t, "/ui/?state=failed", nil)
		if !strings.Contains(body, bad.ID) || strings.Contains(body, ok.ID) {
			t.Errorf("state=failed lists:\n%s", body)
		}
		_, _, body = b.get(t, "/ui/?agent=echo", nil)
		if !strings.Contains(body, ok.ID) || strings.Contains(body, bad.ID) {
			t.Errorf("agent=echo lists:\n%s", body)
		}
		_, _, body = b.get(t, "/ui/?parent="+run.ID, nil)
		if strings.Count(body, `<tr data-id=`) != 4 || strings.Contains(body, ok.ID) {
			t.Errorf("parent=%s lists %d rows:\n%s", run.ID, strings.Count(body, `<tr data-id=`), body)
		}
		if status, _, body := b.get(t, "/ui/?state=bogus", nil); status != http.StatusBadRequest {
			t.Errorf("state=bogus: %d %s", status, body)
		}
	})

	t.Run("pagination", func(t *testing.T) {
		for i := range 55 {
			b.submit(t, "pager", "echo", fmt.Sprintf("page %d", i), false)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			pg, err := b.coord.List(context.Background(), task.ListParams{Actor: "pager", States: []task.State{task.StateSucceeded}, PageSize: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Tasks) == 55 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of 55 tasks succeeded", len(pg.Tasks))
			}
			time.Sleep(50 * time.Millisecond)
		}
		_, _, first := b.get(t, "/ui/?actor=pager", nil)
		if n := strings.Count(first, `<tr data-id=`); n != 50 {
			t.Fatalf("first page has %d rows", n)
		}
		m := regexp.MustCompile(`href="/ui/\?([^"]+)" rel="next"`).FindStringSubmatch(first)
		if m == nil {
			t.Fatalf("no next page link:\n%s", first)
		}
		next := strings.ReplaceAll(m[1], "&amp;", "&")
		_, _, second := b.get(t, "/ui/?"+next, nil)
		if n := strings.Count(second, `<tr data-id=`); n != 5 || strings.Contains(second, "data-events=") || strings.Contains(second, `rel="next"`) {
			t.Fatalf("second page (%s) has %d rows:\n%s", next, n, second)
		}
		for _, id := range regexp.MustCompile(`<tr data-id="([^"]+)"`).FindAllStringSubmatch(second, -1) {
			if strings.Contains(first, id[1]) {
				t.Errorf("task %s is on both pages", id[1])
			}
		}
	})

	t.Run("task with a failed contract step", func(t *testing.T) {
		status, _, body := b.get(t, "/ui/tasks/"+bad.ID, nil)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		mustContain(t, "failed task page", body, "contract FAILED", `class="failed-assertion"`, failedAssertion,
			`<svg class="timeline"`, "in_progress", "contract_violation", "summarize this")
	})

	t.Run("escaping", func(t *testing.T) {
		_, _, body := b.get(t, "/ui/tasks/"+ok.ID, nil)
		if strings.Contains(body, "<script>alert(1)") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the task's text is not escaped:\n%s", body)
		}
	})

	t.Run("workflow run with its steps", func(t *testing.T) {
		_, _, body := b.get(t, "/ui/tasks/"+run.ID, nil)
		mustContain(t, "run page", body, `class="recommendation rec-ship"`, "SHIP", "<h2>Steps</h2>",
			`data-step="planner"`, `data-step="code-reviewer"`, `data-step="security-reviewer"`, `data-step="architect"`, "contract passed")
	})

	t.Run("workflows", func(t *testing.T) {
		status, _, body := b.get(t, "/ui/workflows", nil)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		mustContain(t, "workflows page", body, `data-workflow="review"`, run.ID[:12], `class="recommendation rec-ship"`, ">SHIP<", "Add a --verbose flag")
		_, _, body = b.get(t, "/ui/workflows?workflow=review", nil)
		mustContain(t, "one workflow", body, run.ID[:12])
		if status, _, _ := b.get(t, "/ui/workflows?workflow=nope", nil); status != http.StatusNotFound {
			t.Errorf("unknown workflow: %d", status)
		}
	})

	t.Run("audit", func(t *testing.T) {
		_, _, body := b.get(t, "/ui/audit", nil)
		mustContain(t, "audit page", body, "Verify the chain now", "head hash", "task.submitted")
		_, _, body = b.get(t, "/ui/audit?verify=1", nil)
		mustContain(t, "verified audit page", body, "audit chain OK", "execution record OK")
		_, _, body = b.get(t, "/ui/audit?task="+bad.ID, nil)
		mustContain(t, "a task's entries", body, "Entries of task", "task.submitted", "task.transition")
		for _, row := range regexp.MustCompile(`(?s)<tr>\s*<td class="num">.*?</tr>`).FindAllString(body, -1) {
			if !strings.Contains(row, short(bad.ID)) {
				t.Errorf("an entry of another task is listed:\n%s", row)
			}
		}
	})

	t.Run("agents", func(t *testing.T) {
		_, _, body := b.get(t, "/ui/agents", nil)
		mustContain(t, "agents page", body, `data-agent="echo"`, `data-agent="summarize"`, `data-agent="workflow.review"`,
			"/agents/echo/.well-known/agent-card.json", "exec")
		// summarize: 1 task settled, none succeeded.
		m := regexp.MustCompile(`(?s)data-agent="summarize">.*?</tr>`).FindString(body)
		if !strings.Contains(m, "0%") {
			t.Errorf("summarize's row: %s", m)
		}
		if strings.Contains(body, `data-agent="planner.`) {
			t.Error("step agents are listed")
		}
	})

	t.Run("read-only", func(t *testing.T) {
		status, _, _ := b.do(t, http.MethodPost, "/ui/tasks/"+bad.ID+"/retry", nil)
		if status != http.StatusForbidden {
			t.Errorf("retry without auth: %d", status)
		}
		tk, err := b.coord.Get(context.Background(), bad.ID, 0)
		if err != nil || tk.State != task.StateFailed {
			t.Errorf("the task is %v (%v)", tk.State, err)
		}
	})

	t.Run("not found", func(t *testing.T) {
		if status, _, _ := b.get(t, "/ui/tasks/nope", nil); status != http.StatusNotFound {
			t.Errorf("unknown task: %d", status)
		}
		if status, _, _ := b.get(t, "/ui/nope", nil); status != http.StatusNotFound {
			t.Errorf("unknown page: %d", status)
		}
	})

	t.Run("static", func(t *testing.T) {
		status, hdr, body := b.get(t, "/ui/static/app.js", nil)
		if status != 200 || !strings.Contains(hdr.Get("Content-Type"), "javascript") || !strings.Contains(body, "text/event-stream") {
			t.Errorf("app.js: %d %s", status, hdr.Get("Content-Type"))
		}
		status, hdr, _ = b.get(t, "/ui/static/app.css", nil)
		if status != 200 || !strings.Contains(hdr.Get("Content-Type"), "text/css") {
			t.Errorf("app.css: %d %s", status, hdr.Get("Content-Type"))
		}
	})
}

// short is the id as the task list shows it.
func short(id string) string { return id[:12] }

// TestRootRedirect: a browser opening / goes to the dashboard; A2A
// requests to / reach the default agent as before.
func TestRootRedirect(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, b.base+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/ui/" {
		t.Errorf("browser GET /: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	// A JSON GET is the A2A endpoint's (which takes POSTs).
	status, _, body := b.get(t, "/", map[string]string{"Accept": "application/json"})
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, "JSON-RPC") {
		t.Errorf("JSON GET /: %d %s", status, body)
	}
	// A JSON-RPC call at / still works.
	rpc := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"blocking":true}}}`
	req, _ = http.NewRequest(http.MethodPost, b.base+"/", strings.NewReader(rpc))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/html, application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(out), `"result"`) || !strings.Contains(string(out), "TASK_STATE_COMPLETED") {
		t.Errorf("JSON-RPC POST /: %d %s", res.StatusCode, out)
	}
}

// TestLiveEvents reads the live stream as the page does: a task
// submitted after the stream opened arrives as rows as it changes state,
// and a task outside the filter is not sent.
func TestLiveEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/ui/events?agent=slow&after="+time.Now().UTC().Format(time.RFC3339Nano), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	b.submit(t, "carol", "echo", "not in the filter", true)
	slow := b.submit(t, "carol", "slow", "in the filter", false)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var row struct{ ID, State, HTML string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &row); err != nil {
				t.Fatal(err)
			}
			if event != "row" || row.ID != slow.ID {
				t.Fatalf("event %s for %s (%s); want rows of %s only", event, row.ID, row.State, slow.ID)
			}
			if !strings.HasPrefix(row.HTML, `<tr data-id="`+slow.ID+`" data-state="`+row.State+`"`) {
				t.Fatalf("row html %s", row.HTML)
			}
			seen[row.State] = true
			if row.State == string(task.StateSucceeded) {
				if !seen[string(task.StateInProgress)] && !seen[string(task.StateQueued)] {
					t.Errorf("only the end was streamed: %v", seen)
				}
				return
			}
		}
	}
	t.Fatalf("the stream ended (%v) before the task succeeded; saw %v", sc.Err(), seen)
}

// TestPagesWithAuth: with auth: bearer pages are shells without data,
// every data request needs a token, the caller sees only its own tasks,
// and cancel and retry are offered and work for its own tasks only.
func TestPagesWithAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	alice := b.submit(t, "alice", "summarize", "alice's text", true)
	bob := b.submit(t, "bob", "echo", "bob's text", true)
	frag := func(token string) map[string]string {
		h := map[string]string{"X-Pactum-Fragment": "1"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return h
	}
	// The shell holds no data.
	status, _, body := b.get(t, "/ui/", nil)
	if status != 200 || strings.Contains(body, alice.ID) || strings.Contains(body, bob.ID) || !strings.Contains(body, `id="tokenform"`) {
		t.Fatalf("shell: %d %s", status, body)
	}
	for _, path := range []string{"/ui/", "/ui/tasks/" + alice.ID, "/ui/workflows", "/ui/audit", "/ui/agents", "/ui/events"} {
		for _, token := range []string{"", "wrong"} {
			status, hdr, body := b.get(t, path, frag(token))
			if status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s with token %q: %d %s", path, token, status, body)
			}
		}
	}
	_, _, body = b.get(t, "/ui/", frag(aliceToken))
	if !strings.Contains(body, alice.ID) || strings.Contains(body, bob.ID) || strings.Contains(body, "<html") {
		t.Errorf("alice's fragment:\n%s", body)
	}
	// Another actor's task is not found, on every page that names it.
	if status, _, _ := b.get(t, "/ui/tasks/"+bob.ID, frag(aliceToken)); status != http.StatusNotFound {
		t.Errorf("alice reads bob's task: %d", status)
	}
	if status, _, _ := b.get(t, "/ui/audit?task="+bob.ID, frag(aliceToken)); status != http.StatusNotFound {
		t.Errorf("alice reads bob's audit entries: %d", status)
	}
	_, _, body = b.get(t, "/ui/audit", frag(aliceToken))
	if strings.Contains(body, bob.ID[:12]) {
		t.Errorf("alice's audit page names bob's task:\n%s", body)
	}
	// Alice may retry her failed task, and only hers.
	_, _, body = b.get(t, "/ui/tasks/"+alice.ID, frag(aliceToken))
	mustContain(t, "alice's task", body, `data-action="retry"`, failedAssertion)
	if status, _, _ := b.do(t, http.MethodPost, "/ui/tasks/"+alice.ID+"/retry", map[string]string{"Authorization": "Bearer " + bobToken}); status != http.StatusNotFound {
		t.Errorf("bob retries alice's task: %d", status)
	}
	if status, _, _ := b.do(t, http.MethodPost, "/ui/tasks/"+alice.ID+"/retry", nil); status != http.StatusUnauthorized {
		t.Errorf("retry without a token: %d", status)
	}
	status, _, body = b.do(t, http.MethodPost, "/ui/tasks/"+alice.ID+"/retry", map[string]string{"Authorization": "Bearer " + aliceToken})
	if status != 200 || !strings.Contains(body, `"state"`) {
		t.Fatalf("alice retries: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk, err := b.coord.Wait(ctx, alice.ID)
	if err != nil || tk.Attempt != 2 {
		t.Fatalf("after the retry: %+v %v", tk, err)
	}
	// Cancel: a slow task of alice's.
	slow := b.submit(t, "alice", "slow", "cancel me", false)
	status, _, body = b.do(t, http.MethodPost, "/ui/tasks/"+slow.ID+"/cancel", map[string]string{"Authorization": "Bearer " + aliceToken})
	if status != 200 || !strings.Contains(body, `"canceled"`) {
		t.Fatalf("alice cancels: %d %s", status, body)
	}
	status, _, _ = b.do(t, http.MethodPost, "/ui/tasks/"+slow.ID+"/cancel", map[string]string{"Authorization": "Bearer " + aliceToken})
	if status != http.StatusConflict {
		t.Errorf("cancel twice: %d", status)
	}
}

// TestLiveResync: when the broker drops the stream's subscription (a slow
// reader, or a relay that restarted), the stream tells the page to resync
// and ends, rather than go on with a gap.
func TestLiveResync(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/ui/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// The stream is open once its headers arrived; its subscription was
	// made before them.
	b.coord.Broker().Reset()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "event: resync\n") {
		t.Fatalf("stream after a broker reset: %q", body)
	}
}

// TestTaskPageShowsTraceID: a task submitted in a caller's trace shows
// the trace id its envelope stores; one without shows no trace row.
func TestTaskPageShowsTraceID(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx, cancel := context.WithTimeout(task.ContextWithTraceParent(context.Background(), tp), 60*time.Second)
	defer cancel()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Agent: "echo", Envelope: task.Envelope{
		Actor: "carol", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart("traced")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := b.get(t, "/ui/tasks/"+res.Task.ID, nil)
	mustContain(t, "traced task page", body, "<th>trace</th>", "4bf92f3577b34da6a3ce929d0e0e4736")
	plain := b.submit(t, "carol", "echo", "not traced", false)
	if _, _, body := b.get(t, "/ui/tasks/"+plain.ID, nil); strings.Contains(body, "<th>trace</th>") {
		t.Fatal("a task without a trace shows a trace row")
	}
}
