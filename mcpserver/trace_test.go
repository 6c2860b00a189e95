package mcpserver_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
)

// headerTransport adds a traceparent to every request.
type headerTransport struct{ traceparent string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Traceparent", h.traceparent)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTraceparentOverStreamableHTTP submits a task with a traceparent on
// the MCP requests: the task is stored in the caller's trace.
func TestTraceparentOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	client := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(testCtx(t), &mcp.StreamableClientTransport{
		Endpoint: b.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: headerTransport{traceparent: tp}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	out := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "hi", "wait": true})
	tk, err := b.coord.Get(context.Background(), out.TaskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.TraceID(); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("stored trace id %q, want the caller's", got)
	}
	// Without one, the task has no trace (tracing is off here).
	plain := call[mcpserver.SubmitTaskOutput](t, b.connect(t, nil), mcpserver.ToolSubmitTask, map[string]any{"agent": "echo", "text": "hi", "wait": true})
	tk, err = b.coord.Get(context.Background(), plain.TaskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.TraceID(); got != "" {
		t.Errorf("stored trace id %q for a call without traceparent", got)
	}
}
