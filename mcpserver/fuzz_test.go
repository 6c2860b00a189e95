package mcpserver_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
)

// The SDK decodes and validates tool arguments; the decoders of outside
// input this package adds are the Host and Origin checks of Handler, and
// the translation of decoded arguments into a task (fuzzed end to end
// below through the SDK's own client).

// FuzzHostGuard checks that Handler lets a request that arrived on a
// loopback address through only when its Host and Origin name loopback
// hosts, whatever the headers hold.
func FuzzHostGuard(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:9000", ""}, {"localhost", "http://localhost:3000"}, {"[::1]:80", "null"},
		{"evil.example", ""}, {"127.0.0.1", "http://evil.example"}, {"LOCALHOST:1", "http://[::1]"},
		{"127.0.0.1.evil.example", ""}, {"[::ffff:127.0.0.1]", "file://"}, {"", "http://127.0.0.1@evil.example"},
	} {
		f.Add(s[0], s[1])
	}
	b := setup(f)
	h := b.srv.Handler(mcpserver.HTTPOptions{})
	f.Fuzz(func(t *testing.T, host, origin string) {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000}))
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusForbidden {
			return
		}
		if !loopbackHostPort(host) {
			t.Fatalf("Host %q passed the guard (status %d)", host, rec.Code)
		}
		if origin != "" {
			u, err := url.Parse(origin)
			if err != nil || !loopbackHostPort(u.Host) {
				t.Fatalf("Origin %q passed the guard (status %d)", origin, rec.Code)
			}
		}
	})
}

// loopbackHostPort is the fuzz oracle: host[:port] names localhost or a
// loopback address.
func loopbackHostPort(hp string) bool {
	host := hp
	if i := strings.LastIndexByte(hp, ':'); i >= 0 && !strings.HasSuffix(hp, "]") && strings.Count(hp, ":") == 1 {
		host = hp[:i]
	} else if strings.HasPrefix(hp, "[") {
		if j := strings.IndexByte(hp, ']'); j > 0 {
			host = hp[1:j]
		}
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// FuzzToolArguments calls the tools with arbitrary JSON arguments through
// the SDK's client and checks that every answer is a result, never a
// protocol error or a crash, and that every tool error carries a code.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{"agent":"echo","text":"hi","wait":true}`,
		`{"agent":"echo","data":{"a":[1,2,{"b":null}]},"idempotency_key":"k"}`,
		`{"action":"deploy.production","text":"x","policy_ref":"policy-v1","approval_ref":"approval-7","actor":"alice"}`,
		`{"agent":"echo","text":"x","wait":true,"wait_timeout_seconds":1e308}`,
		`{"agent":"echo","text":"x","data":{}}`,
		`{"task_id":"nope","history_length":-5}`,
		`{"states":["queued","nope"],"page_size":0,"updated_after":"2026-01-01T00:00:00Z"}`,
		`{}`, `{"wait":"yes"}`, `{"agent":null}`, `{"text":"\u0000"}`,
		`{"task_id":"nope","text":"answer","data":{"x":1},"message_id":"m"}`,
	} {
		for _, tool := range []string{mcpserver.ToolSubmitTask, mcpserver.ToolGetTask, mcpserver.ToolListTasks, mcpserver.ToolCancelTask, mcpserver.ToolRetryTask, mcpserver.ToolContinueTask} {
			f.Add(tool, s)
		}
	}
	b := setup(f)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := b.srv.MCPServer().Connect(ctx, st, nil); err != nil {
		f.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = cs.Close() })
	f.Fuzz(func(t *testing.T, tool, args string) {
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return // the client only sends objects
		}
		switch tool {
		case mcpserver.ToolSubmitTask, mcpserver.ToolGetTask, mcpserver.ToolListTasks, mcpserver.ToolCancelTask, mcpserver.ToolRetryTask, mcpserver.ToolContinueTask:
		default:
			return
		}
		if tool == mcpserver.ToolSubmitTask || tool == mcpserver.ToolContinueTask {
			obj["wait"] = false // waits are bounded by the test, not the fuzzer
		}
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: tool, Arguments: obj})
		if err != nil {
			t.Fatalf("%s(%s): protocol error %v", tool, args, err)
		}
		if res.IsError {
			info := decode[mcpserver.ErrorInfo](t, res)
			if info.Code == "" || info.Message == "" {
				t.Fatalf("%s(%s): tool error without code or message: %+v", tool, args, res)
			}
			if info.Code == "internal" {
				t.Fatalf("%s(%s): internal error %+v", tool, args, info)
			}
		}
	})
}
