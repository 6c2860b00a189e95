package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// gatedStore runs one task of an agent behind a contract whose answer
// breaks it (onViolation fail), on a real Coordinator over a real SQLite
// file, and returns the store's DSN and the task's id for the CLI to read.
func gatedStore(t *testing.T) (dsn, id string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pactum.db")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	st, err := sqlite.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	compiled, err := contract.Compile(&contract.AgentContract{Version: "1.0", ID: "reports", Steps: []contract.ContractStep{{
		ID: "write", OnViolation: contract.ViolationFail,
		Assertions: []contract.ContractAssertion{
			{Type: contract.Assert, Message: "the report is JSON with a title",
				Check: contract.Check{Type: "schema_match", Schema: map[string]any{"type": "object", "required": []any{"title"}}}},
			{Type: contract.Suggest, Message: "the report mentions the quarter", Check: contract.Check{Type: "contains", Value: "Q3"}},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	step, _ := compiled.Step("write")
	writer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{ID: "report", Parts: []task.Part{task.TextPart(`{"body": "numbers"}`)}}}}, nil
	})
	c, err := task.NewCoordinator(task.Options{
		Store:        st,
		Agents:       []task.AgentSpec{{Name: "writer", Runner: writer, Middleware: []task.Middleware{step.Middleware(contract.GateOptions{})}}},
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(context.Background()) }()
	res, err := c.SubmitAndWait(ctx, task.SubmitRequest{Agent: "writer", Envelope: task.Envelope{
		Actor: "alice", Input: task.Message{ID: "in", Parts: []task.Part{task.TextPart("write the report")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task.State != task.StateFailed || res.Task.ErrorCode != task.CodeContractViolation {
		t.Fatalf("task %s %s (%s), want failed with contract_violation", res.Task.State, res.Task.ErrorCode, res.Task.Reason)
	}
	return "sqlite://" + path, res.Task.ID
}

// TestTasksGetVerdict: tasks get shows the verified result of the newest
// checked attempt: the verdict, its timing, and each failed assertion
// with its reason; --json has it as verifiedResult.
func TestTasksGetVerdict(t *testing.T) {
	t.Parallel()
	dsn, id := gatedStore(t)
	out := mustRun(t, "tasks", "get", id, "--store", dsn)
	for _, want := range []string{
		"verdict  failed (contract reports, step write; ",
		"  failed   [assert schema_match] the report is JSON with a title: ",
		"  failed   [suggest contains] the report mentions the quarter: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks get lacks %q:\n%s", want, out)
		}
	}
	var got struct {
		VerifiedResult *contract.VerifiedResult `json:"verifiedResult"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "tasks", "get", id, "--json", "--store", dsn)), &got); err != nil {
		t.Fatal(err)
	}
	vr := got.VerifiedResult
	if vr == nil || vr.Verification.Passed || len(vr.Verification.PostGate.FailedAssertions) != 1 ||
		vr.Verification.PostGate.FailedAssertions[0].Message != "the report is JSON with a title" {
		t.Fatalf("tasks get --json verifiedResult = %+v", vr)
	}
}
