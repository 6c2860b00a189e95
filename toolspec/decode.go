package toolspec

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

// maxKeyLen bounds a mapping key: YAML parsers refuse implicit keys over
// 1024 characters, so a longer one would not read back.
const maxKeyLen = 1000

// ParseError is one thing wrong with a catalogue or ToolSpecs file: the
// file and line, the field path ("adapters[2].operations.search") and
// what is wrong.
type ParseError struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseErrors is every ParseError of one file, in line order.
type ParseErrors []ParseError

func (es ParseErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// lines maps field paths to the lines they are on, to place the errors
// found after decoding.
type lines map[string]int

// line returns the line of path or of its nearest enclosing field.
func (l lines) line(path string) int {
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

// toolSpecsFile is the document ParseToolSpecs reads.
type toolSpecsFile struct {
	ToolSpecs []ToolSpec `json:"toolspecs" yaml:"toolspecs"`
}

// ParseCatalogue decodes a catalogue `{adapters: [...]}` from YAML or
// JSON (JSON is read as YAML, so both report lines) and validates every
// contract (adapter_id, semver version, status, compilable schemas, no
// adapter twice). name is used in errors and as the catalogue's Source.
// The error is a ParseErrors listing every problem, in line order.
func ParseCatalogue(name string, data []byte) (*Catalogue, error) {
	var c Catalogue
	ls, errs := decodeFile(name, data, &c, "a catalogue file", "a catalogue is a mapping {adapters: [...]}")
	if len(errs) == 0 {
		errs = place(name, ls, validateCatalogue(&c))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c.Source = name
	return &c, nil
}

// ParseToolSpecs decodes a ToolSpecs file `{toolspecs: [...]}` from YAML
// or JSON. Each ToolSpec needs a tool_id (unique in the file) and an
// execution_mode (local or remote), a semver adapter_contract_version
// when one is given, and schemas that compile; whether the mapping holds
// is for Registry.Check, not for the decoder.
func ParseToolSpecs(name string, data []byte) ([]ToolSpec, error) {
	var f toolSpecsFile
	ls, errs := decodeFile(name, data, &f, "a ToolSpecs file", "a ToolSpecs file is a mapping {toolspecs: [...]}")
	if len(errs) == 0 {
		var fe []fieldError
		seen := map[string]int{}
		for i, ts := range f.ToolSpecs {
			p := yamlnode.Index("toolspecs", i)
			fe = append(fe, validateToolSpec(p, ts)...)
			if ts.ToolID == "" {
				continue
			}
			if j, dup := seen[ts.ToolID]; dup {
				fe = append(fe, fieldError{yamlnode.Join(p, "tool_id"),
					fmt.Sprintf("tool_id %q is given twice (first at toolspecs[%d], line %d)", ts.ToolID, j, ls.line(yamlnode.Index("toolspecs", j)))})
				continue
			}
			seen[ts.ToolID] = i
		}
		errs = place(name, ls, fe)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if f.ToolSpecs == nil {
		f.ToolSpecs = []ToolSpec{}
	}
	return f.ToolSpecs, nil
}

// fieldError is a problem found after decoding, placed by its path.
type fieldError struct{ path, msg string }

func place(file string, ls lines, fe []fieldError) ParseErrors {
	var out ParseErrors
	for _, e := range fe {
		out = append(out, ParseError{File: file, Line: ls.line(e.path), Path: e.path, Msg: e.msg})
	}
	slices.SortStableFunc(out, func(a, b ParseError) int { return a.Line - b.Line })
	return out
}

// decodeFile parses data as one YAML document and decodes it into dst
// (a pointer to a struct), recording every field's line.
func decodeFile(name string, data []byte, dst any, what, notMapping string) (lines, ParseErrors) {
	ls := lines{}
	root, p := yamlnode.ParseDocument(data, what)
	if p != nil {
		return ls, ParseErrors{{File: name, Line: p.Line, Msg: p.Msg}}
	}
	if root == nil {
		return ls, ParseErrors{{File: name, Line: 1, Msg: "empty document: " + notMapping}}
	}
	d := &decoder{file: name, lines: ls}
	d.nodes = yamlnode.Walker{
		Report:   func(n *yaml.Node, path, msg string) { d.errorf(n, path, "%s", msg) },
		KindName: kindName,
		Key:      d.key,
	}
	yamlnode.Run(func() {
		r := d.nodes.Resolve(root, "")
		if r == nil {
			return
		}
		if r.Kind != yaml.MappingNode {
			d.errorf(root, "", "%s, got %s", notMapping, kindName(r))
			return
		}
		d.value(root, "", reflect.ValueOf(dst).Elem())
	})
	slices.SortStableFunc(d.errs, func(a, b ParseError) int { return a.Line - b.Line })
	return ls, d.errs
}

// decoder decodes yaml.Node trees into the model's structs by their yaml
// tags; aliases, merge keys and limits are package yamlnode's.
type decoder struct {
	file  string
	lines lines
	errs  ParseErrors
	nodes yamlnode.Walker
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := ParseError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	yamlnode.Collect(&d.errs, e, func(last ParseError) ParseError {
		return ParseError{File: d.file, Line: last.Line, Msg: "too many errors; stopping"}
	})
}

func (d *decoder) mark(path string, line int) {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = line
	}
}

// value decodes node n at path into v, by v's type.
func (d *decoder) value(n *yaml.Node, path string, v reflect.Value) {
	if v.Kind() == reflect.Interface {
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
	switch v.Kind() {
	case reflect.String:
		if r.Kind != yaml.ScalarNode {
			d.errorf(n, path, "expected a string, got %s", kindName(r))
			return
		}
		switch r.ShortTag() {
		case yamlnode.TagStr, yamlnode.TagInt, yamlnode.TagFloat, yamlnode.TagBool, yamlnode.TagTimestamp:
		default:
			d.errorf(n, path, "unsupported YAML tag %s", r.Tag)
			return
		}
		if !utf8.ValidString(r.Value) {
			d.errorf(n, path, "invalid UTF-8")
			return
		}
		v.SetString(r.Value)
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
		ps, ok := d.nodes.Pairs(n, r, path)
		if !ok {
			return
		}
		fields, names := fieldsOf(v.Type())
		for _, p := range ps {
			kp := yamlnode.Join(path, p.Key)
			i, ok := fields[p.Key]
			if !ok {
				d.errorf(p.KeyNode, kp, "unknown field %q%s", p.Key,
					yamlnode.Suggester{Fold: foldName, MaxLen: 64}.Suggest(p.Key, names))
				continue
			}
			d.mark(kp, p.KeyNode.Line)
			d.value(p.Value, kp, v.Field(i))
		}
	case reflect.Map: // map[string]any, map[string]Operation
		ps, ok := d.nodes.Pairs(n, r, path)
		if !ok {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(ps))
		for _, p := range ps {
			kp := yamlnode.Join(path, p.Key)
			d.mark(kp, p.KeyNode.Line)
			e := reflect.New(v.Type().Elem()).Elem()
			d.value(p.Value, kp, e)
			m.SetMapIndex(reflect.ValueOf(p.Key), e)
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("toolspec: cannot decode into %s", v.Type()))
	}
}

// fieldsOf returns a struct type's fields by yaml name, and the names.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		idx[name] = i
		names = append(names, name)
	}
	return idx, names
}

// anyValue decodes n as JSON would: mappings, lists, strings, numbers
// (int when integral and in range, else float64), booleans and null.
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

// key refuses a mapping key JSON could not carry back.
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

// kindName names a node for messages, cutting long scalars.
func kindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Kind == yaml.ScalarNode && !yamlnode.IsNull(n) && len(n.Value) > 40:
		return strconv.Quote(n.Value[:40] + "…")
	}
	return yamlnode.KindName(n)
}

// foldName is a name without case, underscores and hyphens, so that
// toolId or tool-id suggests tool_id.
func foldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}
