package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzCheckMessage feeds arbitrary bodies and protocol versions to the
// JSON-RPC guard of /mcp. It must never panic; a refusal has a JSON-RPC 2.0
// code, an HTTP status the spec allows for it, and carries null or the
// request's id as sent; and what it lets through to the SDK is either not a
// request object, or one whose envelope decodes and which, for a method
// pactum serves, has an id exactly when it is a request, its params when
// they are required, and params that decode (members named exactly as the
// SDK's fields), or a method the guard leaves to the SDK, named in the
// verdict.
func FuzzCheckMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2025}}`,
		`{"jsonrpc":"2.0","id":"&","method":"initialize","params":{"clientInfo":{"name":5}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"jsonrpc":2.0,"id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"Cursor":5,"_meta":{}}}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":"x","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e999,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{},"reason":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/no_such"}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":`, ``, `null`, `{}`,
	} {
		f.Add([]byte(seed), "2025-06-18")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`), "2026-07-28")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`), "")
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		v := checkMessage(body, version)
		var m map[string]json.RawMessage
		isObject := json.Unmarshal(body, &m) == nil && m != nil
		if v.code == 0 {
			checkPassed(t, body, m, isObject, v)
			return
		}
		if v.method != "" {
			t.Fatalf("a refusal names a method to watch: %+v", v)
		}
		switch v.code {
		case codeParseError, codeInvalidRequest, codeInvalidParams:
		default:
			t.Fatalf("code %d for %q", v.code, body)
		}
		switch {
		case v.msg == "":
			t.Fatalf("refusal without a message for %q", body)
		case v.status == http.StatusBadRequest:
		case v.status == http.StatusOK && v.code == codeInvalidParams && v.id != nil && version < statusCodedVersion:
		default:
			t.Fatalf("refusal %d %d %q for %q under %q", v.status, v.code, v.msg, body, version)
		}
		if v.id != nil && (!isObject || !bytes.Equal(v.id, m["id"])) {
			t.Fatalf("refusal id %s, want the request's %s", v.id, m["id"])
		}
	})
}

// checkPassed checks what the guard let through to the SDK.
func checkPassed(t *testing.T, body []byte, m map[string]json.RawMessage, isObject bool, v verdict) {
	t.Helper()
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
	_, isCall := m["id"]
	meth, known := methods[env.Method]
	if !known {
		if v.method != env.Method || v.call != isCall {
			t.Fatalf("method %q left to the SDK unwatched: %+v", env.Method, v)
		}
		return
	}
	if v.method != "" {
		t.Fatalf("method %q the guard knows is watched", env.Method)
	}
	if meth.notification == isCall {
		t.Fatalf("%q passed with an id: %v", env.Method, isCall)
	}
	raw, ok := m["params"]
	if !ok || string(raw) == "null" {
		if meth.paramsRequired {
			t.Fatalf("%q passed without params", env.Method)
		}
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		t.Fatalf("params that are not an object passed: %q", body)
	}
	for name, p := range members {
		if !fieldDecodes(env.Method, name, p) {
			t.Fatalf("params.%s of %q passed but does not decode: %q", name, env.Method, body)
		}
	}
}

// fieldDecodes reports whether one member of the params of method decodes
// into the SDK's params type on its own, as the SDK's case-sensitive
// decoder sees it: a member that names no field exactly is ignored.
func fieldDecodes(method, name string, raw json.RawMessage) bool {
	one := func(p any) bool {
		t := reflect.TypeOf(p).Elem()
		named := false
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			named = named || tag == name
		}
		if !named {
			return true
		}
		obj, _ := json.Marshal(map[string]json.RawMessage{name: raw})
		return json.Unmarshal(obj, p) == nil
	}
	switch method {
	case "initialize":
		return one(new(mcp.InitializeParams))
	case "ping":
		return one(new(mcp.PingParams))
	case "tools/list":
		return one(new(mcp.ListToolsParams))
	case "tools/call":
		return one(new(mcp.CallToolParamsRaw))
	case "notifications/initialized":
		return one(new(mcp.InitializedParams))
	case "notifications/cancelled":
		return one(new(mcp.CancelledParams))
	case "notifications/progress":
		return one(new(mcp.ProgressNotificationParams))
	case "notifications/roots/list_changed":
		return one(new(mcp.RootsListChangedParams))
	}
	return false
}
