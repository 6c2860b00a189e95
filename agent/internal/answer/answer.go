// Package answer turns what an agent runtime read from its agent (text, a
// JSON document, a stream of text pieces) into the core's result types:
// artifacts, the final agent message and streamed artifact chunks. It also
// holds the JSON pointer (RFC 6901) that runtimes use to pick the answer out
// of a JSON document.
package answer

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/pactum/pactum/task"
)

// NewID returns a new random identifier for an artifact or a message, in
// the form of a version 4 UUID. The IDs only need to be unique, not
// unguessable, so they come from math/rand/v2's per-thread ChaCha8 source
// (seeded by the OS) rather than from crypto/rand, which costs a system call
// on every task of the benchmark path.
func NewID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// Message returns an agent message with one text part.
func Message(text string) *task.Message {
	return &task.Message{ID: NewID(), Role: task.RoleAgent, Parts: []task.Part{task.TextPart(text)}}
}

// Text returns a result holding text as one artifact, with the given id and
// name, and as the final agent message.
func Text(id, name, text string) *task.Result {
	return &task.Result{
		Artifacts: []task.Artifact{{ID: id, Name: name, Parts: []task.Part{task.TextPart(text)}}},
		Message:   Message(text),
	}
}

// Decode parses one JSON document, keeping numbers exact.
func Decode(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}

// Value returns a result for an answer decoded from JSON. A string becomes a
// text part; an object or an array a data part; a number, boolean or null
// the text of its JSON. The final agent message carries the text (the JSON
// text for structured answers).
func Value(id, name string, v any) (*task.Result, error) {
	part, text, err := partOf(v)
	if err != nil {
		return nil, err
	}
	return &task.Result{
		Artifacts: []task.Artifact{{ID: id, Name: name, Parts: []task.Part{part}}},
		Message:   Message(text),
	}, nil
}

// partOf returns an answer decoded from JSON as one part (see Value) and as
// the text shown for it.
func partOf(v any) (task.Part, string, error) {
	if x, ok := v.(string); ok {
		return task.TextPart(x), x, nil
	}
	raw, err := marshal(v)
	if err != nil {
		return task.Part{}, "", err
	}
	switch v.(type) {
	case map[string]any, []any:
		return task.DataPart(raw), string(raw), nil
	}
	return task.TextPart(string(raw)), string(raw), nil
}

// marshal encodes v compactly without HTML escaping, so that the text shown
// to people reads as the agent wrote it.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Stream emits the text of one artifact piece by piece as artifact chunks:
// the first chunk opens the artifact, later ones append to it and Close
// sends the closing chunk. A nil emit makes every call a no-op, so a
// runtime's Invoke and Stream can share one code path.
type Stream struct {
	emit     task.Emit
	id, name string
	sent     bool
}

// NewStream returns a Stream for the artifact with the given id and name.
func NewStream(emit task.Emit, id, name string) *Stream {
	return &Stream{emit: emit, id: id, name: name}
}

// Write emits text as the next chunk. Empty text is skipped.
func (s *Stream) Write(text string) error {
	if s.emit == nil || text == "" {
		return nil
	}
	err := s.emit(task.ArtifactChunk{
		Artifact: task.Artifact{ID: s.id, Name: s.name, Parts: []task.Part{task.TextPart(text)}},
		Append:   s.sent,
	})
	s.sent = true
	if err != nil {
		return fmt.Errorf("emit chunk: %w", err)
	}
	return nil
}

// Close emits the chunk that closes the artifact, if any chunk was sent.
// The closing chunk carries an empty text part because the pieces' end is
// only known once the source ends.
func (s *Stream) Close() error {
	if s.emit == nil || !s.sent {
		return nil
	}
	err := s.emit(task.ArtifactChunk{
		Artifact:  task.Artifact{ID: s.id, Name: s.name, Parts: []task.Part{task.TextPart("")}},
		Append:    true,
		LastChunk: true,
	})
	if err != nil {
		return fmt.Errorf("emit chunk: %w", err)
	}
	return nil
}
