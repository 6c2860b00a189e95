package a2aserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/task"
)

// withHeader is a RoundTripper that adds one header to every request.
type withHeader struct{ name, value string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestPushCarriesTheTasksTraceContext: every push delivery (status
// updates, streamed artifact chunks, the final task) carries the W3C
// traceparent of the trace stored with its task. With tracing off it is
// the stored one unchanged (a caller's trace stays connected through a
// node that does not trace); with a recording provider it is the
// delivery's own client span, a child of the stored context; a task
// stored without trace context sends none.
func TestPushCarriesTheTasksTraceContext(t *testing.T) {
	t.Parallel()
	const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name      string
		recording bool
		header    string // the traceparent sent with the message; "" for none
	}{
		{"tracing off", false, incoming},
		{"tracing on", true, incoming},
		{"no trace context", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := tracetest.NewSpanRecorder()
			var tp trace.TracerProvider
			if tc.recording {
				tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			}
			b := setup(t, func(c *setupConfig) {
				c.opts.AllowPrivatePush = true
				c.opts.Push = push.Options{TracerProvider: tp}
			})
			recv := newReceiver(t)
			ctx := testCtx(t)
			card, err := agentcard.DefaultResolver.Resolve(ctx, b.url+"/agents/chunks")
			if err != nil {
				t.Fatal(err)
			}
			rt := http.DefaultTransport
			if tc.header != "" {
				rt = withHeader{"traceparent", tc.header}
			}
			c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: rt}),
				a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Destroy()
			req := sendReq(userMessage("traced"))
			req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{ID: "hook", URL: recv.srv.URL + "/hook"}}
			tk := send(ctx, t, c, req)
			got := recv.waitFinal(t, "/hook", a2a.TaskStateCompleted)

			stored, err := b.coord.Get(ctx, string(tk.ID), 0)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Envelope.TraceParent != tc.header {
				t.Fatalf("traceparent stored with the task = %q, want the one sent, %q", stored.Envelope.TraceParent, tc.header)
			}
			var chunks int
			sent := map[string]bool{}
			for i, p := range got {
				if _, ok := p.event.(*a2a.TaskArtifactUpdateEvent); ok {
					chunks++
				}
				tp := p.header.Get("traceparent")
				sent[tp] = true
				switch {
				case tc.header == "" && tp != "":
					t.Errorf("push #%d (%T) carries traceparent %q; the task has no trace context", i, p.event, tp)
				case tc.header != "" && !tc.recording && tp != tc.header:
					t.Errorf("push #%d (%T) carries traceparent %q, want the task's %q", i, p.event, tp, tc.header)
				case tc.recording && (len(tp) != len(incoming) || tp[3:35] != incoming[3:35] || tp[36:52] == incoming[36:52]):
					t.Errorf("push #%d (%T) carries traceparent %q, want the task's trace %s with the delivery's own span", i, p.event, tp, incoming[3:35])
				}
			}
			if chunks == 0 {
				t.Fatalf("no artifact chunk among the %d pushes: the test does not cover events without a task", len(got))
			}
			if !tc.recording {
				return
			}
			// Each delivery is a client span "push", a child of the stored
			// context, whose span id went out in its traceparent.
			// A span ends after its webhook answered: the last may end
			// just after the receiver recorded its request.
			spans := map[string]sdktrace.ReadOnlySpan{}
			for {
				for _, s := range rec.Ended() {
					if s.Name() == "push" {
						spans[fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())] = s
					}
				}
				if len(spans) >= len(sent) || ctx.Err() != nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			for tp := range sent {
				s, ok := spans[tp]
				if !ok {
					t.Errorf("traceparent %q went out with no push span of that id (%d push spans)", tp, len(spans))
					continue
				}
				if s.SpanKind() != trace.SpanKindClient || s.Parent().SpanID().String() != incoming[36:52] {
					t.Errorf("push span %s: kind %v, parent %s; want a client span whose parent is the stored span %s", tp, s.SpanKind(), s.Parent().SpanID(), incoming[36:52])
				}
				attrs := map[string]string{}
				for _, a := range s.Attributes() {
					attrs[string(a.Key)] = a.Value.Emit()
				}
				if attrs[string(task.AttrTaskID)] != string(tk.ID) || attrs["pactum.push.config"] != "hook" || attrs["http.response.status_code"] != "204" {
					t.Errorf("push span %s: attributes %v", tp, attrs)
				}
			}
		})
	}
}
