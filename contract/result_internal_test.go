package contract

import (
	"encoding/json"
	"math"
	"testing"
)

// checkVerifiedJSON compares appendVerifiedResult with json.Marshal: the
// verdict's evidence data, which the audit chain hashes, must not change
// by a byte.
func checkVerifiedJSON(t *testing.T, vr *VerifiedResult) {
	t.Helper()
	got, err := appendVerifiedResult([]byte("x"), vr)
	want, werr := json.Marshal(vr)
	if (err != nil) != (werr != nil) || (err == nil && string(got) != "x"+string(want)) {
		t.Fatalf("appendVerifiedResult = %s, %v\njson.Marshal        = x%s, %v", got, err, want, werr)
	}
}

func TestVerifiedResultJSONIsMarshal(t *testing.T) {
	t.Parallel()
	pass := GateResult{Passed: true, Results: []ValidationResult{
		{Check: "contains", Type: Assert, Message: "echoes the greeting", Passed: true},
		{Check: "regex", Target: "artifact:<r>", Type: Suggest, Message: "starts & ends", Reason: "no \"match\"\n", Path: "/a/0"},
	}}
	for _, vr := range []*VerifiedResult{
		{},
		{Contract: "checked", ContractDigest: "sha256:2cc6", Step: "checked", Executed: true,
			Verification: Verification{Passed: true, PreGate: GateResult{Passed: true, Results: []ValidationResult{}},
				PostGate: pass, ResourcesCreated: []ContractResource{},
				Timing: Timing{PreGateMs: 0.003535, ExecutionMs: 0.018738, PostGateMs: 0.010476, TotalMs: 0.032749}}},
		{Contract: "c\u2028", Step: "é\xff", Error: "pre-gate blocked: <x>",
			Verification: Verification{PreGate: GateResult{BlockedBy: []string{"dependency a", "b&c"}, Results: []ValidationResult{}},
				PostGate: GateResult{Results: []ValidationResult{}},
				Timing:   Timing{PreGateMs: 1e-7, ExecutionMs: 1e21, PostGateMs: -0.5, TotalMs: 123456.789}}},
		{Contract: "c", Step: "s", Executed: true,
			Verification: Verification{PostGate: GateResult{Results: pass.Results, FailedAssertions: []ContractAssertion{
				{Type: Assert, Message: "m", Check: Check{Type: "regex", Pattern: "^<h>", Target: "output"}}}},
				ResourcesCreated: []ContractResource{{ID: "r", Type: ResourceData, Schema: map[string]any{"type": "object"}}}},
			Tool: &BridgeTool{Name: "t", InputSchema: map[string]any{"b": 1, "a": []any{"<"}}}},
		{Verification: Verification{Timing: Timing{TotalMs: math.NaN()}}},
	} {
		checkVerifiedJSON(t, vr)
	}
}

func FuzzVerifiedResultJSON(f *testing.F) {
	f.Add("checked", "sha256:ab", "step", "msg", "reason <&>", "/p", "", 0.003535, 1e-7, true)
	f.Add("\u2028\x00", "", "é\xff", "", "", "", "err", 1e21, -0.0, false)
	f.Fuzz(func(t *testing.T, contract, digest, step, msg, reason, path, errText string, ms1, ms2 float64, passed bool) {
		checkVerifiedJSON(t, &VerifiedResult{Contract: contract, ContractDigest: digest, Step: step, Executed: passed, Error: errText,
			Verification: Verification{Passed: passed,
				PreGate: GateResult{Passed: true, Results: []ValidationResult{}, BlockedBy: []string{reason}},
				PostGate: GateResult{Passed: passed, Results: []ValidationResult{{Check: "contains", Target: path, Type: Assert,
					Message: msg, Passed: passed, Reason: reason, Path: path}}},
				ResourcesCreated: []ContractResource{},
				Timing:           Timing{PreGateMs: ms1, ExecutionMs: ms2, PostGateMs: ms1 * ms2, TotalMs: ms1 + ms2}}})
	})
}
