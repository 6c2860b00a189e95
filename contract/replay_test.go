package contract_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
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

// TestReplayRunAsLive: the steps of a real run (Compiled.Runner and a
// RunGate per step on a real store), replayed with what a step of a run
// had by the live gate's rule (StepResources of the child's stored input,
// DoneSteps of the run's children), say check by check what the live
// gates said. Without the child of the step it depends on, review is
// blocked by that dependency; without a resource in its input, by that.
func TestReplayRunAsLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupRun(t, threeSteps(contract.ViolationFail), contract.RunOptions{}, map[string]task.RunnerFunc{
		"plan": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return dataResult(map[string]any{"items": []string{"intro", "body"}}), nil
		},
		"draft": func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			return textResult("# Draft for " + req.Message.Text()), nil
		},
		"review": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
			return textResult("approved"), nil
		},
	})
	parent, kids := b.run(t, "a poem")
	if parent.State != task.StateSucceeded || len(kids) != 3 {
		t.Fatalf("run %s (%s), %d children", parent.State, parent.Reason, len(kids))
	}
	done := contract.DoneSteps(kids)
	if len(done) != 3 || !done["plan"] || !done["draft"] || !done["review"] {
		t.Fatalf("DoneSteps = %v", done)
	}
	recs := map[string][]task.Record{}
	for _, k := range kids {
		r, err := b.coord.Timeline(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		recs[k.Envelope.Step] = r
		live, err := contract.Newest(r)
		if err != nil || live == nil {
			t.Fatalf("step %s: live verified result %v, %v", k.Envelope.Step, live, err)
		}
		s, _ := b.compiled.Step(k.Envelope.Step)
		vr := s.Replay(ctx, contract.FromRecord(k, r), contract.ReplayOptions{Resources: contract.StepResources(s, k.Envelope.Input), Done: done})
		if !vr.Verification.Passed || !reflect.DeepEqual(checks(vr), checks(live)) ||
			!reflect.DeepEqual(vr.Verification.ResourcesCreated, live.Verification.ResourcesCreated) {
			t.Errorf("step %s: offline %+v\nlive %+v", k.Envelope.Step, vr, live)
		}
	}

	review, _ := b.compiled.Step("review")
	rk := kids[2]
	if rk.Envelope.Step != "review" {
		t.Fatalf("children[2] runs %s", rk.Envelope.Step)
	}
	// The draft's child gone: not done, though its draft is in review's input.
	vr := review.Replay(ctx, contract.FromRecord(rk, recs["review"]), contract.ReplayOptions{
		Resources: contract.StepResources(review, rk.Envelope.Input), Done: contract.DoneSteps([]*task.Task{kids[0], kids[2]}),
	})
	if vr.Verification.PreGate.Passed || vr.Executed || vr.Error != "pre-gate blocked: dependency draft not done" {
		t.Errorf("replay of review without draft: %+v", vr)
	}
	// A failed sibling is not done.
	failed := *kids[1]
	failed.State = task.StateFailed
	if d := contract.DoneSteps([]*task.Task{kids[0], &failed, nil}); len(d) != 1 || !d["plan"] {
		t.Errorf("DoneSteps with draft failed = %v", d)
	}
	// review's input without the plan: the resource is missing.
	in := rk.Envelope.Input
	in.Parts = slices.DeleteFunc(slices.Clone(in.Parts), func(p task.Part) bool { return p.Kind == task.PartData })
	vr = review.Replay(ctx, contract.FromRecord(rk, recs["review"]), contract.ReplayOptions{Resources: contract.StepResources(review, in), Done: done})
	if vr.Verification.PreGate.Passed || vr.Executed || vr.Error != "pre-gate blocked: resource plan missing" {
		t.Errorf("replay of review without the plan: %+v", vr)
	}
}

// checks is what a gate's checks said, without timings.
func checks(vr *contract.VerifiedResult) []contract.ValidationResult {
	return append(slices.Clone(vr.Verification.PreGate.Results), vr.Verification.PostGate.Results...)
}
