package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile input (fuzzing, alias bombs) cheap.
const (
	// maxVisits bounds the nodes one decode visits, counting each alias
	// expansion again; real contracts visit a few hundred.
	maxVisits = 100_000
	// maxErrors bounds the errors one decode collects.
	maxErrors = 100
	// maxKeyLen bounds a mapping key, quoted as JSON: YAML parsers refuse
	// implicit keys over 1024 characters, so a longer key would make a
	// contract that encodes to JSON nothing can read back.
	maxKeyLen = 1000
)

// YAML short tags the decoder tells apart.
const (
	tagNull      = "!!null"
	tagBool      = "!!bool"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagStr       = "!!str"
	tagTimestamp = "!!timestamp"
	tagMerge     = "!!merge"
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
	d := &decoder{file: name, lines: lines, active: map[*yaml.Node]bool{}}
	var c *AgentContract
	d.run(func() {
		n := d.resolve(root, "")
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
// root node (nil for an empty document).
func parseDocument(file string, data []byte) (root *yaml.Node, errs Errors) {
	defer func() {
		// go-yaml reports some malformed input with a plain panic;
		// arbitrary bytes must come back as an error.
		if r := recover(); r != nil {
			root, errs = nil, Errors{{File: file, Msg: fmt.Sprintf("invalid YAML: %v", r)}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, Errors{syntaxError(file, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, Errors{syntaxError(file, err)}
	default:
		return nil, Errors{{File: file, Line: next.Line, Msg: "a contract file holds one YAML document; found a second one"}}
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

// syntaxLine extracts the line from go-yaml's "yaml: line N: msg" errors.
var syntaxLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// syntaxError turns a go-yaml parse error into a FieldError.
func syntaxError(file string, err error) FieldError {
	msg := err.Error()
	e := FieldError{File: file}
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		if m[1] != "" {
			e.Line, _ = strconv.Atoi(m[1])
		}
	}
	e.Msg = "invalid YAML: " + msg
	return e
}

// stop aborts a decode (too many nodes or errors); run recovers it.
type stop struct{}

// decoder decodes yaml.Node trees into the model's structs by their yaml
// tags, recording the line of every field path and every error.
type decoder struct {
	file   string
	lines  Lines
	errs   Errors
	visits int
	// active holds the anchored nodes being decoded, to refuse alias
	// cycles.
	active map[*yaml.Node]bool
}

func (d *decoder) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	f()
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := FieldError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	d.errs = append(d.errs, e)
	if len(d.errs) >= maxErrors {
		d.errs = append(d.errs, FieldError{File: d.file, Line: e.Line, Msg: "too many errors; stopping"})
		panic(stop{})
	}
}

// resolve follows n's alias and counts the visit. It returns nil (after
// recording an error) for an alias cycle.
func (d *decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	d.visits++
	if d.visits > maxVisits {
		d.errorf(n, path, "document too complex (excessive aliasing)")
		panic(stop{})
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.errorf(n, path, "unknown anchor %q", n.Value)
			return nil
		}
		if d.active[n.Alias] {
			d.errorf(n, path, "alias *%s refers to a node that contains it", n.Value)
			return nil
		}
		return n.Alias
	}
	return n
}

// enter marks an anchored node as being decoded; leave undoes it.
func (d *decoder) enter(n *yaml.Node) {
	if n.Anchor != "" {
		d.active[n] = true
	}
}

func (d *decoder) leave(n *yaml.Node) {
	if n.Anchor != "" {
		delete(d.active, n)
	}
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
	r := d.resolve(n, path)
	if r == nil {
		return
	}
	d.enter(r)
	defer d.leave(r)
	if isNull(r) {
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
		if r.Kind != yaml.ScalarNode || r.ShortTag() != tagInt {
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
			d.value(item, path+"["+strconv.Itoa(i)+"]", s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		d.structure(n, r, path, v)
	case reflect.Map: // map[string]any
		ps, ok := d.pairs(n, r, path)
		if !ok {
			return
		}
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			kp := join(path, p.key)
			d.mark(kp, p.keyN.Line)
			m[p.key] = d.anyValue(p.value, kp)
		}
		v.Set(reflect.ValueOf(m))
	default:
		panic(fmt.Sprintf("contract: cannot decode into %s", v.Type()))
	}
}

// structure decodes mapping r (n before resolving) into struct v by its
// fields' yaml tags; keys that name no field are errors.
func (d *decoder) structure(n, r *yaml.Node, path string, v reflect.Value) {
	ps, ok := d.pairs(n, r, path)
	if !ok {
		return
	}
	fields := fieldsOf(v.Type())
	for _, p := range ps {
		kp := join(path, p.key)
		i, ok := fields.index[p.key]
		if !ok {
			d.errorf(p.keyN, kp, "unknown field %q%s", p.key, suggest(p.key, fields.names))
			continue
		}
		d.mark(kp, p.keyN.Line)
		d.value(p.value, kp, v.Field(i))
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
	r := d.resolve(n, path)
	if r == nil {
		return nil
	}
	d.enter(r)
	defer d.leave(r)
	switch r.Kind {
	case yaml.MappingNode:
		ps, ok := d.pairs(n, r, path)
		if !ok {
			return nil
		}
		m := make(map[string]any, len(ps))
		for _, p := range ps {
			kp := join(path, p.key)
			d.mark(kp, p.keyN.Line)
			m[p.key] = d.anyValue(p.value, kp)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(r.Content))
		for i, item := range r.Content {
			s[i] = d.anyValue(item, path+"["+strconv.Itoa(i)+"]")
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
	case tagNull:
		return nil
	case tagBool:
		var b bool
		if err := r.Decode(&b); err != nil {
			d.errorf(n, path, "invalid boolean %q", r.Value)
			return nil
		}
		return b
	case tagInt:
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
	case tagFloat:
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
	case tagStr, tagTimestamp:
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
	case tagNull, tagBool, tagInt, tagFloat, tagStr, tagTimestamp:
		return true
	}
	return false
}

// pair is one key/value of a mapping.
type pair struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// pairs returns the key/value pairs of mapping r (n before resolving) in
// document order, with merge keys (<<: *base) expanded: merged keys yield
// to the mapping's own. Duplicate and non-scalar keys are errors. ok is
// false, after recording an error, when r is no mapping.
func (d *decoder) pairs(n, r *yaml.Node, path string) (out []pair, ok bool) {
	if r.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping, got %s", kindName(r))
		return nil, false
	}
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(r.Content); i += 2 {
		k, v := r.Content[i], r.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == tagMerge {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "mapping keys must be strings, got %s", kindName(k))
			continue
		}
		if !utf8.ValidString(k.Value) {
			d.errorf(k, path, "invalid UTF-8 in a key")
			continue
		}
		if len(k.Value) > maxKeyLen || jsonLen(k.Value) > maxKeyLen {
			d.errorf(k, path, "key longer than %d bytes", maxKeyLen)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(k, join(path, k.Value), "duplicate key (first at line %d)", first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k.Value, k, v})
	}
	for _, m := range merges {
		for _, p := range d.merged(m, path) {
			if _, dup := seen[p.key]; dup {
				continue
			}
			seen[p.key] = p.keyN
			out = append(out, p)
		}
	}
	return out, true
}

// merged returns the pairs a merge value (a mapping or a list of
// mappings) contributes; earlier mappings win.
func (d *decoder) merged(m *yaml.Node, path string) []pair {
	mp := join(path, "<<")
	r := d.resolve(m, mp)
	if r == nil {
		return nil
	}
	sources := []*yaml.Node{m}
	if r.Kind == yaml.SequenceNode {
		sources = r.Content
	}
	var out []pair
	seen := map[string]bool{}
	for _, s := range sources {
		sr := d.resolve(s, mp)
		if sr == nil {
			continue
		}
		if sr.Kind != yaml.MappingNode {
			d.errorf(s, mp, "merge value must be a mapping or a list of mappings, got %s", kindName(sr))
			continue
		}
		d.enter(sr)
		ps, _ := d.pairs(s, sr, path)
		d.leave(sr)
		for _, p := range ps {
			if !seen[p.key] {
				seen[p.key] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// isNull reports whether a resolved node is an explicit or implicit null.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull
}

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return strconv.Quote(v)
	case yaml.AliasNode:
		return "an alias"
	}
	return "an unexpected node"
}

// join appends a mapping key to a field path, quoting keys that would
// make the path ambiguous.
func join(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' \t\n") {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest proposes a known name close to an unknown one: the same name
// but for case, underscores and hyphens (depends_on → dependsOn), or one
// a few edits away.
func suggest(name string, known []string) string {
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	for _, k := range known {
		if fold(k) == fold(name) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	if len(name) > 64 {
		return ""
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := len(k) - len(name); d >= bestD || -d >= bestD {
			continue // too far apart to be the best
		}
		if dist := editDistance(fold(name), fold(k)); dist < bestD {
			best, bestD = k, dist
		}
	}
	if best == "" || bestD > len(name)/2 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between short strings.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}
