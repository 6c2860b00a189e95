package contract_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// TestFromRecord: the last attempt is read from the last in_progress
// record; its duration is what the gate recorded, else the records' span;
// only a succeeded task's output is an output.
func TestFromRecord(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rec := func(seq int, from, to task.State, after time.Duration, attempt int, ev ...task.Evidence) task.Record {
		return task.Record{TaskID: "t", Seq: seq, From: from, To: to, At: t0.Add(after), Attempt: attempt, Evidence: ev}
	}
	out := []task.Artifact{{ID: "a", Parts: []task.Part{task.TextPart("answer")}}}
	recs := []task.Record{
		rec(1, task.StateRequested, task.StateValidated, 0, 0),
		rec(2, task.StateValidated, task.StateQueued, 0, 0),
		rec(3, task.StateQueued, task.StateInProgress, time.Second, 1),
		rec(4, task.StateInProgress, task.StateQueued, 3*time.Second, 1),
		rec(5, task.StateQueued, task.StateInProgress, 10*time.Second, 2),
		rec(6, task.StateInProgress, task.StateSucceeded, 14*time.Second, 2),
	}
	tk := &task.Task{ID: "t", Agent: "w", State: task.StateSucceeded, Attempt: 2, Artifacts: out}
	r := contract.FromRecord(tk, recs)
	if !r.Ran || !r.Ended || r.Duration != 4*time.Second || r.Task.State != task.StateInProgress || r.Task.Attempt != 2 || tk.State != task.StateSucceeded {
		t.Errorf("FromRecord = ran %v, ended %v, %s, task %s attempt %d (recorded task now %s)", r.Ran, r.Ended, r.Duration, r.Task.State, r.Task.Attempt, tk.State)
	}
	if r.Result == nil || len(r.Result.Artifacts) != 1 {
		t.Errorf("output %+v, want the task's artifact", r.Result)
	}

	vr, _ := json.Marshal(contract.VerifiedResult{Executed: true, Verification: contract.Verification{Timing: contract.Timing{ExecutionMs: 1500}}})
	recs[5].Evidence = []task.Evidence{{Step: contract.GateStep, Kind: task.EvidenceVerdict, Outcome: "pass", Data: vr}}
	if r := contract.FromRecord(tk, recs); r.Duration != 1500*time.Millisecond {
		t.Errorf("with the gate's timing: %s, want 1.5s", r.Duration)
	}

	failed := &task.Task{ID: "t", State: task.StateFailed, Artifacts: out}
	if r := contract.FromRecord(failed, recs); !r.Ran || r.Result == nil || len(r.Result.Artifacts) != 0 {
		t.Errorf("a failed task's output: %+v, want none", r.Result)
	}
	if r := contract.FromRecord(&task.Task{ID: "t", State: task.StateCanceled}, recs[:2]); r.Ran || r.Result != nil {
		t.Errorf("a task that never ran: %+v", r)
	}
}

// TestUpstream: a step of a run gets the run's inputs and what the steps
// it depends on created, when they succeeded; done lists the succeeded
// steps.
func TestUpstream(t *testing.T) {
	t.Parallel()
	c := &contract.AgentContract{Version: "1.0", ID: "run",
		Resources: []contract.ContractResource{{ID: "doc", Type: contract.ResourceMessage}, {ID: "notes", Type: contract.ResourceMessage}},
		Steps: []contract.ContractStep{
			{ID: "a", Consumes: []string{"doc"}, Creates: []string{"notes"}},
			{ID: "b", Creates: []string{"side"}},
			{ID: "c", DependsOn: []string{"a"}, Consumes: []string{"notes"}},
		}}
	compiled, err := contract.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	done := func(text string) *task.Task {
		return &task.Task{State: task.StateSucceeded, Artifacts: []task.Artifact{{ID: "x", Parts: []task.Part{task.DataPart(json.RawMessage(`{"k": 1}`)), task.TextPart(text)}}}}
	}
	tasks := map[string]*task.Task{"a": done("the notes"), "b": done("side"), "c": {State: task.StateFailed}}
	input := &task.Message{Parts: []task.Part{task.TextPart("the document")}}
	res, doneSteps := compiled.Upstream("c", input, tasks, t.TempDir())
	if res["doc"].Text != "the document" || res["notes"].Text != "the notes" {
		t.Errorf("resources %+v", res)
	}
	if _, ok := res["side"]; ok {
		t.Error("c was handed what b created, which it does not depend on")
	}
	if !doneSteps["a"] || !doneSteps["b"] || doneSteps["c"] || len(doneSteps) != 2 {
		t.Errorf("done %v", doneSteps)
	}
	tasks["a"] = &task.Task{State: task.StateFailed, Artifacts: done("the notes").Artifacts}
	if res, _ := compiled.Upstream("c", input, tasks, ""); res == nil || res["notes"].Text != "" {
		t.Errorf("a failed step's resources were handed over: %+v", res)
	}

	// Replay of c with what it had: passes its pre-gate; without the notes
	// it is blocked.
	s, _ := compiled.Step("c")
	rec := &contract.Recorded{Task: &task.Task{ID: "c"}, Ran: true, Result: &task.Result{}}
	res, doneSteps = compiled.Upstream("c", input, map[string]*task.Task{"a": done("the notes")}, "")
	if vr := s.Replay(context.Background(), rec, contract.ReplayOptions{Resources: res, Done: doneSteps}); !vr.Verification.Passed || !vr.Executed {
		t.Errorf("replay of c: %+v", vr)
	}
	res, doneSteps = compiled.Upstream("c", input, map[string]*task.Task{}, "")
	vr := s.Replay(context.Background(), rec, contract.ReplayOptions{Resources: res, Done: doneSteps})
	if vr.Verification.PreGate.Passed || vr.Executed || vr.Error != "pre-gate blocked: dependency a not done; resource notes missing" {
		t.Errorf("replay of c without a: %+v", vr)
	}
}
