package contract

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pactum/pactum/task"
)

// Recorded is the last attempt of a step's task as its execution record
// holds it: what Replay checks offline (`pactum verify`).
type Recorded struct {
	// Task is the task as its last attempt's gate saw it: the recorded
	// task, in progress, at that attempt's number (what a cel check's
	// task.state and task.attempt read).
	Task *task.Task
	// Ran says an attempt of the task started (it has an in_progress
	// record); false for a task that never ran.
	Ran bool
	// Ended says that attempt ended (a record follows it).
	Ended bool
	// Result is the attempt's output as its gate judged it: the answer
	// the gate kept with its verdict (JudgedOutput: an answer it
	// rejected), else the task's artifacts and status message when it
	// succeeded, else nothing. Nil when it never ran.
	Result *task.Result
	// AgentError is the error of an agent that failed on that attempt, as
	// its gate recorded it: the post-gate did not run on it.
	AgentError string
	// Duration is how long the agent ran on that attempt: the execution
	// time its gate recorded, else the time from its in_progress record to
	// the record that ended it.
	Duration time.Duration
	// Tool is, for a bridge step, the MCP tool its gate checked the
	// bridged arguments against, as its verified result recorded it.
	Tool *BridgeTool
}

// Output returns what a task's agent delivered as it is stored: its
// artifacts and its status message, the result a gate checked.
func Output(t *task.Task) *task.Result {
	return &task.Result{Artifacts: t.Artifacts, Message: t.StatusMessage}
}

// FromRecord reads the last attempt of task t from its execution record
// recs (oldest first).
func FromRecord(t *task.Task, recs []task.Record) *Recorded {
	r := &Recorded{Task: t}
	start := -1
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].To == task.StateInProgress {
			start = i
			break
		}
	}
	if start < 0 {
		return r
	}
	at := *t
	at.State, at.Attempt = task.StateInProgress, recs[start].Attempt
	r.Task, r.Ran = &at, true
	r.Result = &task.Result{}
	if t.State == task.StateSucceeded {
		r.Result = Output(t)
	}
	if start+1 < len(recs) {
		end := recs[start+1]
		if out, ok := judgedOutput(end); ok {
			r.Result = &task.Result{Artifacts: out.Artifacts, Message: out.Message}
			r.AgentError = out.AgentError
		}
		r.Ended = true
		r.Duration = max(end.At.Sub(recs[start].At), 0)
		if d, ok := gateExecution(end); ok {
			r.Duration = d
		}
		r.Tool = gateTool(end)
	}
	return r
}

// gateTool returns the bridged tool a gate recorded on rec, if any.
func gateTool(rec task.Record) *BridgeTool {
	if vr, err := NewestIn(rec.Evidence); err == nil && vr != nil {
		return vr.Tool
	}
	return nil
}

// judgedOutput returns the output a gate kept with its verdict on rec.
func judgedOutput(rec task.Record) (*JudgedOutput, bool) {
	for _, e := range rec.Evidence {
		if e.Step != GateStep || e.Kind != task.EvidenceOutput || len(e.Data) == 0 {
			continue
		}
		var out JudgedOutput
		if json.Unmarshal(e.Data, &out) != nil {
			return nil, false
		}
		return &out, true
	}
	return nil, false
}

// gateExecution returns the execution time a gate recorded on rec.
func gateExecution(rec task.Record) (time.Duration, bool) {
	for _, e := range rec.Evidence {
		if e.Step != GateStep || e.Kind != task.EvidenceVerdict || len(e.Data) == 0 {
			continue
		}
		var vr VerifiedResult
		if json.Unmarshal(e.Data, &vr) != nil || !vr.Executed || vr.Verification.Timing.ExecutionMs < 0 {
			return 0, false
		}
		return time.Duration(vr.Verification.Timing.ExecutionMs * float64(time.Millisecond)), true
	}
	return 0, false
}

// ReplayOptions say what a replayed step had available, as GateOptions
// do for a live gate.
type ReplayOptions struct {
	// WorkDir is where file resources are looked for.
	WorkDir string
	// Resources are the resources handed to the step: for a step of a
	// run, StepResources of its child's envelope input, as the live gate
	// reads them; nil means the step ran on its own: the file resources it
	// consumes are read from WorkDir.
	Resources map[string]Resource
	// Done says which steps had succeeded: for a step of a run, DoneSteps
	// of the run's children, as the live gate reads them; nil means the
	// step ran on its own, without dependencies to check.
	Done map[string]bool
	// Now is the clock the gates' timings are read from (default
	// time.Now).
	Now func() time.Time
}

// Replay checks a recorded attempt of step s without running anything:
// the pre-gate on what the step had, then, unless it blocks, the
// post-gate on the recorded output, with the Input built by the same code
// as the live gate's (Middleware), so that a step checked offline is
// checked as it was when it ran. Timing.ExecutionMs is the recorded
// duration; the gates' timings are those of the replay. A step that never
// ran is not executed and not passed, its Error saying so.
func (s *CompiledStep) Replay(ctx context.Context, r *Recorded, o ReplayOptions) *VerifiedResult {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	vr := &VerifiedResult{Contract: s.contractID(), ContractDigest: s.contractDigest(), Step: s.step.ID}
	v := &vr.Verification
	v.ResourcesCreated = []ContractResource{}
	v.PostGate = GateResult{Passed: false, Results: []ValidationResult{}}
	in := s.preGateInput(r.Task, o.WorkDir, o.Resources, o.Resources == nil, o.Done)
	if s.Bridged() {
		in.Tool, vr.Tool = r.Tool, r.Tool
	}
	v.PreGate = s.PreGate(ctx, in)
	preEnd := now()
	v.Timing.PreGateMs = ms(preEnd.Sub(start))
	v.Timing.TotalMs = v.Timing.PreGateMs
	if !v.PreGate.Passed {
		vr.Error = "pre-gate blocked: " + blockedSummary(v.PreGate)
		return vr
	}
	if !r.Ran || r.Result == nil {
		vr.Error = "the step did not run"
		return vr
	}
	vr.Executed = true
	v.Timing.ExecutionMs = ms(r.Duration)
	if r.AgentError != "" {
		// The agent failed: the live gate ran no post-gate, and neither
		// does its replay.
		vr.Error = r.AgentError
		v.Timing.TotalMs = ms(now().Sub(start))
		return vr
	}
	post, list := s.postGate(ctx, in, r.Result, r.Duration)
	end := now()
	v.PostGate, v.Passed = post, post.Passed
	if list != nil {
		v.ResourcesCreated = list
	}
	v.Timing.PostGateMs = ms(end.Sub(preEnd))
	v.Timing.TotalMs = ms(end.Sub(start)) + v.Timing.ExecutionMs
	if !post.Passed && s.step.OnViolation != ViolationContinue {
		// As the live gate: a violation that is let through is no error.
		vr.Error = summary(s.failed(post, true))
	}
	return vr
}
