package a2aserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// refRE matches the reference of an internal error, which differs per
// panic.
var refRE = regexp.MustCompile(`ref [0-9a-f]{8}`)

// SendStreamingMessage streams results of every kind, the error a stream
// ends with, and a panic while it streams as an internal error with a
// reference (the bytes of each are compared with a2a-go's transport in
// dispatch_oracle_test.go).
func TestSendStreamingMessageStreams(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	for _, tc := range append(fastCases,
		fastCase{"artifact chunks", "chunks", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `"s-<1>"`},
		fastCase{"panic while streaming", "echo", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"panic"}]}}`, `11`},
	) {
		mid := fmt.Sprintf("m-%s", strings.ReplaceAll(tc.name, " ", "-"))
		params := ""
		if tc.params != "" {
			params = `,"params":` + strings.ReplaceAll(tc.params, "MID", mid)
		}
		r := b.post("/agents/"+tc.agent, "1.0", `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"SendStreamingMessage"`+params+`}`)
		got := streamAnswer(r, mid)
		// The stream is what its case says it is.
		switch {
		case tc.agent == "echo" && strings.Contains(tc.params, `"text"`) && !strings.Contains(tc.name, "panic") && !strings.Contains(tc.name, "unknown"):
			if !strings.Contains(got, "TASK_STATE_COMPLETED") || strings.Count(got, "id: <uuid>\ndata: ") < 3 {
				t.Errorf("%s: want at least 3 events ending completed:\n%s", tc.name, got)
			}
		case strings.Contains(tc.name, "panic"):
			if !strings.Contains(got, `"error":{"code":-32603`) || !strings.Contains(got, "ref <ref>") {
				t.Errorf("%s: want an internal error with a reference as the last event:\n%s", tc.name, got)
			}
		case tc.name == "unknown task":
			if !strings.Contains(got, `"error":`) || strings.Count(got, "data: ") != 1 {
				t.Errorf("%s: want one event, an error:\n%s", tc.name, got)
			}
		}
		if !strings.HasPrefix(got, "200 text/event-stream|no-cache|") && tc.params != "" && !strings.Contains(tc.name, "decode") {
			t.Errorf("%s: not an SSE stream:\n%s", tc.name, got)
		}
		if strings.Contains(got, "data: ") && !strings.Contains(got, `data: {"jsonrpc":"2.0","id":`+tc.id+`,`) {
			t.Errorf("%s: events are not JSON-RPC responses for id %s:\n%s", tc.name, tc.id, got)
		}
	}
}

// While an agent works, the dispatcher writes keep-alive comments between
// a stream's events, and the stream ends with
// its last event.
func TestStreamKeepsAlive(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.KeepAlive = 20 * time.Millisecond })
	resp := openStream(t, b, "slow", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-keep","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	// keepAlives counts the comments after the first event (the agent's
	// "started" progress has been sent: it is working).
	keepAlives, events, released := 0, 0, false
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		switch {
		case strings.HasPrefix(line, "data: "):
			events++
		case line == ": keep-alive" && events > 0:
			keepAlives++
		}
		if keepAlives == 3 && !released {
			// Three keep-alives while the agent waits: let it finish.
			released = true
			b.releaseAll()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read the stream: %v", err)
	}
	all := strings.Join(lines, "\n")
	if !released {
		t.Fatalf("the stream ended with %d keep-alives before the agent was released:\n%s", keepAlives, all)
	}
	last := lines[len(lines)-1]
	for i := len(lines) - 1; i >= 0 && last == ""; i-- {
		last = lines[i]
	}
	if !strings.HasPrefix(last, "data: ") || !strings.Contains(last, "TASK_STATE_COMPLETED") {
		t.Errorf("the stream's last line is %q, want the completed event:\n%s", last, all)
	}
	if strings.Contains(all[strings.LastIndex(all, "data: "):], ": keep-alive") {
		t.Errorf("a keep-alive after the last event:\n%s", all)
	}
}

// SubscribeToTask streams a live task to its end, and answers a task that
// is finished, unknown or not named with one error event.
func TestSubscribeToTaskStreams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := func(agent, text string, immediately bool) string {
		cfg := ""
		if immediately {
			cfg = `"configuration":{"returnImmediately":true},`
		}
		r := b.post("/agents/"+agent, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{`+cfg+
			`"message":{"messageId":"`+task.NewID()+`","role":"ROLE_USER","parts":[{"text":"`+text+`"}]}}}`)
		res, _ := r.json["result"].(map[string]any)
		tk, _ := res["task"].(map[string]any)
		id, _ := tk["id"].(string)
		if id == "" {
			t.Fatalf("SendMessage to %s: no task in %s", agent, r.body)
		}
		if agent == "slow" {
			b.waitStartedTask(id)
		}
		return id
	}
	// subscribe reads the stream of SubscribeToTask on id; with release it
	// lets the slow agent finish once the first event (the task as it is)
	// has arrived.
	subscribe := func(params string, release bool) string {
		return b.readStream(openStream(t, b, "slow", `{"jsonrpc":"2.0","id":"sub-1","method":"SubscribeToTask","params":`+params+`}`), release)
	}
	done := send("slow", "hi", true)
	b.gate <- struct{}{}
	b.waitState(done, task.StateSucceeded)
	for _, tc := range []struct {
		name string
		live bool
		// params returns the request's params; live tasks are new per run.
		params func() string
		want   string
	}{
		{"a live task", true, func() string { return `{"id":"` + send("slow", "hi", true) + `"}` }, "TASK_STATE_COMPLETED"},
		{"a finished task", false, func() string { return `{"id":"` + done + `"}` }, `"error":{"code":`},
		{"an unknown task", false, func() string { return `{"id":"no-such-task"}` }, `"error":{"code":-32001`},
		{"no task id", false, func() string { return `{"id":""}` }, `"error":{"code":-32602`},
	} {
		got := maskStream(subscribe(tc.params(), tc.live))
		if !strings.HasPrefix(got, "200 text/event-stream|no-cache|no\n") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: want an SSE stream holding %s:\n%s", tc.name, tc.want, got)
		}
	}
}

// waitStartedTask waits until the "slow" agent's attempt of task id has
// published its "started" progress. The subscribe tests wait for it before
// a stream opens, so that every run takes the same route (the chunk is not
// streamed live, and arrives whole before the final status).
func (b *bundle) waitStartedTask(id string) {
	b.t.Helper()
	for b.waitStarted() != id {
	}
}

// readStream reads the stream resp carries to its end and returns its
// status, SSE headers and lines; with release, it lets the "slow" agent
// finish once the first event (the task as it is) has arrived.
func (b *bundle) readStream(resp *http.Response, release bool) string {
	b.t.Helper()
	defer resp.Body.Close()
	var out strings.Builder
	fmt.Fprintf(&out, "%d %s|%s|%s\n", resp.StatusCode, resp.Header.Get("Content-Type"),
		resp.Header.Get("Cache-Control"), resp.Header.Get("X-Accel-Buffering"))
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if release && strings.HasPrefix(sc.Text(), "data: ") {
			release = false
			b.gate <- struct{}{}
		}
	}
	if err := sc.Err(); err != nil {
		b.t.Fatalf("read the stream: %v", err)
	}
	return out.String()
}

// streamAnswer is a streamed answer as the stream tests compare it: the
// status, the SSE headers and A2A-Version, then the body with the message
// id mid written as MID and what differs per run masked.
func streamAnswer(r rawResponse, mid string) string {
	h := r.header
	return fmt.Sprintf("%d %s|%s|%s|%s|%s\n%s", r.status, h.Get("Content-Type"), h.Get("Cache-Control"),
		h.Get("Connection"), h.Get("X-Accel-Buffering"), h.Get("A2A-Version"), maskStream(strings.ReplaceAll(string(r.body), mid, "MID")))
}

// maskStream masks what differs per run in an answer: UUIDs, times and
// the references of internal errors.
func maskStream(s string) string {
	return refRE.ReplaceAllString(timeRE.ReplaceAllString(uuidRE.ReplaceAllString(s, "<uuid>"), "<time>"), "ref <ref>")
}

// openStream posts the A2A 1.0 JSON-RPC request body to agent and returns
// the response, its body unread, for the caller to read as it streams.
func openStream(t *testing.T, b *bundle, agent, body string) *http.Response {
	t.Helper()
	return b.open(http.MethodPost, "/agents/"+agent, "1.0", body)
}

// open sends a request to path with the given A2A-Version ("" sends
// none) and body (a JSON body; "" sends none) and returns the response,
// its body unread.
func (b *bundle) open(method, path, version, body string) *http.Response {
	b.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testCtx(b.t), method, b.url+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp
}

// An event reaches the caller while the agent still works: the dispatcher
// writes events without flushing each, and must flush when the task's
// follow waits (task.WithFollowIdle). Keep-alives are off here (setup), so
// nothing else would flush the agent's "started" progress before it ends.
func TestStreamEventsArriveWhileTheAgentWorks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := openStream(t, b, "slow", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-live","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	released := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !released && strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"started"`) {
			// The agent is blocked on the gate: this event was flushed
			// while it works.
			released = true
			b.releaseAll()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read the stream: %v", err)
	}
	all := strings.Join(lines, "\n")
	if !released || !strings.Contains(all, "TASK_STATE_COMPLETED") {
		t.Errorf("want the progress event before the agent was released, then the completed task:\n%s", all)
	}
}
