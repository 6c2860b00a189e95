package task_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// tracing returns a tracer provider that records every span in memory.
func tracing(t *testing.T) (*sdktrace.TracerProvider, *spanLog) {
	t.Helper()
	spans := &spanLog{InMemoryExporter: tracetest.NewInMemoryExporter(), ended: make(chan struct{}, 1)}
	// Processors run in the order given: the exporter has a span when
	// the notifier tells of its end.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans.InMemoryExporter), sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, spans
}

// spanLog is the spans a tracer provider recorded, and a span processor
// that tells ended (without blocking) each time one more ended.
type spanLog struct {
	*tracetest.InMemoryExporter
	ended chan struct{}
}

func (l *spanLog) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (l *spanLog) OnEnd(sdktrace.ReadOnlySpan) {
	select {
	case l.ended <- struct{}{}:
	default:
	}
}
func (l *spanLog) Shutdown(context.Context) error   { return nil }
func (l *spanLog) ForceFlush(context.Context) error { return nil }

// waitSpans waits (bounded) until n spans named name have ended.
func waitSpans(t *testing.T, spans *spanLog, name string, n int) {
	t.Helper()
	waitUntil(t, spans.ended, fmt.Sprintf("%d %q spans ended", n, name), func() bool { return len(spansNamed(spans, name)) >= n })
}

// incoming returns ctx with a remote caller's span context, as an edge
// puts it there from a traceparent header.
func incoming(t *testing.T) (context.Context, oteltrace.SpanContext) {
	t.Helper()
	ctx := task.ContextWithTraceParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	sc := oteltrace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsRemote() {
		t.Fatalf("traceparent not parsed: %+v", sc)
	}
	return ctx, sc
}

// spansNamed returns the ended spans named name.
func spansNamed(spans *spanLog, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func attrString(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestTraceSpans follows a parent task that spawns a child: the
// submission continues the incoming span, each attempt continues the
// submission, each pipeline step (built-in and configured) has a span
// below the attempt, the runner's call is an invoke_agent span, and the
// child's attempt continues the parent's attempt that spawned it.
func TestTraceSpans(t *testing.T) {
	t.Parallel()
	tp, exp := tracing(t)
	gate := task.MiddlewareFunc("gate", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		return next(ctx)
	})
	var kidCtx oteltrace.SpanContext
	b := setup(t, task.Options{
		TracerProvider: tp,
		Middleware:     []task.Middleware{gate},
		Agents: []task.AgentSpec{
			{Name: "run", Runner: phases(func(string) string { return "kid" }, []string{"one"})},
			{Name: "kid", ChildOnly: true, Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
				kidCtx = oteltrace.SpanContextFromContext(ctx)
				return &task.Result{Message: &task.Message{Parts: []task.Part{task.TextPart("ok")}}}, nil
			})},
		},
	})
	ctx, in := incoming(t)
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("run", "alice", "go")})
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded {
		t.Fatalf("run ended %s: %s", got.State, got.Reason)
	}
	// The last attempt's span ends just after its transition.
	waitSpans(t, exp, "attempt run", 2)

	sub := spansNamed(exp, "submit run")
	if len(sub) != 1 {
		t.Fatalf("%d submit run spans", len(sub))
	}
	if sub[0].Parent.SpanID() != in.SpanID() || sub[0].SpanContext.TraceID() != in.TraceID() {
		t.Errorf("submit span parent %s, want the incoming %s", sub[0].Parent.SpanID(), in.SpanID())
	}
	if got := attrString(sub[0], "pactum.task.id"); got != res.Task.ID {
		t.Errorf("submit pactum.task.id %q", got)
	}
	if got := res.Task.TraceID(); got != in.TraceID().String() {
		t.Errorf("stored trace id %q, want %s", got, in.TraceID())
	}
	atts := spansNamed(exp, "attempt run")
	if len(atts) != 2 {
		t.Fatalf("%d attempt run spans, want 2 (spawn, then report)", len(atts))
	}
	for _, a := range atts {
		if a.Parent.SpanID() != sub[0].SpanContext.SpanID() {
			t.Errorf("attempt %s parent %s, want the submission %s", attrString(a, "pactum.attempt"), a.Parent.SpanID(), sub[0].SpanContext.SpanID())
		}
	}
	byID := map[oteltrace.SpanID]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() != in.TraceID() {
			t.Errorf("span %q in another trace", s.Name)
		}
		byID[s.SpanContext.SpanID()] = s
	}
	// The chain below the kid's attempt: invoke_agent, gate, dry_run,
	// policy, attempt kid, whose parent is one of the run's attempts.
	inv, ok := byID[kidCtx.SpanID()]
	if !ok || inv.Name != "invoke_agent kid" {
		t.Fatalf("the kid's runner ran in span %v, want invoke_agent kid", inv.Name)
	}
	if attrString(inv, "gen_ai.operation.name") != "invoke_agent" || attrString(inv, "gen_ai.agent.name") != "kid" || inv.SpanKind != oteltrace.SpanKindClient {
		t.Errorf("invoke_agent kid: kind %v, attributes %v", inv.SpanKind, inv.Attributes)
	}
	var chain []string
	s := inv
	for {
		p, ok := byID[s.Parent.SpanID()]
		if !ok {
			break
		}
		chain = append(chain, p.Name)
		s = p
	}
	want := []string{"step gate", "step dry_run", "step policy", "attempt kid", "attempt run", "submit run"}
	if len(chain) != len(want) {
		t.Fatalf("ancestors of invoke_agent kid %q, want %q", chain, want)
	}
	for i := range want {
		if chain[i] != want[i] {
			t.Fatalf("ancestors of invoke_agent kid %q, want %q", chain, want)
		}
	}
}

// TestTraceContinuesAfterRestart submits a task on a node that is not
// running and runs it on another Coordinator over the same store: the
// attempt continues the submission's span, read from the stored
// traceparent.
func TestTraceContinuesAfterRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	echo := task.AgentSpec{Name: "echo", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return &task.Result{Message: &req.Message}, nil
	})}
	tp1, exp1 := tracing(t)
	first, err := task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{echo}, TracerProvider: tp1, Node: "first"})
	if err != nil {
		t.Fatal(err)
	}
	// Not started: the task stays queued.
	res, err := first.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	sub := spansNamed(exp1, "submit echo")
	if len(sub) != 1 || sub[0].Parent.IsValid() {
		t.Fatalf("submit spans %v: want one root span", sub)
	}
	tp2, exp2 := tracing(t)
	b := &bundle{store: st}
	b.coord, err = task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{echo}, TracerProvider: tp2, Node: "second", PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.coord.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.coord.Stop(context.Background()) })
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded {
		t.Fatalf("ended %s", got.State)
	}
	waitSpans(t, exp2, "attempt echo", 1)
	att := spansNamed(exp2, "attempt echo")
	if len(att) != 1 {
		t.Fatalf("%d attempt spans on the second node", len(att))
	}
	if att[0].Parent.SpanID() != sub[0].SpanContext.SpanID() || att[0].SpanContext.TraceID() != sub[0].SpanContext.TraceID() || !att[0].Parent.IsRemote() {
		t.Errorf("attempt parent %v, want the first node's submission %v (remote)", att[0].Parent, sub[0].SpanContext)
	}
	if got := attrString(att[0], "pactum.node"); got != "second" {
		t.Errorf("attempt pactum.node %q", got)
	}
}

// TestTraceOff checks the default provider (otel's global, a no-op): no
// traceparent is stored for a task submitted without one, and the
// incoming one, unchanged, for a task submitted with one; the runner sees
// that context.
func TestTraceOff(t *testing.T) {
	t.Parallel()
	got := make(chan oteltrace.SpanContext, 2)
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		got <- oteltrace.SpanContextFromContext(ctx)
		return &task.Result{Message: &req.Message}, nil
	})}}})
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("echo", "alice", "plain")})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, b, res.Task.ID)
	if res.Task.Envelope.TraceParent != "" || res.Task.TraceID() != "" {
		t.Errorf("stored traceparent %q with tracing off and none incoming", res.Task.Envelope.TraceParent)
	}
	if sc := <-got; sc.IsValid() {
		t.Errorf("runner saw span context %v with tracing off", sc)
	}
	ctx, in := incoming(t)
	res, err = b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("echo", "alice", "traced")})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, b, res.Task.ID)
	if want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; res.Task.Envelope.TraceParent != want {
		t.Errorf("stored traceparent %q, want the incoming %q", res.Task.Envelope.TraceParent, want)
	}
	if sc := <-got; sc.SpanID() != in.SpanID() || sc.TraceID() != in.TraceID() {
		t.Errorf("runner saw %v, want the incoming %v", sc, in)
	}
}

// TestTraceParentSetByPactum checks that a submitted Envelope.TraceParent
// is replaced: only pactum writes it.
func TestTraceParentSetByPactum(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return &task.Result{}, nil
	})}}})
	env := envelope("echo", "alice", "x")
	env.TraceParent = "00-11111111111111111111111111111111-2222222222222222-01"
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.Envelope.TraceParent != "" {
		t.Errorf("submitted traceparent kept: %q", res.Task.Envelope.TraceParent)
	}
}
