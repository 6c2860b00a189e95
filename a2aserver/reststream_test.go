package a2aserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// The HTTP+JSON streams of A2A 1.0 (POST …/message:stream) write each
// event as the result alone, up to the error event a stream ends with
// (here a panic while streaming). Requests refused before the stream
// opens (bodies that do not decode, submissions the core refuses) are
// answered with an HTTP error.
func TestRESTStreams(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	streams := 0
	for _, tc := range append(fastCases,
		fastCase{"artifact chunks", "chunks", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, ``},
		fastCase{"panic while streaming", "echo", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"panic"}]}}`, ``},
	) {
		mid := fmt.Sprintf("m-rest-%s", strings.ReplaceAll(tc.name, " ", "-"))
		r := b.post("/agents/"+tc.agent+"/message:stream", "1.0", strings.ReplaceAll(tc.params, "MID", mid))
		got := streamAnswer(r, mid)
		if !strings.HasPrefix(got, "200 text/event-stream|") {
			// Refused before the stream opened: an HTTP error.
			if r.status < 400 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(got, `{"error":{"code":`) {
				t.Errorf("%s: neither a stream nor an HTTP+JSON error:\n%s", tc.name, got)
			}
			continue
		}
		streams++
		// An HTTP+JSON event is the result alone, with no JSON-RPC
		// envelope.
		if strings.Contains(got, `"jsonrpc"`) || !strings.Contains(got, "id: <uuid>\ndata: {") {
			t.Errorf("%s: not HTTP+JSON events:\n%s", tc.name, got)
		}
		switch {
		case strings.Contains(tc.name, "panic"):
			if !strings.Contains(got, `"status":"INTERNAL"`) || !strings.Contains(got, "ref <ref>") {
				t.Errorf("%s: want an internal error with a reference as the last event:\n%s", tc.name, got)
			}
		case tc.agent == "echo" || tc.agent == "chunks":
			if !strings.Contains(got, "TASK_STATE_COMPLETED") || strings.Count(got, "id: <uuid>\ndata: ") < 3 {
				t.Errorf("%s: want at least 3 events ending completed:\n%s", tc.name, got)
			}
		}
	}
	// The cases that stream: the four echo ones, failed, input
	// required, chunks and the panic.
	if streams < 8 {
		t.Errorf("%d cases streamed, want 8 or more", streams)
	}
}

// SubscribeToTask over HTTP+JSON (GET or POST …/tasks/{id}:subscribe)
// streams a live task; a task that cannot be subscribed to is refused
// with an HTTP error before the stream opens.
func TestRESTSubscribeStreams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := b.startSlowREST
	// subscribe reads the stream of SubscribeToTask on id; with release
	// it lets the slow agent finish once the first event has arrived.
	subscribe := func(method, id string, release bool) string {
		return maskStream(b.readStream(b.open(method, "/agents/slow/tasks/"+id+":subscribe", "1.0", ""), release))
	}
	done := send()
	b.gate <- struct{}{}
	b.waitState(done, task.StateSucceeded)
	for _, tc := range []struct {
		name, method string
		live         bool
		want         string
	}{
		{"a live task (GET)", http.MethodGet, true, "200 text/event-stream|no-cache|no\n"},
		{"a live task (POST)", http.MethodPost, true, "200 text/event-stream|no-cache|no\n"},
		{"a finished task", http.MethodGet, false, "400 application/json|"},
		{"an unknown task", http.MethodGet, false, "404 application/json|"},
	} {
		id := "no-such-task"
		switch {
		case tc.live:
			id = send()
		case strings.Contains(tc.name, "finished"):
			id = done
		}
		got := strings.ReplaceAll(subscribe(tc.method, id, tc.live), id, "<id>")
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: want an answer starting %q:\n%s", tc.name, tc.want, got)
		}
		if tc.live && (!strings.Contains(got, "TASK_STATE_COMPLETED") || strings.Contains(got, `"jsonrpc"`)) {
			t.Errorf("%s: want HTTP+JSON events up to the completed status:\n%s", tc.name, got)
		}
	}
}

// startSlowREST submits a task to the "slow" agent over A2A 1.0 HTTP+JSON
// (message:send, returning at once) and returns its id once its attempt
// has started (the agent then waits on the gate).
func (b *bundle) startSlowREST() string {
	b.t.Helper()
	r := b.post("/agents/slow/message:send", "1.0", `{"configuration":{"returnImmediately":true},`+
		`"message":{"messageId":"`+task.NewID()+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	tk, _ := r.json["task"].(map[string]any)
	id, _ := tk["id"].(string)
	if id == "" {
		b.t.Fatalf("message:send: no task in %d %s", r.status, r.body)
	}
	b.waitStartedTask(id)
	return id
}
