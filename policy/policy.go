// Package policy holds pactum's built-in policy engine: a static set of
// approvals from configuration, consulted for sensitive actions at submit
// and again just before execution.
package policy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pactum/pactum/task"
)

// Approval grants sensitive actions to callers that cite it.
type Approval struct {
	ID string
	// Actions the approval covers ("*" for all).
	Actions []string
	// Actors who may cite it; empty means any actor.
	Actors  []string
	Expires time.Time
	Revoked bool
}

// Static decides from a fixed policy version and list of approvals. Replace
// swaps them atomically (a reload), so a task queued under an approval that
// was revoked meanwhile is stopped before it runs.
type Static struct {
	mu        sync.RWMutex
	version   string
	approvals map[string]Approval
	now       func() time.Time
}

var _ task.PolicyEngine = (*Static)(nil)

// NewStatic returns an engine for policy version with the given approvals.
func NewStatic(version string, approvals []Approval) *Static {
	s := &Static{now: time.Now}
	s.Replace(version, approvals)
	return s
}

// Replace installs a new policy version and approval set.
func (s *Static) Replace(version string, approvals []Approval) {
	m := make(map[string]Approval, len(approvals))
	for _, a := range approvals {
		m[a.ID] = a
	}
	s.mu.Lock()
	s.version, s.approvals = version, m
	s.mu.Unlock()
}

var _ task.PolicyCoverage = (*Static)(nil)

// Covers implements task.PolicyCoverage: an approval names action or "*",
// revoked and expired ones included (governance is in place; Decide still
// refuses them).
func (s *Static) Covers(action string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range s.approvals {
		if slices.Contains(a.Actions, action) || slices.Contains(a.Actions, "*") {
			return true
		}
	}
	return false
}

// Decide implements task.PolicyEngine. The envelope's policyRef must name
// the current policy version, and its approvalRef an approval that is
// neither revoked nor expired and covers the action and actor.
func (s *Static) Decide(_ context.Context, in task.PolicyInput) (task.Decision, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	env := in.Envelope
	deny := func(format string, args ...any) (task.Decision, error) {
		return task.Decision{Code: task.CodePolicyDenied, Reason: fmt.Sprintf(format, args...), Version: s.version}, nil
	}
	if env.PolicyRef != s.version {
		return deny("policyRef %q is not the current policy version %q", env.PolicyRef, s.version)
	}
	a, ok := s.approvals[env.ApprovalRef]
	switch {
	case !ok:
		return deny("approval %q is unknown", env.ApprovalRef)
	case a.Revoked:
		return deny("approval %q was revoked", a.ID)
	case !a.Expires.IsZero() && !s.now().Before(a.Expires):
		return deny("approval %q expired at %s", a.ID, a.Expires.UTC().Format(time.RFC3339))
	case !slices.Contains(a.Actions, "*") && !slices.Contains(a.Actions, env.Action):
		return deny("approval %q does not cover action %q", a.ID, env.Action)
	case len(a.Actors) > 0 && !slices.Contains(a.Actors, env.Actor):
		return deny("approval %q does not cover actor %q", a.ID, env.Actor)
	}
	return task.Decision{Allow: true, Reason: fmt.Sprintf("approval %q", a.ID), Version: s.version}, nil
}
