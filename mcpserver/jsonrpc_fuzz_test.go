package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzCheckMessage feeds arbitrary bodies to the JSON-RPC guard of /mcp.
// It must never panic; a refusal has a JSON-RPC 2.0 code and HTTP 200 or
// 400 and carries null or the request's id as sent; and what it lets
// through to the SDK is either not a request object or one whose envelope
// (and, for initialize, params) decode.
func FuzzCheckMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2025}}`,
		`{"jsonrpc":"2.0","id":"&","method":"initialize","params":{"clientInfo":{"name":5}}}`,
		`{"jsonrpc":2.0,"id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":`, ``, `null`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, id, code, msg := checkMessage(body)
		var m map[string]json.RawMessage
		isObject := json.Unmarshal(body, &m) == nil && m != nil
		if code == 0 {
			if !json.Valid(body) {
				t.Fatalf("invalid JSON passed: %q", body)
			}
			if !isObject {
				return
			}
			if _, ok := m["method"]; !ok {
				return
			}
			var env struct {
				JSONRPC string `json:"jsonrpc"`
				Method  string `json:"method"`
			}
			if json.Unmarshal(body, &env) != nil || env.JSONRPC != "2.0" || env.Method == "" {
				t.Fatalf("a bad envelope passed: %q", body)
			}
			if raw, ok := m["params"]; ok && env.Method == "initialize" && m["id"] != nil && string(raw) != "null" {
				if json.Unmarshal(raw, new(mcp.InitializeParams)) != nil {
					t.Fatalf("initialize params that do not decode passed: %q", body)
				}
			}
			return
		}
		switch code {
		case codeParseError, codeInvalidRequest, codeInvalidParams:
		default:
			t.Fatalf("code %d for %q", code, body)
		}
		if msg == "" || (status != http.StatusOK && status != http.StatusBadRequest) {
			t.Fatalf("refusal %d %d %q for %q", status, code, msg, body)
		}
		if id != nil && (!isObject || !bytes.Equal(id, m["id"])) {
			t.Fatalf("refusal id %s, want the request's %s", id, m["id"])
		}
	})
}
