package a2aserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/task"
)

// The SendMessage fast path answers, byte for byte, what a2a-go's JSON-RPC
// handler answers for the same request: the same status, headers that
// matter, and body (ids and times aside, which differ per task, as
// golden_test.go masks them), for
// results of every kind and for errors, which it hands to the SDK.
func TestSendMessageFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	for _, tc := range fastCases {
		var got [2]string
		for i, fast := range []bool{false, true} {
			a2aserver.SetFastRPC(b.srv, fast)
			// Each run is a new task: its message id differs, and is
			// written back to one name before comparing.
			mid := fmt.Sprintf("m-%s-%v", strings.ReplaceAll(tc.name, " ", "-"), fast)
			params := ""
			if tc.params != "" {
				params = `,"params":` + strings.ReplaceAll(tc.params, "MID", mid)
			}
			r := b.post("/agents/"+tc.agent, "1.0", `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"SendMessage"`+params+`}`)
			body := strings.ReplaceAll(string(r.body), mid, "MID")
			body = timeRE.ReplaceAllString(uuidRE.ReplaceAllString(body, "<uuid>"), "<time>")
			got[i] = fmt.Sprintf("%d %s %s\n%s", r.status, r.header.Get("Content-Type"), r.header.Get("A2A-Version"), body)
		}
		if strings.HasPrefix(tc.name, "verified") {
			// Compacted and HTML-escaped as encoding/json writes it,
			// once under the task's metadata and once under its
			// artifact's.
			vr := `"verifiedResult":{"contract":"c","note":"\u003cb\u003e\u0026\u003c/b\u003e","checks":[1,2.5]}`
			if strings.Contains(tc.name, "held") {
				vr = `"verifiedResult":{"checks":[1,2.5],"contract":"c","note":"\u003cb\u003e\u0026\u003c/b\u003e\u2028"}`
			}
			if n := strings.Count(got[1], vr); n != 2 {
				t.Errorf("%s: the answer holds the verified result %d times, want 2:\n%s", tc.name, n, got[1])
			}
		}
		if got[0] != got[1] {
			t.Errorf("%s:\nSDK:  %s\nfast: %s", tc.name, got[0], got[1])
		}
	}
	a2aserver.SetFastRPC(b.srv, true)
}

// fastCase is a request a fast path is compared with the SDK's handler on.
type fastCase struct{ name, agent, params, id string }

// fastCases are the requests SendMessage's and SendStreamingMessage's fast
// paths are compared on: results of every kind, verified results, errors,
// and params the SDK refuses itself. MID stands for the message id.
var fastCases = []fastCase{
	{"task with artifact, HTML in text and metadata", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"<b>hi</b> & \u2028 ok"}],"metadata":{"k":"<v>&"}}}`, `7`},
	{"verified result in task and artifact metadata", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"verified <1>"}]}}`, `9`},
	{"verified result held out of the encoding", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"verified <2>"}]}}`, `10`},
	{"string id, history length, extra members", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":1},"unknown":true}`, `"req-<1>"`},
	{"id beyond float64", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"data":{"n":[1,2.5,"x"]}}]}}`, `123456789012345678901234567890`},
	{"failed task", "failing",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `1`},
	{"input required", "ask",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `2`},
	{"sensitive action refused", "guarded",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `3`},
	{"unknown task", "echo",
		`{"message":{"messageId":"MID","taskId":"no-such-task","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, `4`},
	{"no parts", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[]}}`, `5`},
	{"params that do not decode", "echo",
		`{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"bogus":1}]}}`, `6`},
	{"no params", "echo", ``, `8`},
}

// fastCasesVerified is the VerifiedResult of the fast-path comparisons'
// servers: a verified result for the messages "verified <1>" (JSON the
// answer carries as is, with HTML and spaces in it) and "verified <2>" (as
// a contract's gate leaves it, json.Marshal's bytes as CompactJSON, which
// the fast path writes as they are), and a panic for "panic" once the task
// is finished.
func fastCasesVerified(_ context.Context, t *task.Task) (any, error) {
	in := t.Envelope.Input.Parts
	switch {
	case len(in) > 0 && in[0].Text == "verified <1>":
		return json.RawMessage(`{"contract": "c", "note": "<b>&</b>", "checks": [1, 2.5]}`), nil
	case len(in) > 0 && in[0].Text == "verified <2>":
		b, err := json.Marshal(map[string]any{"contract": "c", "note": "<b>&</b>\u2028", "checks": []any{1, 2.5}})
		return a2aserver.CompactJSON(b), err
	case len(in) > 0 && in[0].Text == "panic" && t.State.Terminal():
		panic("the verified result broke")
	}
	return nil, nil
}
