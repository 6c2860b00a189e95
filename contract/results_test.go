package contract_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// TestResults: the one rule of whether a run passed (Compiled.Results),
// over the cases a run's artifact and a stored run's verified result
// meet. Steps come in the contract's order, whatever the children's.
func TestResults(t *testing.T) {
	t.Parallel()
	compiled, err := contract.Compile(threeSteps(contract.ViolationContinue))
	if err != nil {
		t.Fatal(err)
	}
	child := func(step string, attempt int) *task.Task {
		return &task.Task{ID: "t-" + step, Agent: contract.StepAgent("write", step), Attempt: attempt, Envelope: task.Envelope{Step: step}}
	}
	verdict := func(step string, passed bool) *contract.VerifiedResult {
		return &contract.VerifiedResult{Contract: "write", Step: step, Executed: true, Verification: contract.Verification{Passed: passed}}
	}
	all := []*task.Task{child("plan", 1), child("draft", 1), child("review", 1)}
	passedAll := map[string]*contract.VerifiedResult{"plan": verdict("plan", true), "draft": verdict("draft", true), "review": verdict("review", true)}
	with := func(step string, vr *contract.VerifiedResult) map[string]*contract.VerifiedResult {
		m := map[string]*contract.VerifiedResult{}
		for k, v := range passedAll {
			m[k] = v
		}
		m[step] = vr
		return m
	}
	tests := []struct {
		name      string
		succeeded bool
		children  []*task.Task
		verdicts  map[string]*contract.VerifiedResult // nil: no verified func
		passed    bool
		steps     []string
		checked   []bool // whether each step shows a verified result
	}{
		{name: "all passed", succeeded: true, children: all, verdicts: passedAll,
			passed: true, steps: []string{"plan", "draft", "review"}, checked: []bool{true, true, true}},
		{name: "children out of order", succeeded: true, children: []*task.Task{all[2], all[0], all[1]}, verdicts: passedAll,
			passed: true, steps: []string{"plan", "draft", "review"}, checked: []bool{true, true, true}},
		// onViolation continue: the step succeeded, delivered despite
		// its failed post-gate; the run succeeded but did not pass.
		{name: "continue with a violation", succeeded: true, children: all, verdicts: with("draft", verdict("draft", false)),
			passed: false, steps: []string{"plan", "draft", "review"}, checked: []bool{true, true, true}},
		{name: "a step without a verdict", succeeded: true, children: all, verdicts: with("review", nil),
			passed: false, steps: []string{"plan", "draft", "review"}, checked: []bool{true, true, false}},
		{name: "no verified func", succeeded: true, children: all,
			passed: false, steps: []string{"plan", "draft", "review"}, checked: []bool{false, false, false}},
		{name: "failed run", succeeded: false, children: all[:2], verdicts: with("draft", verdict("draft", false)),
			passed: false, steps: []string{"plan", "draft"}, checked: []bool{true, true}},
		{name: "every step passed, run not succeeded", succeeded: false, children: all, verdicts: passedAll,
			passed: false, steps: []string{"plan", "draft", "review"}, checked: []bool{true, true, true}},
		{name: "running, every step so far passed", succeeded: false, children: all[:2], verdicts: passedAll,
			passed: false, steps: []string{"plan", "draft"}, checked: []bool{true, true}},
		{name: "succeeded without a child for every step", succeeded: true, children: all[:2], verdicts: passedAll,
			passed: false, steps: []string{"plan", "draft"}, checked: []bool{true, true}},
		// A child that has not started an attempt was not checked: its
		// verdict is not read.
		{name: "a step not started", succeeded: false, children: []*task.Task{all[0], child("draft", 0)}, verdicts: passedAll,
			passed: false, steps: []string{"plan", "draft"}, checked: []bool{true, false}},
		{name: "a step the contract does not have", succeeded: true, children: append([]*task.Task{child("extra", 1)}, all...),
			verdicts: with("extra", verdict("extra", true)),
			passed:   false, steps: []string{"plan", "draft", "review", "extra"}, checked: []bool{true, true, true, true}},
		{name: "no children", succeeded: false,
			passed: false, steps: []string{}, checked: []bool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var verified func(context.Context, *task.Task) (*contract.VerifiedResult, error)
			if tt.verdicts != nil {
				verified = func(_ context.Context, k *task.Task) (*contract.VerifiedResult, error) {
					if k.Attempt == 0 {
						t.Errorf("verified result of %s read before its first attempt", k.ID)
					}
					return tt.verdicts[k.Envelope.Step], nil
				}
			}
			rr, err := compiled.Results(context.Background(), tt.succeeded, tt.children, verified)
			if err != nil {
				t.Fatal(err)
			}
			if rr.Contract != "write" || rr.Passed != tt.passed || rr.Steps == nil {
				t.Errorf("results: contract %q passed %v steps %v, want write %v", rr.Contract, rr.Passed, rr.Steps, tt.passed)
			}
			var steps []string
			var checked []bool
			for _, s := range rr.Steps {
				steps = append(steps, s.Step)
				checked = append(checked, s.VerifiedResult != nil)
				if s.Task != "t-"+s.Step || s.Agent != contract.StepAgent("write", s.Step) {
					t.Errorf("step %s: task %s agent %s", s.Step, s.Task, s.Agent)
				}
				if s.VerifiedResult != nil && s.VerifiedResult != tt.verdicts[s.Step] {
					t.Errorf("step %s: verified result %+v, want %+v", s.Step, s.VerifiedResult, tt.verdicts[s.Step])
				}
			}
			if !slices.Equal(steps, tt.steps) {
				t.Errorf("steps %v, want %v", steps, tt.steps)
			}
			if !slices.Equal(checked, tt.checked) {
				t.Errorf("checked %v, want %v", checked, tt.checked)
			}
		})
	}
}

// TestResultsVerifiedError: a verified result that cannot be read is an
// error naming the step and its task, wrapping the cause.
func TestResultsVerifiedError(t *testing.T) {
	t.Parallel()
	compiled, err := contract.Compile(threeSteps(contract.ViolationFail))
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("store down")
	kids := []*task.Task{{ID: "t-plan", Attempt: 1, Envelope: task.Envelope{Step: "plan"}}}
	_, err = compiled.Results(context.Background(), true, kids, func(context.Context, *task.Task) (*contract.VerifiedResult, error) {
		return nil, cause
	})
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "step plan (task t-plan)") {
		t.Fatalf("error: %v", err)
	}
}

// TestRunContinuesPastViolation: the draft breaks its contract with
// onViolation continue: the run succeeds, every step ran, and its
// verified results say it did not pass, naming the step delivered
// despite the violation.
func TestRunContinuesPastViolation(t *testing.T) {
	t.Parallel()
	b := setupRun(t, threeSteps(contract.ViolationContinue), contract.RunOptions{}, map[string]task.RunnerFunc{
		"plan": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return dataResult(map[string]any{"items": []string{"a"}}), nil
		},
		"draft": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return textResult("no title here"), nil
		},
		"review": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return textResult("approved"), nil
		},
	})
	parent, kids := b.run(t, "x")
	if parent.State != task.StateSucceeded || len(kids) != 3 {
		t.Fatalf("run: %s (%d children): %s", parent.State, len(kids), parent.Reason)
	}
	rr := runResults(t, parent)
	if rr.Passed || len(rr.Steps) != 3 {
		t.Fatalf("results: %+v", rr)
	}
	for i, want := range []bool{true, false, true} {
		s := rr.Steps[i]
		if s.VerifiedResult == nil || s.VerifiedResult.Verification.Passed != want {
			t.Errorf("step %s: %+v", s.Step, s.VerifiedResult)
		}
	}
	text := parent.Artifacts[0].Parts[0].Text
	for _, want := range []string{"not every step verified", "draft: succeeded", "delivered despite a violation"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary %q lacks %q", text, want)
		}
	}
}
