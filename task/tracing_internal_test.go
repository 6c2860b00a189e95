package task

import (
	"context"
	"testing"
)

// BenchmarkTracingOff measures what tracing adds to one task's hot path
// with tracing off (otel's global provider, a no-op): the submission's
// span and the stored traceparent, the attempt's span and the pipeline
// (two steps and the runner), against the same pipeline without them.
// Run: go test -run x -bench TracingOff -benchmem ./task
func BenchmarkTracingOff(b *testing.B) {
	c := &Coordinator{tracer: tracerOf(nil), node: "bench"}
	steps := []Middleware{policyStep{c: c}, dryRunStep{}}
	tk := &Task{ID: "t", Agent: "echo", ContextID: "c"}
	spec := &AgentSpec{Name: "echo"}
	runner := func(context.Context) (*Result, error) { return &Result{}, nil }
	b.Run("untraced", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			a := &Attempt{Task: tk, Agent: spec, Request: &Request{}}
			if _, err := pipeline(steps, a, runner)(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("traced-off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, span := c.tracer.Start(context.Background(), "submit", submitSpanOpts...)
			tk.Envelope.TraceParent = TraceParent(ctx)
			endSpan(span, nil)
			actx, aspan := c.startAttempt(context.Background(), tk)
			a := &Attempt{Task: tk, Agent: spec, Request: &Request{}}
			if _, err := c.tracedPipeline(actx, steps, a, runner)(actx); err != nil {
				b.Fatal(err)
			}
			attemptEnded(aspan, TransitionParams{To: StateSucceeded})
			aspan.End()
		}
	})
}
