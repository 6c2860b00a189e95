package task_test

import (
	"context"
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
	for _, tc := range [][3]string{{"alice", "", "alice"}, {"bob", "bob", "bob"}, {"", "bob", "bob"}, {"", "", task.AnonymousActor}} {
		if got, err := task.ResolveActor(tc[0], tc[1]); got != tc[2] || err != nil {
			t.Errorf("ResolveActor(%q, %q) = %q, %v; want %q", tc[0], tc[1], got, err, tc[2])
		}
	}
	if got, err := task.ResolveActor("alice", "bob"); task.ErrorCode(err) != task.CodeForbidden || got != "" {
		t.Errorf("ResolveActor naming another actor than the authenticated one = %q, %v; want forbidden", got, err)
	}
	if task.Caller(context.Background()) != "" || task.Caller(task.WithCaller(context.Background(), "bob")) != "bob" {
		t.Error("Caller does not return what WithCaller stored")
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
