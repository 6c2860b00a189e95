package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// gatedStore runs one task of an agent behind a contract whose answer
// breaks it (singleContract's step, onViolation fail), on a real
// Coordinator over a real SQLite file (singleStore), and returns the
// store's DSN and the task's id for the CLI to read.
func gatedStore(t *testing.T) (dsn, id string) {
	t.Helper()
	cpath := filepath.Join(t.TempDir(), "contract.yaml")
	writeFile(t, cpath, singleContract)
	dsn, done := singleStore(t, cpath, `{"body": "numbers"}`)
	if done.State != task.StateFailed || done.ErrorCode != task.CodeContractViolation {
		t.Fatalf("task %s %s (%s), want failed with contract_violation", done.State, done.ErrorCode, done.Reason)
	}
	return dsn, done.ID
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
