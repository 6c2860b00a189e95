package a2aserver

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// VerifiedKey is the key, under metadata.pactum of a task, of a final
// status update and of the task's last artifact, that holds the verified
// result of the task's newest checked attempt (docs/contracts.md): what its
// contract's gates found.
const VerifiedKey = "verifiedResult"

// verified returns t's newest verified result, or nil when t's agent has
// no contract, no attempt was checked, or it cannot be read (logged: the
// task is still answered).
func (h *Handler) verified(ctx context.Context, t *task.Task) any {
	if h.verifiedResult == nil || t == nil {
		return nil
	}
	vr, err := h.verifiedResult(ctx, t)
	if err != nil {
		h.log.WarnContext(ctx, "read verified result", "task", t.ID, "err", err)
		return nil
	}
	if c, ok := vr.(CompactJSON); ok && ctx.Value(plainMetadataKey{}) != nil {
		// gRPC converts metadata to a protobuf Struct, which takes
		// decoded JSON values, not a json.Marshaler.
		var v any
		if err := json.Unmarshal(c, &v); err != nil {
			h.log.WarnContext(ctx, "decode verified result", "task", t.ID, "err", err)
			return nil
		}
		return v
	}
	return vr
}

// plainMetadataKey marks a call whose answer is converted to protobuf
// (gRPC): the values in its metadata must be decoded JSON values.
type plainMetadataKey struct{}

// withVerified adds vr to metadata.pactum of meta, a task's or an event's
// metadata as internal/a2amap built it (under MetadataKey).
func withVerified(meta map[string]any, vr any) {
	if vr == nil || meta == nil {
		return
	}
	if p, ok := meta[MetadataKey].(map[string]any); ok {
		p[VerifiedKey] = vr
	}
}

// artifactWithVerified adds vr to a's metadata under pactum.verifiedResult,
// copying what it changes: a's metadata may be shared with the stored task.
func artifactWithVerified(a *a2a.Artifact, vr any) {
	if vr == nil || a == nil {
		return
	}
	meta := maps.Clone(a.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	p, _ := meta[MetadataKey].(map[string]any)
	p = maps.Clone(p)
	if p == nil {
		p = map[string]any{}
	}
	p[VerifiedKey] = vr
	meta[MetadataKey] = p
	a.Metadata = meta
}

// taskWithVerified converts t as taskToA2A does and adds its newest
// verified result to its metadata and to its last artifact's.
func (h *Handler) taskWithVerified(ctx context.Context, t *task.Task, historyLength int, withArtifacts bool) *a2a.Task {
	out := taskToA2A(t, historyLength, withArtifacts)
	if vr := h.verified(ctx, t); vr != nil {
		withVerified(out.Metadata, vr)
		out.Metadata = withExtensionVerified(ctx, out.Metadata, vr)
		if n := len(out.Artifacts); n > 0 {
			artifactWithVerified(out.Artifacts[n-1], vr)
			artifactWithExtensionVerified(ctx, out.Artifacts[n-1], vr)
		}
	}
	return out
}

// CompactJSON is a JSON value written as encoding/json writes it: valid,
// compact, with <, > and & (and U+2028, U+2029) escaped, as json.Marshal
// returns it. A VerifiedResult func may return one: encoding/json
// validates and copies a json.RawMessage every time it writes one, and
// the SendMessage answer, which carries the verified result twice, then
// takes it as it is instead (AppendJSON, through the answer's writer).
// Bytes that are not what the name says make an answer that is not JSON.
type CompactJSON []byte

// MarshalJSON returns c: through json.Marshal it is validated and copied
// as a json.RawMessage is.
func (c CompactJSON) MarshalJSON() ([]byte, error) {
	if len(c) == 0 {
		return []byte("null"), nil
	}
	return c, nil
}

// AppendJSON appends c as it is ("null" when empty): what json.Marshal
// writes for it, without its validating copy (jsonenc.Appender).
func (c CompactJSON) AppendJSON(b []byte) []byte {
	if len(c) == 0 {
		return append(b, "null"...)
	}
	return append(b, c...)
}
