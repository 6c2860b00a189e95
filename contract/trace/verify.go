package trace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// OtherContractError is Verify's error for a trace recorded under
// another contract than the one it is given.
type OtherContractError struct {
	// Recorded is the contract the trace's gates recorded, Given the one
	// Verify was given.
	Recorded, Given ContractRef
}

func (e *OtherContractError) Error() string {
	return fmt.Sprintf("the trace was recorded under contract %s, not under contract %s", e.Recorded, e.Given)
}

// Options configure Verify.
type Options struct {
	// Step checks only this step of the contract. For a trace of one task
	// it names the step the task ran; without it that is the task's own
	// step (Envelope.Step) when it names one of the contract's, else the
	// contract's only step.
	Step string
	// WorkDir is where file resources are looked for (default: the
	// process's working directory).
	WorkDir string
	// Now is the clock the gates' timings are read from (default
	// time.Now).
	Now func() time.Time
}

// Status is a step's verdict in a Report.
type Status string

// Step verdicts.
const (
	// StatusPassed: the pre-gate and the post-gate passed.
	StatusPassed Status = "passed"
	// StatusFailed: the post-gate failed.
	StatusFailed Status = "failed"
	// StatusBlocked: the pre-gate failed, so the post-gate was not run.
	StatusBlocked Status = "blocked"
	// StatusNotRun: no task of the trace ran the step, or its task never
	// started or has not finished.
	StatusNotRun Status = "not_run"
)

// StepReport is one step's verdict.
type StepReport struct {
	Step   string `json:"step"`
	Status Status `json:"status"`
	// TaskID, Agent and State are those of the task that ran the step, as
	// recorded; empty when no task did.
	TaskID string     `json:"taskId,omitempty"`
	Agent  string     `json:"agent,omitempty"`
	State  task.State `json:"state,omitempty"`
	// Reason says why the step did not pass.
	Reason string `json:"reason,omitempty"`
	// VerifiedResult is the replayed check (nil for a step not run).
	VerifiedResult *contract.VerifiedResult `json:"verifiedResult,omitempty"`
}

// Report is what Verify found.
type Report struct {
	Contract string `json:"contract"`
	// TaskID is the trace's task.
	TaskID string `json:"taskId"`
	// Passed says every step checked passed.
	Passed bool         `json:"passed"`
	Steps  []StepReport `json:"steps"`
}

// Verify checks the recorded trace tr against the contract c without
// running anything, and says for each step whether it passed.
//
// A trace whose task has children running steps of c (a child whose
// Envelope.Step is a step's id) is a multi-step run: each step of c is
// checked on the child that ran it, with what it had before it ran by the
// live gate's own rule (contract.(*CompiledStep).RunGate): its resources
// are contract.StepResources of the child's recorded envelope input (what
// the run handed the agent), the steps done are contract.DoneSteps of the
// trace's children (its siblings). A step no child ran is reported as not
// run. Any other trace is one task running one step (Options.Step),
// checked as a step running on its own.
//
// Each step is checked by contract.(*CompiledStep).Replay on its task's
// last attempt (contract.FromRecord). The error is for a trace that does
// not fit the contract: an unknown Options.Step, or a trace of one task
// for a contract of several steps without a step named.
func Verify(ctx context.Context, c *contract.Compiled, tr *Trace, o Options) (*Report, error) {
	if tr == nil || tr.Task == nil {
		return nil, fmt.Errorf("the trace has no task")
	}
	if err := sameContract(c, tr); err != nil {
		return nil, err
	}
	return verifyNode(ctx, c, &tr.Node, o, false)
}

// sameContract refuses a trace recorded under another contract than c:
// its verdicts would be compared with checks it never had.
func sameContract(c *contract.Compiled, tr *Trace) error {
	given := ContractRef{ID: c.Contract().ID, Digest: c.Digest()}
	refs := recorded(&tr.Node)
	if tr.Contract != nil {
		refs = append([]ContractRef{*tr.Contract}, refs...)
	}
	for _, ref := range refs {
		if (ref.Digest != "" && ref.Digest != given.Digest) || (ref.Digest == "" && ref.ID != given.ID) {
			return &OtherContractError{Recorded: ref, Given: given}
		}
	}
	return nil
}

// verifyNode is Verify on node n, whichever contract its gates recorded.
// handed says a one-task node ran a step with what its input carries: the
// resources labelled in its input (contract.StepResources), as a step of
// a run is handed them, rather than none (a task on its own).
func verifyNode(ctx context.Context, c *contract.Compiled, n *Node, o Options, handed bool) (*Report, error) {
	ct := c.Contract()
	if n == nil || n.Task == nil {
		return nil, fmt.Errorf("the trace has no task")
	}
	if o.Step != "" {
		if _, ok := c.Step(o.Step); !ok {
			return nil, fmt.Errorf("contract %s has no step %q (its steps: %s)", ct.ID, o.Step, stepIDs(ct))
		}
	}
	rep := &Report{Contract: ct.ID, TaskID: n.Task.ID, Passed: true, Steps: []StepReport{}}
	add := func(sr StepReport) {
		rep.Steps = append(rep.Steps, sr)
		if sr.Status != StatusPassed {
			rep.Passed = false
		}
	}

	byStep := map[string]*Node{}
	var siblings []*task.Task
	for _, k := range n.Children {
		if k == nil || k.Task == nil {
			continue
		}
		siblings = append(siblings, k.Task)
		if _, ok := c.Step(k.Task.Envelope.Step); ok {
			byStep[k.Task.Envelope.Step] = k
		}
	}
	if len(byStep) > 0 {
		done := contract.DoneSteps(siblings)
		for _, st := range ct.Steps {
			if o.Step != "" && st.ID != o.Step {
				continue
			}
			k, ok := byStep[st.ID]
			if !ok {
				add(StepReport{Step: st.ID, Status: StatusNotRun, Reason: fmt.Sprintf("no task of the trace ran step %s", st.ID)})
				continue
			}
			s, _ := c.Step(st.ID)
			resources := contract.StepResources(s, k.Task.Envelope.Input)
			add(check(ctx, s, k, contract.ReplayOptions{WorkDir: o.WorkDir, Resources: resources, Done: done, Now: o.Now}))
		}
		return rep, nil
	}

	id := o.Step
	if id == "" {
		if _, ok := c.Step(n.Task.Envelope.Step); ok {
			id = n.Task.Envelope.Step
		} else if len(ct.Steps) == 1 {
			id = ct.Steps[0].ID
		} else {
			return nil, fmt.Errorf("the trace is one task (%s) and contract %s has %d steps (%s): name the step it ran with --step", n.Task.ID, ct.ID, len(ct.Steps), stepIDs(ct))
		}
	}
	s, _ := c.Step(id)
	ro := contract.ReplayOptions{WorkDir: o.WorkDir, Now: o.Now}
	if handed {
		if rs := contract.StepResources(s, n.Task.Envelope.Input); len(rs) > 0 {
			ro.Resources = rs
		}
	}
	add(check(ctx, s, n, ro))
	return rep, nil
}

// check replays the last attempt of n's task as step s.
func check(ctx context.Context, s *contract.CompiledStep, n *Node, ro contract.ReplayOptions) StepReport {
	t := n.Task
	sr := StepReport{Step: s.Step().ID, TaskID: t.ID, Agent: t.Agent, State: t.State}
	r := contract.FromRecord(t, n.Timeline)
	switch {
	case !r.Ran:
		sr.Status, sr.Reason = StatusNotRun, fmt.Sprintf("task %s never ran (it is %s)", t.ID, t.State)
		return sr
	case !t.State.Terminal():
		sr.Status, sr.Reason = StatusNotRun, fmt.Sprintf("task %s is %s: the step has not finished", t.ID, t.State)
		return sr
	}
	vr := s.Replay(ctx, r, ro)
	sr.VerifiedResult = vr
	sr.Status = statusOf(vr)
	sr.Reason = vr.Error
	if sr.Status != StatusPassed && t.State != task.StateSucceeded {
		why := string(t.State)
		if t.ErrorCode != "" {
			why += " (" + string(t.ErrorCode) + ")"
		}
		if sr.Reason != "" {
			sr.Reason = "task " + why + "; " + sr.Reason
		} else {
			sr.Reason = "task " + why
		}
	}
	return sr
}

func stepIDs(c *contract.AgentContract) string {
	ids := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		ids[i] = s.ID
	}
	return strings.Join(ids, ", ")
}

// statusOf is the verdict of a verified result: blocked by its pre-gate,
// passed, or failed (its post-gate, or its agent).
func statusOf(vr *contract.VerifiedResult) Status {
	switch {
	case !vr.Verification.PreGate.Passed:
		return StatusBlocked
	case vr.Verification.Passed:
		return StatusPassed
	}
	return StatusFailed
}
