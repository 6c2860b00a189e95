package config

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
	// maxVisits bounds how many nodes one walk may visit, counting every
	// alias expansion again; real configurations visit a few thousand.
	maxVisits = 100_000
	// maxErrors bounds the errors collected by one walk.
	maxErrors = 100
)

// YAML short tags the walker tests for.
const (
	tagNull      = "!!null"
	tagBool      = "!!bool"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagStr       = "!!str"
	tagTimestamp = "!!timestamp"
	tagMerge     = "!!merge"
)

// stop aborts a walk (too many nodes or errors); the walk's entry point
// recovers it.
type stop struct{}

// walker walks yaml.Node trees, collecting positioned errors. It is shared by
// Parse and by the runtime settings decoder.
type walker struct {
	file   string
	errs   Errors
	visits int
	// active holds the anchored nodes being walked, to refuse alias cycles.
	active map[*yaml.Node]bool
}

func newWalker(file string) *walker {
	return &walker{file: file, active: map[*yaml.Node]bool{}}
}

// run calls f, turning an aborted walk into the errors collected so far.
func (w *walker) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	f()
}

// add records e, aborting the walk when there are too many.
func (w *walker) add(e *Error) {
	w.errs = append(w.errs, e)
	if len(w.errs) >= maxErrors {
		w.errs = append(w.errs, &Error{File: w.file, Line: e.Line, Column: e.Column, Msg: "too many errors; stopping"})
		panic(stop{})
	}
}

// errorf records an error at node n.
func (w *walker) errorf(n *yaml.Node, path, format string, args ...any) {
	w.add(w.newError(n, path, nil, format, args...))
}

// wrapf records an error at node n that wraps err.
func (w *walker) wrapf(n *yaml.Node, path string, err error, format string, args ...any) {
	w.add(w.newError(n, path, err, format, args...))
}

func (w *walker) newError(n *yaml.Node, path string, err error, format string, args ...any) *Error {
	e := &Error{File: w.file, Path: path, Msg: fmt.Sprintf(format, args...), Err: err}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// resolve follows n's alias and counts the visit. It returns nil (after
// recording an error) for an alias cycle.
func (w *walker) resolve(n *yaml.Node, path string) *yaml.Node {
	w.visits++
	if w.visits > maxVisits {
		w.errorf(n, path, "document too complex (excessive aliasing)")
		panic(stop{})
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

// enter marks an anchored node as being walked; leave undoes it. Only
// anchored nodes can be reached twice, so only they need tracking.
func (w *walker) enter(n *yaml.Node) {
	if n.Anchor != "" {
		w.active[n] = true
	}
}

func (w *walker) leave(n *yaml.Node) {
	if n.Anchor != "" {
		delete(w.active, n)
	}
}

// isNull reports whether a (resolved) node is an explicit or implicit null.
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
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}

// pair is one key/value of a mapping.
type pair struct {
	key   string
	keyN  *yaml.Node
	value *yaml.Node
}

// pairs returns the key/value pairs of mapping n (already resolved) in
// document order, expanding merge keys (<<: *base), whose keys yield to the
// mapping's own. Duplicate keys, non-scalar keys and malformed merges are
// errors. ok is false, after recording an error, when n is no mapping.
func (w *walker) pairs(n *yaml.Node, path string) (out []pair, ok bool) {
	if n.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping, got %s", kindName(n))
		return nil, false
	}
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == tagMerge {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.errorf(k, path, "mapping keys must be strings, got %s", kindName(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			w.errorf(k, join(path, k.Value), "duplicate key (first defined at line %d)", first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k.Value, k, v})
	}
	// Merged keys come after the mapping's own, so errors stay in file
	// order for the common case of a merge written first.
	for _, m := range merges {
		for _, p := range w.merged(m, path) {
			if _, dup := seen[p.key]; dup {
				continue
			}
			seen[p.key] = p.keyN
			out = append(out, p)
		}
	}
	return out, true
}

// merged returns the pairs a merge value (a mapping or a list of mappings,
// usually aliases) contributes; earlier mappings win.
func (w *walker) merged(m *yaml.Node, path string) []pair {
	r := w.resolve(m, join(path, "<<"))
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
		w.errorf(m, join(path, "<<"), "merge value must be a mapping or a list of mappings, got %s", kindName(r))
		return nil
	}
	var out []pair
	seen := map[string]bool{}
	for _, s := range sources {
		sr := w.resolve(s, join(path, "<<"))
		if sr == nil {
			continue
		}
		if sr.Kind != yaml.MappingNode {
			w.errorf(s, join(path, "<<"), "merge value must be a mapping or a list of mappings, got %s", kindName(sr))
			continue
		}
		w.enter(sr)
		ps, _ := w.pairs(sr, path)
		w.leave(sr)
		for _, p := range ps {
			if !seen[p.key] {
				seen[p.key] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// join appends a mapping key to a field path.
func join(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' \t\n") {
		key = strconv.Quote(key)
		if path == "" {
			return key
		}
		return path + "." + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a field path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// syntaxLine extracts the line from go-yaml's "yaml: line N: msg" errors.
var syntaxLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// parserProblems are the messages of go-yaml's parser (as opposed to its
// scanner). For these go-yaml reports the 0-based line of the enclosing
// collection, and no line at all for the first line; syntaxError corrects
// that to the 1-based line.
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

// syntaxError turns a go-yaml parse error into an Error.
func syntaxError(file string, err error) *Error {
	msg := err.Error()
	e := &Error{File: file, Err: err}
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		if m[1] != "" {
			e.Line, _ = strconv.Atoi(m[1])
		}
		if slices.Contains(parserProblems, msg) {
			e.Line++
		}
	}
	e.Msg = "invalid YAML: " + msg
	return e
}

// parseDocument parses data as exactly one YAML document and returns its
// root node (nil for an empty document).
func parseDocument(data []byte, file string) (root *yaml.Node, err error) {
	defer func() {
		// go-yaml reports some malformed input with a plain panic; arbitrary
		// bytes must come back as an error.
		if r := recover(); r != nil {
			root, err = nil, Errors{{File: file, Msg: fmt.Sprintf("invalid YAML: %v", r)}}
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
		return nil, Errors{{File: file, Line: next.Line, Column: next.Column, Msg: "a configuration file holds one YAML document; found a second one"}}
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}
