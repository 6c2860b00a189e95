package a2aserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/task"
)

// The HTTP+JSON streams of A2A 1.0 (POST …/message:stream) take the fast
// path too (faststream.go, streamREST) and write what a2a-go's HTTP+JSON
// handler writes for the same request: status, SSE headers and every
// event (ids and times masked), including the error event a stream ends
// with, which the SDK's handler writes (here a panic while streaming).
// Requests refused before the stream opens (bodies that do not decode,
// submissions the core refuses) are answered as before, with an HTTP
// error, and not by the fast path.
func TestRESTStreamFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	streams := 0
	for _, tc := range append(fastCases,
		fastCase{"artifact chunks", "chunks", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, ``},
		fastCase{"panic while streaming", "echo", `{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"panic"}]}}`, ``},
	) {
		var got [2]string
		// As for JSON-RPC: compared on runs that took the same route
		// (claimed at submit, or queued first).
		for try := 0; try < 5 && (try == 0 || firstState(got[0]) != firstState(got[1])); try++ {
			for i, fast := range []bool{false, true} {
				a2aserver.SetFastRPC(b.srv, fast)
				mid := fmt.Sprintf("m-rest-%s-%v-%d", strings.ReplaceAll(tc.name, " ", "-"), fast, try)
				before := a2aserver.FastServed(b.srv)
				r := b.post("/agents/"+tc.agent+"/message:stream", "1.0", strings.ReplaceAll(tc.params, "MID", mid))
				sse := r.status == http.StatusOK && r.header.Get("Content-Type") == "text/event-stream"
				if took := a2aserver.FastServed(b.srv) > before; took != (fast && sse) {
					t.Errorf("%s (fast %v): the fast path answered: %v, and the answer is a stream: %v", tc.name, fast, took, sse)
				}
				got[i] = streamAnswer(r, mid)
			}
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nSDK:  %s\nfast: %s", tc.name, got[0], got[1])
			continue
		}
		if !strings.HasPrefix(got[1], "200 text/event-stream|") {
			continue
		}
		streams++
		// An HTTP+JSON event is the result alone, with no JSON-RPC
		// envelope.
		if strings.Contains(got[1], `"jsonrpc"`) || !strings.Contains(got[1], "id: <uuid>\ndata: {") {
			t.Errorf("%s: not HTTP+JSON events:\n%s", tc.name, got[1])
		}
		switch {
		case strings.Contains(tc.name, "panic"):
			if !strings.Contains(got[1], `"status":"INTERNAL"`) || !strings.Contains(got[1], "ref <ref>") {
				t.Errorf("%s: want an internal error with a reference as the last event:\n%s", tc.name, got[1])
			}
		case tc.agent == "echo" || tc.agent == "chunks":
			if !strings.Contains(got[1], "TASK_STATE_COMPLETED") || strings.Count(got[1], "id: <uuid>\ndata: ") < 3 {
				t.Errorf("%s: want at least 3 events ending completed:\n%s", tc.name, got[1])
			}
		}
	}
	// The cases that stream: the four echo ones, failed, input
	// required, chunks and the panic.
	if streams < 8 {
		t.Errorf("%d cases streamed, want 8 or more", streams)
	}
	a2aserver.SetFastRPC(b.srv, true)
}

// SubscribeToTask over HTTP+JSON (GET or POST …/tasks/{id}:subscribe)
// takes the fast path as well, with the SDK's bytes; a task that cannot be
// subscribed to is refused with an HTTP error before either.
func TestRESTSubscribeFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := func() string {
		r := b.post("/agents/slow/message:send", "1.0", `{"configuration":{"returnImmediately":true},`+
			`"message":{"messageId":"`+task.NewID()+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
		tk, _ := r.json["task"].(map[string]any)
		id, _ := tk["id"].(string)
		if id == "" {
			t.Fatalf("message:send: no task in %d %s", r.status, r.body)
		}
		b.waitStartedTask(id)
		return id
	}
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
		got := b.bothPaths(tc.name, tc.live, func() string {
			id := "no-such-task"
			switch {
			case tc.live:
				id = send()
			case strings.Contains(tc.name, "finished"):
				id = done
			}
			return strings.ReplaceAll(subscribe(tc.method, id, tc.live), id, "<id>")
		})
		if !strings.HasPrefix(got[1], tc.want) {
			t.Errorf("%s: want an answer starting %q:\n%s", tc.name, tc.want, got[1])
		}
		if tc.live && (!strings.Contains(got[1], "TASK_STATE_COMPLETED") || strings.Contains(got[1], `"jsonrpc"`)) {
			t.Errorf("%s: want HTTP+JSON events up to the completed status:\n%s", tc.name, got[1])
		}
	}
}
