package mcpserver_test

import (
	"context"
	"io"
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

// TestTraceparentInMeta: a call's params._meta carries W3C trace context
// over any transport (MCP SEP-414), here the pipe pair RunStdio serves: a
// task the call submits is stored in the caller's trace. Over streamable
// HTTP, _meta wins over the header, and a malformed _meta traceparent
// leaves the header's.
func TestTraceparentInMeta(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const (
		inMeta   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		inHeader = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	storedTrace := func(cs *mcp.ClientSession, meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Meta: meta, Name: mcpserver.ToolSubmitTask,
			Arguments: map[string]any{"agent": "echo", "text": "traced", "wait": true}})
		if err != nil || res.IsError {
			t.Fatalf("submit_task with _meta %v: %v, %+v", meta, err, res)
		}
		id, _ := res.StructuredContent.(map[string]any)["task_id"].(string)
		tk, err := b.coord.Get(context.Background(), id, 0)
		if err != nil {
			t.Fatalf("task %q: %v", id, err)
		}
		return tk.Envelope.TraceParent
	}

	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	go func() { _ = b.srv.Run(ctx, &mcp.IOTransport{Reader: serverIn, Writer: serverOut}) }()
	pipe, err := mcp.NewClient(&mcp.Implementation{Name: "pipe-client", Version: "v0.0.1"}, nil).
		Connect(testCtx(t), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	if got := storedTrace(pipe, mcp.Meta{"traceparent": inMeta, "tracestate": "vendor=1"}); got != inMeta {
		t.Errorf("over a pipe with _meta.traceparent: stored %q, want %q", got, inMeta)
	}
	if got := storedTrace(pipe, nil); got != "" {
		t.Errorf("over a pipe without _meta: stored %q, want none", got)
	}
	if got := storedTrace(pipe, mcp.Meta{"traceparent": "not-a-traceparent"}); got != "" {
		t.Errorf("over a pipe with a malformed _meta.traceparent: stored %q, want none", got)
	}

	overHTTP, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "v0.0.1"}, nil).Connect(testCtx(t), &mcp.StreamableClientTransport{
		Endpoint: b.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: headerTransport{traceparent: inHeader}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer overHTTP.Close()
	if got := storedTrace(overHTTP, mcp.Meta{"traceparent": inMeta}); got != inMeta {
		t.Errorf("over HTTP with both: stored %q, want _meta's %q", got, inMeta)
	}
	if got := storedTrace(overHTTP, mcp.Meta{"traceparent": 42}); got != inHeader {
		t.Errorf("over HTTP with a _meta.traceparent that is not a string: stored %q, want the header's %q", got, inHeader)
	}
}
