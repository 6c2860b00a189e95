package toolspec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/toolspec"
)

func obj(req []any, props map[string]any) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if req != nil {
		m["required"] = req
	}
	return m
}

func str() map[string]any { return map[string]any{"type": "string"} }
func num() map[string]any { return map[string]any{"type": "number"} }

func TestInputCompat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		spec, live map[string]any
		want       []string
	}{
		{"same", obj([]any{"message"}, map[string]any{"message": str()}), obj([]any{"message"}, map[string]any{"message": str()}), nil},
		{"optional added", obj(nil, map[string]any{"a": str()}), obj(nil, map[string]any{"a": str(), "b": str()}), nil},
		{"description only", obj(nil, map[string]any{"a": str()}), obj(nil, map[string]any{"a": map[string]any{"type": "string", "description": "A"}}), nil},
		{"type widened", obj(nil, map[string]any{"a": map[string]any{"type": "integer"}}), obj(nil, map[string]any{"a": num()}), nil},
		{"required added", obj(nil, map[string]any{"a": str()}), obj([]any{"b"}, map[string]any{"a": str(), "b": str()}),
			[]string{`input.b: required property "b" added`}},
		{"now required", obj(nil, map[string]any{"a": str()}), obj([]any{"a"}, map[string]any{"a": str()}),
			[]string{`input.a: property "a" became required`}},
		{"property removed", obj(nil, map[string]any{"a": str(), "b": str()}), obj(nil, map[string]any{"a": str()}),
			[]string{`input.b: property "b" removed`}},
		{"type changed", obj(nil, map[string]any{"a": str()}), obj(nil, map[string]any{"a": num()}),
			[]string{`input.a: type string → number`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := toolspec.InputCompat(tt.spec, tt.live); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckLive(t *testing.T) {
	t.Parallel()
	tools := []toolspec.LiveTool{{Name: "echo", InputSchema: obj([]any{"message"}, map[string]any{"message": str()})}, {Name: "add"}}
	ts := toolspec.ToolSpec{ToolID: "echo", ExecutionMode: toolspec.Remote, AdapterID: toolspec.LiveAdapter, AdapterOperation: "echo",
		InputSchema: obj([]any{"message"}, map[string]any{"message": str()})}
	if vs := toolspec.CheckLive(ts, tools); len(vs) != 0 {
		t.Fatalf("echo: %+v", vs)
	}
	ts.AdapterOperation = "nope"
	vs := toolspec.CheckLive(ts, tools)
	if len(vs) != 1 || vs[0].Assertion != toolspec.OperationExists || vs[0].Field != "adapter_operation" || !strings.Contains(vs[0].Fix, "add, echo") {
		t.Fatalf("missing tool: %+v", vs)
	}
	ts.AdapterOperation = "echo"
	ts.InputSchema = obj(nil, map[string]any{"text": str()})
	if vs := toolspec.CheckLive(ts, tools); len(vs) != 2 || vs[0].Field != "input_schema" {
		t.Fatalf("schema: %+v", vs)
	}
}
