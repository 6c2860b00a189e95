package contract

import (
	"context"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// benchContract is a step with ten assertions of mixed types, as a
// contract for a migration agent would have.
func benchContract() *AgentContract {
	return &AgentContract{ID: "bench", Strictness: Strict, Steps: []ContractStep{{ID: "migrate", Assertions: []ContractAssertion{
		{Type: Assert, Message: "the report is an object with a summary and items", Check: Check{Type: "schema_match", Target: "artifact:report", Schema: map[string]any{
			"type": "object", "required": []any{"summary", "items", "count"},
			"properties": map[string]any{
				"summary": map[string]any{"type": "string", "minLength": 1},
				"items": map[string]any{"type": "array", "items": map[string]any{
					"type": "object", "required": []any{"name", "status"},
					"properties": map[string]any{"status": map[string]any{"enum": []any{"done", "open"}}},
				}},
				"count": map[string]any{"type": "integer", "minimum": 0},
			},
		}}},
		{Type: Assert, Message: "the summary says how many tables", Check: Check{Type: "regex", Target: "artifact:report#/summary", Pattern: `^Migrated \d+ tables$`}},
		{Type: Assert, Message: "the handoff mentions orders", Check: Check{Type: "contains", Target: "artifact:handoff", Value: "orders"}},
		{Type: Assert, Message: "three tables", Check: Check{Type: "equals", Target: "artifact:report#/count", Value: 3}},
		{Type: Assert, Message: "two tables done", Check: Check{Type: "jsonpath", Target: "artifact:report", Path: "$.items[*].status", Value: "done", Count: intp(2)}},
		{Type: Assert, Message: "count matches items", Check: Check{Type: "cel", Expression: `artifacts.exists(a, a.name == "stats" && a.data.ok) && size(output) > 0`}},
		{Type: Assert, Message: "the handoff has its sections", Check: Check{Type: "sections", Target: "artifact:handoff", Sections: []string{"Summary", "Changes", "Risks", "Open questions"}}},
		{Type: Assert, Message: "within a minute", Check: Check{Type: "max_duration", Max: "1m"}},
		{Type: Assert, Message: "the handoff is markdown", Check: Check{Type: "media_type", Target: "artifact:handoff", MediaType: "text/markdown"}},
		{Type: Suggest, Message: "no TODOs left", Check: Check{Type: "not_contains", Value: "TODO"}},
	}}}}
}

func benchStep(tb testing.TB) *CompiledStep {
	tb.Helper()
	c, err := Compile(benchContract())
	if err != nil {
		tb.Fatal(err)
	}
	st, _ := c.Step("migrate")
	return st
}

func benchInput() *Input {
	return &Input{
		Task:     &task.Task{ID: "t1", Agent: "migrate", Attempt: 1, State: task.StateInProgress},
		Result:   reportResult(),
		Duration: 12 * time.Second,
	}
}

// BenchmarkPostGate10 is the gate overhead of one step with ten
// assertions of mixed types on a realistic output.
func BenchmarkPostGate10(b *testing.B) {
	st := benchStep(b)
	in := benchInput()
	ctx := context.Background()
	if g := st.PostGate(ctx, in); !g.Passed {
		b.Fatalf("gate failed: %+v", g)
	}
	b.ReportAllocs()
	for b.Loop() {
		st.PostGate(ctx, in)
	}
}

// BenchmarkGate3 is one checked attempt of the echo agent under the
// 3-assertion contract of bench/compare.sh's "checked" agent (contains,
// regex, max_duration): pre-gate, the agent's answer, post-gate and the
// verdict's evidence, as the pipeline runs the gate on a blocking
// request. Run: go test -run '^$' -bench Gate3 -benchmem ./contract
func BenchmarkGate3(b *testing.B) {
	c, err := Compile(&AgentContract{ID: "checked", Steps: []ContractStep{{ID: "checked", OnViolation: ViolationFail, Assertions: []ContractAssertion{
		{Type: Assert, Message: "echoes the greeting", Check: Check{Type: "contains", Value: "hello"}},
		{Type: Assert, Message: "starts with it", Check: Check{Type: "regex", Pattern: "^hello"}},
		{Type: Assert, Message: "answers at once", Check: Check{Type: "max_duration", Max: "1s"}},
	}}}})
	if err != nil {
		b.Fatal(err)
	}
	st, _ := c.Step("checked")
	gate := st.Middleware(GateOptions{})
	tk := &task.Task{ID: "t1", Agent: "checked", Attempt: 1, State: task.StateInProgress}
	text := task.TextPart("hello")
	res := &task.Result{Artifacts: []task.Artifact{{ID: "a1", Name: "echo", Parts: []task.Part{text}}},
		Message: &task.Message{Role: task.RoleAgent, Parts: []task.Part{text}}}
	next := func(context.Context) (*task.Result, error) { return res, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a := &task.Attempt{Task: tk}
		if _, err := gate.Handle(ctx, a, next); err != nil {
			b.Fatal(err)
		}
		if ev := a.Evidence(); len(ev) != 1 || ev[0].Outcome != "pass" {
			b.Fatalf("evidence %+v", ev)
		}
	}
}
