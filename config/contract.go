package config

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Violation policies and strictness levels an agent's contract may name,
// as package contract defines them.
var (
	violationPolicies = []string{"retry", "escalate", "fail", "continue"}
	strictnessLevels  = []string{"strict", "loose", "permissive"}
	// digestPattern is a contract digest as cards name it.
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// extensionModes are the values of a contract's `extension`: whether
	// callers must activate the contracts extension.
	extensionModes = []string{"optional", "required"}
)

// AgentContract is an agent's `contract:`: the contract step every attempt
// of the agent is checked against. It is either inline, one step written
// under the agent:
//
//	contract:
//	  onViolation: retry
//	  strictness: loose
//	  assertions: [...]
//	  creates: [...]      # optional
//	  consumes: [...]     # optional
//	  resources: [...]    # optional
//
// or a step of a contract file: `contract: {file: contracts/x.yaml, step:
// ID}`, or every step of a contract file, each checked on the node of the
// same name of the graph the agent runs: `contract: {file:
// contracts/x.yaml, nodes: true}` (a runtime that reports its graph's
// nodes: langgraph). Package config checks the keys and the values it can check alone
// (the policy and strictness names, list shapes); the assertions are
// decoded and compiled where the node is assembled (internal/node),
// through Config.ContractSpec, as runtimes are.
type AgentContract struct {
	// File is the contract file (`file`), relative to the configuration
	// file's directory; "" for an inline contract.
	File string
	// Step is the id of the step of File the agent runs (`step`; with
	// file, step or nodes is required).
	Step string
	// Nodes checks every step of File on the node of the same name of
	// the graph the agent runs (`nodes: true`), instead of one step on
	// the agent's answer.
	Nodes bool
	// Extension says whether callers must activate the contracts
	// extension the agent's card declares (`extension`: optional, the
	// default, or required).
	Extension string
	// Remote pins the contract the remote agent's card declares (an a2a
	// agent whose remote serves pactum's contracts extension) by its
	// digest (`remote: sha256:…`): its answers are checked here against
	// that contract.
	Remote string
	// Inline is the inline step's mapping; nil with File.
	Inline *yaml.Node
	// Line is the line of the `contract` key's value.
	Line int

	node *yaml.Node
}

// agentContract decodes an agent's `contract` mapping.
func (w *walker) agentContract(n *yaml.Node, path string) *AgentContract {
	ac := &AgentContract{Line: n.Line, node: n}
	ps, ok := w.pairs(n, path)
	if !ok {
		return nil
	}
	isFile := false
	for _, p := range ps {
		if p.key == "file" || p.key == "step" || p.key == "nodes" {
			isFile = true
		}
	}
	if hasKey(ps, "remote") {
		w.fieldsOf(ps, path, map[string]handler{
			"remote": func(n *yaml.Node, path string) {
				ac.Remote = w.nonEmpty(n, path)
				if ac.Remote != "" && !digestPattern.MatchString(ac.Remote) {
					w.errorf(n, path, "want the contract's digest as the remote agent's card names it: sha256: and 64 hex digits (pactum contract discover URL prints it)")
				}
			},
			"extension": func(n *yaml.Node, path string) { ac.Extension, _ = w.oneOf(n, path, extensionModes...) },
		}, func(p pair) bool {
			w.errorf(p.keyN, join(path, p.key), "a remote contract takes remote (and extension) only: the contract is the one the remote agent's card declares with that digest")
			return true
		})
		return ac
	}
	if isFile {
		var fileN *yaml.Node
		w.fieldsOf(ps, path, map[string]handler{
			"file":      func(n *yaml.Node, path string) { fileN, ac.File = n, w.nonEmpty(n, path) },
			"step":      func(n *yaml.Node, path string) { ac.Step = w.nonEmpty(n, path) },
			"extension": func(n *yaml.Node, path string) { ac.Extension, _ = w.oneOf(n, path, extensionModes...) },
			"nodes": func(n *yaml.Node, path string) {
				b, ok := w.boolean(n, path)
				ac.Nodes = b
				if ok && !b {
					w.errorf(n, path, "false is the default: drop the key, or set true to check each node of the agent's graph against its step")
				}
			},
		}, func(p pair) bool {
			w.errorf(p.keyN, join(path, p.key), "a contract from a file takes file and step (or nodes) only; write the step's assertions in the file (or drop file and step for an inline contract)")
			return true
		})
		switch {
		case fileN == nil:
			w.errorf(n, path+".file", "required with step or nodes: the contract file, e.g. contracts/x.yaml")
		case hasKey(ps, "step") && hasKey(ps, "nodes"):
			w.errorf(n, path+".nodes", "nodes checks every step of the file, each on its node; step checks one step on the agent's answer: set one of them")
		case !hasKey(ps, "step") && !hasKey(ps, "nodes"):
			w.errorf(n, path+".step", "required with file: the id of the step this agent runs (or nodes: true to check each node of the agent's graph against its step)")
		}
		return ac
	}
	ac.Inline = n
	w.fieldsOf(ps, path, map[string]handler{
		"onViolation": func(n *yaml.Node, path string) { w.oneOf(n, path, violationPolicies...) },
		"extension":   func(n *yaml.Node, path string) { ac.Extension, _ = w.oneOf(n, path, extensionModes...) },
		"strictness":  func(n *yaml.Node, path string) { w.oneOf(n, path, strictnessLevels...) },
		"assertions": func(n *yaml.Node, path string) {
			w.list(n, path, func(_ int, item *yaml.Node, path string) {
				if item.Kind != yaml.MappingNode {
					w.errorf(item, path, "expected a mapping (type, message, check), got %s", kindName(item))
				}
			})
		},
		"creates":  func(n *yaml.Node, path string) { w.strList(n, path) },
		"consumes": func(n *yaml.Node, path string) { w.strList(n, path) },
		"resources": func(n *yaml.Node, path string) {
			w.list(n, path, func(_ int, item *yaml.Node, path string) {
				if item.Kind != yaml.MappingNode {
					w.errorf(item, path, "expected a mapping (id, type, location, …), got %s", kindName(item))
				}
			})
		},
	}, nil)
	return ac
}

func hasKey(ps []pair, key string) bool {
	for _, p := range ps {
		if p.key == key {
			return true
		}
	}
	return false
}

// ContractSpec is what the code that builds gates (internal/node) needs
// to build an agent's contract: the file and step, or a strict decoder of
// the inline step, and a way to place its errors in the configuration.
type ContractSpec struct {
	// Agent is the agent's name.
	Agent string
	// File is the contract file, resolved against the configuration
	// file's directory ("" for an inline contract); Step is its step.
	File, Step string
	// Nodes checks every step of File on the node of the same name
	// (`nodes: true`); Step is then "".
	Nodes bool
	// ExtensionRequired is `extension: required`.
	ExtensionRequired bool
	// Remote is the digest of the remote agent's contract the agent is
	// pinned to (`remote`); File, Step and Decode are then empty.
	Remote string
	// Decode strictly decodes the inline step's mapping into v (a pointer
	// to a struct with the inline fields' `yaml` tags): unknown keys,
	// wrong types and bad values are Errors at file:line:column and field
	// path. Nil for a contract file.
	Decode func(v any) error
	// Error places a problem with the contract at path, a field path
	// relative to the agent's `contract` ("assertions[0].check.schema",
	// "file", "step"; "" for the contract itself): at the nearest YAML
	// node the path reaches, with the agent's field path before it.
	Error func(path, msg string, err error) *Error
}

// ContractSpec returns the ContractSpec of a's contract, and false when a
// has none. An empty baseDir means the directory of the configuration
// file.
func (c *Config) ContractSpec(a Agent, baseDir string) (ContractSpec, bool) {
	ac := a.Contract
	if ac == nil {
		return ContractSpec{}, false
	}
	root := join(c.agentPath(a), "contract")
	file := c.file
	spec := ContractSpec{Agent: a.Name, Step: ac.Step, Nodes: ac.Nodes, ExtensionRequired: ac.Extension == "required", Remote: ac.Remote}
	if ac.File != "" {
		spec.File = ac.File
		if dir := c.baseDir(baseDir); !filepath.IsAbs(spec.File) && dir != "" {
			spec.File = filepath.Join(dir, spec.File)
		}
	}
	if ac.Inline != nil {
		node := ac.Inline
		spec.Decode = func(v any) error { return decodeSettings(file, root, node, v) }
	}
	spec.Error = func(path, msg string, err error) *Error {
		n := nodeAt(ac.node, path)
		e := &Error{File: file, Path: root, Msg: msg, Err: err}
		if path != "" {
			e.Path = root + "." + path
		}
		if n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		return e
	}
	return spec, true
}

// nodeAt returns the node that field path p ("a.b[1].c") reaches under n,
// or the deepest one it reaches before a segment that is not there.
func nodeAt(n *yaml.Node, p string) *yaml.Node {
	cur := n
	for p != "" && cur != nil {
		var seg string
		idx := -1
		switch {
		case p[0] == '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return cur
			}
			i, err := strconv.Atoi(p[1:end])
			if err != nil {
				return cur
			}
			idx, p = i, strings.TrimPrefix(p[end+1:], ".")
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			seg, p = p[:end], strings.TrimPrefix(p[end:], ".")
		}
		for cur.Kind == yaml.AliasNode && cur.Alias != nil {
			cur = cur.Alias
		}
		var next *yaml.Node
		switch {
		case idx >= 0 && cur.Kind == yaml.SequenceNode && idx < len(cur.Content):
			next = cur.Content[idx]
		case idx < 0 && cur.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == seg {
					next = cur.Content[i+1]
					break
				}
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}
