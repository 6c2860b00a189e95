package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
)

// initializeBody is a legacy initialize request, which any streamable
// handler answers.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// post sends initializeBody to url with the given Host and Origin headers
// ("" leaves them as the client sets them) and returns the status and body.
func post(t *testing.T, url, host, origin string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestDNSRebindingProtection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK}, // 127.0.0.1:port
		{"localhost:9000", "", http.StatusOK},
		{"LOCALHOST", "", http.StatusOK},
		{"[::1]:9000", "", http.StatusOK},
		{"127.1.2.3", "", http.StatusOK},
		{"", b.url, http.StatusOK}, // its own origin
		// Another origin, even on this machine, is a cross-origin request
		// (AllowedOrigins allows it; TestAllowedOrigins).
		{"", "http://localhost:5173", http.StatusForbidden},
		{"", "http://127.0.0.1", http.StatusForbidden},
		{"evil.example", "", http.StatusForbidden},
		{"evil.example:9000", "", http.StatusForbidden},
		{"127.0.0.1.evil.example", "", http.StatusForbidden},
		{"localhost.evil.example", "", http.StatusForbidden},
		{"10.0.0.1:9000", "", http.StatusForbidden},
		{"", "http://evil.example", http.StatusForbidden},
		{"", "http://evil.example:9000", http.StatusForbidden},
		{"", "null", http.StatusForbidden},
		{"", "not a url", http.StatusForbidden},
		{"agents.example.com", "", http.StatusForbidden},
	}
	for _, c := range cases {
		code, body := post(t, b.url, c.host, c.origin)
		if code != c.want {
			t.Errorf("Host %q Origin %q: status %d, want %d (%s)", c.host, c.origin, code, c.want, strings.TrimSpace(body))
		}
		if code == http.StatusForbidden && !strings.Contains(body, "Forbidden") {
			t.Errorf("Host %q Origin %q: 403 body %q does not say why", c.host, c.origin, body)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.httpOpts.AllowedHosts = []string{"Agents.Example.com", "ops.example.com:8443", "[2001:db8::1]"}
	})
	cases := []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"agents.example.com", "", http.StatusOK},
		{"agents.example.com:443", "https://agents.example.com", http.StatusOK},
		{"ops.example.com:8443", "", http.StatusOK},
		{"[2001:db8::1]:9000", "", http.StatusOK},
		{"ops.example.com", "", http.StatusForbidden},
		{"ops.example.com:9000", "", http.StatusForbidden},
		{"agents.example.com", "https://evil.example", http.StatusForbidden},
		{"evil.example", "https://agents.example.com", http.StatusForbidden},
	}
	for _, c := range cases {
		if code, body := post(t, b.url, c.host, c.origin); code != c.want {
			t.Errorf("Host %q Origin %q: status %d, want %d (%s)", c.host, c.origin, code, c.want, strings.TrimSpace(body))
		}
	}
}

func TestAllowedOrigins(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.httpOpts.AllowedOrigins = []string{"http://localhost:5173", "https://App.Example.com:443"}
	})
	cases := []struct {
		origin string
		want   int
	}{
		{"http://localhost:5173", http.StatusOK},
		{"https://app.example.com", http.StatusOK},
		{"http://localhost:5174", http.StatusForbidden},
		{"http://app.example.com", http.StatusForbidden},
		{"https://evil.example", http.StatusForbidden},
	}
	for _, c := range cases {
		if code, body := post(t, b.url, "", c.origin); code != c.want {
			t.Errorf("Origin %q: status %d, want %d (%s)", c.origin, code, c.want, strings.TrimSpace(body))
		}
	}
}

func TestStatefulSessions(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.httpOpts.Stateful = true })
	cs := b.connect(t, nil)
	if v := cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
		t.Errorf("a stateful handler negotiated %s; sessions need the initialize handshake", v)
	}
	if cs.ID() == "" {
		t.Error("no Mcp-Session-Id on a stateful handler")
	}
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "kept", "wait": true})
	if out.State != "succeeded" {
		t.Fatalf("submit over a stateful session answered %+v", out)
	}
}

func TestStatelessNegotiatesLatest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs := b.connect(t, nil)
	if got, want := cs.InitializeResult().ProtocolVersion, mcp.SupportedProtocolVersions()[0]; got != want {
		t.Errorf("negotiated %s, want the newest version %s", got, want)
	}
	if got := call[mcpserver.ListAgentsOutput](t, cs, mcpserver.ToolListAgents, nil); len(got.Agents) == 0 {
		t.Error("no agents")
	}
}

// TestLegacyClientStateless drives the default (stateless) handler as a
// client of protocol 2025-06-18 does, on the wire: initialize, then a
// waiting tools/call with a progress token, whose SSE answer carries the
// progress notifications and then the result.
func TestLegacyClientStateless(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rpc := func(body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, b.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	if resp, body := rpc(initializeBody); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	resp, body := rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"submit_task","arguments":{"agent":"echo","text":"legacy","wait":true},"_meta":{"progressToken":"p-1"}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
	}
	var progress, results int
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params struct {
				ProgressToken string `json:"progressToken"`
				Message       string `json:"message"`
			} `json:"params"`
			Result *struct {
				IsError           bool                       `json:"isError"`
				StructuredContent mcpserver.SubmitTaskOutput `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &msg); err != nil {
			t.Fatalf("SSE data %q: %v", data, err)
		}
		switch {
		case msg.Method == "notifications/progress":
			if results > 0 {
				t.Error("a progress notification after the result")
			}
			if msg.Params.ProgressToken != "p-1" || !strings.Contains(msg.Params.Message, " is ") {
				t.Errorf("progress = %+v", msg.Params)
			}
			progress++
		case msg.Result != nil:
			results++
			if msg.Result.IsError || msg.Result.StructuredContent.State != "succeeded" || msg.Result.StructuredContent.Artifacts[0].Text != "legacy" {
				t.Errorf("result = %+v", msg.Result)
			}
		}
	}
	if progress == 0 || results != 1 {
		t.Errorf("SSE answer had %d progress notifications and %d results:\n%s", progress, results, body)
	}
}
