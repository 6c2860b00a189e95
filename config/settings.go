package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// RuntimeSpec is what a runtime needs to build agent a: its name and type,
// a strict decoder of its settings and the directory that resolves relative
// paths. It has exactly the fields of agent.Spec, in the same order, so the
// code that builds runtimes (internal/node) converts it with
// agent.Spec(spec): package config does not import package agent, so that
// parsing a file never builds or registers a runtime.
type RuntimeSpec struct {
	// Name is the agent's name.
	Name string
	// Type is the runtime type name, e.g. "exec".
	Type string
	// Decode strictly decodes the runtime's settings (the mapping under the
	// key named after the type) into v. Nil means no settings were given.
	Decode func(v any) error
	// BaseDir resolves relative paths (the config file's directory).
	BaseDir string
}

// DecodeInto decodes the spec's settings into v, leaving v untouched when
// there are none.
func (s RuntimeSpec) DecodeInto(v any) error {
	if s.Decode == nil {
		return nil
	}
	return s.Decode(v)
}

// AgentSpec returns the RuntimeSpec that builds a: its Decode strictly
// decodes a.Settings into the runtime's settings struct. Unknown keys, wrong
// types and bad durations come back as Errors naming file, line, column and
// field path (e.g. `pactum.yaml:14:7: agents[1].exec.comand: unknown field
// "comand"`). An empty baseDir means the directory of the configuration
// file.
//
// Decode follows go-yaml's field naming (the `yaml:"name"` tag, else the
// lower-cased field name; `yaml:",inline"` structs and maps are supported)
// and hands types implementing yaml.Unmarshaler or encoding.TextUnmarshaler,
// time.Time, yaml.Node and interface values to go-yaml. time.Duration and
// Duration fields take strings such as "30s".
func (c *Config) AgentSpec(a Agent, baseDir string) RuntimeSpec {
	spec := RuntimeSpec{Name: a.Name, Type: a.Type, BaseDir: c.baseDir(baseDir)}
	if a.Settings != nil {
		file, path, node := c.file, c.agentPath(a)+"."+a.Type, a.Settings
		spec.Decode = func(v any) error { return decodeSettings(file, path, node, v) }
	}
	return spec
}

// agentPath is the field path of a in c ("agents[1]").
func (c *Config) agentPath(a Agent) string {
	if a.path != "" {
		return a.path // a definition's agent: its runtime entry
	}
	i := a.index
	if i < 0 || i >= len(c.Agents) || c.Agents[i].Name != a.Name {
		i = -1
		for j := range c.Agents {
			if c.Agents[j].Name == a.Name {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return fmt.Sprintf("agents[%q]", a.Name)
	}
	return index("agents", i)
}

// decodeSettings strictly decodes node into v, a non-nil pointer.
func decodeSettings(file, path string, node *yaml.Node, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("config: decoding %s: want a non-nil pointer, got %T", path, v)
	}
	w := newWalker(file)
	w.run(func() { w.decode(node, path, rv.Elem()) })
	return w.errs.err()
}

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
	configDurationType  = reflect.TypeFor[Duration]()
	timeType            = reflect.TypeFor[time.Time]()
	nodeType            = reflect.TypeFor[yaml.Node]()
)

// decode decodes n into v (settable), reporting errors with positions.
func (w *walker) decode(n *yaml.Node, path string, v reflect.Value) {
	r := w.resolve(n, path)
	if r == nil {
		return
	}
	w.enter(r)
	defer w.leave(r)
	n = r
	if isNull(n) {
		// As go-yaml: null clears pointers, maps, slices and interfaces and
		// leaves other values alone.
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		return
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		w.decode(n, path, v.Elem())
		return
	}
	t := v.Type()
	switch {
	case t == durationType:
		if d, ok := w.duration(n, path, -1<<63); ok {
			v.SetInt(int64(d.Duration))
		}
		return
	case t == configDurationType:
		if d, ok := w.duration(n, path, -1<<63); ok {
			v.Set(reflect.ValueOf(d))
		}
		return
	case t == timeType || t == nodeType || t.Kind() == reflect.Interface ||
		reflect.PointerTo(t).Implements(unmarshalerType):
		w.delegate(n, path, v)
		return
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		if n.Kind != yaml.ScalarNode {
			w.errorf(n, path, "expected a string, got %s", kindName(n))
			return
		}
		w.delegate(n, path, v)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		w.decodeStruct(n, path, v)
	case reflect.Map:
		w.decodeMap(n, path, v, nil)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && n.Kind == yaml.ScalarNode {
			w.delegate(n, path, v) // !!binary or a string, as go-yaml
			return
		}
		if n.Kind != yaml.SequenceNode {
			w.errorf(n, path, "expected a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			w.decode(item, index(path, i), s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		if n.Kind != yaml.SequenceNode || len(n.Content) != t.Len() {
			w.errorf(n, path, "expected a list of %d items, got %s", t.Len(), kindName(n))
			return
		}
		for i, item := range n.Content {
			w.decode(item, index(path, i), v.Index(i))
		}
	case reflect.String:
		if s, ok := w.str(n, path); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if b, ok := w.boolean(n, path); ok {
			v.SetBool(b)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.decodeInt(n, path, v)
	case reflect.Float32, reflect.Float64:
		tag := n.ShortTag()
		if n.Kind != yaml.ScalarNode || (tag != tagInt && tag != tagFloat) {
			w.errorf(n, path, "expected a number, got %s", kindName(n))
			return
		}
		w.delegate(n, path, v)
	default:
		w.errorf(n, path, "cannot decode into Go type %s", t)
	}
}

// decodeInt decodes an integer of v's kind, refusing floats and overflow.
func (w *walker) decodeInt(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tagInt {
		w.errorf(n, path, "expected an integer, got %s", kindName(n))
		return
	}
	p := reflect.New(v.Type())
	if err := n.Decode(p.Interface()); err != nil {
		w.errorf(n, path, "integer %s out of range for %s", n.Value, v.Type())
		return
	}
	v.Set(p.Elem())
}

// yamlLinePrefix is go-yaml's position prefix in TypeError lines.
var yamlLinePrefix = regexp.MustCompile(`^line \d+: `)

// delegate lets go-yaml decode n into v (custom unmarshalers, time.Time,
// interfaces), mapping its errors to this node's position.
func (w *walker) delegate(n *yaml.Node, path string, v reflect.Value) {
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	err := n.Decode(p.Interface())
	if err == nil {
		v.Set(p.Elem())
		return
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = yamlLinePrefix.ReplaceAllString(m, "")
		}
		w.wrapf(n, path, err, "%s", strings.Join(msgs, "; "))
		return
	}
	w.wrapf(n, path, err, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
}

// structField is a settable field of a struct and its YAML key.
type structField struct {
	key   string
	index []int
	// check holds the field's `check` tag constraints (nil: none).
	check *check
}

// structFields lists t's YAML keys as go-yaml names them, descending into
// `,inline` structs; inlineMap is the index of an `,inline` map field, if any.
func structFields(t reflect.Type) (fields map[string]structField, inlineMap []int) {
	fields = map[string]structField{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			tag := f.Tag.Get("yaml")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), prefix...), i)
			if slices.Contains(strings.Split(opts, ","), "inline") {
				ft := f.Type
				switch {
				case ft.Kind() == reflect.Struct:
					walk(ft, idx)
				case ft.Kind() == reflect.Map && inlineMap == nil:
					inlineMap = idx
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if _, dup := fields[name]; !dup {
				fields[name] = structField{name, idx, parseCheck(f.Tag.Get("check"), f.Type)}
			}
		}
	}
	walk(t, nil)
	return fields, inlineMap
}

// decodeStruct decodes a mapping into a struct, refusing unknown keys unless
// the struct has an inline map to collect them.
func (w *walker) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	fields, inline := structFields(v.Type())
	ps, ok := w.pairs(n, path)
	if !ok {
		return
	}
	var rest []pair
	for _, p := range ps {
		f, known := fields[p.key]
		if !known {
			if inline == nil {
				w.errorf(p.keyN, join(path, p.key), "unknown field %q%s", p.key, suggest(p.key, mapKeys(fields)))
			} else {
				rest = append(rest, p)
			}
			continue
		}
		if f.check != nil {
			w.decodeChecked(p.value, join(path, p.key), fieldByIndex(v, f.index), f.check)
			continue
		}
		w.decode(p.value, join(path, p.key), fieldByIndex(v, f.index))
	}
	if len(rest) > 0 {
		w.decodeMap(n, path, fieldByIndex(v, inline), rest)
	}
}

// fieldByIndex is v.FieldByIndex, allocating nil embedded pointers.
func fieldByIndex(v reflect.Value, idx []int) reflect.Value {
	for i, x := range idx {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// decodeMap decodes a mapping (or the given pairs of one) into a map.
func (w *walker) decodeMap(n *yaml.Node, path string, v reflect.Value, ps []pair) {
	if ps == nil {
		var ok bool
		if ps, ok = w.pairs(n, path); !ok {
			return
		}
	}
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(ps)))
	}
	for _, p := range ps {
		kpath := join(path, p.key)
		k := reflect.New(t.Key()).Elem()
		if t.Key().Kind() == reflect.String {
			k.SetString(p.key)
		} else {
			w.decode(p.keyN, kpath, k)
		}
		e := reflect.New(t.Elem()).Elem()
		w.decode(p.value, kpath, e)
		v.SetMapIndex(k, e)
	}
}

// mapKeys returns m's keys.
func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// suggest proposes a known key close to an unknown one; of keys as close,
// the first in alphabetical order.
func suggest(key string, known []string) string {
	slices.Sort(known)
	return yamlnode.Suggester{}.Suggest(key, known)
}
