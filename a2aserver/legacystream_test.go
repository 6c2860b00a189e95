package a2aserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// legacyStreamCases are the A2A 0.3 message/stream requests the 0.3 fast
// path is compared with the SDK's 0.3 handler on (MID stands for the
// message id): streams of every kind, the errors a stream ends with, and
// params the SDK refuses itself.
var legacyStreamCases = []fastCase{
	{"task with artifact, HTML in text and metadata", "echo",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"<b>hi</b> & \u2028 ok"}],"metadata":{"k":"<v>&"}}}`, `7`},
	{"verified result", "echo",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"verified <2>"}]}}`, `"req-<1>"`},
	{"data part, id beyond float64", "echo",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"data","data":{"n":[1,2.5,"x"]}}]}}`, `123456789012345678901234567890`},
	{"failed task", "failing",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, `1`},
	{"input required", "ask",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, `2`},
	{"artifact chunks", "chunks",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, `3`},
	{"sensitive action refused", "guarded",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, `4`},
	{"unknown task", "echo",
		`{"message":{"kind":"message","messageId":"MID","taskId":"no-such-task","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, `5`},
	{"params that do not decode", "echo",
		`{"message":{"kind":"message","messageId":"MID","role":"user","parts":[{"kind":"bogus"}]}}`, `8`},
	{"no params", "echo", ``, `9`},
}

// The A2A 0.3 JSON-RPC streams (message/stream) write every event in its
// 0.3 form, and the error a stream ends with as a JSON-RPC error event.
func TestLegacyStreams(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	for _, tc := range legacyStreamCases {
		mid := fmt.Sprintf("m-v03-%s", strings.ReplaceAll(tc.name, " ", "-"))
		params := ""
		if tc.params != "" {
			params = `,"params":` + strings.ReplaceAll(tc.params, "MID", mid)
		}
		r := b.post("/agents/"+tc.agent, "", `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"message/stream"`+params+`}`)
		got := streamAnswer(r, mid)
		// The stream is what its case says it is, in 0.3's shapes.
		switch {
		case tc.params == "" || strings.Contains(tc.name, "decode"):
		case tc.agent == "echo" && tc.name != "unknown task":
			if !strings.Contains(got, `"state":"completed"`) || !strings.Contains(got, `"kind":"status-update"`) ||
				strings.Count(got, "id: <uuid>\ndata: ") < 3 || strings.Contains(got, "TASK_STATE_") {
				t.Errorf("%s: want at least 3 events in 0.3's shapes ending completed:\n%s", tc.name, got)
			}
		case tc.name == "unknown task":
			if !strings.Contains(got, `"error":`) || strings.Count(got, "data: ") != 1 {
				t.Errorf("%s: want one event, an error:\n%s", tc.name, got)
			}
		}
		if tc.params != "" && !strings.Contains(tc.name, "decode") && !strings.HasPrefix(got, "200 text/event-stream|no-cache|") {
			t.Errorf("%s: not an SSE stream:\n%s", tc.name, got)
		}
	}
}

// A panic while a 0.3 stream is written becomes its last event, an
// internal error with a reference, and the stream ends. (a2a-go's 0.3
// JSON-RPC handler writes the same event and then keeps the stream open
// until the caller leaves: its loop does not return after a panic.)
func TestLegacyStreamEndsAfterAPanic(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	r := b.post("/agents/echo", "", `{"jsonrpc":"2.0","id":6,"method":"message/stream","params":`+
		`{"message":{"kind":"message","messageId":"m-v03-panic","role":"user","parts":[{"kind":"text","text":"panic"}]}}}`)
	events := strings.Split(strings.TrimSpace(string(r.body)), "\n\n")
	last := events[len(events)-1]
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream" || len(events) < 2 ||
		!refRE.MatchString(last) || !strings.Contains(last, `data: {"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"internal error (ref `) {
		t.Errorf("want a stream ending with an internal error with a reference, got %d %s:\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
}

// tasks/resubscribe streams a live task in 0.3's shapes, and answers a
// task that is finished, unknown or not named with one error event.
func TestLegacyResubscribeStreams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	send := func() string {
		r := b.post("/agents/slow", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"configuration":{"blocking":false},`+
			`"message":{"kind":"message","messageId":"`+task.NewID()+`","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`)
		res, _ := r.json["result"].(map[string]any)
		id, _ := res["id"].(string)
		if id == "" {
			t.Fatalf("message/send: no task in %d %s", r.status, r.body)
		}
		b.waitStartedTask(id)
		return id
	}
	// resubscribe reads the stream of tasks/resubscribe with params; with
	// release it lets the slow agent finish once the first event arrived.
	resubscribe := func(params string, release bool) string {
		resp := b.open(http.MethodPost, "/agents/slow", "", `{"jsonrpc":"2.0","id":"sub-1","method":"tasks/resubscribe","params":`+params+`}`)
		return maskStream(b.readStream(resp, release))
	}
	done := send()
	b.gate <- struct{}{}
	b.waitState(done, task.StateSucceeded)
	for _, tc := range []struct {
		name   string
		live   bool
		params func() string
		want   string
	}{
		{"a live task", true, func() string { return `{"id":"` + send() + `"}` }, `"state":"completed"`},
		{"a finished task", false, func() string { return `{"id":"` + done + `"}` }, `"error":{"code":`},
		{"an unknown task", false, func() string { return `{"id":"no-such-task"}` }, `"error":{"code":-32001`},
		{"no task id", false, func() string { return `{"id":""}` }, `"error":{"code":-32602`},
	} {
		got := resubscribe(tc.params(), tc.live)
		if !strings.HasPrefix(got, "200 text/event-stream|no-cache|no\n") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: want an SSE stream holding %s:\n%s", tc.name, tc.want, got)
		}
	}
}
