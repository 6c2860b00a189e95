package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pactum/pactum/task"
)

// targetKind is what a target's base names.
type targetKind int

const (
	targetOutput targetKind = iota
	targetData
	targetArtifact
	targetResource
)

// target is a parsed Check.Target: a base (output, data, artifact:NAME,
// resource:ID) and an optional JSON pointer into the base's JSON.
type target struct {
	kind targetKind
	// name is the artifact's name or id, or the resource's id.
	name string
	// base is the base as written ("output", "artifact:report"): the key
	// under which a gate memoizes the base's resolution.
	base string
	// hasPtr says a pointer was given ("output#" selects the whole
	// document, as RFC 6901's empty pointer does); ptr holds its
	// unescaped reference tokens and ptrText the pointer as written.
	hasPtr  bool
	ptr     []string
	ptrText string
}

// String returns the target as written (with the default filled in).
func (t target) String() string {
	if t.hasPtr {
		return t.base + "#" + t.ptrText
	}
	return t.base
}

// parseTarget parses a Check.Target. The empty target is "output"; so is
// an empty base before "#" ("#/summary" is "output#/summary"). An artifact
// name or resource id cannot contain "#": the first "#" starts the
// pointer.
func parseTarget(s string) (target, error) {
	base, ptr, hasPtr := strings.Cut(s, "#")
	var t target
	switch {
	case base == "" || base == "output":
		t = target{kind: targetOutput, base: "output"}
	case base == "data":
		t = target{kind: targetData, base: "data"}
	case strings.HasPrefix(base, "artifact:"):
		t = target{kind: targetArtifact, name: strings.TrimPrefix(base, "artifact:"), base: base}
		if t.name == "" {
			return target{}, errors.New(`"artifact:" needs an artifact's name or id`)
		}
	case strings.HasPrefix(base, "resource:"):
		t = target{kind: targetResource, name: strings.TrimPrefix(base, "resource:"), base: base}
		if t.name == "" {
			return target{}, errors.New(`"resource:" needs a resource id`)
		}
	default:
		return target{}, fmt.Errorf("unknown target %q (want output, data, artifact:NAME or resource:ID, optionally followed by #/json/pointer)", s)
	}
	if hasPtr {
		toks, err := parsePointer(ptr)
		if err != nil {
			return target{}, err
		}
		t.hasPtr, t.ptr, t.ptrText = true, toks, ptr
	}
	return t, nil
}

// parsePointer parses an RFC 6901 JSON pointer into its reference tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q must be empty or start with \"/\"", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, tok := range parts {
		if !strings.Contains(tok, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(tok); j++ {
			if tok[j] != '~' {
				b.WriteByte(tok[j])
				continue
			}
			if j+1 >= len(tok) || (tok[j+1] != '0' && tok[j+1] != '1') {
				return nil, fmt.Errorf("JSON pointer %q: \"~\" must be followed by 0 or 1", p)
			}
			if tok[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, nil
}

// pointerGet returns the value at toks in v, and whether there is one.
func pointerGet(v any, toks []string) (any, bool) {
	for _, tok := range toks {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// arrayIndex parses an RFC 6901 array index: decimal digits, no leading
// zero ("-", the element after the last, is never present).
func arrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

// escapePointerToken escapes one reference token for a JSON pointer.
func escapePointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// value is a resolved target: what a check looks at.
type value struct {
	// label names it in reasons ("output", `artifact "report"`,
	// "output#/summary").
	label string
	// text is its text: its text parts joined by newlines, or, without
	// text parts, its first data part's JSON; a pointer's string value,
	// or the JSON of any other value.
	text string
	// parts are its parts (media_type, exists); a resource has none.
	parts []task.Part
	// resource is set for a resource target.
	resource *Resource

	// data is the first data part's JSON (nil without one).
	data json.RawMessage
	// JSON, parsed at most once: from data, else from text; or set
	// directly (a pointer's value, a resource's Data).
	jsonOnce sync.Once
	jsonVal  any
	jsonErr  error
	jsonSet  bool
}

// JSON returns the value's JSON: its first data part, else its text
// parsed as JSON.
func (v *value) JSON() (any, error) {
	if v.jsonSet {
		return v.jsonVal, v.jsonErr
	}
	v.jsonOnce.Do(func() {
		src := v.data
		if src == nil {
			src = []byte(v.text)
		}
		var x any
		if err := json.Unmarshal(src, &x); err != nil {
			v.jsonErr = fmt.Errorf("%s is not JSON: %w", v.label, err)
			return
		}
		v.jsonVal = x
	})
	return v.jsonVal, v.jsonErr
}

// absent is a target that is not there, with the reason.
type absent struct{ reason string }

func (a *absent) Error() string { return a.reason }

// resolve finds t in in. A target that is not there is an *absent error;
// a pointer into a base that is not JSON is an error saying so.
func (t target) resolve(in *Input) (*value, error) {
	var base *value
	var err error
	if in.memo != nil {
		base, err = in.memo.base(t, in)
	} else {
		base, err = t.resolveBase(in)
	}
	if err != nil || !t.hasPtr {
		return base, err
	}
	doc, err := base.JSON()
	if err != nil {
		return nil, err
	}
	x, ok := pointerGet(doc, t.ptr)
	if !ok {
		return nil, &absent{fmt.Sprintf("%s has no value at %q", base.label, t.ptrText)}
	}
	v := &value{label: t.String(), jsonVal: x, jsonSet: true}
	if s, ok := x.(string); ok {
		v.text = s
	} else {
		b, _ := json.Marshal(x)
		v.text = string(b)
	}
	return v, nil
}

func (t target) resolveBase(in *Input) (*value, error) {
	switch t.kind {
	case targetOutput:
		if in.Result == nil {
			return nil, &absent{"there is no output (the step has not run)"}
		}
		return outputValue(in.Result), nil
	case targetData:
		if in.Result == nil {
			return nil, &absent{"there is no output (the step has not run)"}
		}
		out := outputValue(in.Result)
		if out.data == nil {
			return nil, &absent{"the output has no data part"}
		}
		return &value{label: "data", text: string(bytes.TrimSpace(out.data)), data: out.data,
			parts: []task.Part{task.DataPart(out.data)}}, nil
	case targetArtifact:
		var arts []task.Artifact
		if in.Result != nil {
			arts = in.Result.Artifacts
		}
		a := findArtifact(arts, t.name)
		if a == nil {
			names := make([]string, 0, len(arts))
			for _, a := range arts {
				names = append(names, cmpOr(a.Name, a.ID))
			}
			list := "no artifacts"
			if len(names) > 0 {
				list = "artifacts: " + strings.Join(names, ", ")
			}
			return nil, &absent{fmt.Sprintf("artifact %q not found (%s)", t.name, list)}
		}
		v := partsValue(a.Parts)
		v.label = fmt.Sprintf("artifact %q", t.name)
		return v, nil
	case targetResource:
		r, ok := in.Resources[t.name]
		if !ok {
			ids := make([]string, 0, len(in.Resources))
			for id := range in.Resources {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			list := "no resources"
			if len(ids) > 0 {
				list = "resources: " + strings.Join(ids, ", ")
			}
			return nil, &absent{fmt.Sprintf("resource %q not available (%s)", t.name, list)}
		}
		return resourceValue(t.name, &r), nil
	}
	return nil, fmt.Errorf("unknown target kind %d", t.kind)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// findArtifact returns the artifact named name, else the one with that id.
func findArtifact(arts []task.Artifact, name string) *task.Artifact {
	for i := range arts {
		if arts[i].Name == name {
			return &arts[i]
		}
	}
	for i := range arts {
		if arts[i].ID == name {
			return &arts[i]
		}
	}
	return nil
}

// OutputText returns the text the "output" check target reads in r: the
// artifacts' and the status message's text parts, in order, joined by
// newlines (a status message that repeats the artifacts' text counts
// once); without text parts, the first data part's JSON. A nil r has none.
func OutputText(r *task.Result) string {
	if r == nil {
		return ""
	}
	return outputValue(r).text
}

// outputValue is the step's output: the artifacts' and the status
// message's parts, in order. A status message that repeats the
// artifacts' text is left out: the built-in runtimes answer with the text
// as an artifact and again as the final status message, and the output is
// that text once.
func outputValue(r *task.Result) *value {
	n := 0
	for _, a := range r.Artifacts {
		n += len(a.Parts)
	}
	msg := r.Message
	if msg != nil && len(r.Artifacts) > 0 && repeatsArtifacts(msg, r.Artifacts) {
		msg = nil
	}
	if msg != nil {
		n += len(msg.Parts)
	}
	var parts []task.Part
	switch {
	case msg == nil && len(r.Artifacts) == 1:
		// One artifact (the built-in runtimes' answer): its parts, not
		// a copy; nothing changes them.
		parts = r.Artifacts[0].Parts
	case msg != nil && len(r.Artifacts) == 0:
		parts = msg.Parts
	default:
		parts = make([]task.Part, 0, n)
		for _, a := range r.Artifacts {
			parts = append(parts, a.Parts...)
		}
		if msg != nil {
			parts = append(parts, msg.Parts...)
		}
	}
	v := partsValue(parts)
	v.label = "output"
	return v
}

// partsValue is the value of a list of parts: their text parts joined by
// newlines, or without any, the first data part's JSON.
func partsValue(parts []task.Part) *value {
	v := &value{parts: parts}
	texts := 0
	var first string
	for _, p := range parts {
		switch p.Kind {
		case task.PartText:
			if texts == 0 {
				first = p.Text
			}
			texts++
		case task.PartData:
			if v.data == nil && len(p.Data) > 0 {
				v.data = p.Data
			}
		}
	}
	switch {
	case texts == 1:
		v.text = first
	case texts > 1:
		var b strings.Builder
		n := 0
		for _, p := range parts {
			if p.Kind != task.PartText {
				continue
			}
			if n > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
			n++
		}
		v.text = b.String()
	case v.data != nil:
		v.text = string(bytes.TrimSpace(v.data))
	}
	return v
}

// resourceValue is a resource's value: its Text, and its Data as JSON
// (else its Text parsed as JSON).
func resourceValue(id string, r *Resource) *value {
	v := &value{label: fmt.Sprintf("resource %q", id), text: r.Text, resource: r}
	if r.Data != nil {
		v.jsonVal, v.jsonSet = normalizeJSON(r.Data)
		if !v.jsonSet {
			v.jsonErr, v.jsonSet = fmt.Errorf("resource %q: its data is not JSON", id), true
		}
		if v.text == "" {
			b, _ := json.Marshal(v.jsonVal)
			v.text = string(b)
		}
	}
	return v
}

// normalizeJSON returns x as encoding/json decodes JSON into an any
// (maps, slices, float64, string, bool, nil), converting through JSON when
// it holds other Go types; false when it cannot be encoded.
func normalizeJSON(x any) (any, bool) {
	if plainJSON(x, 0) {
		return x, true
	}
	var b []byte
	var err error
	if raw, ok := x.(json.RawMessage); ok {
		b = raw
	} else if b, err = json.Marshal(x); err != nil {
		return nil, false
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, false
	}
	return out, true
}

// plainJSON reports whether x holds only the types encoding/json decodes
// into (up to a depth, beyond which it says no and x is converted).
func plainJSON(x any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := x.(type) {
	case nil, string, float64, bool:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonEqual compares two values as JSON: numbers by value, objects by
// their members, arrays element by element.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonEmpty reports whether x is null, "", [] or {}.
func jsonEmpty(x any) bool {
	switch x := x.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// openInWorkDir stats (and, when read is set, reads) the file at loc
// under dir, refusing a path that leaves dir (absolute, "..", or through
// a symbolic link).
func openInWorkDir(dir, loc string, read bool) (os.FileInfo, []byte, error) {
	if dir == "" {
		return nil, nil, errors.New("no working directory to look for files in")
	}
	if loc == "" {
		return nil, nil, errors.New("no file location")
	}
	if !filepath.IsLocal(filepath.FromSlash(loc)) {
		return nil, nil, fmt.Errorf("file %q is outside the working directory", loc)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("working directory: %w", err)
	}
	defer root.Close()
	name := filepath.FromSlash(loc)
	fi, err := root.Stat(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("file %q does not exist under the working directory", loc)
		}
		if strings.Contains(err.Error(), "path escapes from parent") { // os.Root's error, not exported
			return nil, nil, fmt.Errorf("file %q leads outside the working directory (through a symbolic link)", loc)
		}
		return nil, nil, fmt.Errorf("file %q: %w", loc, err)
	}
	if !read {
		return fi, nil, nil
	}
	if fi.IsDir() {
		return nil, nil, fmt.Errorf("file %q is a directory", loc)
	}
	if fi.Size() > maxFileResource {
		return nil, nil, fmt.Errorf("file %q is %d bytes, more than the %d a file resource may have", loc, fi.Size(), maxFileResource)
	}
	b, err := root.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("file %q: %w", loc, err)
	}
	return fi, b, nil
}

// maxFileResource bounds how much of a file resource is read into memory.
const maxFileResource = 32 << 20

// memo holds the targets one gate has resolved, so that ten checks on the
// output join its text and parse its JSON once. A gate's checks name a
// few bases ("output", an artifact or two): a short list, not a map.
type memo struct {
	mu    sync.Mutex
	bases []memoEntry
	first [4]memoEntry
}

type memoEntry struct {
	base string
	v    *value
	err  error
}

func (m *memo) base(t target, in *Input) (*value, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.bases {
		if e := &m.bases[i]; e.base == t.base {
			return e.v, e.err
		}
	}
	v, err := t.resolveBase(in)
	if m.bases == nil {
		m.bases = m.first[:0]
	}
	m.bases = append(m.bases, memoEntry{t.base, v, err})
	return v, err
}

// memoInput is an Input with its memo, made in one allocation.
type memoInput struct {
	in Input
	m  memo
}

// withMemo returns a copy of in that memoizes resolved targets for the
// length of one gate.
func (in *Input) withMemo() *Input {
	c := &memoInput{}
	if in != nil {
		c.in = *in
	}
	c.in.memo = &c.m
	return &c.in
}

// repeatsArtifacts reports whether m's text is the artifacts' text (their
// text parts joined by newlines) and m has nothing else.
func repeatsArtifacts(m *task.Message, arts []task.Artifact) bool {
	var wantBuf, gotBuf [4]string
	want := wantBuf[:0]
	for _, a := range arts {
		for _, p := range a.Parts {
			if p.Kind == task.PartText {
				want = append(want, p.Text)
			}
		}
	}
	got := gotBuf[:0]
	for _, p := range m.Parts {
		if p.Kind != task.PartText {
			return false
		}
		got = append(got, p.Text)
	}
	if len(got) == 1 && len(want) == 1 {
		return got[0] == want[0]
	}
	return len(got) > 0 && strings.Join(got, "\n") == strings.Join(want, "\n")
}
