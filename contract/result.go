package contract

import (
	"strconv"

	"github.com/pactum/pactum/internal/jsonenc"
)

// ValidationResult is the outcome of one assertion (or one pre-gate
// condition) on one attempt.
type ValidationResult struct {
	// Check is the check's type ("schema_match", …; "dependency",
	// "consumes" and "validator:NAME" in a pre-gate).
	Check  string `json:"check"`
	Target string `json:"target,omitempty"`
	// Type is the assertion's weight (assert or suggest).
	Type AssertionType `json:"type"`
	// Message is the assertion's message.
	Message string `json:"message"`
	Passed  bool   `json:"passed"`
	// Reason says why it failed.
	Reason string `json:"reason,omitempty"`
	// Path is where in the target it failed.
	Path string `json:"path,omitempty"`
}

// GateResult is what a pre- or post-gate found.
type GateResult struct {
	Passed  bool               `json:"passed"`
	Results []ValidationResult `json:"results"`
	// BlockedBy (pre-gate) names what kept the step from running.
	BlockedBy []string `json:"blockedBy,omitempty"`
	// FailedAssertions (post-gate) are the assertions that failed.
	FailedAssertions []ContractAssertion `json:"failedAssertions,omitempty"`
}

// Timing is how long each part of a checked attempt took, in milliseconds.
type Timing struct {
	PreGateMs   float64 `json:"preGateMs"`
	ExecutionMs float64 `json:"executionMs"`
	PostGateMs  float64 `json:"postGateMs"`
	TotalMs     float64 `json:"totalMs"`
}

// Verification is a checked attempt's verdict.
type Verification struct {
	Passed           bool               `json:"passed"`
	PreGate          GateResult         `json:"preGate"`
	PostGate         GateResult         `json:"postGate"`
	ResourcesCreated []ContractResource `json:"resourcesCreated"`
	Timing           Timing             `json:"timing"`
}

// VerifiedResult is what pactum records for every checked attempt, as the
// seed defines it (without the result itself, which is the task's
// artifacts): whether the agent ran, the gates' verdicts, what it created
// and how long each part took.
type VerifiedResult struct {
	// Contract and Step name what was checked; ContractDigest is the
	// digest of the contract's canonical form (Compiled.Digest).
	Contract       string       `json:"contract"`
	ContractDigest string       `json:"contractDigest,omitempty"`
	Step           string       `json:"step"`
	Executed       bool         `json:"executed"`
	Verification   Verification `json:"verification"`
	// Error says why the attempt failed, when it did.
	Error string `json:"error,omitempty"`
	// Tool is, for a bridge step, the MCP tool whose input schema the
	// pre-gate checked the bridged arguments against, as its server
	// listed it when the step ran.
	Tool *BridgeTool `json:"tool,omitempty"`
}

// appendVerifiedResult appends json.Marshal(vr), byte for byte (the
// verdict's evidence data, which the audit chain hashes and every
// checked answer carries): the common shape written out, the rarer
// members (failed assertions, created resources, a bridged tool) and
// floats in exponent form through encoding/json. An error is one
// json.Marshal would report; the caller then runs it for its error.
func appendVerifiedResult(b []byte, vr *VerifiedResult) ([]byte, error) {
	b = append(b, `{"contract":`...)
	b = jsonenc.String(b, vr.Contract)
	if vr.ContractDigest != "" {
		b = append(b, `,"contractDigest":`...)
		b = jsonenc.String(b, vr.ContractDigest)
	}
	b = append(b, `,"step":`...)
	b = jsonenc.String(b, vr.Step)
	b = append(b, `,"executed":`...)
	b = strconv.AppendBool(b, vr.Executed)
	v := &vr.Verification
	b = append(b, `,"verification":{"passed":`...)
	b = strconv.AppendBool(b, v.Passed)
	var err error
	b = append(b, `,"preGate":`...)
	if b, err = appendGateResult(b, &v.PreGate); err != nil {
		return nil, err
	}
	b = append(b, `,"postGate":`...)
	if b, err = appendGateResult(b, &v.PostGate); err != nil {
		return nil, err
	}
	b = append(b, `,"resourcesCreated":`...)
	switch {
	case v.ResourcesCreated == nil:
		b = append(b, "null"...)
	case len(v.ResourcesCreated) == 0:
		b = append(b, "[]"...)
	default:
		if b, err = jsonenc.Marshal(b, &v.ResourcesCreated); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"timing":`...)
	for _, f := range [...]struct {
		key string
		ms  float64
	}{{`{"preGateMs":`, v.Timing.PreGateMs}, {`,"executionMs":`, v.Timing.ExecutionMs},
		{`,"postGateMs":`, v.Timing.PostGateMs}, {`,"totalMs":`, v.Timing.TotalMs}} {
		b = append(b, f.key...)
		if b, err = jsonenc.Float64(b, f.ms); err != nil {
			return nil, err
		}
	}
	b = append(b, "}}"...)
	if vr.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonenc.String(b, vr.Error)
	}
	if vr.Tool != nil {
		b = append(b, `,"tool":`...)
		if b, err = jsonenc.Marshal(b, vr.Tool); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendGateResult appends json.Marshal(g) (appendVerifiedResult).
func appendGateResult(b []byte, g *GateResult) ([]byte, error) {
	b = append(b, `{"passed":`...)
	b = strconv.AppendBool(b, g.Passed)
	b = append(b, `,"results":`...)
	if g.Results == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range g.Results {
			r := &g.Results[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"check":`...)
			b = jsonenc.String(b, r.Check)
			if r.Target != "" {
				b = append(b, `,"target":`...)
				b = jsonenc.String(b, r.Target)
			}
			b = append(b, `,"type":`...)
			b = jsonenc.String(b, string(r.Type))
			b = append(b, `,"message":`...)
			b = jsonenc.String(b, r.Message)
			b = append(b, `,"passed":`...)
			b = strconv.AppendBool(b, r.Passed)
			if r.Reason != "" {
				b = append(b, `,"reason":`...)
				b = jsonenc.String(b, r.Reason)
			}
			if r.Path != "" {
				b = append(b, `,"path":`...)
				b = jsonenc.String(b, r.Path)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(g.BlockedBy) > 0 {
		b = append(b, `,"blockedBy":`...)
		b = jsonenc.Strings(b, g.BlockedBy)
	}
	if len(g.FailedAssertions) > 0 {
		b = append(b, `,"failedAssertions":`...)
		var err error
		if b, err = jsonenc.Marshal(b, &g.FailedAssertions); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
