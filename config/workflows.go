package config

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file holds the `definitions:` and `workflows:` sections
// (docs/workflows.md). Package config checks their shape; the definition
// files are read, and workflow steps checked against them, where the node
// is assembled (internal/node), which places its errors with the
// methods below.

// ReservedWorkflow is the workflow name no configured workflow may take:
// the caller-supplied list of agents (`pactum run custom --agents a,b`).
const ReservedWorkflow = "custom"

// Definitions is the `definitions:` section: directories of agent
// definition files (markdown with YAML front matter), each definition
// served as an agent on one of Runtimes.
//
//	definitions:
//	  dirs: [agents/, ~/.claude/agents]
//	  runtime: local
//	  runtimes:
//	    local:
//	      type: openai
//	      openai: {base_url: http://127.0.0.1:11434/v1, model: llama3.2}
type Definitions struct {
	// Dirs are the directories read, as written (`dirs`, required, at
	// least one): a relative one is relative to the configuration file's
	// directory, a leading "~/" is the home directory. Config.DefinitionDirs
	// resolves them.
	Dirs []string
	// Runtime names the entry of Runtimes that runs a definition whose
	// front matter names no runtime (`runtime`, default: the only entry
	// of Runtimes when there is exactly one, else none, and each
	// definition must name its own).
	Runtime string
	// Runtimes are the runtimes definitions run on, in file order
	// (`runtimes`, default none; a definition then cannot be served).
	Runtimes []DefinitionRuntime
	// Line is the line of the section.
	Line int

	dirsNode    *yaml.Node
	dirNodes    []*yaml.Node
	runtimeNode *yaml.Node
}

// DefinitionRuntime is one entry of definitions.runtimes: an agent
// mapping without name and description (a definition gives them) that
// holds type, timeout, retry and the settings key of its type, e.g.
// `openai:`. Every definition run on it is an agent with these settings;
// for type openai the definition's role body is the system prompt
// (unless the entry sets `system`) and its model alias is resolved
// through the entry's `models`.
type DefinitionRuntime struct {
	// Name is the entry's key.
	Name string
	// Agent holds the entry's type, timeout, retry and settings, with the
	// agents' defaults (timeout 5m, retry 3 attempts from 1s to 1m,
	// jitter 0.2); its Name is "".
	Agent Agent
	// Line is the line of the entry's key.
	Line int
}

// definitions decodes the definitions section.
func (w *walker) definitions(n *yaml.Node, path string) *Definitions {
	d := &Definitions{Line: n.Line}
	w.fields(n, path, map[string]handler{
		"dirs": func(n *yaml.Node, path string) {
			d.dirsNode = n
			d.Dirs, d.dirNodes = w.strList(n, path)
			for i, s := range d.Dirs {
				if s == "" {
					w.errorf(d.dirNodes[i], index(path, i), "must not be empty")
				}
			}
		},
		"runtime": func(n *yaml.Node, path string) {
			d.runtimeNode = n
			d.Runtime = w.nonEmpty(n, path)
		},
		"runtimes": func(n *yaml.Node, path string) {
			ps, ok := w.pairs(n, path)
			if !ok {
				return
			}
			for _, p := range ps {
				rpath := join(path, p.key)
				if !namePattern.MatchString(p.key) {
					w.errorf(p.keyN, rpath, "invalid runtime name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", p.key)
				}
				w.value(p.value, rpath, func(v *yaml.Node, rpath string) {
					a, _ := w.agent(v, rpath, true)
					a.path = rpath
					d.Runtimes = append(d.Runtimes, DefinitionRuntime{Name: p.key, Agent: a, Line: p.keyN.Line})
				})
			}
		},
	}, nil)
	w.requiredList(n, d.dirsNode, path+".dirs", "the directories of agent definition files, e.g. [agents/]")
	if d.Runtime != "" {
		if _, ok := d.runtime(d.Runtime); !ok {
			w.errorf(d.runtimeNode, path+".runtime", "unknown runtime %q (runtimes: %s)", d.Runtime, quoteList(d.runtimeNames()))
		}
	} else if len(d.Runtimes) == 1 {
		d.Runtime = d.Runtimes[0].Name
	}
	return d
}

func (d *Definitions) runtime(name string) (DefinitionRuntime, bool) {
	for _, r := range d.Runtimes {
		if r.Name == name {
			return r, true
		}
	}
	return DefinitionRuntime{}, false
}

func (d *Definitions) runtimeNames() []string {
	out := make([]string, len(d.Runtimes))
	for i, r := range d.Runtimes {
		out[i] = r.Name
	}
	return out
}

// DefinitionDirs returns the definition directories resolved: "~/" is
// the home directory, a relative directory is joined to baseDir (empty:
// the configuration file's directory). It returns nil without a
// definitions section.
func (c *Config) DefinitionDirs(baseDir string) []string {
	if c.Definitions == nil {
		return nil
	}
	dir := c.baseDir(baseDir)
	out := make([]string, 0, len(c.Definitions.Dirs))
	for _, d := range c.Definitions.Dirs {
		if rest, ok := strings.CutPrefix(d, "~/"); ok || d == "~" {
			if home, err := os.UserHomeDir(); err == nil {
				d = filepath.Join(home, rest)
			}
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		out = append(out, d)
	}
	return out
}

// DefinitionsError places a problem with the definition directories as a
// whole (one that cannot be read) at definitions.dirs.
func (c *Config) DefinitionsError(msg string, err error) *Error {
	e := &Error{File: c.file, Path: "definitions.dirs", Msg: msg, Err: err}
	if d := c.Definitions; d != nil {
		if n := d.dirsNode; n != nil {
			e.Line, e.Column = n.Line, n.Column
		} else {
			e.Line = d.Line
		}
	}
	return e
}

// DefinitionRuntime returns the runtime entry that runs a definition
// whose front matter says runtime (""; the section's default runtime).
// name is the entry's name ("" when there is no default); ok is false
// when no entry has that name.
func (c *Config) DefinitionRuntime(runtime string) (entry DefinitionRuntime, name string, ok bool) {
	if c.Definitions == nil {
		return DefinitionRuntime{}, runtime, false
	}
	name = cmp.Or(runtime, c.Definitions.Runtime)
	entry, ok = c.Definitions.runtime(name)
	return entry, name, ok
}

// RuntimeNames returns the names of definitions.runtimes in file order.
func (c *Config) RuntimeNames() []string {
	if c.Definitions == nil {
		return nil
	}
	return c.Definitions.runtimeNames()
}

// DefinitionAgent returns the agent that serves the definition named name
// on runtime entry rt: the entry's type, timeout, retry and settings with
// the definition's name and description and the agents' defaults (action
// = name, one skill). AgentSpec, AgentTypeError and AgentError place its
// errors at the runtime entry (definitions.runtimes.NAME).
func (c *Config) DefinitionAgent(rt DefinitionRuntime, name, description string) Agent {
	a := rt.Agent
	a.Name, a.Description, a.Action, a.Skills = name, description, "", nil
	a.index = -1
	a.setDefaults(true)
	return a
}

// Workflow is an entry of the top-level `workflows:` list:
//
//	workflows:
//	  - name: review
//	    description: Plan, review twice in parallel, then design
//	    steps: [planner, {parallel: [code-reviewer, security-reviewer]}, architect]
type Workflow struct {
	// Name names the workflow (`name`, required, unique among workflows,
	// the agent-name rule, not "custom"); one named like a built-in
	// workflow replaces it.
	Name string
	// Description says what it is for (`description`, default "").
	Description string
	// Steps are its phases in order (`steps`, required, at least one):
	// each an agent's name, or {parallel: [names]} for agents that run
	// at once. Each agent appears once in a workflow.
	Steps []WorkflowStep
	// Line is the line the entry is at.
	Line int

	index    int
	nameNode *yaml.Node
}

// WorkflowStep is one step of a workflow.
type WorkflowStep struct {
	// Agents names the step's agent, or a parallel phase's agents in
	// declared order: configured agents or definitions.
	Agents []string
	// Parallel is true for a {parallel: [...]} step.
	Parallel bool
	// Line is the line of the step.
	Line int

	nodes []*yaml.Node // each agent's node
	paths []string     // each agent's field path
}

// workflow decodes one entry of `workflows:`.
func (w *walker) workflow(n *yaml.Node, path string, i int) Workflow {
	wf := Workflow{Line: n.Line, index: i}
	if n.Kind != yaml.MappingNode {
		w.errorf(n, path, "expected a mapping (name, description, steps), got %s", kindName(n))
		return wf
	}
	var stepsN *yaml.Node
	seen := map[string]int{} // agent → line of its first step
	w.fields(n, path, map[string]handler{
		"name": func(n *yaml.Node, path string) {
			wf.nameNode = n
			s := w.nonEmpty(n, path)
			wf.Name = s
			switch {
			case s == "":
			case !namePattern.MatchString(s):
				w.errorf(n, path, "invalid name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", s)
			case s == ReservedWorkflow:
				w.errorf(n, path, "%q is reserved for the caller-supplied list of agents (pactum run custom --agents a,b,c)", s)
			}
		},
		"description": func(n *yaml.Node, path string) { wf.Description, _ = w.str(n, path) },
		"steps": func(n *yaml.Node, path string) {
			stepsN = n
			w.list(n, path, func(j int, item *yaml.Node, path string) {
				st := w.workflowStep(item, path)
				for k, a := range st.Agents {
					if a == "" {
						continue
					}
					if first, dup := seen[a]; dup {
						w.errorf(st.nodes[k], st.paths[k], "agent %q appears more than once in workflow (first at line %d): an agent runs once in a workflow", a, first)
						continue
					}
					seen[a] = st.nodes[k].Line
				}
				wf.Steps = append(wf.Steps, st)
			})
		},
	}, nil)
	w.required(n, wf.nameNode, path+".name")
	w.requiredList(n, stepsN, path+".steps", "the agents in order, e.g. [planner, {parallel: [code-reviewer, security-reviewer]}]")
	return wf
}

// workflowStep decodes one step: an agent's name or {parallel: [names]}.
func (w *walker) workflowStep(n *yaml.Node, path string) WorkflowStep {
	st := WorkflowStep{Line: n.Line}
	agentName := func(n *yaml.Node, path string) {
		s := w.nonEmpty(n, path)
		if s != "" && !namePattern.MatchString(s) {
			w.errorf(n, path, "invalid agent name %q", s)
		}
		st.Agents = append(st.Agents, s)
		st.nodes = append(st.nodes, n)
		st.paths = append(st.paths, path)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if isNull(n) {
			w.errorf(n, path, "empty step: want an agent's name or {parallel: [agents]}")
			return st
		}
		agentName(n, path)
	case yaml.MappingNode:
		st.Parallel = true
		var parN *yaml.Node
		w.fields(n, path, map[string]handler{
			"parallel": func(n *yaml.Node, path string) {
				parN = n
				w.list(n, path, func(_ int, item *yaml.Node, path string) { agentName(item, path) })
				if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
					w.errorf(n, path, "empty phase: list the agents that run at once")
				}
			},
		}, nil)
		if parN == nil {
			if ps, _ := w.pairs(n, path); len(ps) == 0 || ps[0].key == "parallel" {
				// {} or {parallel: null}
				w.errorf(n, path+".parallel", "empty phase: a step mapping is {parallel: [agents]}")
			}
		}
	default:
		w.errorf(n, path, "expected an agent's name or {parallel: [agents]}, got %s", kindName(n))
	}
	return st
}

// checkWorkflows reports workflows with the same name.
func (w *walker) checkWorkflows(c *Config) {
	first := map[string]int{}
	for _, wf := range c.Workflows {
		if wf.Name == "" {
			continue
		}
		if line, dup := first[wf.Name]; dup {
			w.errorf(wf.nameNode, index("workflows", wf.index)+".name", "duplicate workflow name %q (first defined at line %d)", wf.Name, line)
			continue
		}
		first[wf.Name] = wf.Line
	}
}

// WorkflowStepError places a problem with the k-th agent of step j of
// c.Workflows[i] (an unknown agent) at that agent's name.
func (c *Config) WorkflowStepError(i, j, k int, msg string, err error) *Error {
	wf := c.Workflows[i]
	st := wf.Steps[j]
	e := &Error{File: c.file, Line: st.Line, Path: index(index("workflows", i)+".steps", j), Msg: msg, Err: err}
	if k < len(st.nodes) {
		e.Line, e.Column, e.Path = st.nodes[k].Line, st.nodes[k].Column, st.paths[k]
	}
	return e
}
