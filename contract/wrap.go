package contract

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// Errors of Wrap, for errors.Is. The VerifiedResult Wrap returns with
// them says the same in its Error field.
var (
	// ErrStepNotFound: the contract has no step of that id.
	ErrStepNotFound = errors.New("step not found")
	// ErrBlocked: the pre-gate failed, so the function was not called.
	ErrBlocked = errors.New("pre-gate blocked the step")
	// ErrViolated: the post-gate failed on what the function produced.
	ErrViolated = errors.New("post-gate failed")
)

// Wrap verifies one call of execute against step stepID of c, the seed's
// middleware pattern for Go library users:
//
//  1. the step's pre-gate runs on in (its Task, WorkDir, Resources and
//     Done; in may be nil); when it fails, execute is not called, the
//     result has Executed false and the pre-gate's BlockedBy, and the
//     error wraps ErrBlocked;
//  2. execute runs, timed; it returns its own value and the
//     *task.Result the post-gate looks at (its artifacts and message;
//     nil is an empty result). When it returns an error, the post-gate
//     does not run and Wrap returns that error as is;
//  3. the resources the step creates are read from that result and the
//     working directory (ExtractResources), given to the post-gate, and
//     listed in ResourcesCreated;
//  4. the post-gate runs the step's assertions; when it fails under the
//     contract's strictness, the error wraps ErrViolated and names the
//     failed assertions (execute's value is still returned).
//
// The VerifiedResult is the one the execution pipeline records, with
// timings in milliseconds. A step the contract does not have gives a
// result with Executed false and the error "step X not found in contract
// C" (wrapping ErrStepNotFound). Wrap does not apply the step's
// onViolation: the caller decides what a violation does. in is not
// modified.
func Wrap[T any](ctx context.Context, c *Compiled, stepID string, in *Input, execute func(ctx context.Context) (T, *task.Result, error)) (T, *VerifiedResult, error) {
	var zero T
	start := time.Now()
	vr := &VerifiedResult{Step: stepID}
	vr.Verification = Verification{
		PreGate:          GateResult{Results: []ValidationResult{}},
		PostGate:         GateResult{Results: []ValidationResult{}},
		ResourcesCreated: []ContractResource{},
	}
	if c == nil || c.contract == nil {
		vr.Error = fmt.Sprintf("step %s not found: no contract", stepID)
		return zero, vr, fmt.Errorf("contract.Wrap: %w: %s (no contract)", ErrStepNotFound, stepID)
	}
	vr.Contract = c.contract.ID
	s, ok := c.Step(stepID)
	if !ok {
		vr.Error = fmt.Sprintf("step %s not found in contract %s", stepID, vr.Contract)
		vr.Verification.PreGate.BlockedBy = []string{"step not found"}
		return zero, vr, fmt.Errorf("contract.Wrap: %w: step %s not found in contract %s", ErrStepNotFound, stepID, vr.Contract)
	}

	var gin Input
	if in != nil {
		gin = Input{Task: in.Task, WorkDir: in.WorkDir, Resources: in.Resources, Done: in.Done}
	}
	v := &vr.Verification
	v.PreGate = s.PreGate(ctx, &gin)
	preEnd := time.Now()
	v.Timing.PreGateMs = wrapMs(preEnd.Sub(start))
	if !v.PreGate.Passed {
		v.Timing.TotalMs = v.Timing.PreGateMs
		why := strings.Join(v.PreGate.BlockedBy, "; ")
		vr.Error = "pre-gate blocked: " + why
		return zero, vr, fmt.Errorf("contract %s step %s: %w: %s", vr.Contract, stepID, ErrBlocked, why)
	}

	out, res, err := execute(ctx)
	execEnd := time.Now()
	exec := execEnd.Sub(preEnd)
	vr.Executed = true
	v.Timing.ExecutionMs = wrapMs(exec)
	if err != nil {
		v.Timing.TotalMs = wrapMs(execEnd.Sub(start))
		vr.Error = err.Error()
		return out, vr, err
	}
	if res == nil {
		res = &task.Result{}
	}

	gin.Result, gin.Duration = res, exec
	found, created := ExtractResources(s, &gin)
	if len(found) > 0 {
		merged := make(map[string]Resource, len(gin.Resources)+len(found))
		maps.Copy(merged, gin.Resources)
		maps.Copy(merged, found)
		gin.Resources = merged
	}
	if created != nil {
		v.ResourcesCreated = created
	}
	v.PostGate = s.PostGate(ctx, &gin)
	end := time.Now()
	v.Timing.PostGateMs = wrapMs(end.Sub(execEnd))
	v.Timing.TotalMs = wrapMs(end.Sub(start))
	v.Passed = v.PostGate.Passed
	if !v.Passed {
		why := wrapFailed(v.PostGate.FailedAssertions, v.PostGate.Results)
		vr.Error = "post-gate failed: " + why
		return out, vr, fmt.Errorf("contract %s step %s: %w: %s", vr.Contract, stepID, ErrViolated, why)
	}
	return out, vr, nil
}

func wrapMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// wrapFailed says which assertions failed the gate, with each check's
// reason.
func wrapFailed(failed []ContractAssertion, results []ValidationResult) string {
	reasons := map[string]string{}
	for _, r := range results {
		if !r.Passed {
			if _, ok := reasons[r.Message]; !ok {
				reasons[r.Message] = r.Reason
			}
		}
	}
	parts := make([]string, 0, len(failed))
	for _, a := range failed {
		s := a.Message
		if s == "" {
			s = a.Check.Type + " check"
		}
		if r := reasons[a.Message]; r != "" && !strings.Contains(s, r) {
			s += " (" + r + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
