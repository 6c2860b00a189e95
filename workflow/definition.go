package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/internal/yamlnode"
)

// MaxDefinitionBytes bounds a definition file; ParseDefinition refuses a
// larger one.
const MaxDefinitionBytes = 1 << 20

// namePattern is what a definition's name must look like: the same rule
// config applies to agent names (config/parse.go namePattern), since a
// definition is served as an agent and its name appears in URL paths and
// MCP tool names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// frontMatterKeys are the front-matter keys a Definition has fields for;
// any other key goes to Metadata.
var frontMatterKeys = []string{"name", "description", "tools", "model", "runtime"}

// Definition is an agent defined by a markdown file: YAML front matter
// between a first line "---" and the next "---" line, then the role body.
// The format is Claude Code's subagent file (.claude/agents/*.md) plus
// pactum's optional runtime key.
type Definition struct {
	// Name is the agent's name (front matter "name", required); it
	// follows the rule for agent names in the config: letters, digits,
	// '.', '_' and '-', at most 64, starting with a letter or digit.
	Name string
	// Description says when to use the agent ("description"; "" when
	// absent).
	Description string
	// Tools are the tools the agent may use ("tools": a YAML list, or a
	// comma-separated string as Claude Code writes it, "Read, Grep,
	// Glob"); nil when absent.
	Tools []string
	// Model names the model ("model", e.g. "sonnet", "haiku",
	// "inherit"); "" when absent.
	Model string
	// Runtime names the pactum runtime that runs the agent ("runtime");
	// "" when absent: the configured default runs it.
	Runtime string
	// Body is the role text after the front matter, with surrounding
	// white space removed.
	Body string
	// Metadata holds every other front-matter key with its value decoded
	// as JSON would read it (mappings, lists, strings, numbers, booleans,
	// null); nil when there is none. Unknown keys are kept, never errors.
	Metadata map[string]any
	// File is the file the definition was read from, as given to
	// ParseDefinition.
	File string
	// Line is the line of the name key in File.
	Line int
}

// Error is a problem in a definition file, at a line of that file (1 is
// the opening "---" line).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ParseDefinition reads the definition in data, the content of file (used
// in errors and kept in Definition.File). Every problem is an *Error
// placed at its line in the file; when there are several they are joined
// (errors.Join) in the order of the file.
func ParseDefinition(file string, data []byte) (*Definition, error) {
	errf := func(line int, format string, args ...any) error {
		return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxDefinitionBytes {
		return nil, errf(0, "file larger than %d bytes", MaxDefinitionBytes)
	}
	front, body, bodyLine, ok := splitFrontMatter(data)
	if !ok {
		if front == nil {
			return nil, errf(1, "no front matter: a definition starts with a line \"---\", then YAML (name, description, tools, model), then a line \"---\"")
		}
		return nil, errf(1, "front matter opened here is never closed by a line \"---\"")
	}
	if i := invalidUTF8(body); i >= 0 {
		return nil, errf(bodyLine+bytes.Count(body[:i], []byte("\n")), "role body is not valid UTF-8")
	}
	// The front matter starts on the file's second line: parsed after one
	// empty line, its lines are the file's, in every message.
	root, p := yamlnode.ParseDocument(append([]byte("\n"), front...), "front matter")
	if p != nil {
		return nil, errf(p.Line, "front matter: %s", p.Msg)
	}
	if root == nil {
		return nil, errf(1, "front matter: required key \"name\" is missing")
	}

	var errs []error
	var raw map[string]any
	dec := yamlnode.Decoder{
		Report: func(n *yaml.Node, path, msg string) {
			errs = append(errs, errf(n.Line, "front matter: %s: %s", fieldName(path), msg))
		},
		Lines: yamlnode.Lines{},
	}
	if !dec.Document(root, &raw, "front matter must be a mapping of keys (name, description, ...)") {
		if len(errs) == 0 { // not reached: Document reports why
			errs = append(errs, errf(root.Line, "front matter must be a mapping"))
		}
		return nil, errors.Join(errs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	lineOf := func(key string) int { return dec.Lines.Line(yamlnode.Join("", key)) }

	d := &Definition{File: file, Line: 1, Body: strings.TrimSpace(string(body))}
	str := func(key string) string {
		v, ok := raw[key]
		if !ok || v == nil {
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, errf(lineOf(key), "front matter: %s: expected a string, got %s", key, describe(v)))
		}
		return s
	}
	d.Name = str("name")
	d.Description = str("description")
	d.Model = str("model")
	d.Runtime = str("runtime")
	if _, ok := raw["name"]; ok {
		d.Line = lineOf("name")
	}
	if _, ok := raw["name"].(string); ok || raw["name"] == nil {
		switch {
		case d.Name == "":
			errs = append(errs, errf(d.Line, "front matter: required key \"name\" is missing or empty"))
		case !namePattern.MatchString(d.Name):
			errs = append(errs, errf(d.Line, "front matter: name: invalid name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", d.Name))
		}
	}
	d.Tools = tools(raw["tools"], func(format string, args ...any) {
		errs = append(errs, errf(lineOf("tools"), "front matter: tools: "+format, args...))
	})
	for k, v := range raw {
		if isKnownKey(k) {
			continue
		}
		if d.Metadata == nil {
			d.Metadata = map[string]any{}
		}
		d.Metadata[k] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return d, nil
}

func isKnownKey(k string) bool {
	for _, known := range frontMatterKeys {
		if k == known {
			return true
		}
	}
	return false
}

// fieldName names a field path in messages; the root is "front matter"
// already.
func fieldName(path string) string {
	if path == "" {
		return "document"
	}
	return path
}

// tools reads the tools key: absent or null, a list of strings, or a
// comma-separated string. Empty entries of the string form are dropped
// ("Read, Grep," is Read and Grep); an empty list entry is an error.
func tools(v any, fail func(format string, args ...any)) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		var out []string
		for part := range strings.SplitSeq(t, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out
	case []any:
		out := make([]string, 0, len(t))
		for i, item := range t {
			s, ok := item.(string)
			if !ok {
				fail("item %d: expected a string, got %s", i, describe(item))
				continue
			}
			if s = strings.TrimSpace(s); s == "" {
				fail("item %d: empty tool name", i)
				continue
			}
			out = append(out, s)
		}
		return out
	default:
		fail("expected a list of tool names or a comma-separated string, got %s", describe(v))
		return nil
	}
}

// describe names a decoded value for messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	}
	if k := reflect.TypeOf(v).Kind(); k >= reflect.Int && k <= reflect.Float64 {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// splitFrontMatter splits data into the front matter (between a first
// line "---" and the next line "---") and the body after it; bodyLine is
// the line of data the body starts on. A line is "---" with trailing
// spaces, tabs and a carriage return ignored; a UTF-8 byte order mark
// before the first line is ignored. ok is false when there is no front
// matter (front nil) or it is never closed (front non-nil).
func splitFrontMatter(data []byte) (front, body []byte, bodyLine int, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return nil, nil, 0, false
	}
	if !found {
		return []byte{}, nil, 0, false
	}
	start := len(data) - len(rest)
	line := 2
	for pos := start; ; line++ {
		text, _, more := bytes.Cut(data[pos:], []byte("\n"))
		if isFence(text) {
			end := pos + len(text)
			if more {
				end++
			}
			return data[start:pos], data[end:], line + 1, true
		}
		if !more {
			return data[start:], nil, 0, false
		}
		pos += len(text) + 1
	}
}

// isFence reports whether line is a front matter delimiter.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// invalidUTF8 returns the offset of the first byte of b that is not valid
// UTF-8, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
