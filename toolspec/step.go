package toolspec

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// StepName names the execution-time check in the pipeline and in evidence.
const StepName = "toolspec"

// Checker checks a ToolSpec against adapter contracts and returns the
// assertions it breaks (none: it passes). *Registry is one.
type Checker interface {
	Check(ts ToolSpec) []Violation
}

// Source gives the Checker in force when an attempt starts: a registry
// built from catalogue files that may have been reloaded since the last
// attempt (Reloader), or the live tool list of an MCP server.
type Source interface {
	Current(ctx context.Context) (Checker, error)
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(ts ToolSpec) []Violation

// Check calls f.
func (f CheckerFunc) Check(ts ToolSpec) []Violation { return f(ts) }

// Static is a Source whose Checker never changes.
type Static struct{ Checker Checker }

// Current returns s.Checker.
func (s Static) Current(context.Context) (Checker, error) { return s.Checker, nil }

// Step returns the pipeline step named "toolspec" that re-checks ts
// against src's current Checker before every attempt (assertion 6: the
// catalogue may have been reloaded since the configuration was checked).
// A passing check adds decision evidence with outcome "pass" and calls
// next. A violation fails the attempt permanently with code
// task.CodeToolspecViolation and adds decision evidence with outcome
// "violation" naming the assertion, the ToolSpec, the field and the fix:
// the seed's ERROR record, committed with the transition that ends the
// attempt, so it is in the execution record and that transition's audit
// entry. An error from src marked Unavailable (an MCP server that does not
// answer) is returned as it is, retryable. Any other error from src (a catalogue file that no longer loads) fails
// the attempt the same way, as a violation of assertion 6: a mapping that
// cannot be re-validated does not run.
func Step(ts ToolSpec, src Source) task.Middleware {
	return task.MiddlewareFunc(StepName, func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		start := time.Now()
		c, err := src.Current(ctx)
		var vs []Violation
		if err != nil && isUnavailable(err) {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceDecision, Outcome: "error",
				Message: fmt.Sprintf("toolspec %s: %v", ts.ToolID, err), Duration: time.Since(start)})
			return nil, err
		}
		if err != nil {
			vs = []Violation{{Assertion: Revalidated, ToolID: ts.ToolID, AdapterID: ts.AdapterID,
				Msg: fmt.Sprintf("the adapter contracts could not be re-read: %v", err), Fix: "repair the catalogue file (pactum config check names the problem)"}}
		} else {
			vs = c.Check(ts)
		}
		d := time.Since(start)
		if len(vs) == 0 {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceDecision, Outcome: "pass",
				Message: fmt.Sprintf("toolspec %s: assertions hold", ts.ToolID), Duration: d})
			return next(ctx)
		}
		msg := ViolationsMessage(vs)
		data, _ := json.Marshal(evidenceData{ToolID: ts.ToolID, AdapterID: ts.AdapterID, Operation: ts.AdapterOperation, Violations: vs})
		a.AddEvidence(task.Evidence{Kind: task.EvidenceDecision, Outcome: "violation", Message: msg, Duration: d, Data: data})
		return nil, task.Permanent(&task.Error{Code: task.CodeToolspecViolation, Message: msg})
	})
}

// evidenceData is the Data of the step's evidence.
type evidenceData struct {
	ToolID     string      `json:"tool_id"`
	AdapterID  string      `json:"adapter_id,omitempty"`
	Operation  string      `json:"adapter_operation,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
}

// ViolationsMessage joins the messages of vs (Violation.Error: the
// assertion, the ToolSpec, the field, what is wrong, the fix) with "; ".
func ViolationsMessage(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Error()
	}
	return strings.Join(parts, "; ")
}
