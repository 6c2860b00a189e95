package openai_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/agent/openai"
)

// TestChatSpan: a call made below an attempt's span is a GenAI "chat"
// span with the requested and served models and the token usage, and the
// HTTP request carries the traceparent of its own span below it.
func TestChatSpan(t *testing.T) {
	for _, stream := range []bool{false, true} {
		f := newFakeServer(t, &fakeServer{
			wantModel: "qwen", wantStream: stream,
			wantMessages: wantConversation(""),
			replies:      []reply{{chunks: []string{"LG", "TM"}}},
		})
		r := newRuntime(t, openai.Settings{BaseURL: f.url + "/", Model: "qwen", Stream: ptr(stream)})
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		ctx, parent := tp.Tracer("test").Start(context.Background(), "invoke_agent reviewer")
		var err error
		if stream {
			_, err = r.Stream(ctx, conversation(), nil)
		} else {
			_, err = r.Invoke(ctx, conversation())
		}
		if err != nil {
			t.Fatal(err)
		}
		parent.End()
		byName := map[string]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			byName[s.Name] = s
		}
		chat, ok := byName["chat qwen"]
		if !ok {
			t.Fatalf("stream %v: no chat qwen span in %v", stream, exp.GetSpans().Snapshots())
		}
		if chat.Parent.SpanID() != parent.SpanContext().SpanID() || chat.SpanKind != trace.SpanKindClient {
			t.Errorf("chat span parent %s kind %v", chat.Parent.SpanID(), chat.SpanKind)
		}
		attrs := map[string]string{}
		for _, kv := range chat.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		want := map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "qwen", "gen_ai.response.model": "qwen-served",
			"gen_ai.usage.input_tokens": "11", "gen_ai.usage.output_tokens": "2",
		}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("stream %v: %s = %q, want %q", stream, k, attrs[k], v)
			}
		}
		f.mu.Lock()
		tps := append([]string(nil), f.traceparents...)
		f.mu.Unlock()
		if len(tps) != 1 {
			t.Fatalf("%d calls", len(tps))
		}
		var httpSpan *tracetest.SpanStub
		for _, s := range exp.GetSpans() {
			if s.Parent.SpanID() == chat.SpanContext.SpanID() {
				httpSpan = &s
			}
		}
		if httpSpan == nil {
			t.Fatal("no HTTP span below chat")
		}
		if want := "00-" + parent.SpanContext().TraceID().String() + "-" + httpSpan.SpanContext.SpanID().String() + "-01"; tps[0] != want {
			t.Errorf("server got traceparent %q, want %q", tps[0], want)
		}
		if !strings.HasPrefix(httpSpan.Name, "HTTP") {
			t.Errorf("HTTP span named %q", httpSpan.Name)
		}
	}
}
