package a2aserver

import (
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/jsonenc"
)

// The A2A 1.0 results every request answers with (a task, a message, the
// stream's status and artifact updates) are written here field by field,
// byte for byte what a2a-go's types give through encoding/json: that
// encoding walks each struct by reflection, calls the parts' and the
// enums' MarshalJSON and then validates and copies each one's output, and
// it was the largest item of a stream's own CPU. Anything this writer does
// not know (a float it cannot write as encoding/json would, a metadata
// value of another type, a raw part) is written by encoding/json itself;
// a value encoding/json refuses makes the whole result fall back to
// a2a-go's encoding, so the errors are its errors too. The tests compare
// the two on every shape (TestEventEncodingIsA2AGo, FuzzEventEncoding).

// marshalEvent returns a2a.StreamResponse{Event: ev}.MarshalJSON().
func marshalEvent(ev a2a.Event) ([]byte, error) {
	if ev == nil || isNil(ev) {
		return a2a.StreamResponse{Event: ev}.MarshalJSON()
	}
	size := 512
	if t, ok := ev.(*a2a.Task); ok {
		size = taskSize(t)
	}
	w := resultWriter{b: make([]byte, 0, size)}
	switch v := ev.(type) {
	case *a2a.Task:
		w.raw(`{"task":`)
		w.task(v)
	case *a2a.Message:
		w.raw(`{"message":`)
		w.message(v)
	case *a2a.TaskStatusUpdateEvent:
		w.raw(`{"statusUpdate":`)
		w.statusUpdate(v)
	case *a2a.TaskArtifactUpdateEvent:
		w.raw(`{"artifactUpdate":`)
		w.artifactUpdate(v)
	default:
		w.err = jsonenc.ErrUnsupported
	}
	if w.err != nil {
		return a2a.StreamResponse{Event: ev}.MarshalJSON()
	}
	w.raw(`}`)
	return w.b, nil
}

// marshalTask returns json.Marshal(t).
func marshalTask(t *a2a.Task) ([]byte, error) {
	if t == nil {
		return json.Marshal(t)
	}
	w := resultWriter{b: make([]byte, 0, 512)}
	w.task(t)
	if w.err != nil {
		return json.Marshal(t)
	}
	return w.b, nil
}

// isNil reports a typed nil event, which a2a-go's wrapper omits.
func isNil(ev a2a.Event) bool {
	switch v := ev.(type) {
	case *a2a.Task:
		return v == nil
	case *a2a.Message:
		return v == nil
	case *a2a.TaskStatusUpdateEvent:
		return v == nil
	case *a2a.TaskArtifactUpdateEvent:
		return v == nil
	}
	return false
}

// taskSize is about the length of t's JSON, for the buffer it is written
// into: grown from 512 bytes, a checked agent's answer (2.6 KB with its
// verified result twice) took four buffers.
func taskSize(t *a2a.Task) int {
	n := 400 + metaSize(t.Metadata)
	for _, a := range t.Artifacts {
		if a != nil {
			n += 96 + partsSize(a.Parts) + metaSize(a.Metadata)
		}
	}
	for _, m := range t.History {
		if m != nil {
			n += 160 + partsSize(m.Parts)
		}
	}
	if m := t.Status.Message; m != nil {
		n += 160 + partsSize(m.Parts)
	}
	return n
}

// partsSize is about the length of the JSON of ps's text parts.
func partsSize(ps a2a.ContentParts) int {
	n := 0
	for _, p := range ps {
		n += 16
		if p != nil {
			if text, ok := p.Content.(a2a.Text); ok {
				n += len(text)
			}
		}
	}
	return n
}

// metaSize is about the length of metadata m's JSON: pactum's, with the
// verified results it may carry as CompactJSON.
func metaSize(m map[string]any) int {
	if len(m) == 0 {
		return 0
	}
	n := 64
	for k, v := range m {
		n += 16 + len(k)
		if p, ok := v.(map[string]any); ok {
			n += 32 * len(p)
			if c, ok := p[VerifiedKey].(CompactJSON); ok {
				n += len(c)
			}
		}
	}
	return n
}

// resultWriter appends JSON to b; err is the first value it could not write.
type resultWriter struct {
	b   []byte
	err error
}

func (w *resultWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *resultWriter) str(s string) { w.b = jsonenc.String(w.b, s) }

// strs writes a []string that is not empty.
func (w *resultWriter) strs(ss []string) { w.b = jsonenc.Strings(w.b, ss) }

// fail records the first value the writer could not write.
func (w *resultWriter) fail(b []byte, err error) {
	if err != nil {
		w.err = err
		return
	}
	w.b = b
}

// json writes v with encoding/json.
func (w *resultWriter) json(v any) { w.fail(jsonenc.Marshal(w.b, v)) }

// meta writes `,"metadata":…` unless m is empty (omitempty).
func (w *resultWriter) meta(m map[string]any) {
	if len(m) > 0 && w.err == nil {
		w.raw(`,"metadata":`)
		w.fail(jsonenc.Object(w.b, m))
	}
}

func (w *resultWriter) time(t time.Time) { w.fail(jsonenc.Time(w.b, t)) }

func (w *resultWriter) task(t *a2a.Task) {
	w.raw(`{"id":`)
	w.str(string(t.ID))
	if len(t.Artifacts) > 0 {
		w.raw(`,"artifacts":[`)
		for i, a := range t.Artifacts {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.artifact(a)
		}
		w.b = append(w.b, ']')
	}
	w.raw(`,"contextId":`)
	w.str(t.ContextID)
	if len(t.History) > 0 {
		w.raw(`,"history":[`)
		for i, m := range t.History {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.message(m)
		}
		w.b = append(w.b, ']')
	}
	w.meta(t.Metadata)
	w.raw(`,"status":`)
	w.status(&t.Status)
	w.b = append(w.b, '}')
}

func (w *resultWriter) status(s *a2a.TaskStatus) {
	w.b = append(w.b, '{')
	if s.Message != nil {
		w.raw(`"message":`)
		w.message(s.Message)
		w.b = append(w.b, ',')
	}
	w.raw(`"state":`)
	w.str(s.State.String())
	if s.Timestamp != nil {
		w.raw(`,"timestamp":`)
		w.time(*s.Timestamp)
	}
	w.b = append(w.b, '}')
}

func (w *resultWriter) message(m *a2a.Message) {
	if m == nil {
		w.raw("null")
		return
	}
	w.raw(`{"messageId":`)
	w.str(m.ID)
	if m.ContextID != "" {
		w.raw(`,"contextId":`)
		w.str(m.ContextID)
	}
	if len(m.Extensions) > 0 {
		w.raw(`,"extensions":`)
		w.strs(m.Extensions)
	}
	w.meta(m.Metadata)
	w.raw(`,"parts":`)
	w.parts(m.Parts)
	if len(m.ReferenceTasks) > 0 {
		w.raw(`,"referenceTaskIds":[`)
		for i, id := range m.ReferenceTasks {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.str(string(id))
		}
		w.b = append(w.b, ']')
	}
	w.raw(`,"role":`)
	w.str(m.Role.String())
	if m.TaskID != "" {
		w.raw(`,"taskId":`)
		w.str(string(m.TaskID))
	}
	w.b = append(w.b, '}')
}

func (w *resultWriter) artifact(a *a2a.Artifact) {
	if a == nil {
		w.raw("null")
		return
	}
	w.raw(`{"artifactId":`)
	w.str(string(a.ID))
	if a.Description != "" {
		w.raw(`,"description":`)
		w.str(a.Description)
	}
	if len(a.Extensions) > 0 {
		w.raw(`,"extensions":`)
		w.strs(a.Extensions)
	}
	w.meta(a.Metadata)
	if a.Name != "" {
		w.raw(`,"name":`)
		w.str(a.Name)
	}
	w.raw(`,"parts":`)
	w.parts(a.Parts)
	w.b = append(w.b, '}')
}

// parts writes a2a.ContentParts: text parts field by field, the other
// kinds (raw bytes, data, URLs) through a2a-go's own Part encoding.
func (w *resultWriter) parts(ps a2a.ContentParts) {
	if ps == nil {
		w.raw("null")
		return
	}
	w.b = append(w.b, '[')
	for i, p := range ps {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if p == nil {
			w.raw("null")
			continue
		}
		text, ok := p.Content.(a2a.Text)
		switch {
		case !ok:
			w.json(p)
		default:
			w.raw(`{"text":`)
			w.str(string(text))
			if p.Filename != "" {
				w.raw(`,"filename":`)
				w.str(p.Filename)
			}
			if p.MediaType != "" {
				w.raw(`,"mediaType":`)
				w.str(p.MediaType)
			}
			w.meta(p.Metadata)
			w.b = append(w.b, '}')
		}
	}
	w.b = append(w.b, ']')
}

func (w *resultWriter) statusUpdate(e *a2a.TaskStatusUpdateEvent) {
	w.raw(`{"contextId":`)
	w.str(e.ContextID)
	w.raw(`,"status":`)
	w.status(&e.Status)
	w.raw(`,"taskId":`)
	w.str(string(e.TaskID))
	w.meta(e.Metadata)
	w.b = append(w.b, '}')
}

func (w *resultWriter) artifactUpdate(e *a2a.TaskArtifactUpdateEvent) {
	w.b = append(w.b, '{')
	if e.Append {
		w.raw(`"append":true,`)
	}
	w.raw(`"artifact":`)
	w.artifact(e.Artifact)
	w.raw(`,"contextId":`)
	w.str(e.ContextID)
	if e.LastChunk {
		w.raw(`,"lastChunk":true`)
	}
	w.raw(`,"taskId":`)
	w.str(string(e.TaskID))
	w.meta(e.Metadata)
	w.b = append(w.b, '}')
}
