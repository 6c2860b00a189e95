package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/agent/langgraph"
	"github.com/pactum/pactum/agent/langgraph/langgraphtest"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// langgraphConfig serves the graph assistant of the Agent Server at lgURL
// as the agent named name.
func langgraphConfig(addr, dbPath, name, lgURL, assistant string) string {
	return fmt.Sprintf(`listen: %[1]s
base_url: http://%[1]s
store: "sqlite://%[2]s"
lease: 2s
log: {level: info}
agents:
  - name: %[3]s
    type: langgraph
    timeout: 60s
    retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 1s}
    langgraph:
      url: %[4]s
      assistant: %[5]s
`, addr, dbPath, name, lgURL, assistant)
}

// lgJSON reads a JSON resource of the Agent Server.
func lgJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

type lgRun struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// lgMessages returns "type: content" for each message of a thread.
func lgMessages(t *testing.T, base, thread string) []string {
	t.Helper()
	var st struct {
		Values struct {
			Messages []struct {
				Type    string `json:"type"`
				Content any    `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	lgJSON(t, base+"/threads/"+thread+"/state", &st)
	var out []string
	for _, m := range st.Values.Messages {
		out = append(out, fmt.Sprintf("%s: %v", m.Type, m.Content))
	}
	return out
}

func taskText(tk *a2a.Task) string {
	var b strings.Builder
	for _, art := range tk.Artifacts {
		for _, p := range art.Parts {
			if p != nil {
				b.WriteString(p.Text())
			}
		}
	}
	return b.String()
}

// TestLangGraphStreamsThroughPactum: a caller of `pactum serve` gets the
// graph's output as streamed chunks and a completed task.
func TestLangGraphStreamsThroughPactum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a LangGraph Agent Server and pactum; skipped with -short")
	}
	lg := langgraphtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	if err := os.WriteFile(cfgPath, []byte(langgraphConfig(addr, filepath.Join(dir, "pactum.db"), "echo", lg.URL, "echo")), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := nodeproc.Start(t, bin, addr, filepath.Join(dir, "pactum.log"), "serve", "--config", cfgPath)
	defer srv.Stop()
	c := nodeproc.Client(t, ctx, addr, "echo")

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello graph"))
	var chunks []string
	var final a2a.TaskState
	var taskID a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range e.Artifact.Parts {
				chunks = append(chunks, p.Text())
			}
		case *a2a.TaskStatusUpdateEvent:
			final, taskID = e.Status.State, e.TaskID
		case *a2a.Task:
			final, taskID = e.Status.State, e.ID
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("final state %s, want completed", final)
	}
	if len(chunks) < 5 || !strings.HasPrefix(strings.Join(chunks, ""), "You said: hello graph") {
		t.Errorf("chunks = %q, want the answer in pieces", chunks)
	}
	tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if got := taskText(tk); got != "You said: hello graph" {
		t.Errorf("task artifacts = %q", got)
	}
}

// TestLangGraphKill9MidRun kills pactum with SIGKILL while a graph's run
// streams, restarts it, and checks that the task completes once: on the
// same thread, with one run and one answer there, and nothing left
// running.
func TestLangGraphKill9MidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts a LangGraph Agent Server and kills pactum; skipped with -short")
	}
	lg := langgraphtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	dbPath := filepath.Join(dir, "pactum.db")
	cfgPath := filepath.Join(dir, "pactum.yaml")
	logPath := filepath.Join(dir, "pactum.log")
	if err := os.WriteFile(cfgPath, []byte(langgraphConfig(addr, dbPath, "slow", lg.URL, "slow")), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := nodeproc.Start(t, bin, addr, logPath, "serve", "--config", cfgPath)
	c := nodeproc.Client(t, ctx, addr, "slow")

	// The slow graph writes its answer at 200 ms a character: about 8 s.
	const input = "a graph that is killed in flight"
	const want = "slowly: " + input
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(input))
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage = %T, want a task", res)
	}
	thread := langgraph.ThreadID("slow", tk.ContextID)

	// Kill pactum once the run streams on the server.
	deadline := time.Now().Add(time.Minute)
	for {
		var runs []lgRun
		resp, err := http.Get(lg.URL + "/threads/" + thread + "/runs?status=running")
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				_ = json.NewDecoder(resp.Body).Decode(&runs)
			}
			resp.Body.Close()
		}
		if len(runs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never started on the Agent Server")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	srv.KillServer()
	t.Log("pactum killed with SIGKILL while the run streamed")

	srv = nodeproc.Start(t, bin, addr, logPath, "serve", "--config", cfgPath)
	c = nodeproc.Client(t, ctx, addr, "slow")
	for {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			if got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task ended %s, want completed", got.Status.State)
			}
			if text := taskText(got); text != want {
				t.Errorf("task answer = %q, want %q", text, want)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the task did not complete after the restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	srv.Stop()

	// Once on the thread: one run, succeeded; one question, one answer.
	var runs []lgRun
	lgJSON(t, lg.URL+"/threads/"+thread+"/runs?limit=100", &runs)
	if len(runs) != 1 || runs[0].Status != "success" {
		t.Errorf("runs on the thread = %+v, want one that succeeded", runs)
	}
	msgs := lgMessages(t, lg.URL, thread)
	if wantMsgs := []string{"human: " + input, "ai: " + want}; strings.Join(msgs, "|") != strings.Join(wantMsgs, "|") {
		t.Errorf("thread messages = %q, want %q", msgs, wantMsgs)
	}
	// The task was taken up again after its lease expired.
	st, err := store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Records(ctx, string(tk.ID))
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for _, r := range recs {
		if r.To == task.StateInProgress {
			claims++
		}
	}
	if claims < 2 {
		t.Errorf("%d claims, want the attempt before the kill and one after", claims)
	}
	logs, _ := os.ReadFile(logPath)
	switch {
	case strings.Contains(string(logs), "joining the run of this turn"):
		t.Log("after the restart the attempt joined the run still streaming")
	case strings.Contains(string(logs), "the run of this turn already finished"):
		t.Log("after the restart the attempt took the finished run's answer")
	default:
		t.Errorf("the attempt after the restart neither joined nor took the run; log:\n%s", logs)
	}
}

// TestLangGraphAnswerAfterRestart: a graph's interrupt asks the caller
// through pactum; pactum restarts; the caller's answer resumes the same
// thread's run.
func TestLangGraphAnswerAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a LangGraph Agent Server and pactum; skipped with -short")
	}
	lg := langgraphtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	logPath := filepath.Join(dir, "pactum.log")
	if err := os.WriteFile(cfgPath, []byte(langgraphConfig(addr, filepath.Join(dir, "pactum.db"), "ask", lg.URL, "ask")), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := nodeproc.Start(t, bin, addr, logPath, "serve", "--config", cfgPath)
	c := nodeproc.Client(t, ctx, addr, "ask")
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	tk, ok := res.(*a2a.Task)
	if !ok || tk.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("SendMessage = %+v, want a task in input_required", res)
	}
	if q := taskStatusText(tk); q != "What is your name?" {
		t.Errorf("question = %q", q)
	}
	srv.Stop()

	srv = nodeproc.Start(t, bin, addr, logPath, "serve", "--config", cfgPath)
	defer srv.Stop()
	c = nodeproc.Client(t, ctx, addr, "ask")
	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Ada"))
	answer.TaskID, answer.ContextID = tk.ID, tk.ContextID
	res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer})
	if err != nil {
		t.Fatal(err)
	}
	done, ok := res.(*a2a.Task)
	if !ok || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer = %+v, want the task completed", res)
	}
	if got := taskText(done); got != "Hello, Ada!" {
		t.Errorf("answer = %q", got)
	}
	thread := langgraph.ThreadID("ask", tk.ContextID)
	if msgs, want := lgMessages(t, lg.URL, thread), []string{"human: hi", "ai: Hello, Ada!"}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages = %q, want %q", msgs, want)
	}
}

func taskStatusText(tk *a2a.Task) string {
	if tk.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range tk.Status.Message.Parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}
