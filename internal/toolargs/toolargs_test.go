package toolargs

import (
	"strings"
	"testing"
)

func TestTextArgument(t *testing.T) {
	t.Parallel()
	str := map[string]any{"type": "string"}
	num := map[string]any{"type": "number"}
	for _, tc := range []struct {
		name     string
		schema   map[string]any
		defaults map[string]any
		text     string
		want     string
		err      string
	}{
		{"the one required string", map[string]any{"properties": map[string]any{"message": str}, "required": []any{"message"}}, nil, "hi", "message", ""},
		{"nullable string", map[string]any{"properties": map[string]any{"m": map[string]any{"type": []any{"string", "null"}}}, "required": []any{"m"}}, nil, "hi", "m", ""},
		{"a default sets the other", map[string]any{"properties": map[string]any{"a": str, "b": str}, "required": []any{"a", "b"}}, map[string]any{"a": "x"}, "hi", "b", ""},
		{"no arguments", map[string]any{"properties": map[string]any{}}, nil, "hi", "", ""},
		{"empty text, all set", map[string]any{"properties": map[string]any{"a": str}}, nil, "", "", ""},
		{"required number", map[string]any{"properties": map[string]any{"a": num}, "required": []any{"a"}}, nil, "2", "", `the required argument "a" is not a string`},
		{"two required", map[string]any{"properties": map[string]any{"a": num, "b": num}, "required": []any{"a", "b"}}, nil, "2", "", `the tool requires "a", "b"`},
		{"only optional", map[string]any{"properties": map[string]any{"x": str, "a": str}}, nil, "t", "", `it takes "a", "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := TextArgument(tc.schema, tc.defaults, tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q %v, want %q", got, err, tc.want)
			}
		})
	}
}
