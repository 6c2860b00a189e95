package config

import (
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Contract is an entry of the top-level `contracts:` list: a contract file
// served as an agent named by the contract's id, whose tasks are runs of
// the contract (docs/contracts.md, "Multi-step runs"). An entry is a path
// or a mapping:
//
//	contracts:
//	  - contracts/report.yaml
//	  - file: contracts/review.yaml
//	    max_parallel: 2
//
// Package config checks the entry's shape; the file is read, validated and
// compiled where the node is assembled (internal/node), through
// Config.ContractFile, as agents' contracts are.
type Contract struct {
	// File is the contract file as written (`file`, required), relative
	// to the configuration file's directory.
	File string `yaml:"file" check:"nonempty"`
	// MaxParallel bounds how many of the run's steps run at once
	// (`max_parallel`, default 4, 1..64).
	MaxParallel int `yaml:"max_parallel" check:"min=1,max=64"`
	// Extension says whether callers of the contract's agent must
	// activate the contracts extension its card declares
	// (`extension`: optional, the default, or required).
	Extension string `yaml:"extension" check:"oneof=optional|required"`
	// Line is the line the entry is at.
	Line int `yaml:"-"`

	node      *yaml.Node // the entry
	fileNode  *yaml.Node // its path (the entry itself when it is a string)
	index     int
	rawString bool
}

// DefaultMaxParallel is a contract run's max_parallel unless set.
const DefaultMaxParallel = 4

// contract decodes one entry of `contracts:`.
func (w *walker) contract(n *yaml.Node, path string, i int) Contract {
	c := Contract{Line: n.Line, node: n, fileNode: n, index: i}
	if r := w.resolve(n, path); r != nil && r.Kind == yaml.ScalarNode {
		c.rawString = true
		c.File = w.nonEmpty(r, path)
		c.fileNode = r
	} else {
		w.section(n, path, &c)
		if r != nil && r.Kind == yaml.MappingNode {
			if fn := nodeAt(r, "file"); fn != r {
				c.fileNode = fn
			} else {
				w.errorf(n, path+".file", "required: the contract file, e.g. contracts/report.yaml")
			}
		}
	}
	if c.MaxParallel == 0 {
		c.MaxParallel = DefaultMaxParallel
	}
	return c
}

// ContractFile is what the code that serves contracts (internal/node)
// needs of an entry of `contracts:`: its file, resolved, and a way to
// place problems with it in the configuration.
type ContractFile struct {
	// File is the contract file, resolved against the configuration
	// file's directory (or baseDir).
	File string
	// MaxParallel is the entry's max_parallel (default applied).
	MaxParallel int
	// ExtensionRequired is the entry's extension: required.
	ExtensionRequired bool
	// Path is the entry's field path ("contracts[0]").
	Path string
	// Error places a problem with the entry (a file that does not load, a
	// contract id already used by an agent) at its file key.
	Error func(msg string, err error) *Error
}

// ContractFile returns the ContractFile of c.Contracts[i]. An empty
// baseDir means the directory of the configuration file.
func (c *Config) ContractFile(i int, baseDir string) ContractFile {
	e := c.Contracts[i]
	path := index("contracts", i)
	at := path
	if !e.rawString {
		at = path + ".file"
	}
	out := ContractFile{File: e.File, MaxParallel: e.MaxParallel, ExtensionRequired: e.Extension == "required", Path: path}
	if dir := c.baseDir(baseDir); !filepath.IsAbs(out.File) && dir != "" {
		out.File = filepath.Join(dir, out.File)
	}
	file := c.file
	out.Error = func(msg string, err error) *Error {
		er := &Error{File: file, Path: at, Msg: msg, Err: err}
		if n := e.fileNode; n != nil {
			er.Line, er.Column = n.Line, n.Column
		}
		return er
	}
	return out
}

// deferredAction is an action an actor names that no agent serves: it may
// be a contract's id, which only the code that reads contract files knows
// (UnknownActions).
type deferredAction struct {
	action string
	err    *Error
}

// UnknownActions returns an error for each action named in actors that
// no agent serves and known does not accept either (the ids of the
// contracts served): with a `contracts:` list, Parse leaves those to the
// code that reads the contract files.
func (c *Config) UnknownActions(known func(action string) bool) Errors {
	var out Errors
	for _, d := range c.deferred {
		if !known(d.action) {
			out = append(out, d.err)
		}
	}
	return out
}

// UnknownDefaultAgent returns the error for a default_agent that names
// no agent under agents: and that known (the definitions) does not know
// either; nil when it names an agent or a definition. Parse leaves that
// check here when definitions are configured.
func (c *Config) UnknownDefaultAgent(known func(name string) bool) *Error {
	if c.deferredDefault == nil || (known != nil && known(c.DefaultAgent)) {
		return nil
	}
	return c.deferredDefault
}

// AddContract adds file to the contracts served, with the default
// max_parallel, as if it were listed last (`pactum contract run` serves
// the contract it runs this way). A relative file is relative to the
// configuration file's directory.
func (c *Config) AddContract(file string) {
	c.Contracts = append(c.Contracts, Contract{File: file, MaxParallel: DefaultMaxParallel, index: len(c.Contracts)})
}
