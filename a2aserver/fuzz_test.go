package a2aserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/syncbuf"
)

// FuzzJSONRPC posts arbitrary bytes, under an arbitrary A2A-Version, to the
// JSON-RPC endpoint. The server must never panic and must always answer
// with a JSON-RPC response (a result or an error) carrying null or the
// request's id as sent, directly or as the events of an SSE stream, except
// to a notification, which gets 204 and nothing.
func FuzzJSONRPC(f *testing.F) {
	var logs syncbuf.Buffer
	b := setup(f, func(c *setupConfig) {
		c.opts.Logger = slogTo(&logs)
		c.opts.MaxBodyBytes = 64 << 10
	})
	for _, seed := range []struct{ version, body string }{
		{"1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"f1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`},
		{"1.0", `{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"f2","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`},
		{"1.0", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"x","historyLength":-3}}`},
		{"1.0", `{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"status":"TASK_STATE_REJECTED","pageSize":1}}`},
		{"1.0", `{"jsonrpc":"2.0","id":4,"method":"SubscribeToTask","params":{"id":""}}`},
		{"1.0", `{"jsonrpc":"2.0","id":5,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x","url":"http://[::1]"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":6,"method":"SendMessage","params":{"message":{"messageId":"f3","role":"ROLE_USER","parts":[{"data":{"a":[1,2]}}],"metadata":{"pactum":{"actor":"z"}}},"configuration":{"returnImmediately":true}}}`},
		{"1.0", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":null}`},
		{"1.0", `{"jsonrpc":"2.0","id":8,"method":"CancelTask"}`},
		{"", `{"jsonrpc":"2.0","id":9,"method":"message/send","params":{"message":{"kind":"message","messageId":"f4","role":"user","parts":[{"kind":"text","text":"x"}]}}}`},
		{"", `{"jsonrpc":"2.0","id":10,"method":"tasks/resubscribe","params":{"id":"nope"}}`},
		{"", `{"jsonrpc":"2.0","id":11,"method":"message/stream","params":{"message":{"kind":"message","messageId":"f5","role":"user","parts":[{"kind":"file","file":{"uri":"x"}}]}}}`},
		{"2.0", `{"jsonrpc":"2.0","id":12,"method":"GetTask","params":{"id":"x"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":`},
		{"1.0", `[]`},
		{"1.0", ``},
		{"0.3", `null`},
		{"1.0", `{"jsonrpc":"2.0","id":1e999,"method":"GetTask"}`},
		{"1.0", `{"jsonrpc":2.0,"id":1,"method":"GetTask","params":{"id":"x"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`},
		{"1.0", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"GetTask","params":{"id":"x"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":"\u00e9","id":2,"method":"GetTask","params":{"id":"x"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":-0,"method":"GetTask","params":["x"]}`},
		{"1.0", `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"n1","role":"ROLE_USER","parts":[{"text":"n"}]}}}`},
		{"1.0", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":5}}`},
		{"1.0", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"blob"}]}}}`},
		{"1.0", `{"jsonrpc":"2.0","id":"t","method":"ListTasks","params":{"statusTimestampAfter":"yesterday","historyLength":-1,"pageToken":"%%"}}`},
		{"1.0", `{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"metadata":{"a":1,"b":{"c":[1]}},"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"text":"x","metadata":{"k":"v"}}]}}}`},
		{"1.0", `{"jsonrpc":"2.0","id":5,"method":"SendStreamingMessage","params":{"message":{"messageId":"m5","role":"ROLE_USER","parts":[{"url":""}]}}} `},
		{"", `{"jsonrpc":"2.0","id":6,"method":"message/send","params":{"message":{"kind":"message","messageId":"m6","role":"user","parts":[{"kind":"blob"}]}}}`},
		{"", `{"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"n2","role":"user","parts":[{"kind":"text","text":"n"}]}}}`},
	} {
		f.Add(seed.version, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, version string, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+"/", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if version != "" && validHeaderValue(version) {
			req.Header.Set("A2A-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		defer resp.Body.Close()
		var reqID json.RawMessage
		var members map[string]json.RawMessage
		isObject := json.Unmarshal(body, &members) == nil && members != nil
		if isObject {
			reqID = members["id"]
		}
		if resp.StatusCode == http.StatusNoContent {
			// A notification: a valid request object without an id, answered
			// with nothing.
			if rest, _ := io.ReadAll(resp.Body); len(rest) != 0 || !isObject || reqID != nil {
				t.Fatalf("204 for a request that is not a notification (%q), or with a body %q", body, rest)
			}
			return
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 16<<20)
			n := 0
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					checkRPCResponse(t, []byte(data), reqID)
					n++
				}
			}
			if n == 0 {
				t.Fatal("an SSE answer without a single event")
			}
		} else {
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			checkRPCResponse(t, buf.Bytes(), reqID)
		}
		if strings.Contains(logs.String(), "panicked") {
			t.Fatalf("a request panicked:\n%s", logs.String())
		}
	})
}

// checkRPCResponse asserts that data is one JSON-RPC 2.0 response: a result
// or an error with a numeric code, whose id is null or the request's id
// (reqID) byte for byte.
func checkRPCResponse(t *testing.T, data []byte, reqID json.RawMessage) {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("not JSON: %v: %q", err, data)
	}
	if r.JSONRPC != "2.0" || (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("not a JSON-RPC 2.0 response: %s", data)
	}
	if r.Error != nil && (r.Error.Code == nil || r.Error.Message == "") {
		t.Fatalf("error without code or message: %s", data)
	}
	if string(r.ID) != "null" && !bytes.Equal(r.ID, reqID) {
		t.Fatalf("response id %s, want null or the request's id %s", r.ID, reqID)
	}
	if r.Result != nil && !bytes.Equal(r.ID, reqID) {
		t.Fatalf("a result with id %s for the request id %s", r.ID, reqID)
	}
}

// validHeaderValue reports whether net/http will send v as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return strings.TrimSpace(v) == v
}
