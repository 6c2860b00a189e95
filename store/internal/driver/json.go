package driver

import (
	"encoding/json"

	"github.com/pactum/pactum/internal/jsonenc"
	"github.com/pactum/pactum/task"
)

// The store writes a task's envelope, messages and artifacts as JSON on
// every submission and transition. They are written here field by field,
// byte for byte json.Marshal's output (whose bytes the rows hold and the
// hash chain of a record's data covers); parts other than text and
// metadata values internal/jsonenc does not write go through
// encoding/json, and a value it refuses sends the whole value back to
// json.Marshal so that the error is its own (TestTaskJSONIsJSONMarshal,
// FuzzTaskJSON).

// marshalJSON returns json.Marshal(v) for the task types written here.
func marshalJSON(v any) ([]byte, error) {
	var b []byte
	var err error
	switch v := v.(type) {
	case *task.Message:
		b, err = appendMessage(make([]byte, 0, 256), v)
	case *task.Artifact:
		b, err = appendArtifact(make([]byte, 0, 256), v)
	case *task.Envelope:
		b, err = appendEnvelope(make([]byte, 0, 512), v)
	default:
		return json.Marshal(v)
	}
	if err != nil {
		return json.Marshal(v)
	}
	return b, nil
}

// field appends `,"key":` and s unless s is empty (omitempty).
func field(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return jsonenc.String(b, s)
}

func appendMeta(b []byte, m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return b, nil
	}
	return jsonenc.Object(append(b, `,"metadata":`...), m)
}

func appendParts(b []byte, parts []task.Part) ([]byte, error) {
	if parts == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		p := &parts[i]
		if len(p.Data) > 0 || len(p.Raw) > 0 {
			// Data is validated and compacted, Raw base64-encoded: as
			// encoding/json does it.
			var err error
			if b, err = jsonenc.Marshal(b, p); err != nil {
				return nil, err
			}
			continue
		}
		b = append(b, `{"kind":`...)
		b = jsonenc.String(b, string(p.Kind))
		b = field(b, `,"text":`, p.Text)
		b = field(b, `,"url":`, p.URL)
		b = field(b, `,"filename":`, p.Filename)
		b = field(b, `,"mediaType":`, p.MediaType)
		var err error
		if b, err = appendMeta(b, p.Metadata); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

func appendMessage(b []byte, m *task.Message) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonenc.String(b, m.ID)
	b = append(b, `,"role":`...)
	b = jsonenc.String(b, string(m.Role))
	b = append(b, `,"parts":`...)
	b, err := appendParts(b, m.Parts)
	if err != nil {
		return nil, err
	}
	b = field(b, `,"contextId":`, m.ContextID)
	b = field(b, `,"taskId":`, m.TaskID)
	if len(m.ReferenceTasks) > 0 {
		b = jsonenc.Strings(append(b, `,"referenceTaskIds":`...), m.ReferenceTasks)
	}
	if len(m.Extensions) > 0 {
		b = jsonenc.Strings(append(b, `,"extensions":`...), m.Extensions)
	}
	if b, err = appendMeta(b, m.Metadata); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendArtifact(b []byte, a *task.Artifact) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonenc.String(b, a.ID)
	b = field(b, `,"name":`, a.Name)
	b = field(b, `,"description":`, a.Description)
	b = append(b, `,"parts":`...)
	b, err := appendParts(b, a.Parts)
	if err != nil {
		return nil, err
	}
	if b, err = appendMeta(b, a.Metadata); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendEnvelope(b []byte, e *task.Envelope) ([]byte, error) {
	b = append(b, `{"taskId":`...)
	b = jsonenc.String(b, e.TaskID)
	b = append(b, `,"idempotencyKey":`...)
	b = jsonenc.String(b, e.IdempotencyKey)
	b = append(b, `,"actor":`...)
	b = jsonenc.String(b, e.Actor)
	b = field(b, `,"matter":`, e.Matter)
	b = field(b, `,"resource":`, e.Resource)
	b = append(b, `,"action":`...)
	b = jsonenc.String(b, e.Action)
	b = append(b, `,"input":`...)
	b, err := appendMessage(b, &e.Input)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"contextId":`...)
	b = jsonenc.String(b, e.ContextID)
	b = field(b, `,"policyRef":`, e.PolicyRef)
	b = field(b, `,"approvalRef":`, e.ApprovalRef)
	b = field(b, `,"correlationId":`, e.CorrelationID)
	b = field(b, `,"parentTaskId":`, e.ParentTaskID)
	b = field(b, `,"step":`, e.Step)
	b = field(b, `,"replayOf":`, e.ReplayOf)
	if b, err = appendMeta(b, e.Metadata); err != nil {
		return nil, err
	}
	b = field(b, `,"traceparent":`, e.TraceParent)
	if b, err = jsonenc.Time(append(b, `,"createdAt":`...), e.CreatedAt); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}
