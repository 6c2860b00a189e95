package task

import (
	"encoding/json"
	"time"
)

// EvidenceKind says what a piece of evidence is.
type EvidenceKind string

// Evidence kinds.
const (
	// EvidenceDecision is a decision taken before the agent ran or instead
	// of running it: the execute-time policy decision, a dry run.
	EvidenceDecision EvidenceKind = "decision"
	// EvidenceVerdict is a check's judgement of the attempt's input or
	// output: a contract gate's result.
	EvidenceVerdict EvidenceKind = "verdict"
	// EvidenceTiming is a measured duration.
	EvidenceTiming EvidenceKind = "timing"
	// EvidenceOutput is an attempt's output as a check judged it, kept
	// when it is not stored as the task's result (a rejected answer, an
	// agent's error), so that the judgement can be checked again offline.
	EvidenceOutput EvidenceKind = "output"
)

// Evidence is what one step of the execution pipeline recorded about an
// attempt. The Coordinator stores it in the execution record of the
// transition that ends the attempt, in the same transaction, so a record
// never lacks the evidence that led to it; the transition's audit entry
// covers it.
type Evidence struct {
	// Step names the pipeline step that added it ("policy", "dry_run", a
	// contract gate's name); Attempt.AddEvidence fills it in.
	Step string       `json:"step"`
	Kind EvidenceKind `json:"kind"`
	// Outcome is the decision or verdict in one word: allow, deny,
	// simulated, pass, fail, skip.
	Outcome string `json:"outcome,omitempty"`
	// Message says why, for people.
	Message string `json:"message,omitempty"`
	// Duration is how long the step took, when it measured that.
	Duration time.Duration `json:"durationNs,omitempty"`
	// Data holds the step's structured detail (JSON).
	Data json.RawMessage `json:"data,omitempty"`
}
