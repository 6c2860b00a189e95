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

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/task"
)

// refRE matches the reference of an internal error, which differs per
// panic.
var refRE = regexp.MustCompile(`ref [0-9a-f]{8}`)

// The SendStreamingMessage fast path (faststream.go) writes what a2a-go's
// JSON-RPC handler writes for the same request: status, the headers of an
// SSE stream, and every event (event ids, task ids and times aside, which
// differ per run), for streams of every kind, for the errors a stream ends
// with, which it hands to the SDK, and for a panic while it streams.
func TestSendStreamingMessageFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	for _, tc := range append(fastCases,
		fastCase{"artifact chunks", "chunks", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `"s-<1>"`},
		fastCase{"panic while streaming", "echo", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"panic"}]}}`, `11`},
	) {
		var got [2]string
		// A submission is claimed at once when a worker slot is free,
		// and queued when the dispatcher holds the slots for a moment:
		// the stream then starts from the queued task. Both are right;
		// the two paths are compared on runs that took the same route.
		for try := 0; try < 5 && (try == 0 || firstState(got[0]) != firstState(got[1])); try++ {
			got = streamBoth(t, b, tc.name, tc.agent, tc.params, tc.id, try)
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nSDK:  %s\nfast: %s", tc.name, got[0], got[1])
			continue
		}
		// The stream is what its case says it is.
		switch {
		case tc.agent == "echo" && strings.Contains(tc.params, `"text"`) && !strings.Contains(tc.name, "panic") && !strings.Contains(tc.name, "unknown"):
			if !strings.Contains(got[1], "TASK_STATE_COMPLETED") || strings.Count(got[1], "id: <uuid>\ndata: ") < 3 {
				t.Errorf("%s: want at least 3 events ending completed:\n%s", tc.name, got[1])
			}
		case strings.Contains(tc.name, "panic"):
			if !strings.Contains(got[1], `"error":{"code":-32603`) || !strings.Contains(got[1], "ref <ref>") {
				t.Errorf("%s: want an internal error with a reference as the last event:\n%s", tc.name, got[1])
			}
		case tc.name == "unknown task":
			if !strings.Contains(got[1], `"error":`) || strings.Count(got[1], "data: ") != 1 {
				t.Errorf("%s: want one event, an error:\n%s", tc.name, got[1])
			}
		}
		if !strings.HasPrefix(got[1], "200 text/event-stream|no-cache|") && tc.params != "" && !strings.Contains(tc.name, "decode") {
			t.Errorf("%s: not an SSE stream:\n%s", tc.name, got[1])
		}
	}
	a2aserver.SetFastRPC(b.srv, true)
}

// stateRE finds the pactum state of an event's task.
var stateRE = regexp.MustCompile(`"state":"([a-z_]+)"`)

// firstState returns the pactum state in the first event of a stream.
func firstState(stream string) string {
	if m := stateRE.FindStringSubmatch(stream); m != nil {
		return m[1]
	}
	return ""
}

// streamBoth sends the same SendStreamingMessage request through the SDK's
// handler and through the fast path and returns both answers, status and
// headers first, with ids, times and error references masked. It checks
// that the fast path answered exactly when it should have.
func streamBoth(t *testing.T, b *bundle, name, agent, rawParams, id string, try int) [2]string {
	t.Helper()
	var got [2]string
	for i, fast := range []bool{false, true} {
		a2aserver.SetFastRPC(b.srv, fast)
		mid := fmt.Sprintf("m-%s-%v-%d", strings.ReplaceAll(name, " ", "-"), fast, try)
		params := ""
		if rawParams != "" {
			params = `,"params":` + strings.ReplaceAll(rawParams, "MID", mid)
		}
		before := a2aserver.FastServed(b.srv)
		r := b.post("/agents/"+agent, "1.0", `{"jsonrpc":"2.0","id":`+id+`,"method":"SendStreamingMessage"`+params+`}`)
		// Params that do not decode (or none) are the SDK's to refuse.
		wantFast := fast && rawParams != "" && !strings.Contains(name, "decode")
		if took := a2aserver.FastServed(b.srv) > before; took != wantFast {
			t.Errorf("%s (fast %v): the fast path answered: %v, want %v", name, fast, took, wantFast)
		}
		got[i] = streamAnswer(r, mid)
	}
	return got
}

// While an agent works, the fast path writes keep-alive comments between
// a stream's events, as the SDK's handler does, and the stream ends with
// its last event.
func TestStreamFastPathKeepsAlive(t *testing.T) {
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

// SubscribeToTask takes the same fast path: a live task's stream, and the
// errors for a task that is finished, unknown or not named, are what the
// SDK's handler writes.
func TestSubscribeToTaskFastPathAnswersAsTheSDK(t *testing.T) {
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
		got := b.bothPaths(tc.name, true, func() string { return maskStream(subscribe(tc.params(), tc.live)) })
		if !strings.HasPrefix(got[1], "200 text/event-stream|no-cache|no\n") || !strings.Contains(got[1], tc.want) {
			t.Errorf("%s: want an SSE stream holding %s:\n%s", tc.name, tc.want, got[1])
		}
	}
}

// bothPaths gets an answer through the SDK's handler and through the fast
// path (answer runs the request, a new one each time) and returns both,
// the SDK's first; it reports when they differ, and when the fast path
// answered where it should not have or did not where wantFast says it
// should.
func (b *bundle) bothPaths(name string, wantFast bool, answer func() string) [2]string {
	b.t.Helper()
	var got [2]string
	for i, fast := range []bool{false, true} {
		a2aserver.SetFastRPC(b.srv, fast)
		before := a2aserver.FastServed(b.srv)
		got[i] = answer()
		if took := a2aserver.FastServed(b.srv) > before; took != (fast && wantFast) {
			b.t.Errorf("%s (fast %v): the fast path answered: %v", name, fast, took)
		}
	}
	a2aserver.SetFastRPC(b.srv, true)
	if got[0] != got[1] {
		b.t.Errorf("%s:\nSDK:  %s\nfast: %s", name, got[0], got[1])
	}
	return got
}

// waitStartedTask waits until the "slow" agent's attempt of task id has
// published its "started" progress. The subscribe tests wait for it before
// a stream opens, so that every run takes the same route (the chunk is not
// streamed live, and arrives whole before the final status) and the SDK's
// stream and the fast path's can be compared byte for byte.
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

// An event reaches the caller while the agent still works: the fast path
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
