package task

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the core's spans.
const TracerName = "github.com/pactum/pactum/task"

// Attribute keys of the core's spans (docs/observability.md, "Traces").
// The gen_ai.* keys follow the OpenTelemetry GenAI semantic conventions.
const (
	AttrTaskID      = attribute.Key("pactum.task.id")
	AttrContextID   = attribute.Key("pactum.context.id")
	AttrAgent       = attribute.Key("pactum.agent")
	AttrAction      = attribute.Key("pactum.action")
	AttrActor       = attribute.Key("pactum.actor")
	AttrState       = attribute.Key("pactum.task.state")
	AttrAttempt     = attribute.Key("pactum.attempt")
	AttrNode        = attribute.Key("pactum.node")
	AttrStep        = attribute.Key("pactum.step")
	AttrDuplicate   = attribute.Key("pactum.duplicate")
	AttrErrorCode   = attribute.Key("pactum.error.code")
	AttrGenAIOp     = attribute.Key("gen_ai.operation.name")
	AttrGenAIAgent  = attribute.Key("gen_ai.agent.name")
	AttrGenAIConvID = attribute.Key("gen_ai.conversation.id")
)

// submitSpanOpts are the submission span's options, built once: with
// tracing off, a submission allocates no option slice.
var submitSpanOpts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// traceContext is the W3C Trace Context propagator. The core and the edges
// use it directly rather than otel's global propagator, which is a no-op
// until someone sets it: pactum always reads an incoming traceparent and
// always passes its own (or the incoming one, when tracing is off) on.
var traceContext propagation.TraceContext

// TraceParent returns the W3C traceparent of the span context in ctx, or
// "" when ctx carries none.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

// ContextWithTraceParent returns ctx with the remote span context that the
// W3C traceparent tp names as its parent; ctx unchanged when tp is empty
// or malformed.
func ContextWithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// TraceID returns the trace id of the task (32 hex digits), read from the
// traceparent stored with it, or "" when the task was submitted without a
// trace (tracing off and no incoming traceparent).
func (t *Task) TraceID() string {
	sc := trace.SpanContextFromContext(ContextWithTraceParent(context.Background(), t.Envelope.TraceParent))
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// tracerOf returns the core's tracer from tp, else from the global
// provider (a no-op unless the process configured one).
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// endSpan ends span, recording err (and its code) when there is one.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		if code := ErrorCode(err); code != "" {
			span.SetAttributes(AttrErrorCode.String(string(code)))
		}
	}
	span.End()
}

// startAttempt starts the span of one attempt of t, a child of the span
// context stored with the task (the submission's span, or the attempt of
// a parent task that spawned it), so that an attempt on another node or
// after a restart continues the task's trace.
func (c *Coordinator) startAttempt(ctx context.Context, t *Task) (context.Context, trace.Span) {
	ctx = ContextWithTraceParent(ctx, t.Envelope.TraceParent)
	ctx, span := c.tracer.Start(ctx, "attempt")
	if span.IsRecording() {
		span.SetName("attempt " + t.Agent)
		span.SetAttributes(AttrTaskID.String(t.ID), AttrAgent.String(t.Agent),
			AttrAttempt.Int(t.Attempt), AttrNode.String(c.node), AttrContextID.String(t.ContextID))
	}
	return ctx, span
}

// tracedPipeline is pipeline with a span around each step and an
// invoke_agent span around the runner, when the attempt's span records.
// Off (a non-recording attempt span), it is pipeline itself: no spans and
// no allocations beyond it.
func (c *Coordinator) tracedPipeline(ctx context.Context, steps []Middleware, a *Attempt, last Next) Next {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return pipeline(steps, a, last)
	}
	agent, taskID := a.Agent.Name, a.Task.ID
	invoke := func(ctx context.Context) (*Result, error) {
		ctx, span := c.tracer.Start(ctx, "invoke_agent "+agent, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(AttrGenAIOp.String("invoke_agent"), AttrGenAIAgent.String(agent),
				AttrGenAIConvID.String(a.Task.ContextID), AttrTaskID.String(taskID)))
		res, err := last(ctx)
		endSpan(span, err)
		return res, err
	}
	wrapped := make([]Middleware, len(steps))
	for i, s := range steps {
		wrapped[i] = tracedStep{Middleware: s, tracer: c.tracer}
	}
	return pipeline(wrapped, a, invoke)
}

// tracedStep runs a pipeline step in its own span.
type tracedStep struct {
	Middleware
	tracer trace.Tracer
}

func (s tracedStep) Handle(ctx context.Context, a *Attempt, next Next) (*Result, error) {
	ctx, span := s.tracer.Start(ctx, "step "+s.Name(), trace.WithAttributes(
		AttrStep.String(s.Name()), AttrTaskID.String(a.Task.ID), AttrAgent.String(a.Agent.Name)))
	res, err := s.Middleware.Handle(ctx, a, next)
	endSpan(span, err)
	return res, err
}

// attemptEnded records how the attempt ended on its span.
func attemptEnded(span trace.Span, p TransitionParams) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(AttrState.String(string(p.To)))
	if p.ErrorCode != "" {
		span.SetAttributes(AttrErrorCode.String(string(p.ErrorCode)))
	}
	if p.To != StateSucceeded && p.To != StateWaiting && p.To != StateInputRequired {
		span.SetStatus(codes.Error, p.Reason)
	}
}
