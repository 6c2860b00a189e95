package task_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestSettledAndResolveActor(t *testing.T) {
	for _, s := range []task.State{task.StateRequested, task.StateValidated, task.StateQueued, task.StateInProgress} {
		if s.Settled() {
			t.Errorf("%s.Settled() = true", s)
		}
	}
	for _, s := range []task.State{task.StateSucceeded, task.StateFailed, task.StateCanceled, task.StateDeadLetter, task.StateInputRequired} {
		if !s.Settled() {
			t.Errorf("%s.Settled() = false", s)
		}
	}
	for _, tc := range [][3]string{{"alice", "bob", "alice"}, {"", "bob", "bob"}, {"", "", task.AnonymousActor}} {
		if got := task.ResolveActor(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ResolveActor(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestEncodeDecodeData(t *testing.T) {
	raw, err := task.EncodeData(map[string]any{"b": "<&>", "a": 1.5})
	if err != nil || string(raw) != `{"a":1.5,"b":"<&>"}` {
		t.Fatalf("EncodeData = %s, %v; want compact JSON, no HTML escaping", raw, err)
	}
	if v, ok := task.DecodeData(json.RawMessage(`{"n": 12345678901234567890}`)).(map[string]any); !ok || fmt.Sprint(v["n"]) != "12345678901234567890" {
		t.Errorf("DecodeData lost the exact number: %#v", v)
	}
	for _, raw := range []string{`null`, `{`, `1 2`} {
		if got, ok := task.DecodeData(json.RawMessage(raw)).(string); !ok || got != raw {
			t.Errorf("DecodeData(%s) = %#v, want the raw string", raw, got)
		}
	}
}
