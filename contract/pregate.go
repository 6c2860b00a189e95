package contract

import (
	"context"
	"errors"
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
//     pass on it;
//   - for a bridge step (BridgeKey), the consumed resources, mapped to
//     the arguments of its MCP tool (ToolArguments), match the tool's
//     input schema as its server lists it (in.Tool; CheckArguments), so
//     that arguments the tool would refuse never reach it.
//
// Each condition is a result ("dependency", "consumes", "validator:NAME",
// "bridge");
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
	if s.Bridged() {
		if r, ok := s.bridgeCheck(in); ok {
			block(r, "bridge refused: "+r.Reason)
		}
	}
	return g
}

// bridgeCheck is a bridge step's condition "bridge": the resources it
// consumes, mapped to its tool's arguments (ToolArguments), match the
// tool's input schema (CheckArguments). It is not run (false) when a
// consumed resource is missing: that already blocked the step.
func (s *CompiledStep) bridgeCheck(in *Input) (ValidationResult, bool) {
	r := ValidationResult{Check: "bridge", Target: "tool", Type: Assert, Passed: true}
	if in.Tool == nil {
		r.Message = "the bridged arguments match the tool's input schema"
		r.Passed, r.Reason = false, "the tool's input schema was not read from its MCP server"
		return r, true
	}
	r.Target = "tool:" + in.Tool.Name
	r.Message = fmt.Sprintf("the bridged arguments match the input schema of tool %s", in.Tool.Name)
	rs := make([]Resource, 0, len(s.step.Consumes))
	for _, id := range s.step.Consumes {
		res, ok := in.Resources[id]
		if !ok {
			return r, false
		}
		res.ID = cmpOr(res.ID, id)
		rs = append(rs, res)
	}
	args, err := ToolArguments(rs, in.Tool.InputSchema)
	if err == nil {
		err = CheckArguments(in.Tool.Name, args, in.Tool.InputSchema)
	}
	if err != nil {
		r.Passed, r.Reason = false, err.Error()
		var ae *ArgumentsError
		if errors.As(err, &ae) {
			r.Path = ae.Path
		}
	}
	return r, true
}
