package yamlnode

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// MaxKeyLen bounds a mapping key the Decoder accepts, in bytes and
// quoted as JSON: YAML parsers refuse implicit keys over 1024
// characters, so a longer key would make a file that encodes to JSON
// nothing can read back.
const MaxKeyLen = 1000

// Lines maps the field paths of a file ("steps[1].dependsOn[0]") to the
// lines they are on, so that errors found after decoding can be placed.
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

// Decoder decodes yaml.Node trees into structs by their fields' yaml
// tags, as JSON would read the same document: strings, *int, slices,
// structs (a key that names no field is an error with a "did you mean"),
// maps with string keys and any (mappings, lists, strings, numbers,
// booleans and null). It records the line of every field path in Lines
// and reports every problem through Report; aliases, merge keys and the
// limits are the Walker's. Package contract and package toolspec decode
// their files with it, each with its own error type and a few options.
type Decoder struct {
	// Report records a problem at node n and field path (required); it
	// may abort the walk (Collect does at the error cap).
	Report func(n *yaml.Node, path, msg string)
	// Lines receives the line of every field path decoded (required).
	Lines Lines
	// DuplicateKey is the Walker's message for a key given twice.
	DuplicateKey string
	// TagsFirst refuses a scalar with a tag the decoder does not read
	// ("unsupported YAML tag !x") whatever the field's type. Without it
	// only a string field refuses it; a list, mapping or struct field
	// reports the scalar as the wrong kind of node.
	TagsFirst bool

	w Walker
}

// walker returns d's Walker, set up on first use.
func (d *Decoder) walker() *Walker {
	if d.w.Report == nil {
		d.w = Walker{
			Report:       d.Report,
			KindName:     ShortKindName,
			Key:          d.key,
			DuplicateKey: d.DuplicateKey,
		}
	}
	return &d.w
}

func (d *Decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.Report(n, path, fmt.Sprintf(format, args...))
}

// Document decodes root, the root node of a document (not nil), into dst,
// a pointer to a struct. A root that is no mapping is reported as
// notMapping followed by ", got " and what it is. It runs the walk
// itself (see Run).
func (d *Decoder) Document(root *yaml.Node, dst any, notMapping string) (ok bool) {
	Run(func() {
		w := d.walker()
		r := w.Resolve(root, "")
		if r == nil {
			return
		}
		if r.Kind != yaml.MappingNode {
			d.errorf(r, "", "%s, got %s", notMapping, ShortKindName(r))
			return
		}
		d.Value(root, "", reflect.ValueOf(dst).Elem())
		ok = true // not reached when the walk was stopped
	})
	return ok
}

func (d *Decoder) mark(path string, line int) {
	if _, ok := d.Lines[path]; !ok {
		d.Lines[path] = line
	}
}

// Value decodes node n at path into v, by v's type.
func (d *Decoder) Value(n *yaml.Node, path string, v reflect.Value) {
	if v.Kind() == reflect.Interface {
		if x := d.anyValue(n, path); x != nil {
			v.Set(reflect.ValueOf(x))
		}
		return
	}
	d.mark(path, n.Line)
	w := d.walker()
	r := w.Resolve(n, path)
	if r == nil {
		return
	}
	w.Enter(r)
	defer w.Leave(r)
	if IsNull(r) {
		return // the zero value, as if the field were absent
	}
	if r.Kind == yaml.ScalarNode && !coreTag(r) && (d.TagsFirst || v.Kind() == reflect.String) {
		d.errorf(n, path, "unsupported YAML tag %s", r.Tag)
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.Kind != yaml.ScalarNode {
			d.errorf(n, path, "expected a string, got %s", ShortKindName(r))
			return
		}
		if !utf8.ValidString(r.Value) {
			d.errorf(n, path, "invalid UTF-8")
			return
		}
		v.SetString(r.Value)
	case reflect.Pointer: // *int
		var i int
		if r.Kind != yaml.ScalarNode || r.ShortTag() != TagInt || r.Decode(&i) != nil {
			d.errorf(n, path, "expected an integer, got %s", ShortKindName(r))
			return
		}
		v.Set(reflect.ValueOf(&i))
	case reflect.Slice:
		if r.Kind != yaml.SequenceNode {
			d.errorf(n, path, "expected a list, got %s", ShortKindName(r))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(r.Content), len(r.Content))
		for i, item := range r.Content {
			d.Value(item, Index(path, i), s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		d.structure(n, r, path, v)
	case reflect.Map: // map[string]any, map[string]T
		ps, ok := w.Pairs(n, r, path)
		if !ok {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(ps))
		for _, p := range ps {
			kp := Join(path, p.Key)
			d.mark(kp, p.KeyNode.Line)
			e := reflect.New(v.Type().Elem()).Elem()
			d.Value(p.Value, kp, e)
			m.SetMapIndex(reflect.ValueOf(p.Key), e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("yamlnode: cannot decode into %s", v.Type()))
	}
}

// structure decodes mapping r (n before resolving) into struct v by its
// fields' yaml tags; keys that name no field are errors.
func (d *Decoder) structure(n, r *yaml.Node, path string, v reflect.Value) {
	ps, ok := d.walker().Pairs(n, r, path)
	if !ok {
		return
	}
	index, names := fieldsOf(v.Type())
	for _, p := range ps {
		kp := Join(path, p.Key)
		i, ok := index[p.Key]
		if !ok {
			d.errorf(p.KeyNode, kp, "unknown field %q%s", p.Key, SuggestName(p.Key, names))
			continue
		}
		d.mark(kp, p.KeyNode.Line)
		d.Value(p.Value, kp, v.Field(i))
	}
}

// fieldsOf returns a struct type's field indexes by yaml name, and the
// names in field order.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	index := map[string]int{}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		index[name] = i
		names = append(names, name)
	}
	return index, names
}

// anyValue decodes n at path as JSON would: mappings (with string keys),
// lists, strings, numbers, booleans and null. Numbers are int when
// integral and in range, float64 otherwise; timestamps stay strings.
func (d *Decoder) anyValue(n *yaml.Node, path string) any {
	d.mark(path, n.Line)
	w := d.walker()
	r := w.Resolve(n, path)
	if r == nil {
		return nil
	}
	w.Enter(r)
	defer w.Leave(r)
	switch r.Kind {
	case yaml.MappingNode:
		ps, ok := w.Pairs(n, r, path)
		if !ok {
			return nil
		}
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			kp := Join(path, p.Key)
			d.mark(kp, p.KeyNode.Line)
			m[p.Key] = d.anyValue(p.Value, kp)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(r.Content))
		for i, item := range r.Content {
			s[i] = d.anyValue(item, Index(path, i))
		}
		return s
	case yaml.ScalarNode:
		return d.scalar(n, r, path)
	}
	d.errorf(n, path, "unexpected YAML node")
	return nil
}

// scalar converts a resolved scalar to its JSON value.
func (d *Decoder) scalar(n, r *yaml.Node, path string) any {
	switch r.ShortTag() {
	case TagNull:
		return nil
	case TagBool:
		var b bool
		if err := r.Decode(&b); err != nil {
			d.errorf(n, path, "invalid boolean %q", r.Value)
			return nil
		}
		return b
	case TagInt:
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
	case TagFloat:
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
	case TagStr, TagTimestamp:
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
	case TagNull, TagBool, TagInt, TagFloat, TagStr, TagTimestamp:
		return true
	}
	return false
}

// key refuses a mapping key JSON could not carry back: invalid UTF-8,
// or longer than MaxKeyLen.
func (d *Decoder) key(k *yaml.Node, path string) bool {
	if !utf8.ValidString(k.Value) {
		d.errorf(k, path, "invalid UTF-8 in a key")
		return false
	}
	if len(k.Value) > MaxKeyLen || jsonLen(k.Value) > MaxKeyLen {
		d.errorf(k, path, "key longer than %d bytes", MaxKeyLen)
		return false
	}
	return true
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// ShortKindName names a node for messages as KindName does, but "an
// alias" for an alias and a long scalar cut to 40 bytes.
func ShortKindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Kind == yaml.ScalarNode && !IsNull(n) && len(n.Value) > 40:
		return strconv.Quote(n.Value[:40] + "…")
	}
	return KindName(n)
}

// SuggestName proposes a known name close to an unknown one, as the
// Decoder does for unknown fields: the same name but for case,
// underscores and hyphens (depends_on → dependsOn, toolId → tool_id), or
// one a few edits away.
func SuggestName(name string, known []string) string {
	return Suggester{Fold: FoldName, MaxLen: 64}.Suggest(name, known)
}

// FoldName is a name without case, underscores and hyphens.
func FoldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}
