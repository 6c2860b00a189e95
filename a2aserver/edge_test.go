package a2aserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// edgeRow is one request to an A2A endpoint and what must come back.
type edgeRow struct {
	name   string
	method string // HTTP method (default POST)
	path   string // default "/"
	body   string
	status int // HTTP status (default 200)
	// code is the JSON-RPC error code; 0 wants a result (or, with id "",
	// no body at all).
	code int
	// id is the response id as it must appear on the wire; "" wants no
	// JSON-RPC body (a notification).
	id string
	// says must be in the error message; never must not.
	says, never string
}

// edgeAnswer is an HTTP answer of a JSON-RPC endpoint. A stream's answer is
// its first event.
type edgeAnswer struct {
	status int
	header http.Header
	body   []byte
	code   int
	msg    string
	id     json.RawMessage
	result bool
}

func (b *bundle) edge(method, path, version, body string) edgeAnswer {
	b.t.Helper()
	req, err := http.NewRequestWithContext(testCtx(b.t), method, b.url+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out := edgeAnswer{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out.body = []byte(data)
				break
			}
		}
	} else if out.body, err = io.ReadAll(resp.Body); err != nil {
		b.t.Fatal(err)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if len(out.body) > 0 && json.Unmarshal(out.body, &r) == nil && r.JSONRPC == "2.0" {
		out.id, out.result = r.ID, r.Result != nil
		if r.Error != nil {
			out.code, out.msg = r.Error.Code, r.Error.Message
		}
	}
	return out
}

// check asserts that a answers row.
func (row edgeRow) check(t *testing.T, a edgeAnswer) {
	t.Helper()
	status := row.status
	if status == 0 {
		status = http.StatusOK
	}
	if a.status != status {
		t.Errorf("HTTP status %d, want %d: %.300s", a.status, status, a.body)
	}
	if row.id == "" {
		if len(a.body) != 0 {
			t.Errorf("a notification was answered: %.300s", a.body)
		}
		return
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	if a.code != row.code || (row.code == 0 && !a.result) {
		t.Errorf("JSON-RPC code %d (%q), want %d: %.300s", a.code, a.msg, row.code, a.body)
	}
	if string(a.id) != row.id {
		t.Errorf("id %s, want %s", a.id, row.id)
	}
	if row.says != "" && !strings.Contains(a.msg, row.says) {
		t.Errorf("message %q does not name %q", a.msg, row.says)
	}
	if row.never != "" && strings.Contains(a.msg, row.never) {
		t.Errorf("message %q shows %q", a.msg, row.never)
	}
	if status == http.StatusMethodNotAllowed && a.header.Get("Allow") != "POST" {
		t.Errorf("405 with Allow %q, want POST", a.header.Get("Allow"))
	}
}

// manyKeys returns a JSON object with n keys.
func manyKeys(n int) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":0`, i)
	}
	sb.WriteByte('}')
	return sb.String()
}

// bigValue returns a JSON object with one string of n bytes.
func bigValue(n int) string { return `{"big":"` + strings.Repeat("x", n) + `"}` }

const bigID = `123456789012345678901234567890`

// TestJSONRPCEdge10 pins what the A2A 1.0 JSON-RPC endpoint answers to
// malformed, unusual and lenient input (issue 14 §4).
func TestJSONRPCEdge10(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.MaxBodyBytes = 8 << 20 })
	done := send(testCtx(t), t, b.client("echo", a2a.TransportProtocolJSONRPC), sendReq(userMessage("done")))
	get := `"method":"GetTask","params":{"id":"` + string(done.ID) + `"}`
	msg := func(id, meta, partMeta string) string {
		return `{"jsonrpc":"2.0"` + id + `,"method":"SendMessage","params":{"message":{"messageId":"` + msgID() + `","role":"ROLE_USER","parts":[{"text":"x"` + partMeta + `}]` + meta + `}}}`
	}
	for _, row := range []edgeRow{
		{name: "GET root", method: http.MethodGet, status: http.StatusMethodNotAllowed, code: -32600, id: "null", says: "POST"},
		{name: "GET agent", method: http.MethodGet, path: "/agents/echo/", status: http.StatusMethodNotAllowed, code: -32600, id: "null", says: "POST"},
		{name: "PUT agent without slash", method: http.MethodPut, path: "/agents/echo", body: `{}`, status: http.StatusMethodNotAllowed, code: -32600, id: "null"},
		{name: "jsonrpc as a number", body: `{"jsonrpc":2.0,"id":1,` + get + `}`, code: -32600, id: "1", says: "jsonrpc"},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,` + get + `}`, code: -32600, id: "1", says: "jsonrpc"},
		{name: "jsonrpc missing", body: `{"id":1,` + get + `}`, code: -32600, id: "1", says: "jsonrpc"},
		{name: "numeric method", body: `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, code: -32600, id: "1", says: "method"},
		{name: "empty method", body: `{"jsonrpc":"2.0","id":1,"method":"","params":{}}`, code: -32600, id: "1", says: "method"},
		{name: "no method", body: `{"jsonrpc":"2.0","id":1,"params":{}}`, code: -32600, id: "1", says: "method"},
		{name: "out-of-range id", body: `{"jsonrpc":"2.0","id":1e999,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "fractional id", body: `{"jsonrpc":"2.0","id":1.5,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "exponent id", body: `{"jsonrpc":"2.0","id":1e3,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{"a":1},` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "boolean id", body: `{"jsonrpc":"2.0","id":true,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "two ids", body: `{"jsonrpc":"2.0","id":1,"id":2,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "30-digit id", body: `{"jsonrpc":"2.0","id":` + bigID + `,` + get + `}`, id: bigID},
		{name: "30-digit id on an error", body: `{"jsonrpc":"2.0","id":` + bigID + `,"method":"GetTask","params":{"id":"nope"}}`, code: -32001, id: bigID},
		{name: "30-digit id on a stream", body: `{"jsonrpc":"2.0","id":-` + bigID + `,"method":"SendStreamingMessage","params":{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"text":"x"}]}}}`, id: "-" + bigID},
		{name: "negative id", body: `{"jsonrpc":"2.0","id":-42,` + get + `}`, id: "-42"},
		{name: "zero id", body: `{"jsonrpc":"2.0","id":0,` + get + `}`, id: "0"},
		{name: "string id with escapes", body: `{"jsonrpc":"2.0","id":"\u00e9\"x",` + get + `}`, id: `"\u00e9\"x"`},
		{name: "string id on a refusal", body: `{"jsonrpc":"1.0","id":"<&>\u00e9",` + get + `}`, code: -32600, id: `"<&>\u00e9"`, says: "jsonrpc"},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,` + get + `}`, id: "null"},
		{name: "parse error", body: `{"jsonrpc":"2.0","id":1,"method":`, code: -32700, id: "null"},
		{name: "trailing data", body: `{"jsonrpc":"2.0","id":1,` + get + `} {}`, code: -32700, id: "null"},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,` + get + `}]`, code: -32600, id: "null"},
		{name: "params an array", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["x"]}`, code: -32602, id: "1", says: "params"},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`, code: -32600, id: "1", says: "params"},
		{name: "unknown part kind", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"blob","blob":"x"}]}}}`, code: -32602, id: "1", says: "message.parts[0]"},
		{name: "two part kinds", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"},{"text":"b","url":"http://x"}]}}}`, code: -32602, id: "1", says: "message.parts[1]"},
		{name: "unknown part kind on a stream", body: `{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"blob":"x"}]}}}`, code: -32602, id: "2", says: "message.parts[0]"},
		{name: "bad statusTimestampAfter", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"statusTimestampAfter":"yesterday"}}`, code: -32602, id: "1", says: "statusTimestampAfter"},
		{name: "good statusTimestampAfter", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"statusTimestampAfter":"2020-01-01T00:00:00Z"}}`, id: "1"},
		{name: "wrong type", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`, code: -32602, id: "1", says: "id"},
		{name: "negative historyLength GetTask", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + string(done.ID) + `","historyLength":-1}}`, code: -32602, id: "1", says: "historyLength"},
		{name: "zero historyLength GetTask", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + string(done.ID) + `","historyLength":0}}`, id: "1"},
		{name: "negative historyLength SendMessage", body: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"historyLength":-2},"message":{"messageId":"h1","role":"ROLE_USER","parts":[{"text":"x"}]}}}`, code: -32602, id: "1", says: "configuration.historyLength"},
		{name: "negative historyLength SendStreamingMessage", body: `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"configuration":{"historyLength":-2},"message":{"messageId":"h2","role":"ROLE_USER","parts":[{"text":"x"}]}}}`, code: -32602, id: "1", says: "configuration.historyLength"},
		{name: "negative historyLength ListTasks", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"historyLength":-1}}`, code: -32602, id: "1", says: "historyLength"},
		{name: "200,000 message metadata keys", body: msg(`,"id":1`, `,"metadata":`+manyKeys(200_000), ""), code: -32602, id: "1", says: "metadata"},
		{name: "257 request metadata keys", body: strings.Replace(msg(`,"id":1`, "", ""), `"params":{`, `"params":{"metadata":`+manyKeys(257)+`,`, 1), code: -32602, id: "1", says: "metadata"},
		{name: "256 message metadata keys", body: msg(`,"id":1`, `,"metadata":`+manyKeys(256), ""), id: "1"},
		{name: "oversized part metadata", body: msg(`,"id":1`, "", `,"metadata":`+bigValue(70_000)), code: -32602, id: "1", says: "metadata"},
		{name: "part metadata under the size limit", body: msg(`,"id":1`, "", `,"metadata":`+bigValue(60_000)), id: "1"},
		{name: "bad page token", body: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageToken":"%%%"}}`, code: -32602, id: "1", says: "page token", never: "sqlite"},
		{name: "notification SendMessage", body: msg("", "", ""), status: http.StatusNoContent},
		{name: "notification GetTask", body: `{"jsonrpc":"2.0",` + get + `}`, status: http.StatusNoContent},
		{name: "notification of an unknown method", body: `{"jsonrpc":"2.0","method":"Explode","params":{}}`, status: http.StatusNoContent},
		{name: "notification with bad params", body: `{"jsonrpc":"2.0","method":"GetTask","params":{"id":5}}`, status: http.StatusNoContent},
		{name: "notification of a 0.3 method", body: `{"jsonrpc":"2.0","method":"tasks/get","params":{}}`, status: http.StatusNoContent},
		{name: "invalid notification", body: `{"jsonrpc":"1.0",` + get + `}`, code: -32600, id: "null"},
	} {
		t.Run(row.name, func(t *testing.T) {
			method := row.method
			if method == "" {
				method = http.MethodPost
			}
			path := row.path
			if path == "" {
				path = "/"
			}
			row.check(t, b.edge(method, path, "1.0", row.body))
		})
	}
}

// msgN numbers the message ids of the edge tests.
var msgN atomic.Int64

func msgID() string { return fmt.Sprintf("edge-%d", msgN.Add(1)) }

// TestJSONRPCEdge03 is TestJSONRPCEdge10 for the A2A 0.3 JSON-RPC binding
// (no A2A-Version header).
func TestJSONRPCEdge03(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.MaxBodyBytes = 8 << 20 })
	done := send(testCtx(t), t, b.client("echo", a2a.TransportProtocolJSONRPC), sendReq(userMessage("done")))
	get := `"method":"tasks/get","params":{"id":"` + string(done.ID) + `"}`
	send03 := func(id, extra string) string {
		return `{"jsonrpc":"2.0"` + id + `,"method":"message/send","params":{` + extra + `"message":{"kind":"message","messageId":"` + msgID() + `","role":"user","parts":[{"kind":"text","text":"x"}]}}}`
	}
	for _, row := range []edgeRow{
		{name: "GET root", method: http.MethodGet, status: http.StatusMethodNotAllowed, code: -32600, id: "null", says: "POST"},
		{name: "GET agent", method: http.MethodGet, path: "/agents/echo", status: http.StatusMethodNotAllowed, code: -32600, id: "null"},
		{name: "jsonrpc as a number", body: `{"jsonrpc":2.0,"id":1,` + get + `}`, code: -32600, id: "1", says: "jsonrpc"},
		{name: "numeric method", body: `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, code: -32600, id: "1", says: "method"},
		{name: "out-of-range id", body: `{"jsonrpc":"2.0","id":1e999,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "fractional id", body: `{"jsonrpc":"2.0","id":2.5,` + get + `}`, code: -32600, id: "null", says: "id"},
		{name: "30-digit id", body: `{"jsonrpc":"2.0","id":` + bigID + `,` + get + `}`, id: bigID},
		{name: "30-digit id on a stream", body: `{"jsonrpc":"2.0","id":` + bigID + `,"method":"message/stream","params":{"message":{"kind":"message","messageId":"s03","role":"user","parts":[{"kind":"text","text":"x"}]}}}`, id: bigID},
		{name: "string id", body: `{"jsonrpc":"2.0","id":"a",` + get + `}`, id: `"a"`},
		{name: "parse error", body: `{"jsonrpc":"2.0",`, code: -32700, id: "null"},
		{name: "unknown part kind", body: `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"blob","blob":"x"}]}}}`, code: -32602, id: "1", says: "message.parts[0]"},
		{name: "unknown part kind on a stream", body: `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"blob"}]}}}`, code: -32602, id: "1", says: "message.parts[0]"},
		{name: "wrong type", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":5}}`, code: -32602, id: "1", says: "id"},
		{name: "negative historyLength tasks/get", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + string(done.ID) + `","historyLength":-1}}`, code: -32602, id: "1", says: "historyLength"},
		{name: "zero historyLength tasks/get", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"` + string(done.ID) + `","historyLength":0}}`, id: "1"},
		{name: "negative historyLength message/send", body: send03(`,"id":1`, `"configuration":{"historyLength":-5},`), code: -32602, id: "1", says: "historyLength"},
		{name: "200,000 metadata keys", body: send03(`,"id":1`, `"metadata":`+manyKeys(200_000)+`,`), code: -32602, id: "1", says: "metadata"},
		{name: "notification message/send", body: send03("", ""), status: http.StatusNoContent},
		{name: "notification of a 1.0 method", body: `{"jsonrpc":"2.0","method":"GetTask","params":{}}`, status: http.StatusNoContent},
		{name: "invalid notification", body: `{"jsonrpc":"2.0","method":7}`, code: -32600, id: "null"},
	} {
		t.Run(row.name, func(t *testing.T) {
			method := row.method
			if method == "" {
				method = http.MethodPost
			}
			path := row.path
			if path == "" {
				path = "/"
			}
			row.check(t, b.edge(method, path, "", row.body))
		})
	}
}

// TestNotificationsRun checks that a JSON-RPC notification is executed
// although nothing is answered.
func TestNotificationsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ version, body string }{
		{"1.0", `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"notify-10","role":"ROLE_USER","parts":[{"text":"n"}]}}}`},
		{"", `{"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"notify-03","role":"user","parts":[{"kind":"text","text":"n"}]}}}`},
	} {
		if a := b.edge(http.MethodPost, "/", tc.version, tc.body); a.status != http.StatusNoContent || len(a.body) != 0 {
			t.Fatalf("notification: %d %s, want 204 and no body", a.status, a.body)
		}
	}
	page, err := b.coord.List(testCtx(t), task.ListParams{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tk := range page.Tasks {
		seen[tk.Envelope.Input.ID] = true
	}
	if !seen["notify-10"] || !seen["notify-03"] {
		t.Fatalf("the notifications did not submit their tasks: %v", seen)
	}
}

// TestHTTPJSONEdge pins the same refusals on the HTTP+JSON binding.
func TestHTTPJSONEdge(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.MaxBodyBytes = 8 << 20 })
	done := send(testCtx(t), t, b.client("echo", a2a.TransportProtocolJSONRPC), sendReq(userMessage("done")))
	sendBody := func(extra string) string {
		return `{` + extra + `"message":{"messageId":"` + msgID() + `","role":"ROLE_USER","parts":[{"text":"x"}]}}`
	}
	for _, tc := range []struct {
		name, method, path, version, body string
		status                            int
		says, never                       string
	}{
		{"negative historyLength GetTask", "GET", "/tasks/" + string(done.ID) + "?historyLength=-1", "1.0", "", 400, "historyLength", ""},
		{"zero historyLength GetTask", "GET", "/tasks/" + string(done.ID) + "?historyLength=0", "1.0", "", 200, "", ""},
		{"negative historyLength ListTasks", "GET", "/tasks?historyLength=-1", "1.0", "", 400, "historyLength", ""},
		{"negative historyLength SendMessage", "POST", "/message:send", "1.0", sendBody(`"configuration":{"historyLength":-1},`), 400, "historyLength", ""},
		{"negative historyLength 0.3 GetTask", "GET", "/v1/tasks/" + string(done.ID) + "?historyLength=-1", "", "", 400, "historyLength", ""},
		{"200,000 metadata keys", "POST", "/message:send", "1.0", sendBody(`"metadata":` + manyKeys(200_000) + `,`), 400, "metadata", ""},
		{"bad page token", "GET", "/tasks?pageToken=%25%25", "1.0", "", 400, "page token", "sqlite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(tc.method, tc.path, tc.version, strings.NewReader(tc.body))
			if r.status != tc.status {
				t.Fatalf("%d %.300s, want %d", r.status, r.body, tc.status)
			}
			if tc.says != "" && !bytes.Contains(r.body, []byte(tc.says)) {
				t.Errorf("error %.300s does not name %q", r.body, tc.says)
			}
			if tc.never != "" && bytes.Contains(r.body, []byte(tc.never)) {
				t.Errorf("error %.300s shows %q", r.body, tc.never)
			}
		})
	}
}

// TestHTTPJSONInvalidParams pins that every parameter the HTTP+JSON
// binding cannot read — a query parameter of the wrong form, a body member
// that does not decode — answers 400 with the ErrorInfo reason
// INVALID_PARAMS (what JSON-RPC answers as -32602), on 1.0 and 0.3 routes,
// naming the parameter; a body that is not JSON stays a PARSE_ERROR.
func TestHTTPJSONInvalidParams(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := send(testCtx(t), t, b.client("echo", a2a.TransportProtocolJSONRPC), sendReq(userMessage("done")))
	task := "/tasks/" + string(done.ID)
	msg10 := func(parts string) string {
		return `{"message":{"messageId":"` + msgID() + `","role":"ROLE_USER","parts":` + parts + `}}`
	}
	msg03 := func(parts string) string {
		return `{"message":{"messageId":"` + msgID() + `","role":"ROLE_USER","content":` + parts + `}}`
	}
	for _, tc := range []struct {
		name, method, path, version, body string
		status                            int
		reason, says                      string
	}{
		{"1.0 ListTasks statusTimestampAfter", "GET", "/tasks?statusTimestampAfter=yesterday", "1.0", "", 400, "INVALID_PARAMS", "statusTimestampAfter"},
		{"1.0 ListTasks lastUpdatedAfter", "GET", "/tasks?lastUpdatedAfter=2026-13-01", "1.0", "", 400, "INVALID_PARAMS", "lastUpdatedAfter"},
		{"1.0 ListTasks pageSize", "GET", "/tasks?pageSize=ten", "1.0", "", 400, "INVALID_PARAMS", "pageSize"},
		{"1.0 ListTasks historyLength", "GET", "/tasks?historyLength=1.5", "1.0", "", 400, "INVALID_PARAMS", "historyLength"},
		{"1.0 ListTasks includeArtifacts", "GET", "/tasks?includeArtifacts=maybe", "1.0", "", 400, "INVALID_PARAMS", "includeArtifacts"},
		{"1.0 ListTasks good parameters", "GET", "/tasks?pageSize=5&historyLength=1&includeArtifacts=true&statusTimestampAfter=2020-01-01T00:00:00Z", "1.0", "", 200, "", ""},
		{"1.0 GetTask historyLength", "GET", task + "?historyLength=all", "1.0", "", 400, "INVALID_PARAMS", "historyLength"},
		{"1.0 SendMessage unknown part kind", "POST", "/message:send", "1.0", msg10(`[{"kind":"blob","blob":"x"}]`), 400, "INVALID_PARAMS", "body.message.parts[0]"},
		{"1.0 SendMessage message a string", "POST", "/message:send", "1.0", `{"message":"hi"}`, 400, "INVALID_PARAMS", "body.message"},
		{"1.0 SendMessage historyLength a string", "POST", "/message:send", "1.0", `{"configuration":{"historyLength":"x"},` + msg10(`[{"text":"x"}]`)[1:], 400, "INVALID_PARAMS", "body.configuration.historyLength"},
		{"1.0 SendStreamingMessage unknown part kind", "POST", "/message:stream", "1.0", msg10(`[{"blob":"x"}]`), 400, "INVALID_PARAMS", "body.message.parts[0]"},
		{"1.0 CreateTaskPushNotificationConfig url a number", "POST", task + "/pushNotificationConfigs", "1.0", `{"url":5}`, 400, "INVALID_PARAMS", "body.url"},
		{"1.0 SendMessage not JSON", "POST", "/message:send", "1.0", `{"message":`, 400, "PARSE_ERROR", ""},
		{"0.3 ListTasks lastUpdatedAfter", "GET", "/v1/tasks?lastUpdatedAfter=yesterday", "", "", 400, "INVALID_PARAMS", "lastUpdatedAfter"},
		{"0.3 ListTasks pageSize", "GET", "/v1/tasks?pageSize=ten", "", "", 400, "INVALID_PARAMS", "pageSize"},
		{"0.3 ListTasks includeArtifacts", "GET", "/v1/tasks?includeArtifacts=maybe", "", "", 400, "INVALID_PARAMS", "includeArtifacts"},
		{"0.3 GetTask historyLength", "GET", "/v1" + task + "?historyLength=all", "", "", 400, "INVALID_PARAMS", "historyLength"},
		{"0.3 SendMessage message a string", "POST", "/v1/message:send", "", `{"message":"hi"}`, 400, "INVALID_PARAMS", "body.message"},
		{"0.3 SendMessage content a string", "POST", "/v1/message:send", "", msg03(`"x"`), 400, "INVALID_PARAMS", "body.message.content"},
		{"0.3 SendStreamingMessage content an object", "POST", "/v1/message:stream", "", msg03(`{}`), 400, "INVALID_PARAMS", "body.message.content"},
		{"0.3 CreateTaskPushNotificationConfig without config", "POST", "/v1" + task + "/pushNotificationConfigs", "", `{}`, 400, "INVALID_PARAMS", "config"},
		{"0.3 SendMessage not JSON", "POST", "/v1/message:send", "", `{"message":`, 400, "PARSE_ERROR", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(tc.method, tc.path, tc.version, strings.NewReader(tc.body))
			if r.status != tc.status {
				t.Fatalf("%d %.300s, want %d", r.status, r.body, tc.status)
			}
			if tc.reason == "" {
				return
			}
			if got := restReason(t, r); got != tc.reason {
				t.Errorf("reason %s, want %s: %.300s", got, tc.reason, r.body)
			}
			if tc.says != "" && !bytes.Contains(r.body, []byte(tc.says)) {
				t.Errorf("error %.300s does not name %q", r.body, tc.says)
			}
		})
	}
}
