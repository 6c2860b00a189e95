package contract

import (
	"context"
	"fmt"
)

// PreGate decides whether the step may run:
//
//   - every step it depends on has succeeded (in.Done holds it); when
//     in.Done is nil the contract is run as a single step and dependencies
//     are not checked;
//   - every resource it consumes is in in.Resources and, when the
//     resource's definition has a schema, valid against it;
//   - the contract's validators that cover a consumed resource's type
//     pass on it.
//
// Each condition is a result ("dependency", "consumes", "validator:NAME");
// each failed one is named in BlockedBy ("dependency build not done",
// "resource spec missing", "resource spec invalid: …"). Strictness does
// not soften a pre-gate: any failed condition blocks the step.
func (s *CompiledStep) PreGate(ctx context.Context, in *Input) GateResult {
	in = in.withMemo()
	g := GateResult{Passed: true, Results: []ValidationResult{}}
	block := func(r ValidationResult, why string) {
		g.Results = append(g.Results, r)
		if !r.Passed {
			g.Passed = false
			g.BlockedBy = append(g.BlockedBy, why)
		}
	}
	if in.Done != nil {
		for _, dep := range s.step.DependsOn {
			r := ValidationResult{Check: "dependency", Target: dep, Type: Assert,
				Message: fmt.Sprintf("step %s has succeeded", dep), Passed: in.Done[dep]}
			if !r.Passed {
				r.Reason = fmt.Sprintf("step %s has not succeeded", dep)
			}
			block(r, fmt.Sprintf("dependency %s not done", dep))
		}
	}
	for _, cr := range s.consumes {
		id := cr.def.ID
		r := ValidationResult{Check: "consumes", Target: "resource:" + id, Type: Assert,
			Message: fmt.Sprintf("resource %s is available", id), Passed: true}
		why := ""
		if _, ok := in.Resources[id]; !ok {
			r.Passed = false
			r.Reason = fmt.Sprintf("no step has provided resource %s", id)
			why = fmt.Sprintf("resource %s missing", id)
			if in.Task != nil {
				if m := MissingReason(in.Task.Envelope.Input, id); m != "" {
					r.Reason += ": " + m
					why += ": " + m
				}
			}
		} else if cr.schema != nil {
			r.Message = fmt.Sprintf("resource %s is available and matches its schema", id)
			t := resourceTarget(id)
			var v Verdict
			if _, doc, bad := t.getJSON(in); bad != nil {
				v = *bad
			} else {
				v = schemaVerdict(cr.schema, doc, "")
			}
			if !v.Passed {
				r.Passed, r.Reason, r.Path = false, v.Reason, v.Path
				why = fmt.Sprintf("resource %s invalid: %s", id, v.Reason)
			}
		}
		block(r, why)
	}
	for _, bv := range s.preValidators {
		if _, ok := in.Resources[bv.resource]; !ok {
			continue // already blocked as missing
		}
		r := bv.run(ctx, in)
		block(r, fmt.Sprintf("validator %s on resource %s: %s", bv.name, bv.resource, r.Reason))
	}
	return g
}
