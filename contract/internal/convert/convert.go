// Package convert holds what the protocol adapters share to carry
// protocol values through contract metadata: metadata values read back
// whether the contract was built in memory or decoded from JSON or YAML,
// JSON-shaped copies, and resource ids made from names.
package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/pactum/pactum/contract"
)

// JSON returns v as decoded JSON (map[string]any, []any, string, float64,
// json.Number, bool, nil): what a contract's metadata holds after a trip
// through a file. It returns nil when v does not marshal.
func JSON(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// Object is JSON for a value that must be an object; it returns nil when
// v is not one.
func Object(v any) map[string]any {
	m, _ := JSON(v).(map[string]any)
	return m
}

// Into decodes a metadata value into dst through JSON.
func Into(v any, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// String returns m[key] when it is a string.
func String(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Strings returns m[key] when it is a list of strings ([]string, or []any
// of strings after a trip through JSON).
func Strings(m map[string]any, key string) []string {
	switch x := m[key].(type) {
	case []string:
		return append([]string(nil), x...)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Int returns m[key] when it is a whole number of any numeric type.
func Int(m map[string]any, key string) (int, bool) {
	switch x := m[key].(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return int(n), true
		}
	case uint64:
		return int(x), true
	}
	return 0, false
}

// Bool returns m[key] when it is a bool.
func Bool(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}

// ID makes a resource or step id from a prefix and a name: every run of
// characters other than letters, digits, '-' and '_' becomes '_'.
func ID(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	under := false
	for _, r := range name {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if ok {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return b.String()
}

// Unique returns id, or id with "_2", "_3", … appended when seen already
// has it, and records the result in seen.
func Unique(seen map[string]bool, id string) string {
	out := id
	for n := 2; seen[out]; n++ {
		out = fmt.Sprintf("%s_%d", id, n)
	}
	seen[out] = true
	return out
}

// InferSchema returns a JSON Schema (2020-12) describing the type of v
// and, for objects, the types of its members (no member is required).
func InferSchema(v any) map[string]any {
	switch x := JSON(v).(type) {
	case map[string]any:
		props := map[string]any{}
		for k, e := range x {
			props[k] = InferSchema(e)
		}
		return map[string]any{"type": "object", "properties": props}
	case []any:
		return map[string]any{"type": "array"}
	case string:
		return map[string]any{"type": "string"}
	case float64, json.Number:
		return map[string]any{"type": "number"}
	case bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{"type": "null"}
}

// ContextText lists resources earlier steps created for a step's prompt:
// "Context from previous steps:" then, for each, "- ID: TYPE (FORMAT)"
// and its content (its text, else its data as JSON) indented below. The
// adapters whose protocols take text (LangGraph messages, CrewAI inputs,
// AutoGen tasks) share it.
func ContextText(available []contract.Resource) string {
	var b strings.Builder
	b.WriteString("Context from previous steps:")
	if len(available) == 0 {
		b.WriteString(" none")
	}
	for _, r := range available {
		format := r.Format
		if format == "" {
			format = "unknown format"
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s)", r.ID, r.Type, format)
		content := r.Text
		if content == "" && r.Data != nil {
			if j, err := json.Marshal(r.Data); err == nil {
				content = string(j)
			}
		}
		if content != "" {
			b.WriteString("\n  " + strings.ReplaceAll(content, "\n", "\n  "))
		}
	}
	return b.String()
}
