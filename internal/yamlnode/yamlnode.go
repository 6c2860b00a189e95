// Package yamlnode is what package config (the configuration file),
// package contract (contract files) and package toolspec (catalogues and
// ToolSpecs files) share in decoding YAML through yaml.Node so that every
// error has a position and a field path: one document parsed strictly,
// aliases followed with cycle and visit limits, merge keys, null
// detection, field paths, the error cap and the "did you mean"
// suggestion; and, for contract and toolspec, the decoding of a node tree
// into structs by their yaml tags (Decoder).
//
// It imports only the standard library and go.yaml.in/yaml/v3 and knows
// neither package's error type: a Walker reports each problem through a
// callback, and Collect caps any slice of errors. Each package keeps its
// own error type and its own messages where they differ (a few options
// below say how).
package yamlnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits that keep hostile input (fuzzing, alias bombs) cheap.
const (
	// MaxVisits bounds how many nodes one walk may visit, counting every
	// alias expansion again; real files visit a few thousand.
	MaxVisits = 100_000
	// MaxErrors bounds the errors one walk collects (Collect).
	MaxErrors = 100
)

// YAML short tags the decoders tell apart.
const (
	TagNull      = "!!null"
	TagBool      = "!!bool"
	TagInt       = "!!int"
	TagFloat     = "!!float"
	TagStr       = "!!str"
	TagTimestamp = "!!timestamp"
	TagMerge     = "!!merge"
)

// stop aborts a walk; Run recovers it.
type stop struct{}

// Stop aborts the walk Run is running.
func Stop() { panic(stop{}) }

// Run calls f; a walk that f aborts (Stop, the error cap, the visit
// limit) returns normally, with the errors collected so far. Any other
// panic goes on.
func Run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	f()
}

// Collect appends e to *errs. When that makes MaxErrors errors it appends
// tooMany(e) as well, the error that says "too many errors; stopping"
// placed like e, and aborts the walk (see Run).
func Collect[S ~[]E, E any](errs *S, e E, tooMany func(last E) E) {
	*errs = append(*errs, e)
	if len(*errs) >= MaxErrors {
		*errs = append(*errs, tooMany(e))
		Stop()
	}
}

// Walker follows aliases and merge keys through a yaml.Node tree,
// counting visits and refusing alias cycles. Its zero value with Report
// set is ready to use; one Walker serves one walk.
type Walker struct {
	// Report records a problem at node n and field path (required). It
	// may abort the walk (Collect does at the error cap).
	Report func(n *yaml.Node, path, msg string)
	// KindName names a node in messages ("a mapping", "null", `"x"`);
	// nil means the package function KindName.
	KindName func(n *yaml.Node) string
	// Key, when set, vets every scalar mapping key before Pairs uses it:
	// false drops the key (Key has reported why).
	Key func(k *yaml.Node, path string) bool
	// DuplicateKey is the message for a key given twice in a mapping,
	// with %d for the line of the first; "" means
	// "duplicate key (first defined at line %d)".
	DuplicateKey string

	visits int
	// active holds the anchored nodes being walked, to refuse alias
	// cycles.
	active map[*yaml.Node]bool
}

func (w *Walker) errorf(n *yaml.Node, path, format string, args ...any) {
	w.Report(n, path, fmt.Sprintf(format, args...))
}

func (w *Walker) kindName(n *yaml.Node) string {
	if w.KindName != nil {
		return w.KindName(n)
	}
	return KindName(n)
}

// Resolve follows n's alias and counts the visit. It returns nil (after
// reporting an error) for an unknown anchor or an alias cycle, and aborts
// the walk past MaxVisits.
func (w *Walker) Resolve(n *yaml.Node, path string) *yaml.Node {
	w.visits++
	if w.visits > MaxVisits {
		w.errorf(n, path, "document too complex (excessive aliasing)")
		Stop()
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			w.errorf(n, path, "unknown anchor %q", n.Value)
			return nil
		}
		if w.active[n.Alias] {
			w.errorf(n, path, "alias *%s refers to a node that contains it", n.Value)
			return nil
		}
		return n.Alias
	}
	return n
}

// Enter marks a resolved node as being walked; Leave undoes it. Only
// anchored nodes can be reached twice, so only they are tracked.
func (w *Walker) Enter(n *yaml.Node) {
	if n.Anchor != "" {
		if w.active == nil {
			w.active = map[*yaml.Node]bool{}
		}
		w.active[n] = true
	}
}

// Leave ends what Enter began.
func (w *Walker) Leave(n *yaml.Node) {
	if n.Anchor != "" {
		delete(w.active, n)
	}
}

// Pair is one key/value of a mapping.
type Pair struct {
	Key     string
	KeyNode *yaml.Node
	Value   *yaml.Node
}

// Pairs returns the key/value pairs of mapping r (the resolved n) in
// document order, expanding merge keys (<<: *base), whose keys yield to
// the mapping's own and come after them. Duplicate keys, non-scalar keys
// and malformed merges are errors. ok is false, after an error reported
// at n, when r is no mapping.
func (w *Walker) Pairs(n, r *yaml.Node, path string) (out []Pair, ok bool) {
	if r.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping, got %s", w.kindName(r))
		return nil, false
	}
	dupMsg := w.DuplicateKey
	if dupMsg == "" {
		dupMsg = "duplicate key (first defined at line %d)"
	}
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(r.Content); i += 2 {
		k, v := r.Content[i], r.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == TagMerge {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.errorf(k, path, "mapping keys must be strings, got %s", w.kindName(k))
			continue
		}
		if w.Key != nil && !w.Key(k, path) {
			continue
		}
		if first, dup := seen[k.Value]; dup {
			w.errorf(k, Join(path, k.Value), dupMsg, first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, Pair{k.Value, k, v})
	}
	// Merged keys come after the mapping's own, so errors stay in file
	// order for the common case of a merge written first.
	for _, m := range merges {
		for _, p := range w.merged(m, path) {
			if _, dup := seen[p.Key]; dup {
				continue
			}
			seen[p.Key] = p.KeyNode
			out = append(out, p)
		}
	}
	return out, true
}

// merged returns the pairs a merge value (a mapping or a list of
// mappings, usually aliases) contributes; earlier mappings win.
func (w *Walker) merged(m *yaml.Node, path string) []Pair {
	mp := Join(path, "<<")
	r := w.Resolve(m, mp)
	if r == nil {
		return nil
	}
	var sources []*yaml.Node
	switch r.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{m}
	case yaml.SequenceNode:
		sources = r.Content
	default:
		w.errorf(m, mp, "merge value must be a mapping or a list of mappings, got %s", w.kindName(r))
		return nil
	}
	var out []Pair
	seen := map[string]bool{}
	for _, s := range sources {
		sr := w.Resolve(s, mp)
		if sr == nil {
			continue
		}
		if sr.Kind != yaml.MappingNode {
			w.errorf(s, mp, "merge value must be a mapping or a list of mappings, got %s", w.kindName(sr))
			continue
		}
		w.Enter(sr)
		ps, _ := w.Pairs(s, sr, path)
		w.Leave(sr)
		for _, p := range ps {
			if !seen[p.Key] {
				seen[p.Key] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// IsNull reports whether a resolved node is an explicit or implicit null.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == TagNull
}

// KindName names a node for messages: "a mapping", "a list", "null", a
// scalar's quoted value, else "an unexpected node".
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "null"
		}
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}

// Join appends a mapping key to a field path, quoting keys that would
// make the path ambiguous.
func Join(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' \t\n") {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index appends a list index to a field path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Problem is why ParseDocument refused a file.
type Problem struct {
	// Line and Column are 1-based; 0 when unknown (a syntax error has a
	// line at most).
	Line, Column int
	// ReportedLine is the line as go-yaml reports it. It differs from
	// Line for the problems of go-yaml's parser (as opposed to its
	// scanner), which go-yaml places on the 0-based line of the enclosing
	// collection, and no line at all on the first line.
	ReportedLine int
	// Msg says what is wrong ("invalid YAML: …").
	Msg string
	// Err is go-yaml's error for a syntax error; nil otherwise.
	Err error
}

// ParseDocument parses data as exactly one YAML document and returns its
// root node (nil for an empty document). what names the file in the
// message for a second document ("a contract file").
func ParseDocument(data []byte, what string) (root *yaml.Node, p *Problem) {
	defer func() {
		// go-yaml reports some malformed input with a plain panic;
		// arbitrary bytes must come back as an error.
		if r := recover(); r != nil {
			root, p = nil, &Problem{Msg: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxProblem(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxProblem(err)
	default:
		return nil, &Problem{Line: next.Line, Column: next.Column, ReportedLine: next.Line,
			Msg: what + " holds one YAML document; found a second one"}
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

// parserProblems are the messages of go-yaml's parser (see
// Problem.ReportedLine).
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
	"found undefined tag handle",
}

// syntaxProblem turns a go-yaml parse error into a Problem.
func syntaxProblem(err error) *Problem {
	msg := err.Error()
	p := &Problem{Err: err}
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		if m[1] != "" {
			p.ReportedLine, _ = strconv.Atoi(m[1])
		}
		p.Line = p.ReportedLine
		if slices.Contains(parserProblems, msg) {
			p.Line++
		}
	}
	p.Msg = "invalid YAML: " + msg
	return p
}
