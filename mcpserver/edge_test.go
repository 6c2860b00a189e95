package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pactum/pactum/mcpserver"
)

// TestJSONRPCEdge pins what /mcp answers to malformed JSON-RPC messages
// (issue 14 §4): JSON-RPC 2.0 codes, never the SDK's code 0 or a plain-text
// body.
func TestJSONRPCEdge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const caps = `"capabilities":{},"clientInfo":{"name":"raw","version":"0"}`
	for _, row := range []struct {
		name, body string
		status     int
		code       int    // 0: a result
		id         string // the response id as it must appear on the wire
		says       string
		version    string // Mcp-Protocol-Version; default 2025-06-18
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` + caps + `}}`, 200, 0, "1", "", ""},
		{"initialize with an unknown protocolVersion", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01",` + caps + `}}`, 200, 0, "2", "", ""},
		{"initialize with a numeric protocolVersion", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2025,` + caps + `}}`, 200, -32602, "1", "protocolVersion", ""},
		{"initialize with numeric capabilities", `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":5,"clientInfo":{"name":"raw","version":"0"}}}`, 200, -32602, `"a"`, "capabilities", ""},
		{"initialize with a string clientInfo", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":"me"}}`, 200, -32602, "1", "clientInfo", ""},
		{"initialize with params a string", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}`, 400, -32600, "1", "params", ""},
		{"initialize with params an array", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":["2025-06-18"]}`, 400, -32602, "1", "params", ""},
		{"jsonrpc as a number", `{"jsonrpc":2.0,"id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` + caps + `}}`, 400, -32600, "1", "jsonrpc", ""},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, 400, -32600, "1", "method", ""},
		{"string id on a refusal", `{"jsonrpc":"1.0","id":"<&>\u00e9","method":"tools/list","params":{}}`, 400, -32600, `"<&>\u00e9"`, "jsonrpc", ""},
		{"out-of-range id", `{"jsonrpc":"2.0","id":1e999,"method":"tools/list","params":{}}`, 400, -32600, "null", "id", ""},
		{"30-digit id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list","params":{}}`, 400, -32600, "null", "id", ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}`, 400, -32600, "null", "id", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}`, 400, -32600, "null", "id", ""},
		{"largest id", `{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/list","params":{}}`, 200, 0, "9007199254740992", "", ""},
		{"smallest id", `{"jsonrpc":"2.0","id":-9007199254740992,"method":"tools/list","params":{}}`, 200, 0, "-9007199254740992", "", ""},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list","params":{}}`, 400, -32600, "null", "id", ""},
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, 400, -32700, "null", "JSON", ""},
		{"tools/call with a numeric name", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`, 200, -32602, "3", "params.name: got a number, want a string", ""},
		{"unknown method", `{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}`, 200, -32601, "4", `"no/such"`, ""},
		{"unknown method without params", `{"jsonrpc":"2.0","id":"x","method":"tasks/get"}`, 200, -32601, `"x"`, `"tasks/get"`, ""},
		{"unknown method, protocol 2026-07-28", `{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}`, 404, -32601, "4", `"no/such"`, "2026-07-28"},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/no_such","params":{}}`, 400, -32601, "null", `"notifications/no_such"`, ""},
		{"method the SDK knows, refused by it", `{"jsonrpc":"2.0","id":4,"method":"resources/read"}`, 400, -32600, "4", "params", ""},
		{"initialize with params null", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":null}`, 200, -32602, "5", "params are required", ""},
		{"initialize without params", `{"jsonrpc":"2.0","id":5,"method":"initialize"}`, 200, -32602, "5", "params are required", ""},
		{"initialize without an id", `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-06-18",` + caps + `}}`, 400, -32600, "null", "id", ""},
		{"tools/call without params", `{"jsonrpc":"2.0","id":6,"method":"tools/call"}`, 200, -32602, "6", "params are required", ""},
		{"tools/call with params null", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":null}`, 200, -32602, "6", "params are required", ""},
		{"tools/call with a numeric _meta", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_task","_meta":5}}`, 200, -32602, "6", "params._meta: got a number, want an object", ""},
		{"tools/call with arguments a string", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_task","arguments":"x"}}`, 200, 0, "6", "", ""},
		{"tools/call without an id", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_agents"}}`, 400, -32600, "null", "needs an id", ""},
		{"tools/list with a numeric cursor", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":5}}`, 200, -32602, "7", "params.cursor: got a number, want a string", ""},
		{"tools/list with a numeric cursor, protocol 2026-07-28", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":5}}`, 400, -32602, "7", "params.cursor", "2026-07-28"},
		{"tools/list with a numeric Cursor, which the SDK ignores", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"Cursor":5}}`, 200, 0, "7", "", ""},
		{"ping with _meta a string", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":"x"}}`, 200, -32602, "8", "params._meta", ""},
		{"ping with params null", `{"jsonrpc":"2.0","id":8,"method":"ping","params":null}`, 200, 0, "8", "", ""},
		{"notification with an id", `{"jsonrpc":"2.0","id":9,"method":"notifications/initialized","params":{}}`, 400, -32600, "9", "notification", ""},
		{"notifications/initialized with a numeric _meta", `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":5}}`, 400, -32602, "null", "params._meta", ""},
		{"notifications/progress with progress a string", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"x"}}`, 400, -32602, "null", "params.progress: got a string, want a number", ""},
		{"notifications/progress without params", `{"jsonrpc":"2.0","method":"notifications/progress"}`, 400, -32602, "null", "params are required", ""},
		{"notifications/cancelled with a numeric reason", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":5}}`, 400, -32602, "null", "params.reason", ""},
		{"notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r","reason":"done"}}`, 202, 0, "", "", ""},
		{"notifications/roots/list_changed with a numeric _meta", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":[]}}`, 400, -32602, "null", "params._meta: got a array, want an object", ""},
	} {
		t.Run(row.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, b.url, strings.NewReader(row.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			version := row.version
			if version == "" {
				version = "2025-06-18"
			}
			req.Header.Set("Mcp-Protocol-Version", version)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data := firstMessage(t, resp)
			if resp.StatusCode != row.status {
				t.Errorf("HTTP status %d, want %d: %.300s", resp.StatusCode, row.status, data)
			}
			if row.status == http.StatusAccepted {
				if len(data) != 0 {
					t.Errorf("a body with 202: %.300s", data)
				}
				return
			}
			if row.code != 0 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
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
			if err := json.Unmarshal(data, &r); err != nil || r.JSONRPC != "2.0" {
				t.Fatalf("not a JSON-RPC response (%s): %.300s", resp.Header.Get("Content-Type"), data)
			}
			code, msg := 0, ""
			if r.Error != nil {
				code, msg = r.Error.Code, r.Error.Message
			}
			if code != row.code || (row.code == 0 && r.Result == nil) {
				t.Errorf("JSON-RPC code %d (%q), want %d: %.300s", code, msg, row.code, data)
			}
			if string(r.ID) != row.id {
				t.Errorf("id %s, want %s", r.ID, row.id)
			}
			if !strings.Contains(msg, row.says) {
				t.Errorf("message %q does not name %q", msg, row.says)
			}
		})
	}
}

// firstMessage returns the body of a JSON answer, or the data of the first
// event of an SSE answer.
func firstMessage(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return []byte(data)
		}
	}
	return nil
}

// TestNegativeHistoryLength checks that get_task and list_tasks refuse a
// negative history_length instead of serving the whole history.
func TestNegativeHistoryLength(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	out := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "hi", "wait": true})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{mcpserver.ToolGetTask, map[string]any{"task_id": out.TaskID, "history_length": -1}},
		{mcpserver.ToolListTasks, map[string]any{"history_length": -1}},
	} {
		info := callErr(t, cs, tc.tool, tc.args)
		if info.Code != "invalid_argument" || !strings.Contains(info.Message, "history_length") {
			t.Errorf("%s with history_length -1: %+v, want invalid_argument naming history_length", tc.tool, info)
		}
	}
}
