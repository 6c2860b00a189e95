package workflow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// TestRunArgumentsReachEveryStep: a run whose input carries arguments
// (WithArguments) gives each step, the custom run's too, an input with
// "# Arguments" right after the task, the arguments in the step's own
// metadata (what runtimes' templates read), and the heading line the docs'
// one-liner reads, also on a retry; a run without arguments has no such
// block. A run whose arguments are not a string fails invalid_argument.
func TestRunArgumentsReachEveryStep(t *testing.T) {
	t.Parallel()
	tries := 0
	b := setupRun(t, []*workflow.Workflow{builtin(t, "bugfix")}, map[string]agentFunc{
		"explorer": handoff("e"),
		"code-reviewer": func(ctx context.Context, req *task.Request) (string, error) {
			if tries++; tries == 1 {
				return "no handoff", nil
			}
			return validHandoff(req, "r", "None"), nil
		},
	}, 2)
	const args = "--fast\nnow"
	for _, tc := range []struct {
		wf string
		md map[string]any
	}{
		{"bugfix", workflow.WithArguments(nil, args)},
		{workflow.Custom, workflow.WithArguments(workflow.CustomInput([]string{"explorer"}), args)},
	} {
		run, kids, r := b.run(t, tc.wf, "Fix the crash", tc.md)
		if r.Recommendation != workflow.Ship {
			t.Fatalf("%s: %s %q", tc.wf, r.Recommendation, r.Reasons)
		}
		if got, err := workflow.Arguments(run.Envelope.Input); err != nil || got != args {
			t.Errorf("%s: the run's arguments %q, %v", tc.wf, got, err)
		}
		for _, k := range kids {
			in := k.Envelope.Input
			if !strings.HasPrefix(in.Text(), "# Task\nFix the crash\n\n# Arguments\n"+args+"\n\n# Prior handoffs\n") {
				t.Errorf("%s: step %s input:\n%s", tc.wf, k.Envelope.Step, in.Text())
			}
			if got, err := workflow.Arguments(in); err != nil || got != args {
				t.Errorf("%s: step %s metadata arguments %q, %v", tc.wf, k.Envelope.Step, got, err)
			}
		}
	}
	reqs := b.requests("code-reviewer")
	if len(reqs) != 2 {
		t.Fatalf("code-reviewer ran %d times, want 2 (a retry)", len(reqs))
	}
	retry := reqs[1].Retry()
	if retry == nil || !strings.Contains(retry.Text(), "# Arguments\n"+args+"\n") || strings.Count(retry.Text(), "\nExpected heading: ") != 1 {
		t.Errorf("the retry's text lacks the arguments or has not one heading line:\n%v", retry)
	}

	_, kids, _ := b.run(t, "bugfix", "Fix the crash", nil)
	for _, k := range kids {
		if strings.Contains(k.Envelope.Input.Text(), "# Arguments") {
			t.Errorf("step %s of a run without arguments:\n%s", k.Envelope.Step, k.Envelope.Input.Text())
		}
	}
	got, _ := b.wait(t, b.submit(t, "bugfix", "x", map[string]any{workflow.MetadataKey: map[string]any{"arguments": 7}}).ID)
	if got.State != task.StateFailed || got.ErrorCode != task.CodeInvalidArgument || !strings.Contains(got.Reason, "arguments") {
		t.Errorf("arguments 7: %s %s %q", got.State, got.ErrorCode, got.Reason)
	}
}

func TestWithArguments(t *testing.T) {
	t.Parallel()
	custom := workflow.CustomInput([]string{"a"})
	md := workflow.WithArguments(custom, "x y")
	p := md[workflow.MetadataKey].(map[string]any)
	if p["arguments"] != "x y" || p["agents"] == nil {
		t.Errorf("WithArguments(custom) = %v", md)
	}
	if _, ok := custom[workflow.MetadataKey].(map[string]any)["arguments"]; ok {
		t.Errorf("WithArguments changed its input")
	}
	if got := workflow.WithArguments(custom, ""); len(got) != 1 || got[workflow.MetadataKey].(map[string]any)["arguments"] != nil {
		t.Errorf("WithArguments(custom, \"\") = %v", got)
	}
	if got, err := workflow.Arguments(task.Message{}); got != "" || err != nil {
		t.Errorf("Arguments of no metadata = %q, %v", got, err)
	}
}
