package config

import (
	"fmt"

	"github.com/pactum/pactum/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// YAML short tags the walker tests for.
const (
	tagBool      = yamlnode.TagBool
	tagInt       = yamlnode.TagInt
	tagFloat     = yamlnode.TagFloat
	tagStr       = yamlnode.TagStr
	tagTimestamp = yamlnode.TagTimestamp
)

// walker walks yaml.Node trees, collecting positioned errors. It is shared by
// Parse and by the runtime settings decoder. Aliases, merge keys and the
// limits are package yamlnode's; the errors and their paths are this
// package's.
type walker struct {
	file  string
	errs  Errors
	nodes yamlnode.Walker
}

func newWalker(file string) *walker {
	w := &walker{file: file}
	w.nodes.Report = func(n *yaml.Node, path, msg string) { w.add(w.newError(n, path, nil, "%s", msg)) }
	return w
}

// run calls f, turning an aborted walk into the errors collected so far.
func (w *walker) run(f func()) { yamlnode.Run(f) }

// add records e, aborting the walk when there are too many.
func (w *walker) add(e *Error) {
	yamlnode.Collect(&w.errs, e, func(last *Error) *Error {
		return &Error{File: w.file, Line: last.Line, Column: last.Column, Msg: "too many errors; stopping"}
	})
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
func (w *walker) resolve(n *yaml.Node, path string) *yaml.Node { return w.nodes.Resolve(n, path) }

// enter marks an anchored node as being walked; leave undoes it.
func (w *walker) enter(n *yaml.Node) { w.nodes.Enter(n) }

func (w *walker) leave(n *yaml.Node) { w.nodes.Leave(n) }

// isNull reports whether a (resolved) node is an explicit or implicit null.
func isNull(n *yaml.Node) bool { return yamlnode.IsNull(n) }

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string { return yamlnode.KindName(n) }

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
func (w *walker) pairs(n *yaml.Node, path string) ([]pair, bool) {
	ps, ok := w.nodes.Pairs(n, n, path)
	out := make([]pair, len(ps))
	for i, p := range ps {
		out[i] = pair{p.Key, p.KeyNode, p.Value}
	}
	return out, ok
}

// join appends a mapping key to a field path.
func join(path, key string) string { return yamlnode.Join(path, key) }

// index appends a list index to a field path.
func index(path string, i int) string { return yamlnode.Index(path, i) }

// parseDocument parses data as exactly one YAML document and returns its
// root node (nil for an empty document).
func parseDocument(data []byte, file string) (*yaml.Node, error) {
	root, p := yamlnode.ParseDocument(data, "a configuration file")
	if p != nil {
		return nil, Errors{{File: file, Line: p.Line, Column: p.Column, Msg: p.Msg, Err: p.Err}}
	}
	return root, nil
}
