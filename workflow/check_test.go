package workflow

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

func TestExpectations(t *testing.T) {
	t.Parallel()
	w := &Workflow{Name: "review", Phases: []Phase{{Agents: []string{"planner"}}, {Agents: []string{"code-reviewer", "security-reviewer"}}, {Agents: []string{"architect"}}}}
	want := map[string]Expect{
		"planner":           {From: "planner", To: []string{"code-reviewer", "security-reviewer"}},
		"code-reviewer":     {From: "code-reviewer", To: []string{"architect"}},
		"security-reviewer": {From: "security-reviewer", To: []string{"architect"}},
		"architect":         {From: "architect", Last: true},
	}
	if got := w.Expectations(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Expectations:\n got %#v\nwant %#v", got, want)
	}
}

func textResult(s string) *task.Result {
	return &task.Result{Artifacts: []task.Artifact{{ID: "out", Parts: []task.Part{task.TextPart(s)}}}}
}

func handoffText(from, to string) string {
	return "## HANDOFF: " + from + " -> " + to + "\n\n### Context\nc\n\n### Findings\nf\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nr\n"
}

func TestWorkflowContract(t *testing.T) {
	t.Parallel()
	shapes := map[string]*Workflow{
		"sequential":      {Name: "feature", Phases: []Phase{{Agents: []string{"planner"}}, {Agents: []string{"code-reviewer"}}, {Agents: []string{"security-reviewer"}}}},
		"parallel middle": {Name: "review", Phases: []Phase{{Agents: []string{"planner"}}, {Agents: []string{"code-reviewer", "security-reviewer"}}, {Agents: []string{"architect"}}}},
		"parallel last":   {Name: "audit", Phases: []Phase{{Agents: []string{"planner"}}, {Agents: []string{"code-reviewer", "security-reviewer"}}}},
		"one agent":       {Name: "solo", Phases: []Phase{{Agents: []string{"explorer"}}}},
	}
	for name, w := range shapes {
		c := w.Contract()
		if errs := contract.Validate(c, contract.ValidateOptions{}); len(errs) > 0 {
			t.Fatalf("%s: Validate: %v", name, errs)
		}
		comp, err := contract.Compile(c)
		if err != nil {
			t.Fatalf("%s: Compile: %v", name, err)
		}
		if c.ID != "workflow."+w.Name || c.Version != "1.0" || c.Strictness != contract.Strict {
			t.Errorf("%s: contract header %q %q %q", name, c.ID, c.Version, c.Strictness)
		}
		exp := w.Expectations()
		var prev []string
		for _, p := range w.Phases {
			for _, a := range p.Agents {
				s, ok := comp.Step(a)
				if !ok {
					t.Fatalf("%s: no step %q", name, a)
				}
				st := s.Step()
				if st.Agent != a || st.OnViolation != contract.ViolationRetry || !reflect.DeepEqual(st.DependsOn, append([]string(nil), prev...)) {
					t.Errorf("%s: step %q: agent %q onViolation %q dependsOn %q", name, a, st.Agent, st.OnViolation, st.DependsOn)
				}
				e := exp[a]
				var types []string
				for _, as := range st.Assertions {
					types = append(types, as.Check.Type)
				}
				wantTypes := []string{"sections", HandoffCheck}
				if e.Last {
					wantTypes = []string{HandoffCheck}
				}
				if !reflect.DeepEqual(types, wantTypes) {
					t.Errorf("%s: step %q checks %q, want %q", name, a, types, wantTypes)
				}
				to := "done"
				if !e.Last {
					to = e.To[0]
				}
				ctx := context.Background()
				good := s.PostGate(ctx, &contract.Input{Result: textResult("Preamble.\n\n" + handoffText(a, to))})
				if !good.Passed {
					t.Errorf("%s: step %q: a good handoff failed: %+v", name, a, good.Results)
				}
				bad := s.PostGate(ctx, &contract.Input{Result: textResult("## HANDOFF: someone -> " + to + "\n\n### Context\n\n### Findings\nf\n")})
				if bad.Passed {
					t.Fatalf("%s: step %q: a malformed handoff passed", name, a)
				}
				var reasons []string
				for _, r := range bad.Results {
					if !r.Passed {
						reasons = append(reasons, r.Check+": "+r.Reason)
					}
				}
				all := strings.Join(reasons, "\n")
				for _, want := range []string{
					`the handoff heading names "someone" as the sender, but this agent is "` + a + `"`,
					`section "Context" is empty: write None when there is nothing to say`,
					`section "Open Questions" is missing`,
				} {
					if !strings.Contains(all, HandoffCheck+": ") || !strings.Contains(all, want) {
						t.Errorf("%s: step %q: reasons lack %q:\n%s", name, a, want, all)
					}
				}
				if !e.Last && !strings.Contains(all, "sections: ") {
					t.Errorf("%s: step %q: the sections check did not fail:\n%s", name, a, all)
				}
				if e.Last {
					sum := s.PostGate(ctx, &contract.Input{Result: textResult("SUMMARY\n-------\nShipped.\n")})
					if !sum.Passed {
						t.Errorf("%s: step %q: a summary failed: %+v", name, a, sum.Results)
					}
				}
			}
			prev = p.Agents
		}
	}
}

func TestHandoffCheckConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := &contract.Input{Result: textResult(handoffText("a", "b"))}
	cases := []struct {
		name   string
		config map[string]any
		passed bool
		reason string
	}{
		{"good", map[string]any{"from": "a", "to": []any{"b"}}, true, ""},
		{"last", map[string]any{"from": "a", "last": true}, true, ""},
		{"wrong next", map[string]any{"from": "a", "to": []any{"c"}}, false, `the handoff heading names "b" as the next agent`},
		{"no config", nil, false, "handoff check: bad config: no config"},
		{"no from", map[string]any{"to": []any{"b"}}, false, `"from" is required`},
		{"no to", map[string]any{"from": "a"}, false, `"to" is required unless "last" is true`},
		{"bad type", map[string]any{"from": "a", "to": "b"}, false, "handoff check: bad config"},
		{"unknown key", map[string]any{"from": "a", "last": true, "next": "b"}, false, `unknown field "next"`},
	}
	for _, c := range cases {
		v := checkHandoff(ctx, &contract.Check{Type: HandoffCheck, Config: c.config}, in)
		if v.Passed != c.passed || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("%s: verdict %+v, want passed=%v reason containing %q", c.name, v, c.passed, c.reason)
		}
	}
	if v := checkHandoff(ctx, &contract.Check{Config: map[string]any{"from": "a", "last": true}}, &contract.Input{}); v.Passed {
		t.Error("no result passed")
	}
}
