package a2aserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pactum/pactum/task"
)

// AnonymousActor is the actor of a request that names none
// (task.AnonymousActor; every transport records the same).
const AnonymousActor = task.AnonymousActor

// envelopeFields are the envelope fields a caller may set in metadata, under
// MetadataKey, on the request or on the message (the message wins).
var envelopeFields = []string{
	"actor", "matter", "resource", "policyRef", "approvalRef", "idempotencyKey", "correlationId",
}

// inputFields are keys a message's metadata.pactum may hold that are not
// envelope fields but input the task's agent reads from its message:
// "agents", the agents of a custom workflow run, in order, and
// "arguments", the string a workflow run gives every agent
// (docs/workflows.md). They are checked by the agent that reads them.
var inputFields = []string{"agents", "arguments"}

// envelopeMeta is what a caller put under metadata.pactum.
type envelopeMeta struct {
	Actor, Matter, Resource, PolicyRef, ApprovalRef, IdempotencyKey, CorrelationID string
}

// readEnvelope collects the envelope fields from the request metadata and
// then the message metadata. Values must be strings; the message's
// inputFields are left to the agent; other keys are refused so that a misspelt approvalRef does not silently turn into a
// rejection for a missing one.
func readEnvelope(requestMeta, messageMeta map[string]any) (envelopeMeta, error) {
	var e envelopeMeta
	for _, src := range []struct {
		where string
		meta  map[string]any
	}{{"request metadata", requestMeta}, {"message metadata", messageMeta}} {
		raw, ok := src.meta[MetadataKey]
		if !ok || raw == nil {
			continue
		}
		obj, ok := raw.(map[string]any)
		if !ok {
			return e, fmt.Errorf("%s.%s must be an object with the envelope fields %s", src.where, MetadataKey, strings.Join(envelopeFields, ", "))
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if src.where == "message metadata" && slices.Contains(inputFields, k) {
				continue
			}
			v := obj[k]
			s, isString := v.(string)
			if v != nil && !isString {
				return e, fmt.Errorf("%s.%s.%s must be a string", src.where, MetadataKey, k)
			}
			if s == "" {
				continue
			}
			switch k {
			case "actor":
				e.Actor = s
			case "matter":
				e.Matter = s
			case "resource":
				e.Resource = s
			case "policyRef":
				e.PolicyRef = s
			case "approvalRef":
				e.ApprovalRef = s
			case "idempotencyKey":
				e.IdempotencyKey = s
			case "correlationId":
				e.CorrelationID = s
			default:
				return e, fmt.Errorf("%s.%s.%s is not an envelope field (known: %s)", src.where, MetadataKey, k, strings.Join(envelopeFields, ", "))
			}
		}
	}
	return e, nil
}

// envelope builds the envelope of a new task from the caller's fields and
// the input message; the rest (task id, action, times) the Coordinator
// fills in. The request metadata other than MetadataKey travels as the
// envelope's metadata.
func (e envelopeMeta) envelope(msg task.Message, requestMeta map[string]any, authenticated string) (task.Envelope, error) {
	actor, err := task.ResolveActor(e.Actor, authenticated)
	if err != nil {
		return task.Envelope{}, err
	}
	env := task.Envelope{
		Actor:          actor,
		Matter:         e.Matter,
		Resource:       e.Resource,
		PolicyRef:      e.PolicyRef,
		ApprovalRef:    e.ApprovalRef,
		IdempotencyKey: e.IdempotencyKey,
		CorrelationID:  e.CorrelationID,
		ContextID:      msg.ContextID,
		Input:          msg,
	}
	if env.IdempotencyKey == "" {
		env.IdempotencyKey = msg.ID
	}
	for k, v := range requestMeta {
		if k == MetadataKey {
			continue
		}
		if env.Metadata == nil {
			env.Metadata = map[string]any{}
		}
		env.Metadata[k] = v
	}
	return env, nil
}

// readCancelReason returns the reason a CancelTask request gives under
// metadata.pactum.reason, or "" (the Coordinator's default) when it gives
// none. Like the envelope fields, the value must be a string and other keys
// are refused.
func readCancelReason(meta map[string]any) (string, error) {
	raw, ok := meta[MetadataKey]
	if !ok || raw == nil {
		return "", nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return "", fmt.Errorf("metadata.%s must be an object with the field reason", MetadataKey)
	}
	var reason string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		s, isString := v.(string)
		switch {
		case k != "reason":
			return "", fmt.Errorf("metadata.%s.%s is not a CancelTask field (known: reason)", MetadataKey, k)
		case v != nil && !isString:
			return "", fmt.Errorf("metadata.%s.reason must be a string", MetadataKey)
		}
		reason = s
	}
	return reason, nil
}
