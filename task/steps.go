package task

import (
	"context"
	"encoding/json"
	"fmt"
)

// policyStep is the built-in first step of every pipeline: a sensitive
// action is decided again just before it runs, so an approval revoked
// while the task was queued stops it. The decision is evidence and an
// audit entry of the transition that ends the attempt.
type policyStep struct{ c *Coordinator }

func (policyStep) Name() string { return "policy" }

func (s policyStep) Handle(ctx context.Context, a *Attempt, next Next) (*Result, error) {
	if !a.Agent.Sensitive {
		return next(ctx)
	}
	d, err := s.c.decide(ctx, StageExecute, a.Agent, &a.Task.Envelope)
	if err != nil {
		return nil, err
	}
	a.PolicyVersion = d.Version
	a.mu.Lock()
	a.audit = append(a.audit, s.c.decisionAudit(&a.Task.Envelope, StageExecute, d))
	a.mu.Unlock()
	detail := map[string]any{"stage": StageExecute, "version": d.Version}
	if d.Code != "" {
		detail["code"] = d.Code
	}
	data, _ := json.Marshal(detail)
	e := Evidence{Kind: EvidenceDecision, Outcome: "allow", Message: d.Reason, Data: data}
	if !d.Allow {
		e.Outcome = "deny"
		a.AddEvidence(e)
		return nil, Permanent(&Error{Code: d.Code, Message: d.Reason})
	}
	a.AddEvidence(e)
	return next(ctx)
}

// dryRunStep is the built-in second step: an agent in dry run is not
// called; the attempt succeeds with an artifact saying what would have
// run.
type dryRunStep struct{}

func (dryRunStep) Name() string { return "dry_run" }

func (dryRunStep) Handle(ctx context.Context, a *Attempt, next Next) (*Result, error) {
	spec := a.Agent
	if !spec.DryRun {
		return next(ctx)
	}
	data, _ := json.Marshal(map[string]any{"dryRun": true, "agent": spec.Name, "action": spec.Action, "policyVersion": a.PolicyVersion})
	note := fmt.Sprintf("simulation (dry run): action %q was not performed; agent %q was not called", spec.Action, spec.Name)
	a.AddEvidence(Evidence{Kind: EvidenceDecision, Outcome: "simulated", Message: note})
	return &Result{
		Reason: "simulation (dry run): agent not called",
		Artifacts: []Artifact{{ID: "dry-run", Name: "dry-run", Description: "simulation: the agent was not called",
			Parts: []Part{TextPart(note), DataPart(data)}}},
	}, nil
}
