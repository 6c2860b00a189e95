package node_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPEndpoint: /mcp is served on the A2A listener, by the same node
// (a task submitted over MCP is an A2A task too), and guarded against DNS
// rebinding: a foreign Host or Origin is refused; the base URL's host is
// allowed, as are configured hosts.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	base := startServer(t, "base_url: https://agents.example.com\nmcp: {allowed_hosts: [pactum.internal]}\nagents:\n  - name: echo\n    type: echo\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "submit_task", Arguments: map[string]any{"agent": "echo", "text": "hi", "wait": true}})
	if err != nil || res.IsError {
		t.Fatalf("submit_task: %v %+v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["task_id"].(string)
	// The same task through A2A's HTTP+JSON binding.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/agents/echo/tasks/"+id, nil)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("A2A GetTask of the MCP task: %s", resp.Status)
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"evil.example", "", http.StatusForbidden},
		{"", "http://evil.example", http.StatusForbidden},
		{"agents.example.com", "https://agents.example.com", http.StatusOK},
		{"pactum.internal:9000", "", http.StatusOK},
		{"", "", http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %s, want %d", tc.host, tc.origin, resp.Status, tc.want)
		}
	}
}

// TestMCPDisabled: mcp.disabled leaves /mcp unserved.
func TestMCPDisabled(t *testing.T) {
	t.Parallel()
	base := startServer(t, "mcp: {disabled: true}\nagents:\n  - name: echo\n    type: echo\n")
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp with mcp disabled: %s, want 404 Not Found", resp.Status)
	}
}
