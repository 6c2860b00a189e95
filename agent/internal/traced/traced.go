// Package traced gives the HTTP clients of agent runtimes W3C trace
// context: each request carries the traceparent of the span in its context
// (the attempt's invoke_agent span, or with tracing off the trace context
// the task came in with) and, with tracing on, has a client span of its own.
package traced

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport wraps base so that its requests carry W3C trace context. The
// spans come from the tracer provider of the span in the request's context
// (the core's), so a runtime needs no provider of its own. The propagator
// is W3C Trace Context itself, not otel's global one (a no-op unless set):
// a traceparent goes out whenever the request's context has one.
func Transport(base http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(base, otelhttp.WithPropagators(propagation.TraceContext{}))
}

// Start starts a span named name in the instrumentation scope scope, from
// the tracer provider of the span in ctx: the core's attempt span makes
// the runtime's spans its children, and without one (or with tracing off)
// the span is a no-op.
func Start(ctx context.Context, scope, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tp := trace.SpanFromContext(ctx).TracerProvider()
	return tp.Tracer(scope).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// End ends span, recording err when there is one.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
