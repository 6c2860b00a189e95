package config

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ToolSpecEntry is an entry of the top-level `toolspecs:` list: one
// ToolSpec written inline with the seed's field names (docs/toolspecs.md):
//
//	toolspecs:
//	  - tool_id: search_docs
//	    execution_mode: remote
//	    adapter_id: meilisearch
//	    adapter_operation: search
//	    adapter_contract_version: 1.0.0
//	    input_schema: {...}
//
// Package config checks that each entry is a mapping with a unique
// string tool_id (agents refer to it with `toolspec: ID`); the fields are
// decoded and the assertions checked where the node is assembled
// (internal/node), through Config.ToolSpecSource, as contracts are.
type ToolSpecEntry struct {
	// ID is the entry's tool_id ("" when it has none or it is not a
	// string: an error already).
	ID string
	// Line is the line the entry is at.
	Line int

	node *yaml.Node
}

// AdapterFile is an entry of the top-level `adapters:` list: the path of
// a catalogue file of adapter contracts, added to the default catalogue,
// relative to the configuration file's directory.
type AdapterFile struct {
	// File is the path as written.
	File string
	// Line is the line the entry is at.
	Line int

	node *yaml.Node
}

// toolSpec decodes one entry of `toolspecs:`: its shape and tool_id.
func (w *walker) toolSpec(n *yaml.Node, path string) (ToolSpecEntry, *yaml.Node) {
	e := ToolSpecEntry{Line: n.Line, node: n}
	r := w.resolve(n, path)
	if r == nil {
		return e, nil
	}
	if r.Kind != yaml.MappingNode {
		w.errorf(r, path, "expected a ToolSpec mapping (tool_id, execution_mode, adapter_id, adapter_operation, …), got %s", kindName(r))
		return e, nil
	}
	e.node = r
	idN := nodeAt(r, "tool_id")
	if idN == r {
		w.errorf(r, path+".tool_id", "required: the tool's id, which agents name with toolspec: ID")
		return e, nil
	}
	if s, ok := w.str(idN, path+".tool_id"); ok {
		if s == "" {
			w.errorf(idN, path+".tool_id", "must not be empty")
		}
		e.ID = s
	}
	return e, idN
}

// adapterFile decodes one entry of `adapters:`, a path.
func (w *walker) adapterFile(n *yaml.Node, path string) AdapterFile {
	a := AdapterFile{Line: n.Line, node: n}
	if r := w.resolve(n, path); r != nil {
		a.node = r
		a.File = w.nonEmpty(r, path)
	}
	return a
}

// checkToolSpecs checks what spans entries: unique tool ids, and that the
// toolspec every agent names is one of them.
func (w *walker) checkToolSpecs(c *Config, ids []*yaml.Node, refs []toolSpecRef) {
	seen := map[string]int{}
	for i, e := range c.ToolSpecs {
		if e.ID == "" {
			continue
		}
		if j, dup := seen[e.ID]; dup {
			w.errorf(ids[i], index("toolspecs", i)+".tool_id", "duplicate tool_id %q (first used at line %d)", e.ID, c.ToolSpecs[j].Line)
			continue
		}
		seen[e.ID] = i
	}
	for _, r := range refs {
		if _, ok := seen[r.id]; ok || r.id == "" {
			continue
		}
		known := make([]string, 0, len(seen))
		for _, e := range c.ToolSpecs {
			if e.ID != "" {
				known = append(known, e.ID)
			}
		}
		if len(known) == 0 {
			w.errorf(r.node, r.path, "unknown toolspec %q: the configuration has no toolspecs: list", r.id)
			continue
		}
		w.errorf(r.node, r.path, "unknown toolspec %q (toolspecs: %s)", r.id, strings.Join(known, ", "))
	}
}

// toolSpecRef is an agent's `toolspec:` as read.
type toolSpecRef struct {
	id   string
	node *yaml.Node
	path string
}

// ToolSpecSource is what the code that checks ToolSpecs (internal/node)
// needs of an entry of `toolspecs:`: a strict decoder of the mapping and a
// way to place problems with it in the configuration.
type ToolSpecSource struct {
	// ID is the entry's tool_id.
	ID string
	// Path is the entry's field path ("toolspecs[0]").
	Path string
	// Decode strictly decodes the entry into v (a pointer to a struct with
	// `yaml` tags): unknown keys and wrong types are Errors at
	// file:line:column and field path.
	Decode func(v any) error
	// Error places a problem at path, a field path relative to the entry
	// ("adapter_operation"; "" for the entry): at the nearest YAML node
	// the path reaches.
	Error func(path, msg string, err error) *Error
}

// ToolSpecSource returns the ToolSpecSource of c.ToolSpecs[i].
func (c *Config) ToolSpecSource(i int) ToolSpecSource {
	e := c.ToolSpecs[i]
	root := index("toolspecs", i)
	file, node := c.file, e.node
	src := ToolSpecSource{ID: e.ID, Path: root}
	src.Decode = func(v any) error {
		if node == nil {
			return &Error{File: file, Line: e.Line, Path: root, Msg: "not a mapping"}
		}
		return decodeSettings(file, root, node, v)
	}
	src.Error = func(path, msg string, err error) *Error {
		er := &Error{File: file, Path: root, Msg: msg, Err: err, Line: e.Line}
		if path != "" {
			er.Path = root + "." + path
		}
		if node != nil {
			n := nodeAt(node, path)
			er.Line, er.Column = n.Line, n.Column
		}
		return er
	}
	return src
}

// ToolSpecIndex returns the index in c.ToolSpecs of the entry whose
// tool_id is id, and false when there is none.
func (c *Config) ToolSpecIndex(id string) (int, bool) {
	for i, e := range c.ToolSpecs {
		if e.ID == id && id != "" {
			return i, true
		}
	}
	return -1, false
}

// AdapterPath returns c.Adapters[i]'s file resolved against the
// configuration file's directory (or baseDir, when not empty), and a way
// to place a problem with it (a file that does not load) at the entry.
func (c *Config) AdapterPath(i int, baseDir string) (string, func(msg string, err error) *Error) {
	a := c.Adapters[i]
	p := a.File
	if dir := c.baseDir(baseDir); !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	file, path := c.file, index("adapters", i)
	return p, func(msg string, err error) *Error {
		er := &Error{File: file, Line: a.Line, Path: path, Msg: msg, Err: err}
		if a.node != nil {
			er.Line, er.Column = a.node.Line, a.node.Column
		}
		return er
	}
}

// ToolSpecError places a problem with agent a's `toolspec:` (a violation
// found when its ToolSpec is checked against the agent's runtime).
func (c *Config) ToolSpecError(a Agent, msg string, err error) *Error {
	er := &Error{File: c.file, Line: a.Line, Path: join(c.agentPath(a), "toolspec"), Msg: msg, Err: err}
	if a.toolSpecLine != 0 {
		er.Line, er.Column = a.toolSpecLine, a.toolSpecCol
	}
	return er
}
