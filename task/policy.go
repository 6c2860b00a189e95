package task

import (
	"context"
	"slices"
)

// Stage says when a policy decision is taken.
type Stage string

// Policy stages: at submission, and again just before execution.
const (
	StageSubmit  Stage = "submit"
	StageExecute Stage = "execute"
)

// PolicyInput is what a PolicyEngine decides on.
type PolicyInput struct {
	Stage     Stage
	Envelope  *Envelope
	Agent     string
	Sensitive bool
}

// Decision is a policy engine's answer.
type Decision struct {
	Allow bool `json:"allow"`
	// Code explains a refusal (CodePolicyDenied unless the engine says more).
	Code   Code   `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Version identifies the policy the decision was taken under; it is
	// recorded on the execution record.
	Version string `json:"version,omitempty"`
}

// PolicyEngine decides whether a sensitive action may run. It is consulted at
// submit and again just before execution, so a revoked approval stops a task
// that is still queued.
type PolicyEngine interface {
	Decide(ctx context.Context, in PolicyInput) (Decision, error)
}

// PolicyCoverage is implemented by a PolicyEngine that can tell whether it
// could ever allow an action (policy.Static: an approval names it). The
// Coordinator asks it about sensitive actions in dry run: one that no
// policy covers, or any when there is no engine, runs as a simulation
// without an approval (nothing could approve it, and nothing runs).
// Engines that do not implement it are taken to cover every action.
type PolicyCoverage interface {
	Covers(action string) bool
}

// Covers reports whether engine could allow action: no engine covers
// nothing, an engine that cannot tell (no PolicyCoverage) covers every
// action.
func Covers(engine PolicyEngine, action string) bool {
	if engine == nil {
		return false
	}
	if pc, ok := engine.(PolicyCoverage); ok {
		return pc.Covers(action)
	}
	return true
}

// NeedsApproval reports whether a task of spec must cite policyRef and
// approvalRef: a sensitive action must, unless it runs as a dry run that
// engine does not cover (a simulation, which nothing could approve). The
// Coordinator admits tasks by this rule; cards state it.
func NeedsApproval(spec *AgentSpec, engine PolicyEngine) bool {
	return spec.Sensitive && !(spec.DryRun && !Covers(engine, spec.Action))
}

// PolicyFunc adapts a function to PolicyEngine.
type PolicyFunc func(ctx context.Context, in PolicyInput) (Decision, error)

// Decide implements PolicyEngine.
func (f PolicyFunc) Decide(ctx context.Context, in PolicyInput) (Decision, error) { return f(ctx, in) }

// Permissions says which actors may call which actions. A nil Permissions
// allows every actor every action.
type Permissions map[string][]string

// Allows reports whether actor may call action ("*" grants every action).
func (p Permissions) Allows(actor, action string) bool {
	if p == nil {
		return true
	}
	acts, ok := p[actor]
	if !ok {
		return false
	}
	return slices.Contains(acts, "*") || slices.Contains(acts, action)
}
