// Package a2amap maps between pactum's domain (package task) and the A2A 1.0
// types of the official SDK (github.com/a2aproject/a2a-go/v2/a2a): messages,
// parts, artifacts and artifact chunks (this file), the one table of
// lifecycle states to A2A task states (state.go), and tasks and task events
// as pactum publishes them, with their metadata.pactum (task.go).
//
// It is shared by everything in pactum that speaks A2A: the a2a agent
// runtime (pactum as a client of a remote agent), the A2A server (pactum
// as the remote agent) and push-notification delivery (package push),
// which sends webhooks the events streams carry. The two directions are not
// symmetric on purpose:
//
//   - The From… functions take outside input (whatever a remote peer or a
//     caller put on the wire) and return an error for anything the domain
//     cannot hold: a nil message, a part with no content or with content of
//     an unknown type, a role other than user or agent, data that is not JSON.
//   - The To… functions take domain values, which were checked when they
//     entered pactum, and never fail. Where a domain value is malformed anyway
//     they degrade in a documented way instead of dropping the whole message
//     (see PartsToA2A).
//
// Structured data travels as raw JSON in the domain (task.Part.Data) and as a
// decoded Go value in the SDK (a2a.Data.Value). Going to A2A, numbers decode
// as json.Number so that large integers and exact decimals are relayed
// without loss; the SDK's JSON encoders write them back verbatim. (The SDK's
// in-memory task store copies values with encoding/gob, which does not know
// json.Number; pactum does not use that store.)
//
// Metadata maps and the JSON values inside them are deep-copied, so the
// converted value shares no mutable state with its source. Empty maps and
// empty lists convert to nil, as they would after a trip over the wire.
//
// A2A fields that the domain has no place for are dropped: an artifact's
// extensions URIs (task.Artifact has no Extensions field).
package a2amap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// ErrNoContent is returned (wrapped) for a part that carries no content, or
// content of a type the domain does not know.
var ErrNoContent = errors.New("part has no content")

// MessageToA2A converts a domain message to an A2A message. Roles map user →
// ROLE_USER and agent → ROLE_AGENT; any other role becomes ROLE_UNSPECIFIED.
// Parts convert as PartsToA2A describes.
func MessageToA2A(m task.Message) *a2a.Message {
	out := &a2a.Message{
		ID:         m.ID,
		ContextID:  m.ContextID,
		TaskID:     a2a.TaskID(m.TaskID),
		Role:       roleToA2A(m.Role),
		Parts:      PartsToA2A(m.Parts),
		Extensions: cloneStrings(m.Extensions),
		Metadata:   cloneMap(m.Metadata),
	}
	if len(m.ReferenceTasks) > 0 {
		out.ReferenceTasks = make([]a2a.TaskID, len(m.ReferenceTasks))
		for i, id := range m.ReferenceTasks {
			out.ReferenceTasks[i] = a2a.TaskID(id)
		}
	}
	return out
}

// MessageFromA2A converts an A2A message to a domain message. It fails for a
// nil message, a role other than ROLE_USER or ROLE_AGENT, and any part that
// PartsFromA2A refuses. A message without parts converts to one with an
// empty (non-nil) parts list; callers that require content check for it.
func MessageFromA2A(m *a2a.Message) (task.Message, error) {
	if m == nil {
		return task.Message{}, errors.New("a2amap: message is missing")
	}
	role, err := roleFromA2A(m.Role)
	if err != nil {
		return task.Message{}, fmt.Errorf("a2amap: message %q: %w", m.ID, err)
	}
	parts, err := PartsFromA2A(m.Parts)
	if err != nil {
		return task.Message{}, fmt.Errorf("a2amap: message %q: %w", m.ID, err)
	}
	out := task.Message{
		ID:         m.ID,
		Role:       role,
		Parts:      parts,
		ContextID:  m.ContextID,
		TaskID:     string(m.TaskID),
		Extensions: cloneStrings(m.Extensions),
		Metadata:   cloneMap(m.Metadata),
	}
	if len(m.ReferenceTasks) > 0 {
		out.ReferenceTasks = make([]string, len(m.ReferenceTasks))
		for i, id := range m.ReferenceTasks {
			out.ReferenceTasks[i] = string(id)
		}
	}
	return out, nil
}

// PartsToA2A converts domain parts to A2A parts, keeping each part's
// filename, media type and metadata. The result is never nil.
//
// Domain parts are trusted, so the conversion cannot fail; a malformed part
// degrades rather than vanishing: a data part whose bytes are not valid JSON,
// or are JSON null, is sent as a JSON string holding those bytes, and a part
// of unknown kind is sent as a text part with its Text field (possibly
// empty).
func PartsToA2A(parts []task.Part) a2a.ContentParts {
	out := make(a2a.ContentParts, 0, len(parts))
	for _, p := range parts {
		out = append(out, partToA2A(p))
	}
	return out
}

func partToA2A(p task.Part) *a2a.Part {
	out := &a2a.Part{
		Filename:  p.Filename,
		MediaType: p.MediaType,
		Metadata:  cloneMap(p.Metadata),
	}
	switch p.Kind {
	case task.PartData:
		out.Content = a2a.Data{Value: task.DecodeData(p.Data)}
	case task.PartRaw:
		raw := p.Raw
		if raw == nil {
			// A nil slice would be encoded as "raw": null, which no peer
			// can read back as a part.
			raw = []byte{}
		}
		out.Content = a2a.Raw(bytes.Clone(raw))
	case task.PartURL:
		out.Content = a2a.URL(p.URL)
	default: // task.PartText, and the documented fallback for unknown kinds
		out.Content = a2a.Text(p.Text)
	}
	return out
}

// PartsFromA2A converts A2A parts to domain parts, keeping each part's
// filename, media type and metadata. It fails, naming the part's index, for
// a nil part, a part without content or with content of an unknown type
// (wrapping ErrNoContent), and data that cannot be encoded as JSON. The
// result is never nil.
func PartsFromA2A(parts a2a.ContentParts) ([]task.Part, error) {
	out := make([]task.Part, 0, len(parts))
	for i, p := range parts {
		dp, err := partFromA2A(p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		out = append(out, dp)
	}
	return out, nil
}

func partFromA2A(p *a2a.Part) (task.Part, error) {
	if p == nil {
		return task.Part{}, ErrNoContent
	}
	out := task.Part{
		Filename:  p.Filename,
		MediaType: p.MediaType,
		Metadata:  cloneMap(p.Metadata),
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		out.Kind = task.PartText
		out.Text = string(c)
	case a2a.Data:
		if c.Value == nil {
			// On the wire "data": null is no content at all; keep the two
			// paths in agreement.
			return task.Part{}, fmt.Errorf("data is null: %w", ErrNoContent)
		}
		b, err := task.EncodeData(c.Value)
		if err != nil {
			return task.Part{}, fmt.Errorf("data: %w", err)
		}
		out.Kind = task.PartData
		out.Data = b
	case a2a.Raw:
		if c == nil {
			return task.Part{}, fmt.Errorf("raw is null: %w", ErrNoContent)
		}
		out.Kind = task.PartRaw
		out.Raw = bytes.Clone([]byte(c))
	case a2a.URL:
		if c == "" {
			// The SDK omits an empty URL when encoding, so the part would
			// arrive without content.
			return task.Part{}, fmt.Errorf("url is empty: %w", ErrNoContent)
		}
		out.Kind = task.PartURL
		out.URL = string(c)
	case nil:
		return task.Part{}, ErrNoContent
	default:
		return task.Part{}, fmt.Errorf("unknown content type %T: %w", c, ErrNoContent)
	}
	return out, nil
}

// ArtifactToA2A converts a domain artifact to an A2A artifact.
func ArtifactToA2A(a task.Artifact) *a2a.Artifact {
	return &a2a.Artifact{
		ID:          a2a.ArtifactID(a.ID),
		Name:        a.Name,
		Description: a.Description,
		Parts:       PartsToA2A(a.Parts),
		Metadata:    cloneMap(a.Metadata),
	}
}

// ArtifactFromA2A converts an A2A artifact to a domain artifact. It fails for
// a nil artifact and for parts PartsFromA2A refuses. The artifact's
// extension URIs are dropped: the domain has no field for them.
func ArtifactFromA2A(a *a2a.Artifact) (task.Artifact, error) {
	if a == nil {
		return task.Artifact{}, errors.New("a2amap: artifact is missing")
	}
	parts, err := PartsFromA2A(a.Parts)
	if err != nil {
		return task.Artifact{}, fmt.Errorf("a2amap: artifact %q: %w", a.ID, err)
	}
	return task.Artifact{
		ID:          string(a.ID),
		Name:        a.Name,
		Description: a.Description,
		Parts:       parts,
		Metadata:    cloneMap(a.Metadata),
	}, nil
}

// ChunkToA2A converts a streamed artifact chunk to the A2A artifact update
// event of task taskID in context contextID.
func ChunkToA2A(taskID, contextID string, c task.ArtifactChunk) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{
		TaskID:    a2a.TaskID(taskID),
		ContextID: contextID,
		Artifact:  ArtifactToA2A(c.Artifact),
		Append:    c.Append,
		LastChunk: c.LastChunk,
	}
}

// ChunkFromA2A converts an A2A artifact update event to a domain chunk. The
// event's task and context ids and its metadata are not part of the chunk;
// callers that need them read them from the event.
func ChunkFromA2A(e *a2a.TaskArtifactUpdateEvent) (task.ArtifactChunk, error) {
	if e == nil {
		return task.ArtifactChunk{}, errors.New("a2amap: artifact update is missing")
	}
	a, err := ArtifactFromA2A(e.Artifact)
	if err != nil {
		return task.ArtifactChunk{}, err
	}
	return task.ArtifactChunk{Artifact: a, Append: e.Append, LastChunk: e.LastChunk}, nil
}

func roleToA2A(r task.Role) a2a.MessageRole {
	switch r {
	case task.RoleUser:
		return a2a.MessageRoleUser
	case task.RoleAgent:
		return a2a.MessageRoleAgent
	}
	return a2a.MessageRoleUnspecified
}

func roleFromA2A(r a2a.MessageRole) (task.Role, error) {
	switch r {
	case a2a.MessageRoleUser:
		return task.RoleUser, nil
	case a2a.MessageRoleAgent:
		return task.RoleAgent, nil
	}
	return "", fmt.Errorf("unknown role %q", r.String())
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// cloneMap deep-copies a metadata map: nested maps and lists are copied,
// other values (strings, numbers, booleans) are immutable and shared.
func cloneMap(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	case []byte:
		return bytes.Clone(v)
	case json.RawMessage:
		return bytes.Clone(v)
	}
	return v
}
