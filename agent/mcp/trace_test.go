package mcpagent

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/pactum/pactum/agent/agenttest"
)

// TestHTTPExecuteToolSpan: a tool call made below an attempt's span is a
// GenAI execute_tool span, and the MCP request carries the traceparent of
// the HTTP span below it in its header and the execute_tool span in its
// params._meta; without a span in the context, neither.
func TestHTTPExecuteToolSpan(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(t)
	b := viaHTTP(t, srv.url, "greet")
	// Untraced first (this also opens the session).
	if got := b.text(t, "Ada"); got != "Hello, Ada!" {
		t.Fatalf("text = %q", got)
	}
	if tp := <-srv.traceparents; tp != "" {
		t.Errorf("untraced call sent traceparent %q", tp)
	}
	if tp := <-srv.metaTraceparents; tp != "" {
		t.Errorf("untraced call sent _meta.traceparent %q", tp)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	ctx, parent := tp.Tracer("test").Start(ctx, "invoke_agent greeter")
	if _, err := b.r.Invoke(ctx, agenttest.Request("Grace")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	got := <-srv.traceparents
	inMeta := <-srv.metaTraceparents

	spans := exp.GetSpans()
	var tool *tracetest.SpanStub
	for i, s := range spans {
		if s.Name == "execute_tool greet" {
			tool = &spans[i]
		}
	}
	if tool == nil {
		t.Fatalf("no execute_tool greet span in %v", spans.Snapshots())
	}
	if tool.Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("execute_tool parent %s, want invoke_agent", tool.Parent.SpanID())
	}
	// The message carries the call's own span (MCP SEP-414), which works
	// over stdio too.
	if want := "00-" + tool.SpanContext.TraceID().String() + "-" + tool.SpanContext.SpanID().String() + "-01"; inMeta != want {
		t.Errorf("the tool call's _meta.traceparent = %q, want execute_tool's %q", inMeta, want)
	}
	attrs := map[string]string{}
	for _, kv := range tool.Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["gen_ai.operation.name"] != "execute_tool" || attrs["gen_ai.tool.name"] != "greet" {
		t.Errorf("execute_tool attributes %v", attrs)
	}
	// The HTTP client span ends when its response body is closed, which
	// the MCP client may do after the call returned: look (bounded) until
	// it was exported.
	var found bool
	for deadline := time.Now().Add(5 * time.Second); !found; time.Sleep(5 * time.Millisecond) {
		for _, s := range exp.GetSpans() {
			if s.Parent.SpanID() == tool.SpanContext.SpanID() &&
				got == "00-"+s.SpanContext.TraceID().String()+"-"+s.SpanContext.SpanID().String()+"-01" {
				found = true
			}
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if !found {
		t.Errorf("the tool call's traceparent %q names no HTTP span below execute_tool", got)
	}
}
