package contract_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// A Go function verified against a contract step: its answer must be a
// JSON object with a summary.
func ExampleWrap() {
	c, err := contract.Compile(&contract.AgentContract{
		Version: "1.0",
		ID:      "summaries",
		Steps: []contract.ContractStep{{
			ID: "summarize",
			Assertions: []contract.ContractAssertion{{
				Type:    contract.Assert,
				Message: "the answer is a JSON object with a summary",
				Check: contract.Check{Type: "schema_match", Target: "output",
					Schema: map[string]any{"type": "object", "required": []any{"summary"}}},
			}},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	summarize := func(answer string) func(context.Context) (string, *task.Result, error) {
		return func(context.Context) (string, *task.Result, error) {
			return answer, &task.Result{Artifacts: []task.Artifact{{ID: "answer", Parts: []task.Part{task.TextPart(answer)}}}}, nil
		}
	}
	ctx := context.Background()

	out, vr, err := contract.Wrap(ctx, c, "summarize", nil, summarize(`{"summary": "all good"}`))
	fmt.Println(out, vr.Executed, vr.Verification.Passed, err)

	_, vr, err = contract.Wrap(ctx, c, "summarize", nil, summarize(`{"title": "no summary"}`))
	fmt.Println(vr.Executed, vr.Verification.Passed, errors.Is(err, contract.ErrViolated))
	for _, a := range vr.Verification.PostGate.FailedAssertions {
		fmt.Println("failed:", a.Message)
	}

	_, vr, err = contract.Wrap(ctx, c, "translate", nil, summarize(`{}`))
	fmt.Println(vr.Executed, vr.Error, errors.Is(err, contract.ErrStepNotFound))
	// Output:
	// {"summary": "all good"} true true <nil>
	// true false true
	// failed: the answer is a JSON object with a summary
	// false step translate not found in contract summaries true
}
