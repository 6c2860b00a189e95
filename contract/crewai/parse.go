package crewai

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/yamlnode"
)

// Project is a CrewAI project's agents and tasks, in the files' order.
type Project struct {
	Agents []Agent `json:"agents,omitempty"`
	Tasks  []Task  `json:"tasks,omitempty"`
	// Process is the crew's process: "sequential" (empty: the default)
	// or "hierarchical". CrewAI sets it in code; the one-file form may
	// say it as a top-level process.
	Process string `json:"process,omitempty"`
}

// Agent is one agent of agents.yaml: its name (the key) and the fields
// CrewAI requires; Extra holds every other field (llm, tools, verbose,
// allow_delegation, …) as the file has it.
type Agent struct {
	Name      string         `json:"name"`
	Role      string         `json:"role"`
	Goal      string         `json:"goal"`
	Backstory string         `json:"backstory"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// Task is one task of tasks.yaml: its name (the key), description,
// expected output, agent, context (the tasks whose output it gets; nil
// when the file does not say, as opposed to an empty list) and output
// file; Extra holds every other field (async_execution, human_input,
// markdown, …).
type Task struct {
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	ExpectedOutput string         `json:"expected_output"`
	Agent          string         `json:"agent,omitempty"`
	Context        []string       `json:"context,omitempty"`
	OutputFile     string         `json:"output_file,omitempty"`
	Extra          map[string]any `json:"extra,omitempty"`
}

// Kind says which CrewAI file a document is.
type Kind int

// Kinds of document.
const (
	NotCrewAI Kind = iota
	AgentsFile
	TasksFile
	OneFile // agents: and tasks: in one document
)

// maxDoc bounds a document Parse and Classify read.
const maxDoc = 4 << 20

// root parses data as one YAML (or JSON) document and returns its
// top-level mapping.
func root(data []byte) (*yaml.Node, error) {
	if len(data) > maxDoc {
		return nil, fmt.Errorf("document of %d bytes (at most %d)", len(data), maxDoc)
	}
	// yamlnode.ParseDocument: exactly one document, syntax errors at their
	// line, and go-yaml's panics on malformed input turned into errors.
	m, p := yamlnode.ParseDocument(data, "a CrewAI file")
	if p != nil {
		return nil, contract.Errors{{Line: p.Line, Msg: p.Msg}}
	}
	if m == nil {
		return nil, fmt.Errorf("empty document")
	}
	if m.Kind != yaml.MappingNode {
		return nil, contract.Errors{{Line: m.Line, Msg: "not a mapping: a CrewAI file maps names to agents or tasks"}}
	}
	return m, nil
}

// pairs returns a mapping's keys and values; ok is false for anything
// else, or a key that is not a plain string, or one given twice.
func pairs(m *yaml.Node) (keys []string, vals []*yaml.Node, ok bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil, false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode || slices.Contains(keys, k.Value) {
			return nil, nil, false
		}
		keys = append(keys, k.Value)
		vals = append(vals, m.Content[i+1])
	}
	return keys, vals, true
}

func field(m *yaml.Node, key string) *yaml.Node {
	keys, vals, _ := pairs(m)
	if i := slices.Index(keys, key); i >= 0 {
		return vals[i]
	}
	return nil
}

func isString(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0)
}

// every reports whether m is a non-empty mapping each of whose values is
// a mapping with the given string fields.
func every(m *yaml.Node, fields ...string) bool {
	keys, vals, ok := pairs(m)
	if !ok || len(keys) == 0 {
		return false
	}
	for _, v := range vals {
		for _, f := range fields {
			if !isString(field(v, f)) {
				return false
			}
		}
	}
	return true
}

// classify says which CrewAI file the top-level mapping m is: an agents
// file (every value has role and goal), a tasks file (every value has
// description and expected_output), or the one-file form (tasks: such a
// mapping, and agents:, when present, an agents mapping).
func classify(m *yaml.Node) Kind {
	if t := field(m, "tasks"); t != nil && every(t, "description", "expected_output") {
		if a := field(m, "agents"); a == nil || a.Kind == yaml.MappingNode && len(a.Content) == 0 || every(a, "role", "goal") {
			return OneFile
		}
	}
	switch {
	case every(m, "role", "goal"):
		return AgentsFile
	case every(m, "description", "expected_output"):
		return TasksFile
	}
	return NotCrewAI
}

// classifyLoose is classify for a document given as CrewAI's: the one
// file form when it has tasks:, else by the first entry's fields, so that
// a wrong field is reported at its line rather than the whole file
// refused.
func classifyLoose(m *yaml.Node) Kind {
	if k := classify(m); k != NotCrewAI {
		return k
	}
	if t := field(m, "tasks"); t != nil && t.Kind == yaml.MappingNode {
		return OneFile
	}
	_, vals, ok := pairs(m)
	if !ok || len(vals) == 0 {
		return NotCrewAI
	}
	switch {
	case field(vals[0], "role") != nil:
		return AgentsFile
	case field(vals[0], "description") != nil || field(vals[0], "expected_output") != nil:
		return TasksFile
	}
	return NotCrewAI
}

// Classify says which CrewAI file data is (NotCrewAI when it is none, or
// not YAML).
func Classify(data []byte) Kind {
	m, err := root(data)
	if err != nil {
		return NotCrewAI
	}
	return classify(m)
}

// Parse reads a CrewAI project from its files: agents.yaml and
// tasks.yaml (in either order), or one document with agents: and tasks:
// (and optionally process:). JSON documents of the same shape are read
// too. Errors are contract.Errors placing each problem at its line and
// field path (the caller adds the file's name), or a YAML syntax error.
func Parse(docs ...[]byte) (Project, error) {
	files := make(contract.Documents, len(docs))
	for i, d := range docs {
		files[i].Data = d
		if len(docs) > 1 {
			files[i].Name = fmt.Sprintf("document %d", i+1)
		}
	}
	return ParseFiles(files)
}

// ParseFiles is Parse on named files: each error names its file.
func ParseFiles(files contract.Documents) (Project, error) {
	var p Project
	var errs contract.Errors
	seenAgents, seenTasks := false, false
	for _, file := range files {
		named := func(err error) error {
			if file.Name == "" {
				return err
			}
			var es contract.Errors
			if errors.As(err, &es) {
				for i := range es {
					es[i].File = file.Name
				}
				return es
			}
			return fmt.Errorf("%s: %w", file.Name, err)
		}
		m, err := root(file.Data)
		if err != nil {
			return Project{}, named(err)
		}
		start := len(errs)
		var agents, tasks *yaml.Node
		agentsPath, tasksPath := "", ""
		switch classifyLoose(m) {
		case OneFile:
			agents, tasks, agentsPath, tasksPath = field(m, "agents"), field(m, "tasks"), "agents", "tasks"
			if pr := field(m, "process"); pr != nil {
				if pr.Kind != yaml.ScalarNode || pr.Value != "sequential" && pr.Value != "hierarchical" {
					errs = append(errs, contract.FieldError{Line: pr.Line, Path: "process", Msg: fmt.Sprintf("%q is not a process (sequential or hierarchical)", pr.Value)})
				}
				p.Process = pr.Value
			}
		case AgentsFile:
			agents = m
		case TasksFile:
			tasks = m
		default:
			return Project{}, named(contract.Errors{{Line: m.Line, Msg: "not a CrewAI file: want agents.yaml (names mapped to role, goal, backstory), tasks.yaml (names mapped to description, expected_output, agent) or one document with agents: and tasks:"}})
		}
		if agents != nil {
			if seenAgents {
				return Project{}, named(errors.New("agents given twice"))
			}
			seenAgents = true
			p.Agents = parseAgents(agents, agentsPath, &errs)
		}
		if tasks != nil {
			if seenTasks {
				return Project{}, named(errors.New("tasks given twice"))
			}
			seenTasks = true
			p.Tasks = parseTasks(tasks, tasksPath, &errs)
		}
		for i := start; i < len(errs); i++ {
			errs[i].File = file.Name
		}
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b contract.FieldError) int {
			if a.File != b.File {
				return 0
			}
			return a.Line - b.Line
		})
		return Project{}, errs
	}
	return p, nil
}

func parseAgents(m *yaml.Node, path string, errs *contract.Errors) []Agent {
	keys, vals, _ := pairs(m)
	out := make([]Agent, 0, len(keys))
	for i, name := range keys {
		a := Agent{Name: name}
		required(vals[i], yamlnode.Join(path, name), errs, "role", "goal")
		for _, f := range fieldsOf(vals[i], yamlnode.Join(path, name), errs) {
			switch f.key {
			case "role":
				a.Role = f.str(errs)
			case "goal":
				a.Goal = f.str(errs)
			case "backstory":
				a.Backstory = f.str(errs)
			default:
				a.Extra = f.extra(a.Extra, errs)
			}
		}
		out = append(out, a)
	}
	return out
}

func parseTasks(m *yaml.Node, path string, errs *contract.Errors) []Task {
	keys, vals, _ := pairs(m)
	out := make([]Task, 0, len(keys))
	for i, name := range keys {
		t := Task{Name: name}
		required(vals[i], yamlnode.Join(path, name), errs, "description", "expected_output")
		for _, f := range fieldsOf(vals[i], yamlnode.Join(path, name), errs) {
			switch f.key {
			case "description":
				t.Description = f.str(errs)
			case "expected_output":
				t.ExpectedOutput = f.str(errs)
			case "agent":
				t.Agent = f.str(errs)
			case "output_file":
				t.OutputFile = f.str(errs)
			case "context":
				t.Context = f.strs(errs)
			default:
				t.Extra = f.extra(t.Extra, errs)
			}
		}
		out = append(out, t)
	}
	return out
}

// required reports each of keys that mapping m lacks.
func required(m *yaml.Node, path string, errs *contract.Errors, keys ...string) {
	if m.Kind != yaml.MappingNode {
		return // fieldsOf reports it
	}
	for _, k := range keys {
		if field(m, k) == nil {
			*errs = append(*errs, contract.FieldError{Line: m.Line, Path: yamlnode.Join(path, k), Msg: "required"})
		}
	}
}

// fieldOf is one field of an agent or a task.
type fieldOf struct {
	key  string
	path string
	n    *yaml.Node
}

func fieldsOf(m *yaml.Node, path string, errs *contract.Errors) []fieldOf {
	keys, vals, ok := pairs(m)
	if !ok {
		*errs = append(*errs, contract.FieldError{Line: m.Line, Path: path, Msg: "not a mapping of fields (or a key given twice)"})
		return nil
	}
	out := make([]fieldOf, len(keys))
	for i, k := range keys {
		out[i] = fieldOf{key: k, path: yamlnode.Join(path, k), n: vals[i]}
	}
	return out
}

func (f fieldOf) str(errs *contract.Errors) string {
	if f.n.Kind != yaml.ScalarNode || f.n.Tag == "!!null" {
		*errs = append(*errs, contract.FieldError{Line: f.n.Line, Path: f.path, Msg: "not a string"})
		return ""
	}
	// Folded and literal blocks (description: >) end with a newline.
	return strings.TrimSpace(f.n.Value)
}

func (f fieldOf) strs(errs *contract.Errors) []string {
	if f.n.Kind != yaml.SequenceNode {
		*errs = append(*errs, contract.FieldError{Line: f.n.Line, Path: f.path, Msg: "not a list of task names"})
		return nil
	}
	out := make([]string, 0, len(f.n.Content))
	for i, e := range f.n.Content {
		if e.Kind != yaml.ScalarNode {
			*errs = append(*errs, contract.FieldError{Line: e.Line, Path: fmt.Sprintf("%s[%d]", f.path, i), Msg: "not a task name"})
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

func (f fieldOf) extra(m map[string]any, errs *contract.Errors) map[string]any {
	var v any
	if err := f.n.Decode(&v); err != nil {
		*errs = append(*errs, contract.FieldError{Line: f.n.Line, Path: f.path, Msg: err.Error()})
		return m
	}
	// Through JSON, so that contract metadata holds what a file would.
	b, err := json.Marshal(v)
	if err != nil {
		*errs = append(*errs, contract.FieldError{Line: f.n.Line, Path: f.path, Msg: "not representable as JSON: " + err.Error()})
		return m
	}
	var j any
	_ = json.Unmarshal(b, &j)
	if m == nil {
		m = map[string]any{}
	}
	m[f.key] = j
	return m
}

// MarshalYAML writes the project as the one-file form: agents:, tasks:
// and process: (when set), in order, each agent and task as CrewAI's
// files have them.
func (p Project) MarshalYAML() (any, error) {
	str := func(s string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		if strings.Contains(s, "\n") {
			n.Style = yaml.LiteralStyle
		}
		return n
	}
	mapping := func() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }
	add := func(m *yaml.Node, k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	extra := func(m *yaml.Node, x map[string]any) error {
		for _, k := range sortedKeys(x) {
			var v yaml.Node
			if err := v.Encode(x[k]); err != nil {
				return err
			}
			add(m, k, &v)
		}
		return nil
	}
	top := mapping()
	agents := mapping()
	for _, a := range p.Agents {
		m := mapping()
		add(m, "role", str(a.Role))
		add(m, "goal", str(a.Goal))
		add(m, "backstory", str(a.Backstory))
		if err := extra(m, a.Extra); err != nil {
			return nil, err
		}
		add(agents, a.Name, m)
	}
	tasks := mapping()
	for _, t := range p.Tasks {
		m := mapping()
		add(m, "description", str(t.Description))
		add(m, "expected_output", str(t.ExpectedOutput))
		if t.Agent != "" {
			add(m, "agent", str(t.Agent))
		}
		if t.Context != nil {
			l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, c := range t.Context {
				l.Content = append(l.Content, str(c))
			}
			add(m, "context", l)
		}
		if t.OutputFile != "" {
			add(m, "output_file", str(t.OutputFile))
		}
		if err := extra(m, t.Extra); err != nil {
			return nil, err
		}
		add(tasks, t.Name, m)
	}
	add(top, "agents", agents)
	add(top, "tasks", tasks)
	if p.Process != "" {
		add(top, "process", str(p.Process))
	}
	return top, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
