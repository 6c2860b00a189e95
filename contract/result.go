package contract

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
