package a2aserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/syncbuf"
)

// FuzzJSONRPC posts arbitrary bytes, under an arbitrary A2A-Version, to the
// JSON-RPC endpoint. The server must never panic and must always answer
// with a JSON-RPC response (a result or an error), directly or as the
// events of an SSE stream.
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
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 16<<20)
			n := 0
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					checkRPCResponse(t, []byte(data))
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
			checkRPCResponse(t, buf.Bytes())
		}
		if strings.Contains(logs.String(), "panicked") {
			t.Fatalf("a request panicked:\n%s", logs.String())
		}
	})
}

// checkRPCResponse asserts that data is one JSON-RPC 2.0 response: a result
// or an error with a numeric code.
func checkRPCResponse(t *testing.T, data []byte) {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
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
