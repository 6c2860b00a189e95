// Package toolargs holds the one rule of where a message's text goes
// among an MCP tool's arguments, shared by the mcp agent runtime (which
// calls the tool) and the contract bridge (whose pre-gate checks the
// arguments the tool will get), so that what is checked is what is sent.
package toolargs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// TextArgument picks the argument of a tool with input schema schema that
// receives a message's text when none is configured: the tool's only
// required argument that defaults does not set, if it is a string. ""
// means the text goes nowhere, which is allowed for a tool that takes no
// arguments and for an empty text when every required argument is set.
// Any other case is an error saying what the tool takes instead.
func TextArgument(schema, defaults map[string]any, text string) (string, error) {
	props, _ := schema["properties"].(map[string]any)
	var missing []string
	if req, ok := schema["required"].([]any); ok {
		for _, v := range req {
			if n, ok := v.(string); ok {
				if _, set := defaults[n]; !set {
					missing = append(missing, n)
				}
			}
		}
	}
	switch {
	case len(missing) == 1 && IsStringSchema(props[missing[0]]):
		return missing[0], nil
	case len(missing) == 0 && (len(props) == 0 || text == ""):
		return "", nil
	case len(missing) == 1:
		return "", fmt.Errorf("cannot pass the message text: the required argument %q is not a string; send the arguments as a JSON data part", missing[0])
	case len(missing) > 1:
		return "", fmt.Errorf("cannot pass the message text: the tool requires %s; send the arguments as a JSON data part, or set argument and arguments", quoteAll(missing))
	}
	names := slices.Sorted(maps.Keys(props))
	return "", fmt.Errorf("cannot pass the message text: the tool has no required argument left to take it (it takes %s); set argument, or send a JSON data part", quoteAll(names))
}

// IsStringSchema reports whether a property schema takes strings: its
// type is "string", or a list of types holding it (["string", "null"]).
func IsStringSchema(v any) bool {
	m, _ := v.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		return slices.Contains(t, any("string"))
	}
	return false
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 0 {
		return "no arguments"
	}
	return strings.Join(q, ", ")
}
