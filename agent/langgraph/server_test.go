package langgraph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/task"
)

// These tests run against the real JS Agent Server (langgraphtest) and the
// graphs of testdata/graphs.

// request returns a first-attempt request in the conversation contextID.
func request(taskID, contextID, text string) *task.Request {
	req := agenttest.Request(text)
	req.TaskID, req.ContextID = taskID, contextID
	req.Envelope.TaskID, req.Envelope.ContextID = taskID, contextID
	req.Message.ID = taskID + "-m1"
	req.Message.TaskID, req.Message.ContextID = taskID, contextID
	req.Envelope.Input = req.Message
	req.History = []task.Message{req.Message}
	return req
}

// getJSON reads a JSON resource of the server.
func getJSON(t *testing.T, url string, out any) {
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
		t.Fatalf("GET %s: %v", url, err)
	}
}

// threadMessages returns the (type, text) of each message in a thread's
// state.
func threadMessages(t *testing.T, base, thread string) []string {
	t.Helper()
	var st struct {
		Values struct {
			Messages []json.RawMessage `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, base+"/threads/"+thread+"/state", &st)
	var out []string
	for _, raw := range st.Values.Messages {
		m, err := decodeMessage(raw)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Type+": "+m.text())
	}
	return out
}

// threadRuns returns the statuses of a thread's runs.
func threadRuns(t *testing.T, base, thread string) []string {
	t.Helper()
	var runs []runInfo
	getJSON(t, base+"/threads/"+thread+"/runs?limit=100", &runs)
	var out []string
	for _, r := range runs {
		out = append(out, r.Status)
	}
	return out
}

func TestStreamsChunksAndAnswers(t *testing.T) {
	b := setup(t, "echo", "")
	var rec agenttest.Recorder
	req := request("task-stream", "ctx-stream", "hi")
	res, err := b.r.Stream(b.ctx, req, rec.Emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "You said: hi" {
		t.Errorf("answer = %q, want %q", got, "You said: hi")
	}
	if got := res.Message.Text(); got != "You said: hi" {
		t.Errorf("message = %q", got)
	}
	chunks := rec.Chunks()
	agenttest.CheckChunks(t, chunks, res)
	if got := strings.Join(rec.Texts(), ""); got != "You said: hi" {
		t.Errorf("chunks = %q, want the answer character by character", rec.Texts())
	}
	if len(chunks) < 5 {
		t.Errorf("%d chunks, want one per character", len(chunks))
	}

	// The next task of the conversation continues the same thread, also
	// on another runtime of the agent (another node, or after a restart):
	// nothing but the agent's name and the context id is needed.
	other, err := New(b.r.s, WithName(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	res, err = other.Invoke(b.ctx, request("task-stream-2", "ctx-stream", "again"))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "You said: again" {
		t.Errorf("second answer = %q", got)
	}
	thread := ThreadID(t.Name(), "ctx-stream")
	want := []string{"human: hi", "ai: You said: hi", "human: again", "ai: You said: again"}
	if got := threadMessages(t, b.url, thread); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages = %q, want %q", got, want)
	}
}

func TestStateOutput(t *testing.T) {
	b := setup(t, "echo", "output: state\n")
	res, err := b.r.Invoke(b.ctx, request("task-state", "ctx-state", "hi"))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if len(res.Artifacts) != 1 || len(res.Artifacts[0].Parts) != 1 || res.Artifacts[0].Parts[0].Kind != task.PartData {
		t.Fatalf("result = %+v, want one data part", res)
	}
	var st struct {
		Messages []message `json:"messages"`
	}
	if err := json.Unmarshal(res.Artifacts[0].Parts[0].Data, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 2 || st.Messages[1].text() != "You said: hi" {
		t.Errorf("state = %s", res.Artifacts[0].Parts[0].Data)
	}
}

// answerTo returns the request of the next turn of req's task: the agent's
// question, then the caller's answer (parts).
func answerTo(req *task.Request, q *task.Message, parts ...task.Part) *task.Request {
	next := *req
	next.Attempt++
	qm := *q
	qm.TaskID, qm.ContextID = req.TaskID, req.ContextID
	ans := task.Message{ID: req.TaskID + "-answer", Role: task.RoleUser, TaskID: req.TaskID, ContextID: req.ContextID, Parts: parts}
	next.Message = ans
	next.History = append(append(append([]task.Message(nil), req.History...), qm), ans)
	return &next
}

func TestInterruptAsksAndResumes(t *testing.T) {
	b := setup(t, "ask", "")
	req := request("task-ask", "ctx-ask", "hi")
	res, err := b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if !res.InputRequired || res.Message.Text() != "What is your name?" {
		t.Fatalf("result = %+v (message %q), want input_required with the interrupt's question", res, res.Message.Text())
	}
	if _, ok := res.Message.Metadata[metaKey]; !ok {
		t.Errorf("question metadata = %v, want %s", res.Message.Metadata, metaKey)
	}
	// The question's metadata goes through JSON in the store.
	var q task.Message
	raw, _ := json.Marshal(res.Message)
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatal(err)
	}
	res, err = b.r.Invoke(b.ctx, answerTo(req, &q, task.TextPart("Ada")))
	if err != nil {
		t.Fatalf("Invoke (answer): %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "Hello, Ada!" {
		t.Errorf("answer = %q, want %q", got, "Hello, Ada!")
	}
	thread := ThreadID(t.Name(), "ctx-ask")
	want := []string{"human: hi", "ai: Hello, Ada!"}
	if got := threadMessages(t, b.url, thread); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages = %q, want %q", got, want)
	}
}

func TestInterruptWithDataResumesWithData(t *testing.T) {
	b := setup(t, "form", "")
	req := request("task-form", "ctx-form", "go")
	res, err := b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if !res.InputRequired || len(res.Message.Parts) != 1 || res.Message.Parts[0].Kind != task.PartData {
		t.Fatalf("result = %+v, want input_required with a data question", res)
	}
	if got := string(res.Message.Parts[0].Data); got != `{"options":["yes","no"],"question":"Approve?"}` {
		t.Errorf("question = %s", got)
	}
	res, err = b.r.Invoke(b.ctx, answerTo(req, res.Message, task.DataPart(json.RawMessage(`{"choice":"yes"}`))))
	if err != nil {
		t.Fatalf("Invoke (answer): %v", err)
	}
	if got := agenttest.ResultText(t, res); got != `Decision: {"choice":"yes"}` {
		t.Errorf("answer = %q", got)
	}
}

// TestInterruptThroughCoordinator runs the question and its answer through
// the core: the question's metadata is stored with the task and read back
// by the attempt that answers it.
func TestInterruptThroughCoordinator(t *testing.T) {
	b := setup(t, "ask", "")
	coord := agenttest.Coordinator(t, "langgraph-test", task.AgentSpec{Name: "ask", Runner: agent.Runner(b.r), Timeout: callTimeout,
		Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: 10 * time.Millisecond}})
	tk := agenttest.Run(t, b.ctx, coord, "ask", task.TextPart("hi"))
	if tk.State != task.StateInputRequired {
		t.Fatalf("state = %s, want input_required", tk.State)
	}
	tk = agenttest.Answer(t, b.ctx, coord, tk.ID, "Grace")
	if tk.State != task.StateSucceeded {
		t.Fatalf("state = %s (%s), want succeeded", tk.State, tk.Reason)
	}
	if got := agenttest.PartsText(tk.Artifacts[len(tk.Artifacts)-1].Parts); got != "Hello, Grace!" {
		t.Errorf("answer = %q", got)
	}
}

func TestFailingGraphIsRetryable(t *testing.T) {
	b := setup(t, "fail", "")
	_, err := b.r.Invoke(b.ctx, request("task-fail", "ctx-fail", "hi"))
	if err == nil {
		t.Fatal("Invoke succeeded, want the graph's error")
	}
	if task.ErrorCode(err) != task.CodeAgentFailed || task.IsPermanent(err) {
		t.Errorf("error = %v (code %s, permanent %v), want a retryable agent_failed", err, task.ErrorCode(err), task.IsPermanent(err))
	}
	if !strings.Contains(err.Error(), "the graph failed on purpose") {
		t.Errorf("error = %v, want the graph's message", err)
	}
}

func TestUnknownAssistantIsPermanent(t *testing.T) {
	b := setup(t, "no-such-graph", "")
	_, err := b.r.Invoke(b.ctx, request("task-404", "ctx-404", "hi"))
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnsupported {
		t.Fatalf("error = %v (code %s), want a permanent unsupported (404)", err, task.ErrorCode(err))
	}
}

func TestNoServerIsRetryable(t *testing.T) {
	r, err := New(Settings{URL: "http://127.0.0.1:1", Assistant: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(context.Background(), request("task-down", "ctx-down", "hi"))
	if err == nil || task.IsPermanent(err) || task.ErrorCode(err) != task.CodeUnavailable {
		t.Fatalf("error = %v, want a retryable unavailable", err)
	}
}

// waitRuns waits until the thread's runs have the given statuses; "ended"
// stands for a canceled run, which the JS server records as "error" and
// the Python server as "interrupted".
func waitRuns(t *testing.T, base, thread string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		got := threadRuns(t, base, thread)
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			same = got[i] == want[i] || want[i] == "ended" && (got[i] == "error" || got[i] == "interrupted")
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of thread %s = %q, want %q", thread, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runToFirstChunk runs an attempt of req through the runner the core
// uses (agent.Runner, which forwards a cancel) and returns once the run
// has streamed its first chunk; the attempt's error arrives on the
// channel.
func runToFirstChunk(t *testing.T, b *bundle, ctx context.Context, req *task.Request) <-chan error {
	t.Helper()
	first := make(chan struct{}, 1)
	emit := func(task.ArtifactChunk) error {
		select {
		case first <- struct{}{}:
		default:
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := agent.Runner(b.r).Run(ctx, req, emit)
		done <- err
	}()
	select {
	case <-first:
	case err := <-done:
		t.Fatalf("the run ended before its first chunk: %v", err)
	case <-time.After(callTimeout):
		t.Fatal("no chunk")
	}
	return done
}

func TestCancelCancelsTheRun(t *testing.T) {
	b := setup(t, "slow", "")
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	done := runToFirstChunk(t, b, ctx, request("task-cancel", "ctx-cancel", "an answer that takes its time"))
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("the attempt did not end after cancel")
	}
	waitRuns(t, b.url, ThreadID(t.Name(), "ctx-cancel"), "ended")
}

// TestShutdownLeavesTheRunGoing: an attempt cut by the node's shutdown
// (its context canceled with task.ErrShutdown) leaves the run going on
// the server, and the attempt after the restart takes its answer: the
// thread has one run, and the input was added to it once.
func TestShutdownLeavesTheRunGoing(t *testing.T) {
	b := setup(t, "slow", "")
	ctx, cancel := context.WithCancelCause(b.ctx)
	defer cancel(nil)
	done := runToFirstChunk(t, b, ctx, request("task-shutdown", "ctx-shutdown", "hi"))
	cancel(task.ErrShutdown)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the attempt cut by the shutdown succeeded")
		}
	case <-time.After(callTimeout):
		t.Fatal("the attempt did not end after the shutdown")
	}
	thread := ThreadID(t.Name(), "ctx-shutdown")
	waitRuns(t, b.url, thread, "success")

	again := request("task-shutdown", "ctx-shutdown", "hi")
	again.Attempt = 2
	res, err := b.r.Invoke(b.ctx, again)
	if err != nil {
		t.Fatalf("the attempt after the restart: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "slowly: hi" {
		t.Errorf("answer = %q", got)
	}
	if got := threadRuns(t, b.url, thread); len(got) != 1 {
		t.Errorf("runs = %q, want the one the shutdown left going", got)
	}
	if !strings.Contains(b.logs.String(), "the run goes on and the next attempt joins it") {
		t.Errorf("the runtime did not log that it left the run going:\n%s", b.logs.String())
	}
}

func TestTimeoutCancelsTheRun(t *testing.T) {
	// The answer takes about 8 s to write; the attempt may take 3.
	b := setup(t, "slow", "timeout: 3s\n")
	_, err := b.r.Invoke(b.ctx, request("task-timeout", "ctx-timeout", "an answer that takes its time"))
	if task.ErrorCode(err) != task.CodeTimeout || task.IsPermanent(err) {
		t.Fatalf("error = %v, want a retryable timeout", err)
	}
	waitRuns(t, b.url, ThreadID(t.Name(), "ctx-timeout"), "ended")
}

// startLostRun starts the run of req's turn the way an attempt does and
// reads its stream only until the first message chunk, then drops the
// connection: what a pactum killed during the attempt leaves behind.
func startLostRun(t *testing.T, b *bundle, req *task.Request) {
	t.Helper()
	thread := b.r.threadID(req)
	if err := b.r.ensureThread(b.ctx, thread, req); err != nil {
		t.Fatal(err)
	}
	body, err := b.r.runBody(req, thread, turnKey(req))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(body)
	resp, err := http.Post(b.url+"/threads/"+thread+"/runs/stream", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "event: messages" {
			return
		}
	}
	t.Fatalf("the run sent no message chunk: %v", sc.Err())
}

func TestAttemptAfterCrashJoinsTheRun(t *testing.T) {
	b := setup(t, "slow", "")
	req := request("task-join", "ctx-join", "hi")
	startLostRun(t, b, req)

	req.Attempt = 2
	var rec agenttest.Recorder
	res, err := b.r.Stream(b.ctx, req, rec.Emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "slowly: hi" {
		t.Errorf("answer = %q", got)
	}
	if len(rec.Chunks()) == 0 {
		t.Error("the joined run streamed no chunks")
	}
	thread := ThreadID(t.Name(), "ctx-join")
	waitRuns(t, b.url, thread, "success")
	want := []string{"human: hi", "ai: slowly: hi"}
	if got := threadMessages(t, b.url, thread); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("thread messages = %q, want %q (one run's output)", got, want)
	}
}

func TestAttemptAfterCrashTakesTheFinishedRun(t *testing.T) {
	b := setup(t, "echo", "")
	req := request("task-done", "ctx-done", "hi")
	startLostRun(t, b, req)
	thread := ThreadID(t.Name(), "ctx-done")
	waitRuns(t, b.url, thread, "success")
	// Another task of the conversation runs meanwhile and moves the
	// thread on.
	if _, err := b.r.Invoke(b.ctx, request("task-other", "ctx-done", "other")); err != nil {
		t.Fatal(err)
	}

	req.Attempt = 2
	res, err := b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := agenttest.ResultText(t, res); got != "You said: hi" {
		t.Errorf("answer = %q", got)
	}
	if got := threadRuns(t, b.url, thread); len(got) != 2 {
		t.Errorf("runs = %q, want the lost run and the other task's", got)
	}
}

func TestAPIKeyIsSent(t *testing.T) {
	t.Setenv("PACTUM_TEST_LANGGRAPH_KEY", "secret-key")
	got := make(chan string, 1)
	srv := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("X-Api-Key"):
		default:
		}
		http.Error(w, "no", http.StatusUnauthorized)
	})
	r, err := New(Settings{URL: srv, Assistant: "a", APIKeyEnv: "PACTUM_TEST_LANGGRAPH_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Invoke(context.Background(), request("t", "c", "hi"))
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeForbidden {
		t.Errorf("error = %v, want a permanent forbidden (401)", err)
	}
	if k := <-got; k != "secret-key" {
		t.Errorf("x-api-key = %q", k)
	}
	if strings.Contains(err.Error(), "secret-key") {
		t.Errorf("the error shows the key: %v", err)
	}
}

// TestSeveralInterrupts: with two interrupts pending the question is the
// first; its answer resumes that one by id, the other asks next.
func TestSeveralInterrupts(t *testing.T) {
	b := setup(t, "pair", "")
	req := request("task-pair", "ctx-pair", "go")
	res, err := b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if !res.InputRequired {
		t.Fatalf("result = %+v, want input_required", res)
	}
	first := res.Message.Text()
	req = answerTo(req, res.Message, task.TextPart("A"))
	res, err = b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke (first answer): %v", err)
	}
	if !res.InputRequired || res.Message.Text() == first {
		t.Fatalf("after answering %q: result = %+v (%q), want the other question", first, res, res.Message.Text())
	}
	req.Message.ID = "task-pair-answer-2"
	req = answerTo(req, res.Message, task.TextPart("B"))
	res, err = b.r.Invoke(b.ctx, req)
	if err != nil {
		t.Fatalf("Invoke (second answer): %v", err)
	}
	want := "first=A, second=B"
	if first == "Second question?" {
		want = "first=B, second=A"
	}
	if got := agenttest.ResultText(t, res); got != want {
		t.Errorf("answer = %q, want %q", got, want)
	}
}
