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

// SendMessage answers results of every kind and errors (the bytes of each
// are compared with a2a-go's transport in dispatch_oracle_test.go); a
// verified result a task carries is written once under its metadata and
// once under its last artifact's, compacted and HTML-escaped as
// encoding/json writes it, whether it came as JSON text or as CompactJSON
// held out of the encoding.
func TestSendMessageAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.VerifiedResult = fastCasesVerified })
	for _, tc := range fastCases {
		mid := fmt.Sprintf("m-%s", strings.ReplaceAll(tc.name, " ", "-"))
		params := ""
		if tc.params != "" {
			params = `,"params":` + strings.ReplaceAll(tc.params, "MID", mid)
		}
		r := b.post("/agents/"+tc.agent, "1.0", `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"SendMessage"`+params+`}`)
		got := string(r.body)
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+tc.id+`,`) {
			t.Errorf("%s: %d %s, want a JSON-RPC response for id %s:\n%s", tc.name, r.status, r.header.Get("Content-Type"), tc.id, got)
		}
		if strings.HasPrefix(tc.name, "verified") {
			vr := `"verifiedResult":{"contract":"c","note":"\u003cb\u003e\u0026\u003c/b\u003e","checks":[1,2.5]}`
			if strings.Contains(tc.name, "held") {
				vr = `"verifiedResult":{"checks":[1,2.5],"contract":"c","note":"\u003cb\u003e\u0026\u003c/b\u003e\u2028"}`
			}
			if n := strings.Count(got, vr); n != 2 {
				t.Errorf("%s: the answer holds the verified result %d times, want 2:\n%s", tc.name, n, got)
			}
		}
		wantErr := map[string]string{"unknown task": "-32001", "no parts": "-32602", "params that do not decode": "-32602", "no params": "-32602"}[tc.name]
		if wantErr != "" && !strings.Contains(got, `"error":{"code":`+wantErr+`,`) {
			t.Errorf("%s: want error %s:\n%s", tc.name, wantErr, got)
		}
		if wantErr == "" && !strings.Contains(got, `"result":{"task":{`) {
			t.Errorf("%s: want a task:\n%s", tc.name, got)
		}
	}
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
