package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Limits on envelope fields, enforced at submit.
const (
	maxFieldLen = 512
	maxParts    = 256
)

// Limits on caller metadata: the envelope's, the input message's (and a
// continuing message's) and each part's metadata object may have at most
// MaxMetadataKeys top-level keys and take at most MaxMetadataBytes as JSON.
// Submit and Continue refuse more with CodeInvalidArgument.
const (
	MaxMetadataKeys  = 256
	MaxMetadataBytes = 64 << 10
)

func (c *Coordinator) resolve(agentName, action string) (*AgentSpec, error) {
	if agentName != "" {
		spec, ok := c.agents[agentName]
		if !ok {
			return nil, unknownAgent(agentName, action)
		}
		if action != "" && action != spec.Action {
			return nil, Errorf(CodeInvalidArgument, "agent %q serves action %q, not %q", agentName, spec.Action, action)
		}
		return spec, nil
	}
	if action == "" {
		return nil, Errorf(CodeInvalidArgument, "envelope names neither an agent nor an action")
	}
	spec, ok := c.byAction[action]
	if !ok {
		return nil, unknownAgent("", action)
	}
	return spec, nil
}

// unknownAgent is the error for an agent (by name, else by action) that
// this node does not serve.
func unknownAgent(agentName, action string) error {
	if agentName != "" {
		return Errorf(CodeNotFound, "no agent named %q", agentName)
	}
	return Errorf(CodeNotFound, "no agent serves action %q", action)
}

func (c *Coordinator) validateEnvelope(env *Envelope) error {
	if env.Actor == "" {
		return Errorf(CodeInvalidArgument, "envelope.actor is required")
	}
	fields := map[string]string{
		"actor": env.Actor, "matter": env.Matter, "resource": env.Resource, "action": env.Action,
		"idempotencyKey": env.IdempotencyKey, "policyRef": env.PolicyRef, "approvalRef": env.ApprovalRef,
		"correlationId": env.CorrelationID, "contextId": env.ContextID, "taskId": env.TaskID, "replayOf": env.ReplayOf,
	}
	for name, v := range fields {
		if len(v) > maxFieldLen {
			return Errorf(CodeInvalidArgument, "envelope.%s is longer than %d bytes", name, maxFieldLen)
		}
	}
	if err := checkMetadata(env.Metadata); err != nil {
		return Errorf(CodeInvalidArgument, "envelope.metadata %v", err)
	}
	if err := checkMetadata(env.Input.Metadata); err != nil {
		return Errorf(CodeInvalidArgument, "envelope.input.metadata %v", err)
	}
	if len(env.Input.Parts) == 0 {
		return Errorf(CodeInvalidArgument, "envelope.input has no parts")
	}
	if len(env.Input.Parts) > maxParts {
		return Errorf(CodeInvalidArgument, "envelope.input has more than %d parts", maxParts)
	}
	for i, p := range env.Input.Parts {
		if err := validatePart(p); err != nil {
			return Errorf(CodeInvalidArgument, "envelope.input.parts[%d]: %v", i, err)
		}
	}
	return nil
}

// checkMetadata applies MaxMetadataKeys and MaxMetadataBytes to one
// metadata object; the error reads after the object's name.
func checkMetadata(m map[string]any) error {
	if len(m) == 0 {
		return nil
	}
	if len(m) > MaxMetadataKeys {
		return fmt.Errorf("has %d keys; at most %d are allowed", len(m), MaxMetadataKeys)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("is not JSON: %w", err)
	}
	if len(b) > MaxMetadataBytes {
		return fmt.Errorf("takes %d bytes as JSON; at most %d are allowed", len(b), MaxMetadataBytes)
	}
	return nil
}

func validatePart(p Part) error {
	if err := checkMetadata(p.Metadata); err != nil {
		return fmt.Errorf("metadata %w", err)
	}
	switch p.Kind {
	case PartText:
	case PartData:
		if !json.Valid(p.Data) {
			return errors.New("data is not valid JSON")
		}
	case PartRaw:
	case PartURL:
		if p.URL == "" {
			return errors.New("url is empty")
		}
	default:
		return fmt.Errorf("unknown part kind %q", p.Kind)
	}
	return nil
}

// admission decides, before anything is stored, whether the task is queued
// or rejected, and returns the steps that record the decision.
func (c *Coordinator) admission(ctx context.Context, spec *AgentSpec, env *Envelope) ([]Step, error) {
	reject := func(d Decision, audit []AuditInput) []Step {
		return []Step{{To: StateFailed, ErrorCode: d.Code, Reason: d.Reason, PolicyVersion: d.Version, Rejected: true, Audit: audit}}
	}
	if !c.perms.Allows(env.Actor, spec.Action) {
		d := Decision{Allow: false, Code: CodeForbidden, Reason: fmt.Sprintf("actor %q may not call action %q", env.Actor, spec.Action)}
		return reject(d, []AuditInput{c.decisionAudit(env, StageSubmit, d)}), nil
	}
	if id, ok := IdentityFrom(ctx); ok && id.Actor == env.Actor && !id.Grants(spec.Action) {
		d := Decision{Allow: false, Code: CodeForbidden, Reason: fmt.Sprintf("the caller's token does not grant action %q", spec.Action)}
		return reject(d, []AuditInput{c.decisionAudit(env, StageSubmit, d)}), nil
	}
	if !spec.Sensitive {
		return []Step{{To: StateValidated}, {To: StateQueued}}, nil
	}
	d, err := c.decide(ctx, StageSubmit, spec, env)
	if err != nil {
		return nil, err
	}
	audit := []AuditInput{c.decisionAudit(env, StageSubmit, d)}
	if !d.Allow {
		return reject(d, audit), nil
	}
	return []Step{{To: StateValidated, PolicyVersion: d.Version, Audit: audit}, {To: StateQueued, PolicyVersion: d.Version}}, nil
}

// decide applies the sensitive-action rules (spec is sensitive): both
// references are required unless NeedsApproval says the action runs as a
// simulation, then the policy engine has the last word.
func (c *Coordinator) decide(ctx context.Context, stage Stage, spec *AgentSpec, env *Envelope) (Decision, error) {
	if !NeedsApproval(spec, c.policy) {
		return Decision{Allow: true, Reason: fmt.Sprintf("simulation: no policy covers action %q, so it runs only as a dry run, without approval", spec.Action)}, nil
	}
	var missing []string
	if env.PolicyRef == "" {
		missing = append(missing, "policyRef")
	}
	if env.ApprovalRef == "" {
		missing = append(missing, "approvalRef")
	}
	if len(missing) > 0 {
		return Decision{Code: CodeApprovalRequired, Reason: fmt.Sprintf("action %q is sensitive and needs %v in the envelope", spec.Action, missing)}, nil
	}
	if c.policy == nil {
		return Decision{Code: CodePolicyDenied, Reason: "no policy engine is configured for sensitive actions"}, nil
	}
	d, err := c.policy.Decide(ctx, PolicyInput{Stage: stage, Envelope: env, Agent: spec.Name, Sensitive: true})
	if err != nil {
		return Decision{}, fmt.Errorf("policy decision: %w", err)
	}
	if !d.Allow && d.Code == "" {
		d.Code = CodePolicyDenied
	}
	return d, nil
}

func (c *Coordinator) decisionAudit(env *Envelope, stage Stage, d Decision) AuditInput {
	data, _ := json.Marshal(map[string]any{
		"stage": stage, "action": env.Action, "policyRef": env.PolicyRef, "approvalRef": env.ApprovalRef, "decision": d,
	})
	return AuditInput{Kind: AuditPolicy, TaskID: env.TaskID, Actor: env.Actor, Data: data}
}
