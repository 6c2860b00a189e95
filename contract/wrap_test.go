package contract_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// twoSteps: "spec" writes spec.json (a file resource with a schema);
// "build" depends on spec, consumes it, and must answer "built"; a
// suggest asks for the word "fast".
func twoSteps(t *testing.T, strictness contract.Strictness) *contract.Compiled {
	t.Helper()
	c, err := contract.Compile(&contract.AgentContract{
		Version:    "1.0",
		ID:         "pipeline",
		Strictness: strictness,
		Resources: []contract.ContractResource{{
			ID: "spec", Type: contract.ResourceFile, Location: "spec.json", Format: "json",
			Schema: map[string]any{"type": "object", "required": []any{"name"}},
		}},
		Steps: []contract.ContractStep{
			{ID: "spec", Creates: []string{"spec"}, Assertions: []contract.ContractAssertion{{
				Type: contract.Assert, Message: "spec.json exists", Check: contract.Check{Type: "exists", Target: "resource:spec"},
			}}},
			{ID: "build", DependsOn: []string{"spec"}, Consumes: []string{"spec"}, Assertions: []contract.ContractAssertion{
				{Type: contract.Assert, Message: "says built", Check: contract.Check{Type: "contains", Value: "built"}},
				{Type: contract.Suggest, Message: "says fast", Check: contract.Check{Type: "contains", Value: "fast"}},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func text(s string) *task.Result {
	return &task.Result{Message: &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart(s)}}}
}

func TestWrapCreatesResourceAndChainsIt(t *testing.T) {
	c := twoSteps(t, "")
	dir := t.TempDir()
	ctx := context.Background()

	in := &contract.Input{WorkDir: dir, Done: map[string]bool{}}
	calls := 0
	n, vr, err := contract.Wrap(ctx, c, "spec", in, func(context.Context) (int, *task.Result, error) {
		calls++
		return 42, nil, os.WriteFile(filepath.Join(dir, "spec.json"), []byte(`{"name":"x"}`), 0o644)
	})
	if err != nil || n != 42 || calls != 1 {
		t.Fatalf("spec: n=%d calls=%d err=%v", n, calls, err)
	}
	if !vr.Executed || !vr.Verification.Passed || vr.Contract != "pipeline" || vr.Step != "spec" {
		t.Fatalf("spec: %+v", vr)
	}
	if got := vr.Verification.ResourcesCreated; len(got) != 1 || got[0].ID != "spec" || got[0].Location != "spec.json" {
		t.Fatalf("resources created: %+v", got)
	}
	tm := vr.Verification.Timing
	if tm.TotalMs < tm.ExecutionMs || tm.TotalMs < tm.PreGateMs || tm.TotalMs < tm.PostGateMs {
		t.Fatalf("timing parts exceed the total: %+v", tm)
	}
	if in.Result != nil || in.Resources != nil {
		t.Fatalf("Wrap modified its input: %+v", in)
	}

	// build is blocked until spec is done and its resource is given.
	calls = 0
	_, vr, err = contract.Wrap(ctx, c, "build", in, func(context.Context) (string, *task.Result, error) {
		calls++
		return "", text("built"), nil
	})
	if !errors.Is(err, contract.ErrBlocked) || calls != 0 || vr.Executed || vr.Verification.Passed {
		t.Fatalf("blocked build: calls=%d err=%v vr=%+v", calls, err, vr)
	}
	blocked := strings.Join(vr.Verification.PreGate.BlockedBy, "; ")
	if !strings.Contains(blocked, "dependency spec") || !strings.Contains(blocked, "resource spec") || !strings.Contains(vr.Error, "pre-gate blocked") {
		t.Fatalf("blockedBy %q, error %q", blocked, vr.Error)
	}

	in.Done["spec"] = true
	in.Resources = map[string]contract.Resource{"spec": {
		ContractResource: contract.ContractResource{ID: "spec", Type: contract.ResourceFile, Location: "spec.json"},
		Text:             `{"name":"x"}`, Data: map[string]any{"name": "x"},
	}}
	s, vr, err := contract.Wrap(ctx, c, "build", in, func(context.Context) (string, *task.Result, error) {
		calls++
		return "ok", text("built"), nil
	})
	if err != nil || s != "ok" || calls != 1 {
		t.Fatalf("build: %q calls=%d err=%v", s, calls, err)
	}
	// Loose: the failed suggest is recorded and does not fail the gate.
	if !vr.Verification.Passed || len(vr.Verification.PostGate.Results) != 2 || vr.Verification.PostGate.Results[1].Passed {
		t.Fatalf("build post-gate: %+v", vr.Verification.PostGate)
	}
}

func TestWrapStrictFailsOnSuggest(t *testing.T) {
	c := twoSteps(t, contract.Strict)
	in := &contract.Input{Resources: map[string]contract.Resource{"spec": {
		ContractResource: contract.ContractResource{ID: "spec", Type: contract.ResourceFile},
		Data:             map[string]any{"name": "x"}, Text: `{"name":"x"}`,
	}}}
	s, vr, err := contract.Wrap(context.Background(), c, "build", in, func(context.Context) (string, *task.Result, error) {
		return "answer", text("built"), nil
	})
	if !errors.Is(err, contract.ErrViolated) || s != "answer" || !vr.Executed || vr.Verification.Passed {
		t.Fatalf("s=%q err=%v vr=%+v", s, err, vr)
	}
	if f := vr.Verification.PostGate.FailedAssertions; len(f) != 1 || f[0].Message != "says fast" {
		t.Fatalf("failed assertions: %+v", f)
	}
	if !strings.Contains(vr.Error, "says fast") || !strings.Contains(err.Error(), "contract pipeline step build") {
		t.Fatalf("error %q / %v", vr.Error, err)
	}
}

func TestWrapExecuteError(t *testing.T) {
	c := twoSteps(t, "")
	boom := errors.New("boom")
	_, vr, err := contract.Wrap(context.Background(), c, "spec", nil, func(context.Context) (struct{}, *task.Result, error) {
		return struct{}{}, nil, boom
	})
	if err != boom {
		t.Fatalf("err = %v, want the function's own error", err)
	}
	if !vr.Executed || vr.Verification.Passed || vr.Error != "boom" || len(vr.Verification.PostGate.Results) != 0 {
		t.Fatalf("vr = %+v", vr)
	}
}

func TestWrapNoContract(t *testing.T) {
	_, vr, err := contract.Wrap(context.Background(), nil, "x", nil, func(context.Context) (int, *task.Result, error) {
		t.Fatal("called")
		return 0, nil, nil
	})
	if !errors.Is(err, contract.ErrStepNotFound) || vr.Executed {
		t.Fatalf("err=%v vr=%+v", err, vr)
	}
}
