// Package specwright is the protocol adapter between a Specwright spec
// with its chunks (spec-driven development: a spec cut into chunks that an
// agent implements one by one) and a contract.
//
// The mapping (docs/contracts.md, "Protocol adapters", has it as a table):
//
//   - the spec is the contract: id "contract_" + spec id, metadata specId
//     and specTitle;
//   - each chunk is a step, in the chunks' order: id the chunk's, agent
//     the chunk's (else DefaultAgent), description, creates, consumes,
//     dependsOn (the chunk's dependencies) and assertions the chunk's;
//     metadata title, order, specId;
//   - the spec's contract (a JSON document of types and files) becomes
//     resources: each type a file resource "type_NAME" (location its file,
//     format typescript, metadata exportName, exportedFrom, definition),
//     each file a file resource "file_PATH" (location its path, metadata
//     action, purpose, exports);
//   - the contract's validators: file-export on file resources (this
//     adapter's validator: the file exports the resource's exportName) and
//     exists on every resource.
//
// FromContract gives back the spec's id, title and contract (its types
// and files, re-serialized), and each chunk's id, spec id, title,
// description, order, dependencies, creates, consumes, assertions and
// agent; a chunk's status comes back "pending". With PreserveMetadata the
// spec's project id, content and status are kept as well.
package specwright

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// Names of the adapter.
const (
	Protocol = "specwright"
	Version  = "1.0"
	// DefaultAgent runs a chunk that names no agent.
	DefaultAgent = "opencode"
	// ContractIDPrefix is put before the spec id to make the contract id.
	ContractIDPrefix = "contract_"
	// FileExport is the name of the adapter's resource validator.
	FileExport = "file-export"
)

// Metadata keys.
const (
	MetaSpecID         = "specId"
	MetaSpecTitle      = "specTitle"
	MetaSpecProjectID  = "specProjectId"
	MetaSpecContent    = "specContent"
	MetaSpecStatus     = "specStatus"
	MetaTitle          = "title"
	MetaOrder          = "order"
	MetaAutoAssertions = "autoAssertions"
	MetaKind           = "specwright" // on resources: "type" or "file"
)

// Spec is a Specwright spec. Contract, when set, is a JSON document
// (SpecContract) naming the types and files the spec's chunks create.
type Spec struct {
	ID        string `json:"id"`
	ProjectID string `json:"projectId,omitempty"`
	Title     string `json:"title"`
	Content   string `json:"content,omitempty"`
	Status    string `json:"status,omitempty"`
	Contract  string `json:"contract,omitempty"`
}

// SpecContract is what a spec's Contract holds.
type SpecContract struct {
	Types []ContractType `json:"types,omitempty"`
	Files []ContractFile `json:"files,omitempty"`
}

// ContractType is a type the spec's chunks export.
type ContractType struct {
	Name         string `json:"name"`
	File         string `json:"file"`
	ExportedFrom string `json:"exportedFrom,omitempty"`
	Definition   string `json:"definition,omitempty"`
}

// ContractFile is a file the spec's chunks create or change.
type ContractFile struct {
	Path    string   `json:"path"`
	Action  string   `json:"action,omitempty"`
	Purpose string   `json:"purpose,omitempty"`
	Exports []string `json:"exports,omitempty"`
}

// Chunk is one piece of a spec that an agent implements.
type Chunk struct {
	ID          string `json:"id"`
	SpecID      string `json:"specId,omitempty"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Order       int    `json:"order"`
	Status      string `json:"status,omitempty"`
	// Agent runs the chunk (empty: DefaultAgent).
	Agent        string                       `json:"agent,omitempty"`
	Dependencies []string                     `json:"dependencies,omitempty"`
	Creates      []string                     `json:"creates,omitempty"`
	Consumes     []string                     `json:"consumes,omitempty"`
	Assertions   []contract.ContractAssertion `json:"assertions,omitempty"`
}

// Workflow is what the adapter converts: a spec and its chunks.
type Workflow struct {
	Spec   Spec    `json:"spec"`
	Chunks []Chunk `json:"chunks"`
}

// ChunkOutput is what an agent produced for a chunk: its output (a
// transcript, a git summary), tool calls and exit code.
type ChunkOutput struct {
	Output    string `json:"output"`
	ToolCalls []any  `json:"toolCalls,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
}

// Adapter is the Specwright protocol adapter.
type Adapter struct{}

var (
	_ contract.ProtocolAdapter    = Adapter{}
	_ contract.Detector           = Adapter{}
	_ contract.ValidatorRegistrar = Adapter{}
)

// New returns the adapter.
func New() Adapter { return Adapter{} }

func (Adapter) Protocol() string { return Protocol }
func (Adapter) Version() string  { return Version }
func (Adapter) Description() string {
	return "Specwright: a spec's chunks as contract steps, its types and files as resources"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return `an object with "spec" (an object) and "chunks" (a list)`
}

// Detects implements contract.Detector.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Workflow:
		return true
	case *Workflow:
		return x != nil
	}
	m, ok := contract.JSONObject(v)
	return ok && contract.JSONKind(m["spec"]) == "object" && contract.JSONKind(m["chunks"]) == "array"
}

// RegisterValidators implements contract.ValidatorRegistrar: it registers
// file-export (FileExportValidator).
func (Adapter) RegisterValidators(register func(string, contract.Validator) error) error {
	return register(FileExport, FileExportValidator)
}

// ToContract implements contract.ProtocolAdapter: workflow is a Workflow
// or its JSON.
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	w, err := contract.Decode[Workflow](v)
	if err != nil {
		return nil, fmt.Errorf("specwright: %w", err)
	}
	return ToContract(w, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Workflow.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) { return FromContract(c) }

// ToContract converts a spec and its chunks to a contract as the package
// documentation says. AutoAssertions adds to each step, for each id it
// creates that is a file resource of the spec's contract, an assertion
// that the file exists (exists on resource:ID); FromContract leaves them
// out again. ResourceMappings keys: "type", "file".
func ToContract(w Workflow, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	spec := w.Spec
	if spec.ID == "" {
		return nil, errors.New("specwright: the spec has no id")
	}
	c := &contract.AgentContract{
		Version:     "1.0",
		ID:          ContractIDPrefix + spec.ID,
		Protocol:    Protocol,
		Description: spec.Title,
		Strictness:  opts.Strictness,
		Validators: []contract.ResourceValidator{
			{Type: FileExport, ResourceTypes: []string{string(contract.ResourceFile)}},
			{Type: "exists", ResourceTypes: []string{"*"}},
		},
		Metadata: map[string]any{MetaSpecID: spec.ID, MetaSpecTitle: spec.Title},
	}
	if opts.PreserveMetadata {
		for k, v := range map[string]string{MetaSpecProjectID: spec.ProjectID, MetaSpecContent: spec.Content, MetaSpecStatus: spec.Status} {
			if v != "" {
				c.Metadata[k] = v
			}
		}
	}
	files := map[string]bool{}
	if strings.TrimSpace(spec.Contract) != "" {
		var sc SpecContract
		if err := json.Unmarshal([]byte(spec.Contract), &sc); err != nil {
			return nil, fmt.Errorf("specwright: spec %s: contract: %w", spec.ID, err)
		}
		seen := map[string]bool{}
		typ, err := opts.MapResourceType("type", contract.ResourceFile)
		if err != nil {
			return nil, fmt.Errorf("specwright: %w", err)
		}
		for _, t := range sc.Types {
			md := map[string]any{MetaKind: "type", "exportName": t.Name}
			if t.ExportedFrom != "" {
				md["exportedFrom"] = t.ExportedFrom
			}
			if t.Definition != "" {
				md["definition"] = t.Definition
			}
			c.Resources = append(c.Resources, contract.ContractResource{
				ID: convert.Unique(seen, convert.ID("type_", t.Name)), Type: typ,
				Location: t.File, Format: "typescript", Metadata: md,
			})
		}
		ftyp, err := opts.MapResourceType("file", contract.ResourceFile)
		if err != nil {
			return nil, fmt.Errorf("specwright: %w", err)
		}
		for _, f := range sc.Files {
			md := map[string]any{MetaKind: "file"}
			if f.Action != "" {
				md["action"] = f.Action
			}
			if f.Purpose != "" {
				md["purpose"] = f.Purpose
			}
			if f.Exports != nil {
				md["exports"] = append([]string(nil), f.Exports...)
			}
			r := contract.ContractResource{
				ID: convert.Unique(seen, FileResourceID(f.Path)), Type: ftyp,
				Location: f.Path, Format: formatOf(f.Path), Metadata: md,
			}
			if ftyp == contract.ResourceFile {
				files[r.ID] = true
			}
			c.Resources = append(c.Resources, r)
		}
	}

	chunks := w.Chunks
	if opts.MaxSteps > 0 && len(chunks) > opts.MaxSteps {
		chunks = chunks[:opts.MaxSteps]
		c.Metadata["truncatedFrom"] = len(w.Chunks)
	}
	kept := map[string]bool{}
	for _, ch := range chunks {
		kept[ch.ID] = true
	}
	for i, ch := range chunks {
		if ch.ID == "" {
			return nil, fmt.Errorf("specwright: chunks[%d] has no id", i)
		}
		st := contract.ContractStep{
			ID:          ch.ID,
			Agent:       ch.Agent,
			Description: ch.Description,
			Creates:     cloneStrings(ch.Creates),
			Consumes:    cloneStrings(ch.Consumes),
			Assertions:  cloneAssertions(ch.Assertions),
			Metadata:    map[string]any{MetaTitle: ch.Title, MetaOrder: ch.Order, MetaSpecID: spec.ID},
		}
		if st.Agent == "" {
			st.Agent = DefaultAgent
		}
		if ch.Dependencies != nil {
			st.DependsOn = []string{}
			for _, d := range ch.Dependencies {
				if kept[d] || len(chunks) == len(w.Chunks) {
					st.DependsOn = append(st.DependsOn, d)
				}
			}
		}
		if opts.AutoAssertions {
			n := 0
			for _, id := range ch.Creates {
				if files[id] {
					st.Assertions = append(st.Assertions, contract.ContractAssertion{
						Type: contract.Assert, Message: fmt.Sprintf("the chunk creates %s", id),
						Check: contract.Check{Type: "exists", Target: "resource:" + id},
					})
					n++
				}
			}
			if n > 0 {
				st.Metadata[MetaAutoAssertions] = n
			}
		}
		c.Steps = append(c.Steps, st)
	}
	return c, nil
}

// FileResourceID is the id of the resource a file path becomes.
func FileResourceID(path string) string { return convert.ID("file_", path) }

func formatOf(path string) string {
	switch {
	case strings.HasSuffix(path, ".ts"), strings.HasSuffix(path, ".tsx"):
		return "typescript"
	case strings.HasSuffix(path, ".json"):
		return "json"
	case strings.HasSuffix(path, ".md"):
		return "markdown"
	}
	return "unknown"
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

func cloneAssertions(as []contract.ContractAssertion) []contract.ContractAssertion {
	if as == nil {
		return nil
	}
	return append([]contract.ContractAssertion{}, as...)
}

// FromContract converts a contract back to a spec and its chunks. A
// contract made by ToContract comes back as the package documentation
// says; any other gives a spec whose id is the contract's (without the
// "contract_" prefix), titled by its description (else "Converted Spec"),
// one chunk per step.
func FromContract(c *contract.AgentContract) (Workflow, error) {
	if c == nil {
		return Workflow{}, errors.New("specwright: nil contract")
	}
	md := c.Metadata
	spec := Spec{
		ID:        strings.TrimPrefix(c.ID, ContractIDPrefix),
		Title:     c.Description,
		Status:    "approved",
		ProjectID: convert.String(md, MetaSpecProjectID),
		Content:   convert.String(md, MetaSpecContent),
	}
	if id, ok := md[MetaSpecID].(string); ok {
		spec.ID = id
	}
	if t, ok := md[MetaSpecTitle].(string); ok {
		spec.Title = t
	} else if spec.Title == "" {
		spec.Title = "Converted Spec"
	}
	if s, ok := md[MetaSpecStatus].(string); ok {
		spec.Status = s
	}
	var sc SpecContract
	for _, r := range c.Resources {
		switch convert.String(r.Metadata, MetaKind) {
		case "type":
			sc.Types = append(sc.Types, ContractType{
				Name: convert.String(r.Metadata, "exportName"), File: r.Location,
				ExportedFrom: convert.String(r.Metadata, "exportedFrom"),
				Definition:   convert.String(r.Metadata, "definition"),
			})
		case "file":
			f := ContractFile{
				Path: r.Location, Action: convert.String(r.Metadata, "action"),
				Purpose: convert.String(r.Metadata, "purpose"),
			}
			if _, ok := r.Metadata["exports"]; ok {
				f.Exports = convert.Strings(r.Metadata, "exports")
			}
			sc.Files = append(sc.Files, f)
		}
	}
	if sc.Types != nil || sc.Files != nil {
		b, err := json.Marshal(sc)
		if err != nil {
			return Workflow{}, fmt.Errorf("specwright: spec contract: %w", err)
		}
		spec.Contract = string(b)
	}
	w := Workflow{Spec: spec, Chunks: make([]Chunk, 0, len(c.Steps))}
	for i := range c.Steps {
		st := &c.Steps[i]
		ch := Chunk{
			ID:           st.ID,
			SpecID:       spec.ID,
			Title:        convert.String(st.Metadata, MetaTitle),
			Description:  st.Description,
			Order:        i,
			Status:       "pending",
			Dependencies: cloneStrings(st.DependsOn),
			Creates:      cloneStrings(st.Creates),
			Consumes:     cloneStrings(st.Consumes),
			Assertions:   cloneAssertions(st.Assertions),
		}
		if st.Agent != DefaultAgent {
			ch.Agent = st.Agent
		}
		if _, ok := st.Metadata[MetaTitle]; !ok {
			ch.Title = shorten(st.Description, 50)
		}
		if o, ok := convert.Int(st.Metadata, MetaOrder); ok {
			ch.Order = o
		}
		if n, ok := convert.Int(st.Metadata, MetaAutoAssertions); ok && n > 0 && n <= len(ch.Assertions) {
			ch.Assertions = ch.Assertions[:len(ch.Assertions)-n]
			if len(ch.Assertions) == 0 && len(st.Assertions) == n {
				ch.Assertions = nil
			}
		}
		w.Chunks = append(w.Chunks, ch)
	}
	return w, nil
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
