// Package crewai is the protocol adapter between a CrewAI project (its
// config/agents.yaml and config/tasks.yaml, or one document holding
// agents: and tasks:) and a contract.
//
// The mapping (docs/contracts.md, "CrewAI", has it as a table):
//
//   - the project is the contract: id "contract_crewai_" + a hash of the
//     project; contract metadata crewaiAgents keeps every agent (name,
//     role, goal, backstory and the other fields) and crewaiProcess the
//     process;
//   - each task is a step, in the file's order: id the task's name, agent
//     the task's agent (in a hierarchical crew a task without one is the
//     manager's), description the task's; dependsOn the task's context,
//     else, in a sequential crew, the task before it;
//   - each {placeholder} in a task's description, expected output or
//     output file, or in its agent's role, goal or backstory, is a member
//     of the run's input: a data resource "inputs" whose schema requires
//     them all, consumed by the steps that use one (CrewAI's
//     kickoff(inputs={...}));
//   - output_file is a file resource the step creates, with an assert
//     that it exists;
//   - expected_output is a suggest on the step's answer (it must not be
//     blank), with the expected output as its condition and message: a
//     recorded assertion that a contract can tighten (make it an assert,
//     give it a sharper check);
//   - a task's other fields are kept in step metadata crewaiTask.
package crewai

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// Names of the adapter.
const (
	Protocol = "crewai"
	// Version is the project layout's: CrewAI 0.x and 1.x read the same
	// YAML.
	Version          = "1"
	ContractIDPrefix = "contract_crewai_"
	// InputsResource is the id of the run's input, when the tasks have
	// placeholders.
	InputsResource = "inputs"
	// Manager runs a hierarchical crew's task that names no agent.
	Manager      = "manager"
	Sequential   = "sequential"
	Hierarchical = "hierarchical"
)

// Metadata keys.
const (
	MetaAgents         = "crewaiAgents"   // contract: [{name, role, goal, backstory, extra}]
	MetaProcess        = "crewaiProcess"  // contract: the process, when the file says it
	MetaTask           = "crewaiTask"     // step: the task's other fields
	MetaExpectedOutput = "expectedOutput" // step: the task's expected_output
	MetaOutputFile     = "outputFile"     // step: the task's output_file
	MetaContext        = "context"        // step: the task's context, when it has one
	MetaPlaceholders   = "placeholders"   // step and the inputs resource: the placeholder names
	MetaAutoAssertions = "autoAssertions" // step: how many of its first assertions the mapping made
)

// placeholder is CrewAI's interpolation: {name}.
var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Adapter is the CrewAI protocol adapter.
type Adapter struct{}

var (
	_ contract.ProtocolAdapter = Adapter{}
	_ contract.Detector        = Adapter{}
)

// New returns the adapter.
func New() Adapter { return Adapter{} }

func (Adapter) Protocol() string { return Protocol }
func (Adapter) Version() string  { return Version }
func (Adapter) Description() string {
	return "CrewAI: a project's agents.yaml and tasks.yaml as contract steps, one per task"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return "CrewAI YAML: agents.yaml (names mapped to role and goal), tasks.yaml (names mapped to description and expected_output), or both under agents: and tasks:"
}

// Detects implements contract.Detector: a Project, or a YAML or JSON
// document (bytes, Documents, or decoded JSON) that is an agents file, a
// tasks file or the one-file form; Documents are claimed when every one
// is such a file.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Project:
		return true
	case *Project:
		return x != nil
	case contract.Documents:
		for _, d := range x {
			if Classify(d.Data) == NotCrewAI {
				return false
			}
		}
		return len(x) > 0
	}
	b, ok := bytesOf(v)
	return ok && Classify(b) != NotCrewAI
}

// bytesOf returns an input as a document: bytes as they are, a decoded
// JSON value marshaled.
func bytesOf(v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case []byte:
		return x, true
	case json.RawMessage:
		return x, true
	case string:
		return nil, false
	case map[string]any:
		b, err := json.Marshal(x)
		return b, err == nil
	}
	return nil, false
}

// ToContract implements contract.ProtocolAdapter: workflow is a Project,
// a document (YAML or JSON bytes, or decoded JSON: a map loses the
// tasks' order, which then is alphabetical), or Documents (agents.yaml
// and tasks.yaml).
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	var p Project
	var err error
	switch x := v.(type) {
	case Project:
		p = x
	case *Project:
		if x == nil {
			return nil, fmt.Errorf("crewai: %w: nil *Project", contract.ErrUnsupportedInput)
		}
		p = *x
	case contract.Documents:
		p, err = ParseFiles(x)
	default:
		b, ok := bytesOf(v)
		if !ok {
			return nil, fmt.Errorf("crewai: %w: %T (want a Project, its YAML, or Documents)", contract.ErrUnsupportedInput, v)
		}
		p, err = Parse(b)
	}
	if err != nil {
		var es contract.Errors
		if errors.As(err, &es) {
			return nil, es
		}
		return nil, fmt.Errorf("crewai: %w", err)
	}
	return ToContract(p, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Project.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) { return FromContract(c) }

// ToContract converts a project as the package documentation says. A
// project without tasks, two tasks of one name, a context naming no task,
// or (in a sequential crew) a task without an agent is an error; so is a
// task naming an agent the project does not define, when it defines
// agents. AutoAssertions adds nothing beyond the mapping's own
// assertions. ResourceMappings key: "output_file" (default file).
func ToContract(p Project, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	if len(p.Tasks) == 0 {
		return nil, errors.New("crewai: the project has no tasks (give tasks.yaml too)")
	}
	process := p.Process
	if process == "" {
		process = Sequential
	}
	if process != Sequential && process != Hierarchical {
		return nil, fmt.Errorf("crewai: process %q is not sequential or hierarchical", p.Process)
	}
	agents := map[string]Agent{}
	for _, a := range p.Agents {
		agents[a.Name] = a
	}
	tasks := map[string]bool{}
	for i, t := range p.Tasks {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("crewai: tasks[%d] has no name", i)
		case tasks[t.Name]:
			return nil, fmt.Errorf("crewai: task %q is defined twice", t.Name)
		case t.Agent == "" && process == Sequential:
			return nil, fmt.Errorf("crewai: task %s: no agent (a sequential crew's tasks each name one)", t.Name)
		case t.Agent != "" && len(p.Agents) > 0 && agents[t.Agent].Name == "":
			return nil, fmt.Errorf("crewai: task %s: agent %q is not in agents.yaml%s", t.Name, t.Agent, suggestion(p.Agents))
		}
		tasks[t.Name] = true
	}
	for _, t := range p.Tasks {
		for _, c := range t.Context {
			if !tasks[c] {
				return nil, fmt.Errorf("crewai: task %s: context names no task %q", t.Name, c)
			}
		}
	}
	fileType, err := opts.MapResourceType("output_file", contract.ResourceFile)
	if err != nil {
		return nil, fmt.Errorf("crewai: %w", err)
	}

	c := &contract.AgentContract{
		Version:    "1.0",
		ID:         ContractIDPrefix + projectHash(p),
		Protocol:   Protocol,
		Strictness: opts.Strictness,
		Metadata:   map[string]any{},
	}
	c.Metadata[MetaAgents] = convert.JSON(p.Agents)
	if p.Agents == nil {
		c.Metadata[MetaAgents] = []any{}
	}
	if p.Process != "" {
		c.Metadata[MetaProcess] = p.Process
	}
	list := p.Tasks
	if opts.MaxSteps > 0 && len(list) > opts.MaxSteps {
		list = list[:opts.MaxSteps]
		c.Metadata["truncatedFrom"] = len(p.Tasks)
	}
	kept := map[string]bool{}
	for _, t := range list {
		kept[t.Name] = true
	}
	var inputs, names []string
	seenRes := map[string]bool{InputsResource: true}
	for i, t := range list {
		st := contract.ContractStep{
			ID:          t.Name,
			Agent:       t.Agent,
			Description: t.Description,
			Metadata:    map[string]any{MetaExpectedOutput: t.ExpectedOutput},
		}
		if st.Agent == "" {
			st.Agent = Manager
		}
		switch {
		case t.Context != nil:
			st.Metadata[MetaContext] = convert.JSON(t.Context)
			for _, d := range t.Context {
				if kept[d] && d != t.Name && !slices.Contains(st.DependsOn, d) {
					st.DependsOn = append(st.DependsOn, d)
				}
			}
		case process == Sequential && i > 0:
			st.DependsOn = []string{list[i-1].Name}
		}
		if t.Extra != nil {
			st.Metadata[MetaTask] = convert.JSON(t.Extra)
		}
		a := agents[t.Agent]
		var used []string
		for _, s := range []string{t.Description, t.ExpectedOutput, t.OutputFile, a.Role, a.Goal, a.Backstory} {
			for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
				if !slices.Contains(used, m[1]) {
					used = append(used, m[1])
				}
			}
		}
		if len(used) > 0 {
			st.Consumes = []string{InputsResource}
			st.Metadata[MetaPlaceholders] = convert.JSON(used)
			for _, u := range used {
				if !slices.Contains(inputs, u) {
					inputs = append(inputs, u)
				}
			}
		}
		if t.OutputFile != "" {
			st.Metadata[MetaOutputFile] = t.OutputFile
			id := convert.Unique(seenRes, convert.ID("file_", t.OutputFile))
			c.Resources = append(c.Resources, contract.ContractResource{
				ID: id, Type: fileType, Location: t.OutputFile, Format: formatOf(t.OutputFile),
				Metadata: map[string]any{"createdByTask": t.Name},
			})
			st.Creates = []string{id}
			if fileType == contract.ResourceFile {
				st.Assertions = append(st.Assertions, contract.ContractAssertion{
					Type: contract.Assert, Message: fmt.Sprintf("the task writes %s", t.OutputFile),
					Check: contract.Check{Type: "exists", Target: "resource:" + id},
				})
			}
		}
		if t.ExpectedOutput != "" {
			st.Assertions = append(st.Assertions, contract.ContractAssertion{
				Type: contract.Suggest, Condition: t.ExpectedOutput,
				Message: "expected output: " + t.ExpectedOutput,
				Check:   contract.Check{Type: "regex", Pattern: `\S`},
			})
		}
		if n := len(st.Assertions); n > 0 {
			st.Metadata[MetaAutoAssertions] = n
		}
		names = append(names, t.Name)
		c.Steps = append(c.Steps, st)
	}
	if len(inputs) > 0 {
		props := map[string]any{}
		for _, in := range inputs {
			props[in] = map[string]any{}
		}
		c.Resources = append([]contract.ContractResource{{
			ID: InputsResource, Type: contract.ResourceData, Format: "json",
			Schema:   map[string]any{"type": "object", "properties": props, "required": convert.JSON(inputs)},
			Metadata: map[string]any{MetaPlaceholders: convert.JSON(inputs)},
		}}, c.Resources...)
	}
	c.Description = "CrewAI crew (" + process + "): " + strings.Join(names, " → ")
	return c, nil
}

func suggestion(agents []Agent) string {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	return " (agents: " + strings.Join(names, ", ") + ")"
}

func formatOf(p string) string {
	switch path.Ext(p) {
	case ".md", ".markdown":
		return "markdown"
	case ".json":
		return "json"
	case ".txt":
		return "text"
	case ".html":
		return "html"
	case ".py":
		return "python"
	}
	return ""
}

// projectHash names a project by its content, so that the same project
// always makes the same contract id.
func projectHash(p Project) string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// FromContract converts a contract back to a project. A contract made by
// ToContract gives back its agents (crewaiAgents), its process and each
// task: name, agent (the manager's tasks come back without one),
// description, expected_output, context (the task's own, else the
// dependencies that the process does not imply), output_file and its
// other fields; the assertions the mapping made are left out. Any other
// contract gives a task per step, an agent per step agent (its role the
// agent's name), the expected output the first assertion's message.
func FromContract(c *contract.AgentContract) (Project, error) {
	if c == nil {
		return Project{}, errors.New("crewai: nil contract")
	}
	p := Project{Process: convert.String(c.Metadata, MetaProcess)}
	process := p.Process
	if process == "" {
		process = Sequential
	}
	if raw, ok := c.Metadata[MetaAgents]; ok {
		if err := convert.Into(raw, &p.Agents); err != nil {
			return Project{}, fmt.Errorf("crewai: metadata %s: %w", MetaAgents, err)
		}
	} else {
		seen := map[string]bool{}
		for _, st := range c.Steps {
			if st.Agent != "" && st.Agent != Manager && !seen[st.Agent] {
				seen[st.Agent] = true
				p.Agents = append(p.Agents, Agent{Name: st.Agent, Role: st.Agent, Goal: st.Description, Backstory: ""})
			}
		}
	}
	present := map[string]bool{}
	for _, st := range c.Steps {
		present[st.ID] = true
	}
	for i, st := range c.Steps {
		t := Task{
			Name:        st.ID,
			Agent:       st.Agent,
			Description: st.Description,
			OutputFile:  convert.String(st.Metadata, MetaOutputFile),
		}
		if t.Agent == Manager && process == Hierarchical {
			t.Agent = ""
		}
		if eo, ok := st.Metadata[MetaExpectedOutput].(string); ok {
			t.ExpectedOutput = eo
		} else if len(st.Assertions) > 0 {
			t.ExpectedOutput = st.Assertions[0].Message
		}
		if x := convert.Object(st.Metadata[MetaTask]); x != nil {
			t.Extra = x
		}
		implied := process == Sequential && i > 0 && slices.Equal(st.DependsOn, []string{c.Steps[i-1].ID})
		if _, ok := st.Metadata[MetaContext]; ok {
			t.Context = []string{}
			for _, name := range convert.Strings(st.Metadata, MetaContext) {
				if present[name] {
					t.Context = append(t.Context, name)
				}
			}
		} else if !implied && (len(st.DependsOn) > 0 || process == Sequential && i > 0) {
			t.Context = append([]string{}, st.DependsOn...)
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p, nil
}
