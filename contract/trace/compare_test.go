package trace_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/task"
)

// node is a task that ran once, answered answer (a data part when it is
// JSON) and ended in state, its gate's verdict on step "s" being checks
// (an assertion message and whether it passed; nil: no gate checked it).
func node(t *testing.T, id string, state task.State, answer string, checks map[string]bool) *trace.Node {
	t.Helper()
	part := task.TextPart(answer)
	if json.Valid([]byte(answer)) {
		part = task.DataPart(json.RawMessage(answer))
	}
	tk := &task.Task{ID: id, Agent: "a", State: state, Artifacts: []task.Artifact{{ID: "out", Parts: []task.Part{part}}}}
	end := task.Record{TaskID: id, Seq: 2, From: task.StateInProgress, To: state, Attempt: 1}
	if checks != nil {
		vr := contract.VerifiedResult{Contract: "c", Step: "s", Executed: true}
		vr.Verification.PreGate.Passed, vr.Verification.Passed = true, true
		for _, msg := range []string{"first", "second"} {
			passed, ok := checks[msg]
			if !ok {
				continue
			}
			vr.Verification.PostGate.Results = append(vr.Verification.PostGate.Results, contract.ValidationResult{Check: "regex", Type: contract.Assert, Message: msg, Passed: passed})
			vr.Verification.Passed = vr.Verification.Passed && passed
		}
		data, err := json.Marshal(vr)
		if err != nil {
			t.Fatal(err)
		}
		end.Evidence = []task.Evidence{{Step: contract.GateStep, Kind: task.EvidenceVerdict, Data: data}}
	}
	return &trace.Node{Task: tk, Timeline: []task.Record{{TaskID: id, Seq: 1, From: task.StateQueued, To: task.StateInProgress, Attempt: 1}, end}}
}

// TestCompare: what is a regression and what is not, on recorded
// verdicts: a verdict that passed and now fails, a task that succeeded
// and now fails are; a verdict that now passes, a changed answer, a
// replay no gate checked are not. Data parts are compared as canonical
// JSON: key order and number spelling are no change. A failed task
// delivered no answer.
func TestCompare(t *testing.T) {
	t.Parallel()
	pass := map[string]bool{"first": true, "second": true}
	for _, tc := range []struct {
		name         string
		before, now  *trace.Node
		regressions  []string
		sameAnswer   bool
		checkChanges int
	}{
		{"same", node(t, "o", task.StateSucceeded, "hi", pass), node(t, "r", task.StateSucceeded, "hi", pass), []string{}, true, 0},
		{"canonical JSON", node(t, "o", task.StateSucceeded, `{"a": 1, "b": 2.0}`, pass), node(t, "r", task.StateSucceeded, `{"b":2,"a":1.0}`, pass), []string{}, true, 0},
		{"answer changed", node(t, "o", task.StateSucceeded, "hi", pass), node(t, "r", task.StateSucceeded, "hello", pass), []string{}, false, 0},
		{"check now fails", node(t, "o", task.StateSucceeded, "hi", pass), node(t, "r", task.StateSucceeded, "ho", map[string]bool{"first": true, "second": false}),
			[]string{"step s passed, now failed: [assert regex] second"}, false, 1},
		{"check now passes", node(t, "o", task.StateSucceeded, "ho", map[string]bool{"first": false, "second": true}), node(t, "r", task.StateSucceeded, "hi", pass), []string{}, false, 1},
		{"task now fails", node(t, "o", task.StateSucceeded, "hi", nil), node(t, "r", task.StateFailed, "hi", nil), []string{"task o succeeded, its replay r is failed"}, false, 0},
		{"replay unchecked", node(t, "o", task.StateSucceeded, "hi", pass), node(t, "r", task.StateSucceeded, "hi", nil), []string{}, true, 0},
	} {
		c, err := trace.Compare(context.Background(), &trace.Trace{Node: *tc.before}, &trace.Trace{Node: *tc.now}, trace.CompareOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(c.Regressions, tc.regressions) {
			t.Errorf("%s: regressions %q, want %q", tc.name, c.Regressions, tc.regressions)
		}
		if len(c.Answers) != 1 || c.Answers[0].Same != tc.sameAnswer || (c.Answers[0].Diff == "") != tc.sameAnswer {
			t.Errorf("%s: answers %+v, want same %v", tc.name, c.Answers, tc.sameAnswer)
		}
		changes := 0
		for _, s := range c.Steps {
			changes += len(s.Checks)
		}
		if changes != tc.checkChanges {
			t.Errorf("%s: %d checks changed, want %d: %+v", tc.name, changes, tc.checkChanges, c.Steps)
		}
	}
}
