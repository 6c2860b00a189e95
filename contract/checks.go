package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/theory/jsonpath"

	"github.com/pactum/pactum/task"
)

// builtins are the built-in check types and their compilers.
var builtins = map[string]compiler{
	"schema_match": compileSchemaMatch,
	"exists":       compileExists,
	"regex":        compileRegex,
	"contains":     compileContains(true),
	"not_contains": compileContains(false),
	"equals":       compileEquals,
	"jsonpath":     compileJSONPath,
	"cel":          compileCEL,
	"sections":     compileSections,
	"max_duration": compileMaxDuration,
	"media_type":   compileMediaType,
}

// paramError is a check parameter that does not compile: its field
// ("pattern", "schema") and why. Compile reports it at the field's path.
type paramError struct {
	field string
	err   error
}

func (e *paramError) Error() string { return e.field + ": " + e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

func badParam(field, format string, args ...any) error {
	return &paramError{field: field, err: fmt.Errorf(format, args...)}
}

// checkTarget parses c.Target, reporting an error at "target".
func checkTarget(c *Check) (target, error) {
	t, err := parseTarget(c.Target)
	if err != nil {
		return target{}, &paramError{field: "target", err: err}
	}
	return t, nil
}

// get resolves t for a check; a target that is not there (or not JSON
// where JSON is needed) is a failed verdict saying so.
func (t target) get(in *Input) (*value, *Verdict) {
	v, err := t.resolve(in)
	if err != nil {
		vd := &Verdict{Reason: err.Error()}
		if t.hasPtr {
			vd.Path = t.ptrText
		}
		return nil, vd
	}
	return v, nil
}

// getJSON resolves t and returns its JSON.
func (t target) getJSON(in *Input) (*value, any, *Verdict) {
	v, bad := t.get(in)
	if bad != nil {
		return nil, nil, bad
	}
	doc, err := v.JSON()
	if err != nil {
		return nil, nil, &Verdict{Reason: err.Error()}
	}
	return v, doc, nil
}

var pass = Verdict{Passed: true}

func fail(format string, args ...any) Verdict {
	return Verdict{Reason: fmt.Sprintf(format, args...)}
}

// excerpt quotes s for a reason, cut to a readable length.
func excerpt(s string) string {
	const max = 80
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// compactJSON renders a JSON value for a reason.
func compactJSON(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return excerptRaw(string(b))
}

func excerptRaw(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func compileSchemaMatch(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if c.Schema == nil {
		return nil, badParam("schema", "required")
	}
	sch, err := compileSchema(c.Schema)
	if err != nil {
		return nil, &paramError{field: "schema", err: err}
	}
	return func(_ context.Context, in *Input) Verdict {
		_, doc, bad := t.getJSON(in)
		if bad != nil {
			return *bad
		}
		return schemaVerdict(sch, doc, t.ptrText)
	}, nil
}

func compileExists(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, in *Input) Verdict {
		v, bad := t.get(in)
		if bad != nil {
			return *bad
		}
		return existsVerdict(t, v, in)
	}, nil
}

// existsVerdict says whether a resolved target is non-empty: a file
// resource's file exists under the working directory; a value at a
// pointer is not null, "", [] or {}; a resource has text or data; an
// output, data part or artifact has a part with content.
func existsVerdict(t target, v *value, in *Input) Verdict {
	switch {
	case t.hasPtr:
		if jsonEmpty(v.jsonVal) {
			return Verdict{Reason: v.label + " is empty", Path: t.ptrText}
		}
		return pass
	case v.resource != nil:
		r := v.resource
		if r.Type == ResourceFile {
			if _, _, err := openInWorkDir(in.WorkDir, cmpOr(r.Location, t.name), false); err != nil {
				return fail("%s: %v", v.label, err)
			}
			return pass
		}
		if strings.TrimSpace(r.Text) != "" {
			return pass
		}
		if x, err := v.JSON(); err == nil && r.Data != nil && !jsonEmpty(x) {
			return pass
		}
		return fail("%s is empty", v.label)
	}
	for _, p := range v.parts {
		if partHasContent(p) {
			return pass
		}
	}
	return fail("%s is empty", v.label)
}

func partHasContent(p task.Part) bool {
	switch p.Kind {
	case task.PartText:
		return strings.TrimSpace(p.Text) != ""
	case task.PartData:
		s := strings.TrimSpace(string(p.Data))
		return s != "" && s != "null"
	case task.PartRaw:
		return len(p.Raw) > 0
	case task.PartURL:
		return p.URL != ""
	}
	return false
}

func compileRegex(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if c.Pattern == "" {
		return nil, badParam("pattern", "required")
	}
	re, err := regexp.Compile(c.Pattern)
	if err != nil {
		return nil, &paramError{field: "pattern", err: err}
	}
	return func(_ context.Context, in *Input) Verdict {
		v, bad := t.get(in)
		if bad != nil {
			return *bad
		}
		if re.MatchString(v.text) {
			return pass
		}
		return Verdict{Reason: fmt.Sprintf("%s does not match /%s/: %s", v.label, re, excerpt(v.text)), Path: t.ptrText}
	}, nil
}

func compileContains(want bool) compiler {
	return func(c *Check) (CheckFunc, error) {
		t, err := checkTarget(c)
		if err != nil {
			return nil, err
		}
		sub, ok := c.Value.(string)
		if !ok {
			return nil, badParam("value", "must be a string (%s looks for a substring), got %s", c.Type, jsonKind(c.Value))
		}
		if sub == "" {
			return nil, badParam("value", "must not be empty")
		}
		return func(_ context.Context, in *Input) Verdict {
			v, bad := t.get(in)
			if bad != nil {
				return *bad
			}
			if strings.Contains(v.text, sub) == want {
				return pass
			}
			if want {
				return Verdict{Reason: fmt.Sprintf("%s does not contain %q", v.label, sub), Path: t.ptrText}
			}
			i := strings.Index(v.text, sub)
			line := strings.Count(v.text[:i], "\n") + 1
			return Verdict{Reason: fmt.Sprintf("%s contains %q (line %d)", v.label, sub, line), Path: t.ptrText}
		}, nil
	}
}

// jsonKind names a value's JSON type for an error.
func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", x)
}

func compileEquals(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if c.Value == nil {
		return nil, badParam("value", "required (the value the target must equal)")
	}
	if s, ok := c.Value.(string); ok {
		want := strings.TrimSpace(s)
		return func(_ context.Context, in *Input) Verdict {
			v, bad := t.get(in)
			if bad != nil {
				return *bad
			}
			if strings.TrimSpace(v.text) == want {
				return pass
			}
			return Verdict{Reason: fmt.Sprintf("%s is %s, want %s", v.label, excerpt(strings.TrimSpace(v.text)), excerpt(want)), Path: t.ptrText}
		}, nil
	}
	want, ok := normalizeJSON(c.Value)
	if !ok {
		return nil, badParam("value", "is not JSON")
	}
	return func(_ context.Context, in *Input) Verdict {
		v, doc, bad := t.getJSON(in)
		if bad != nil {
			return *bad
		}
		if jsonEqual(doc, want) {
			return pass
		}
		return Verdict{Reason: fmt.Sprintf("%s is %s, want %s", v.label, compactJSON(doc), compactJSON(want)), Path: t.ptrText}
	}, nil
}

func compileJSONPath(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if c.Path == "" {
		return nil, badParam("path", "required")
	}
	jp, err := jsonpath.Parse(c.Path)
	if err != nil {
		return nil, &paramError{field: "path", err: err}
	}
	p := c.Path
	count := -1
	if c.Count != nil {
		if *c.Count < 0 {
			return nil, badParam("count", "must not be negative")
		}
		count = *c.Count
	}
	var want any
	hasWant := c.Value != nil
	if hasWant {
		var ok bool
		if want, ok = normalizeJSON(c.Value); !ok {
			return nil, badParam("value", "is not JSON")
		}
	}
	return func(_ context.Context, in *Input) Verdict {
		v, doc, bad := t.getJSON(in)
		if bad != nil {
			return *bad
		}
		nodes := jp.Select(doc)
		switch {
		case !hasWant && count < 0:
			if len(nodes) == 0 {
				return fail("%s selects nothing in %s", p, v.label)
			}
		case !hasWant:
			if len(nodes) != count {
				return fail("%s selects %d nodes in %s, want %d", p, len(nodes), v.label, count)
			}
		case count < 0:
			if len(nodes) != 1 {
				return fail("%s selects %d nodes in %s, want exactly 1 equal to %s", p, len(nodes), v.label, compactJSON(want))
			}
			if !jsonEqual(nodes[0], want) {
				return fail("%s is %s in %s, want %s", p, compactJSON(nodes[0]), v.label, compactJSON(want))
			}
		default:
			n := 0
			for _, x := range nodes {
				if jsonEqual(x, want) {
					n++
				}
			}
			if n != count {
				return fail("%s: %d of the %d nodes it selects in %s equal %s, want %d", p, n, len(nodes), v.label, compactJSON(want), count)
			}
		}
		return pass
	}, nil
}

func compileMaxDuration(c *Check) (CheckFunc, error) {
	if c.Target != "" && c.Target != "output" {
		return nil, badParam("target", "max_duration looks at the step's execution time and takes no target")
	}
	if c.Max == "" {
		return nil, badParam("max", "required (a Go duration such as \"30s\")")
	}
	max, err := time.ParseDuration(c.Max)
	if err != nil {
		return nil, &paramError{field: "max", err: err}
	}
	if max <= 0 {
		return nil, badParam("max", "must be positive")
	}
	return func(_ context.Context, in *Input) Verdict {
		if in.Duration <= max {
			return pass
		}
		return fail("the step took %s, more than the %s allowed", in.Duration.Round(time.Millisecond), max)
	}, nil
}

func compileMediaType(c *Check) (CheckFunc, error) {
	t, err := checkTarget(c)
	if err != nil {
		return nil, err
	}
	if t.hasPtr {
		return nil, badParam("target", "media_type looks at parts: a JSON pointer selects a value")
	}
	if c.MediaType == "" {
		return nil, badParam("mediaType", "required")
	}
	want, _, err := mime.ParseMediaType(c.MediaType)
	if err != nil {
		return nil, &paramError{field: "mediaType", err: err}
	}
	typ, sub, ok := strings.Cut(want, "/")
	if !ok || typ == "" || sub == "" || (typ == "*" && sub != "*") {
		return nil, badParam("mediaType", "%q is not TYPE/SUBTYPE, TYPE/* or */*", c.MediaType)
	}
	return func(_ context.Context, in *Input) Verdict {
		v, bad := t.get(in)
		if bad != nil {
			return *bad
		}
		if r := v.resource; r != nil {
			mt := resourceMediaType(r)
			if mediaTypeMatches(want, mt) {
				return pass
			}
			return fail("%s is %s, want %s", v.label, mt, want)
		}
		if len(v.parts) == 0 {
			return fail("%s has no parts", v.label)
		}
		for i, p := range v.parts {
			if mt := partMediaType(p); !mediaTypeMatches(want, mt) {
				return fail("%s: part %d is %s, want %s", v.label, i, mt, want)
			}
		}
		return pass
	}, nil
}

// partMediaType is a part's media type: its MediaType, else text/plain
// for text, application/json for data, application/octet-stream for
// files.
func partMediaType(p task.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch p.Kind {
	case task.PartText:
		return "text/plain"
	case task.PartData:
		return "application/json"
	}
	return "application/octet-stream"
}

// resourceMediaType is a resource's media type: its MediaType, else
// application/json when it has data, else text/plain.
func resourceMediaType(r *Resource) string {
	switch {
	case r.MediaType != "":
		return r.MediaType
	case r.Data != nil:
		return "application/json"
	}
	return "text/plain"
}

// mediaTypeMatches reports whether media type mt (parameters ignored)
// matches want ("type/subtype", "type/*" or "*/*"), case-insensitively.
func mediaTypeMatches(want, mt string) bool {
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	if want == "*/*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(want, "/*"); ok {
		typ, _, _ := strings.Cut(mt, "/")
		return typ == prefix
	}
	return mt == want
}
