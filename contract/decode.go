package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile input (fuzzing, alias bombs) cheap.
const (
	// maxErrors bounds the errors one decode, or one validation, collects.
	maxErrors = yamlnode.MaxErrors
	// maxKeyLen bounds a mapping key, quoted as JSON: YAML parsers refuse
	// implicit keys over 1024 characters, so a longer key would make a
	// contract that encodes to JSON nothing can read back.
	maxKeyLen = 1000
)

// Lines maps the field paths of a contract file ("steps[1].dependsOn[0]")
// to the lines they are on, so that errors found after decoding (by
// Validate, by Compile) can be placed.
type Lines map[string]int

// Line returns the line of path, or of its nearest enclosing field when
// path itself is not in the file (a required field that is missing is
// placed at the mapping that lacks it). It returns 0 when nothing
// encloses path.
func (l Lines) Line(path string) int {
	for {
		if n, ok := l[path]; ok {
			return n
		}
		if path == "" {
			return 0
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

// Place returns errs with File set to file and each Line set from the
// error's path (where it is not set already), sorted by line. Errors with
// no line come first; errors on the same line keep their order.
func (l Lines) Place(file string, errs Errors) Errors {
	out := make(Errors, len(errs))
	for i, e := range errs {
		if e.File == "" {
			e.File = file
		}
		if e.Line == 0 {
			e.Line = l.Line(e.Path)
		}
		out[i] = e
	}
	slices.SortStableFunc(out, func(a, b FieldError) int { return a.Line - b.Line })
	return out
}

// Parse decodes a contract from YAML or JSON (JSON is read as YAML, so
// both report lines). name is used in error messages only. Unknown
// fields, values of the wrong type, duplicate keys and anything JSON
// cannot represent are errors; the error is an Errors listing every
// problem found, in line order, each with its field path and line. Parse
// does not check the contract's structure: Validate does.
func Parse(name string, data []byte) (*AgentContract, error) {
	c, _, err := ParseLines(name, data)
	return c, err
}

// ParseLines is Parse that also returns the line of every field path,
// for placing the errors of later checks (Lines.Place).
func ParseLines(name string, data []byte) (*AgentContract, Lines, error) {
	c, lines, errs := decode(name, data)
	if len(errs) > 0 {
		return nil, lines, errs
	}
	return c, lines, nil
}

// decode decodes data, returning what it could decode (nil when the
// document is not a mapping or the decode stopped early) along with
// every error.
func decode(name string, data []byte) (*AgentContract, Lines, Errors) {
	lines := Lines{}
	root, errs := parseDocument(name, data)
	if len(errs) > 0 {
		return nil, lines, errs
	}
	if root == nil {
		return nil, lines, Errors{{File: name, Line: 1, Msg: "empty document: a contract needs at least version, id and steps"}}
	}
	d := newDecoder(name, lines)
	var c *AgentContract
	yamlnode.Run(func() {
		n := d.nodes.Resolve(root, "")
		if n == nil {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, "", "a contract is a mapping (version, id, steps, …), got %s", kindName(n))
			return
		}
		dec := &AgentContract{}
		d.value(root, "", reflect.ValueOf(dec).Elem())
		c = dec // not reached when the decode was stopped
	})
	slices.SortStableFunc(d.errs, func(a, b FieldError) int { return a.Line - b.Line })
	return c, lines, d.errs
}

// parseDocument parses data as exactly one YAML document and returns its
// root node (nil for an empty document). A syntax error is placed on the
// line of the mistake, as the configuration's are (yamlnode corrects
// go-yaml's line for its parser errors).
func parseDocument(file string, data []byte) (*yaml.Node, Errors) {
	root, p := yamlnode.ParseDocument(data, "a contract file")
	if p != nil {
		return nil, Errors{{File: file, Line: p.Line, Msg: p.Msg}}
	}
	return root, nil
}

// stop aborts a validation (too many errors); Validate recovers it.
type stop struct{}

// decoder decodes yaml.Node trees into the model's structs by their yaml
// tags, recording the line of every field path and every error. Aliases,
// merge keys and the limits are package yamlnode's.
type decoder struct {
	file  string
	lines Lines
	errs  Errors
	nodes yamlnode.Walker
}

func newDecoder(file string, lines Lines) *decoder {
	d := &decoder{file: file, lines: lines}
	d.nodes = yamlnode.Walker{
		Report:       func(n *yaml.Node, path, msg string) { d.errorf(n, path, "%s", msg) },
		KindName:     kindName,
		Key:          d.key,
		DuplicateKey: "duplicate key (first at line %d)",
	}
	return d
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := FieldError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	yamlnode.Collect(&d.errs, e, func(last FieldError) FieldError {
		return FieldError{File: d.file, Line: last.Line, Msg: "too many errors; stopping"}
	})
}

// mark records the line of path, keeping the first one recorded.
func (d *decoder) mark(path string, line int) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = line
	}
}

// value decodes node n at path into v, by v's type.
func (d *decoder) value(n *yaml.Node, path string, v reflect.Value) {
	if v.Kind() == reflect.Interface { // any (check.value)
		if x := d.anyValue(n, path); x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return
	}
	d.mark(path, n.Line)
	r := d.nodes.Resolve(n, path)
	if r == nil {
		return
	}
	d.nodes.Enter(r)
	defer d.nodes.Leave(r)
	if yamlnode.IsNull(r) {
		return // the zero value, as if the field were absent
	}
	if r.Kind == yaml.ScalarNode && !coreTag(r) {
		d.errorf(n, path, "unsupported YAML tag %s", r.Tag)
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.Kind != yaml.ScalarNode {
			d.errorf(n, path, "expected a string, got %s", kindName(r))
			return
		}
		if !utf8.ValidString(r.Value) {
			d.errorf(n, path, "invalid UTF-8")
			return
		}
		v.SetString(r.Value)
	case reflect.Pointer: // *int (check.count)
		if r.Kind != yaml.ScalarNode || r.ShortTag() != yamlnode.TagInt {
			d.errorf(n, path, "expected an integer, got %s", kindName(r))
			return
		}
		var i int
		if err := r.Decode(&i); err != nil {
			d.errorf(n, path, "expected an integer, got %s", kindName(r))
			return
		}
		v.Set(reflect.ValueOf(&i))
	case reflect.Slice:
		if r.Kind != yaml.SequenceNode {
			d.errorf(n, path, "expected a list, got %s", kindName(r))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(r.Content), len(r.Content))
		for i, item := range r.Content {
			d.value(item, yamlnode.Index(path, i), s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		d.structure(n, r, path, v)
	case reflect.Map: // map[string]any
		ps, ok := d.nodes.Pairs(n, r, path)
		if !ok {
			return
		}
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			kp := yamlnode.Join(path, p.Key)
			d.mark(kp, p.KeyNode.Line)
			m[p.Key] = d.anyValue(p.Value, kp)
		}
		v.Set(reflect.ValueOf(m))
	default:
		panic(fmt.Sprintf("contract: cannot decode into %s", v.Type()))
	}
}

// structure decodes mapping r (n before resolving) into struct v by its
// fields' yaml tags; keys that name no field are errors.
func (d *decoder) structure(n, r *yaml.Node, path string, v reflect.Value) {
	ps, ok := d.nodes.Pairs(n, r, path)
	if !ok {
		return
	}
	fields := fieldsOf(v.Type())
	for _, p := range ps {
		kp := yamlnode.Join(path, p.Key)
		i, ok := fields.index[p.Key]
		if !ok {
			d.errorf(p.KeyNode, kp, "unknown field %q%s", p.Key, suggest(p.Key, fields.names))
			continue
		}
		d.mark(kp, p.KeyNode.Line)
		d.value(p.Value, kp, v.Field(i))
	}
}

// structFields are a struct type's fields by yaml name.
type structFields struct {
	index map[string]int
	names []string
}

func fieldsOf(t reflect.Type) structFields {
	sf := structFields{index: map[string]int{}}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		sf.index[name] = i
		sf.names = append(sf.names, name)
	}
	return sf
}

// anyValue decodes n at path as JSON would: mappings (with string keys),
// lists, strings, numbers, booleans and null. Numbers are int when
// integral and in range, float64 otherwise; timestamps stay strings.
func (d *decoder) anyValue(n *yaml.Node, path string) any {
	d.mark(path, n.Line)
	r := d.nodes.Resolve(n, path)
	if r == nil {
		return nil
	}
	d.nodes.Enter(r)
	defer d.nodes.Leave(r)
	switch r.Kind {
	case yaml.MappingNode:
		ps, ok := d.nodes.Pairs(n, r, path)
		if !ok {
			return nil
		}
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			kp := yamlnode.Join(path, p.Key)
			d.mark(kp, p.KeyNode.Line)
			m[p.Key] = d.anyValue(p.Value, kp)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(r.Content))
		for i, item := range r.Content {
			s[i] = d.anyValue(item, yamlnode.Index(path, i))
		}
		return s
	case yaml.ScalarNode:
		return d.scalar(n, r, path)
	}
	d.errorf(n, path, "unexpected YAML node")
	return nil
}

// scalar converts a resolved scalar to its JSON value.
func (d *decoder) scalar(n, r *yaml.Node, path string) any {
	switch r.ShortTag() {
	case yamlnode.TagNull:
		return nil
	case yamlnode.TagBool:
		var b bool
		if err := r.Decode(&b); err != nil {
			d.errorf(n, path, "invalid boolean %q", r.Value)
			return nil
		}
		return b
	case yamlnode.TagInt:
		var x any
		if err := r.Decode(&x); err != nil {
			d.errorf(n, path, "invalid integer %q", r.Value)
			return nil
		}
		switch i := x.(type) {
		case int:
			return i
		case int64:
			if i >= math.MinInt && i <= math.MaxInt {
				return int(i)
			}
			return float64(i)
		case uint64:
			if i <= math.MaxInt {
				return int(i)
			}
			return float64(i)
		case float64:
			return i
		}
		d.errorf(n, path, "invalid integer %q", r.Value)
		return nil
	case yamlnode.TagFloat:
		var f float64
		if err := r.Decode(&f); err != nil {
			d.errorf(n, path, "invalid number %q", r.Value)
			return nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			d.errorf(n, path, "%s is not a JSON number", r.Value)
			return nil
		}
		if f == 0 {
			return 0.0 // JSON has no negative zero
		}
		return f
	case yamlnode.TagStr, yamlnode.TagTimestamp:
		if !utf8.ValidString(r.Value) {
			d.errorf(n, path, "invalid UTF-8")
			return nil
		}
		return r.Value
	}
	d.errorf(n, path, "unsupported YAML tag %s", r.Tag)
	return nil
}

// coreTag reports whether scalar n has one of the tags the decoder reads.
func coreTag(n *yaml.Node) bool {
	switch n.ShortTag() {
	case yamlnode.TagNull, yamlnode.TagBool, yamlnode.TagInt, yamlnode.TagFloat, yamlnode.TagStr, yamlnode.TagTimestamp:
		return true
	}
	return false
}

// key refuses a mapping key JSON could not carry back: invalid UTF-8,
// or too long.
func (d *decoder) key(k *yaml.Node, path string) bool {
	if !utf8.ValidString(k.Value) {
		d.errorf(k, path, "invalid UTF-8 in a key")
		return false
	}
	if len(k.Value) > maxKeyLen || jsonLen(k.Value) > maxKeyLen {
		d.errorf(k, path, "key longer than %d bytes", maxKeyLen)
		return false
	}
	return true
}

// kindName names a node's kind for messages: as yamlnode.KindName, but
// "an alias" for an alias and a long scalar cut to 40 bytes.
func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Kind == yaml.ScalarNode && !yamlnode.IsNull(n) && len(n.Value) > 40:
		return strconv.Quote(n.Value[:40] + "…")
	}
	return yamlnode.KindName(n)
}

// suggest proposes a known name close to an unknown one: the same name
// but for case, underscores and hyphens (depends_on → dependsOn), or one
// a few edits away.
func suggest(name string, known []string) string {
	return yamlnode.Suggester{Fold: foldName, MaxLen: 64}.Suggest(name, known)
}

// foldName is a name without case, underscores and hyphens.
func foldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}
