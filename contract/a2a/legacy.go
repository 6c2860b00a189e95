package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	legacy "github.com/a2aproject/a2a-go/a2a"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/pactum/pactum/contract"
)

// Earlier A2A versions shaped the same things differently, and agents and
// documents of those versions are still about (the seed documents write
// 0.2). The adapter reads them by rewriting their JSON into the 1.0 shape
// before the SDK decodes it:
//
//   - a part says its kind in "type" (0.2) or "kind" (0.3): text keeps
//     "text", data keeps "data", and a file's {"file": {"uri" | "bytes",
//     "mimeType", "name"}} becomes "url" or "raw", "mediaType" and
//     "filename";
//   - a task's "sessionId" (0.2) is its "contextId";
//   - a task's "message" (0.2: the message that started it) is the first
//     message of its history;
//   - a role "user" or "agent" is ROLE_USER or ROLE_AGENT, a state
//     "completed" (and the other lower-case states) TASK_STATE_COMPLETED
//     (the SDK's own 0.3 table, a2av0.ToV1TaskState);
//   - "kind": "task", "message" or "artifact" on an object is dropped.
//
// What is already 1.0 is left as it is, so mixed input reads too.

// Upgrade rewrites a decoded A2A task, message or artifact (JSON objects
// as map[string]any) of protocol 0.2 or 0.3 into the 1.0 shape, in place,
// as the rules above say; kind is "task", "message" or "artifact".
func Upgrade(kind string, obj map[string]any) {
	switch kind {
	case "task":
		upgradeTask(obj)
	case "message":
		upgradeMessage(obj)
	case "artifact":
		upgradeArtifact(obj)
	}
}

func upgradeTask(t map[string]any) {
	delete(t, "kind")
	renameSession(t)
	if m, ok := t["message"].(map[string]any); ok {
		h, _ := t["history"].([]any)
		t["history"] = append([]any{m}, h...)
		delete(t, "message")
	}
	if st, ok := t["status"].(map[string]any); ok {
		if s, ok := st["state"].(string); ok {
			st["state"] = upgradeState(s)
		}
		if m, ok := st["message"].(map[string]any); ok {
			upgradeMessage(m)
		}
	}
	if h, ok := t["history"].([]any); ok {
		for _, m := range h {
			if m, ok := m.(map[string]any); ok {
				upgradeMessage(m)
			}
		}
	}
	if as, ok := t["artifacts"].([]any); ok {
		for _, a := range as {
			if a, ok := a.(map[string]any); ok {
				upgradeArtifact(a)
			}
		}
	}
}

func renameSession(obj map[string]any) {
	sid, ok := obj["sessionId"]
	if !ok {
		return
	}
	if _, has := obj["contextId"]; !has {
		obj["contextId"] = sid
	}
	delete(obj, "sessionId")
}

func upgradeState(s string) string {
	if strings.HasPrefix(s, "TASK_STATE_") {
		return s
	}
	if v := a2av0.ToV1TaskState(legacy.TaskState(s)); v != sdk.TaskStateUnspecified {
		return string(v)
	}
	return s
}

func upgradeMessage(m map[string]any) {
	delete(m, "kind")
	renameSession(m)
	switch m["role"] {
	case "user":
		m["role"] = string(sdk.MessageRoleUser)
	case "agent":
		m["role"] = string(sdk.MessageRoleAgent)
	}
	upgradeParts(m["parts"])
}

func upgradeArtifact(a map[string]any) {
	delete(a, "kind")
	upgradeParts(a["parts"])
}

func upgradeParts(v any) {
	parts, _ := v.([]any)
	for _, p := range parts {
		if p, ok := p.(map[string]any); ok {
			upgradePart(p)
		}
	}
}

// upgradePart rewrites one part; a part that names no kind is left as it
// is (1.0 tells parts apart by their fields).
func upgradePart(p map[string]any) {
	kind, _ := p["kind"].(string)
	if kind == "" {
		kind, _ = p["type"].(string)
	}
	if kind == "" {
		return
	}
	delete(p, "kind")
	if _, ok := p["type"].(string); ok {
		delete(p, "type")
	}
	if kind != "file" {
		return
	}
	f, ok := p["file"].(map[string]any)
	if !ok {
		return
	}
	delete(p, "file")
	move := func(from, to string) {
		if x, ok := f[from]; ok {
			if _, has := p[to]; !has {
				p[to] = x
			}
		}
	}
	move("uri", "url")
	move("bytes", "raw")
	move("mimeType", "mediaType")
	move("name", "filename")
}

// generic decodes v (JSON as []byte, json.RawMessage or decoded values)
// into a fresh JSON object, numbers kept as json.Number, so that Upgrade
// never changes the caller's value.
func generic(v any) (map[string]any, error) {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(x); err != nil {
			return nil, fmt.Errorf("%w: %w", contract.ErrUnsupportedInput, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: not a JSON object", contract.ErrUnsupportedInput)
	}
	return m, nil
}

// kindOf says what an A2A JSON object is: "artifact" (artifactId),
// "message" (parts, and no status), "task" (status, artifacts, history,
// a 0.2 message or sessionId), else "".
func kindOf(m map[string]any) string {
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("artifactId"):
		return "artifact"
	case has("status") || has("artifacts") || has("history") || has("sessionId"):
		return "task"
	case has("parts"):
		return "message"
	case has("message"):
		return "task"
	}
	return ""
}

// DecodeOutput reads an A2A agent's output given as JSON ([]byte,
// json.RawMessage or decoded values) of protocol 1.0, 0.3 or 0.2: a task
// (*sdk.Task), a message (*sdk.Message) or an artifact (*sdk.Artifact),
// told apart as kindOf says and upgraded as Upgrade says, or SendMessage's
// result as 1.0 wraps it ({"task": …} or {"message": …}, alone). Anything
// else is an error wrapping contract.ErrUnsupportedInput.
func DecodeOutput(v any) (any, error) {
	m, err := generic(v)
	if err != nil {
		return nil, err
	}
	var kind string
	if len(m) == 1 {
		for _, k := range []string{"task", "message"} {
			if inner, ok := m[k].(map[string]any); ok {
				m, kind = inner, k
			}
		}
	}
	if kind == "" {
		kind = kindOf(m)
	}
	Upgrade(kind, m)
	switch kind {
	case "artifact":
		a, err := contract.Decode[sdk.Artifact](m)
		if err != nil {
			return nil, err
		}
		return &a, nil
	case "message":
		msg, err := contract.Decode[sdk.Message](m)
		if err != nil {
			return nil, err
		}
		return &msg, nil
	case "task":
		t, err := contract.Decode[sdk.Task](m)
		if err != nil {
			return nil, err
		}
		return &t, nil
	}
	return nil, fmt.Errorf("%w: a JSON object that is not an A2A task, message or artifact", contract.ErrUnsupportedInput)
}
