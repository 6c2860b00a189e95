// Package mcp is the protocol adapter between an MCP tool sequence (the
// tools, with their input and output schemas, and the calls made to them)
// and a contract, on the official SDK's types
// (github.com/modelcontextprotocol/go-sdk/mcp).
//
// The mapping (docs/contracts.md, "Protocol adapters", has it as a table):
//
//   - each call is a step, in order, each depending on the one before:
//     id "step_I_TOOL", agent the tool's name, description the tool's
//     description, metadata mcpTool (the name), mcpArguments (the call's
//     arguments), inputSchema (the tool's input schema) and mcpTitle;
//   - a tool's output schema is an assertion on each step that calls it:
//     schema_match on the output (the structured content), condition
//     OutputSchemaCondition;
//   - each resource of the sequence is a contract resource: id
//     "mcp_resource_" and its URI, location its URI (a file: URI's path for
//     a file resource), format its MIME type, metadata mcpResource, uri,
//     name, title, description; a file: URI (or one without a scheme) is a
//     file resource, any other an artifact resource;
//   - tools never called are kept in the contract's metadata
//     (mcpUnusedTools), and the tools' order (mcpToolOrder).
//
// FromContract gives back the tools (name, title, description, input and
// output schema), the calls (name, arguments) in order, and the resources
// (URI, name, title, description, MIME type). With PreserveMetadata the
// tools' annotations and _meta are kept as well.
//
// Unlike the seed, a step's consumes stay empty: they must name resources
// that earlier steps create, and a tool sequence does not say which
// call's result feeds which; the resources a call's arguments name by URI
// are listed in the step's metadata (mcpResourceRefs).
package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/internal/convert"
)

// Names of the adapter.
const (
	Protocol = "mcp"
	// Version is the newest MCP specification revision the SDK speaks.
	Version = "2026-07-28"
	// ContractIDPrefix is put before a hash of the sequence to make the
	// contract id.
	ContractIDPrefix = "contract_mcp_"
	// OutputSchemaCondition is the condition of the assertion a tool's
	// output schema becomes; FromContract finds the schema by it.
	OutputSchemaCondition = "output matches the tool's output schema"
)

// Metadata keys.
const (
	MetaTool         = "mcpTool"
	MetaArguments    = "mcpArguments"
	MetaInputSchema  = "inputSchema"
	MetaTitle        = "mcpTitle"
	MetaAnnotations  = "mcpAnnotations"
	MetaToolMeta     = "mcpToolMeta"
	MetaResourceRefs = "mcpResourceRefs"
	MetaUnusedTools  = "mcpUnusedTools"
	MetaToolOrder    = "mcpToolOrder"
	MetaResource     = "mcpResource"
)

// Sequence is an MCP tool sequence: the tools, the calls made to them in
// order, and the resources the server offers.
type Sequence struct {
	Tools     []*sdk.Tool     `json:"tools"`
	Calls     []Call          `json:"calls"`
	Resources []*sdk.Resource `json:"resources,omitempty"`
}

// Call is one call of a tool.
type Call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Adapter is the MCP protocol adapter.
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
	return "MCP: a tool sequence as a contract, one step per call; output schemas become schema_match assertions"
}

// LooksFor implements contract.Detector.
func (Adapter) LooksFor() string {
	return `an object with "tools" (a list of MCP tools) and "calls" (a list of {name, arguments})`
}

// Detects implements contract.Detector.
func (Adapter) Detects(v any) bool {
	switch x := v.(type) {
	case Sequence:
		return true
	case *Sequence:
		return x != nil
	}
	m, ok := contract.JSONObject(v)
	return ok && contract.JSONKind(m["tools"]) == "array"
}

// ToContract implements contract.ProtocolAdapter: workflow is a Sequence
// or its JSON.
func (Adapter) ToContract(v any, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	s, err := contract.Decode[Sequence](v)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return ToContract(s, opts)
}

// FromContract implements contract.ProtocolAdapter; it returns a Sequence.
func (Adapter) FromContract(c *contract.AgentContract) (any, error) { return FromContract(c) }

// ToContract converts a tool sequence to a contract as the package
// documentation says. Every call must name a tool of the sequence, and
// tool names must be unique. ResourceMappings key: "resource" (the type
// of every sequence resource). AutoAssertions changes nothing: the output
// schema's assertion is the mapping itself.
func ToContract(s Sequence, opts contract.AdapterOptions) (*contract.AgentContract, error) {
	if len(s.Calls) == 0 {
		return nil, errors.New("mcp: the sequence has no calls")
	}
	tools := map[string]*sdk.Tool{}
	var order []string
	for i, t := range s.Tools {
		if t == nil {
			return nil, fmt.Errorf("mcp: tools[%d] is null", i)
		}
		if t.Name == "" {
			return nil, fmt.Errorf("mcp: tools[%d] has no name", i)
		}
		if _, dup := tools[t.Name]; dup {
			return nil, fmt.Errorf("mcp: tools[%d]: tool %q is defined twice", i, t.Name)
		}
		tools[t.Name] = t
		order = append(order, t.Name)
	}
	calls := s.Calls
	if opts.MaxSteps > 0 && len(calls) > opts.MaxSteps {
		calls = calls[:opts.MaxSteps]
	}
	c := &contract.AgentContract{
		Version:    "1.0",
		ID:         ContractIDPrefix + sequenceHash(s),
		Protocol:   Protocol,
		Strictness: opts.Strictness,
		Metadata:   map[string]any{MetaToolOrder: order},
	}
	if len(calls) < len(s.Calls) {
		c.Metadata["truncatedFrom"] = len(s.Calls)
	}
	seen := map[string]bool{}
	for i, r := range s.Resources {
		if r == nil {
			return nil, fmt.Errorf("mcp: resources[%d] is null", i)
		}
		cr, err := contractResource(r, seen, opts)
		if err != nil {
			return nil, fmt.Errorf("mcp: resources[%d]: %w", i, err)
		}
		c.Resources = append(c.Resources, cr)
	}
	used := map[string]bool{}
	var names []string
	for i, call := range calls {
		t, ok := tools[call.Name]
		if !ok {
			return nil, fmt.Errorf("mcp: calls[%d] names tool %q, which the sequence does not define", i, call.Name)
		}
		used[call.Name] = true
		names = append(names, call.Name)
		st := contract.ContractStep{
			ID:          convert.ID(fmt.Sprintf("step_%d_", i), call.Name),
			Agent:       call.Name,
			Description: t.Description,
			Metadata:    map[string]any{MetaTool: call.Name},
		}
		if i > 0 {
			st.DependsOn = []string{c.Steps[i-1].ID}
		}
		if call.Arguments != nil {
			st.Metadata[MetaArguments] = convert.JSON(call.Arguments)
		}
		if t.InputSchema != nil {
			st.Metadata[MetaInputSchema] = convert.JSON(t.InputSchema)
		}
		if t.Title != "" {
			st.Metadata[MetaTitle] = t.Title
		}
		if opts.PreserveMetadata {
			if t.Annotations != nil {
				st.Metadata[MetaAnnotations] = convert.JSON(t.Annotations)
			}
			if len(t.Meta) > 0 {
				st.Metadata[MetaToolMeta] = convert.JSON(t.Meta)
			}
		}
		if refs := resourceRefs(call.Arguments, s.Resources, c.Resources); len(refs) > 0 {
			st.Metadata[MetaResourceRefs] = refs
		}
		if t.OutputSchema != nil {
			schema := convert.Object(t.OutputSchema)
			if schema == nil {
				return nil, fmt.Errorf("mcp: tool %q: the output schema is not a JSON object", t.Name)
			}
			st.Assertions = append(st.Assertions, contract.ContractAssertion{
				Type:      contract.Assert,
				Condition: OutputSchemaCondition,
				Message:   fmt.Sprintf("%s must return output matching its output schema", call.Name),
				Check:     contract.Check{Type: "schema_match", Target: "output", Schema: schema},
			})
		}
		c.Steps = append(c.Steps, st)
	}
	var unused []any
	for _, t := range s.Tools {
		if !used[t.Name] {
			unused = append(unused, convert.JSON(t))
		}
	}
	if len(unused) > 0 {
		c.Metadata[MetaUnusedTools] = unused
	}
	c.Description = "MCP tool sequence: " + strings.Join(names, " → ")
	return c, nil
}

// sequenceHash names a sequence by its content, so that the same
// sequence always makes the same contract id.
func sequenceHash(s Sequence) string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// resourceType is the contract resource type of an MCP resource URI: a
// file: URI or one without a scheme is a file, anything else an artifact;
// the location is the file's path, else the URI.
func resourceType(uri string) (contract.ResourceType, string) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return contract.ResourceFile, uri
	}
	if u.Scheme == "file" {
		return contract.ResourceFile, u.Path
	}
	return contract.ResourceArtifact, uri
}

func contractResource(r *sdk.Resource, seen map[string]bool, opts contract.AdapterOptions) (contract.ContractResource, error) {
	typ, loc := resourceType(r.URI)
	typ, err := opts.MapResourceType("resource", typ)
	if err != nil {
		return contract.ContractResource{}, err
	}
	md := map[string]any{MetaResource: true, "uri": r.URI}
	set := func(k, v string) {
		if v != "" {
			md[k] = v
		}
	}
	set("name", r.Name)
	set("title", r.Title)
	set("description", r.Description)
	if opts.PreserveMetadata && len(r.Meta) > 0 {
		md["mcpMeta"] = convert.JSON(r.Meta)
	}
	return contract.ContractResource{
		ID:       convert.Unique(seen, convert.ID("mcp_resource_", r.URI)),
		Type:     typ,
		Location: loc,
		Format:   r.MIMEType,
		Metadata: md,
	}, nil
}

// resourceRefs returns the ids of the sequence resources whose URI a
// call's arguments hold (at any depth), in the resources' order.
func resourceRefs(args map[string]any, rs []*sdk.Resource, crs []contract.ContractResource) []string {
	if len(args) == 0 || len(rs) == 0 {
		return nil
	}
	strs := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			strs[x] = true
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(convert.JSON(args))
	var out []string
	for i, r := range rs {
		if strs[r.URI] {
			out = append(out, crs[i].ID)
		}
	}
	return out
}

// FromContract converts a contract back to a tool sequence. A contract
// made by ToContract comes back as the package documentation says; for
// any other, each step is a call of the tool named by its agent (else its
// id) with no arguments, the tool having the step's description, the
// input schema {"type": "object"} and, as output schema, the schema of
// the step's first schema_match assertion on the output.
func FromContract(c *contract.AgentContract) (Sequence, error) {
	if c == nil {
		return Sequence{}, errors.New("mcp: nil contract")
	}
	var s Sequence
	defined := map[string]*sdk.Tool{}
	for i := range c.Steps {
		st := &c.Steps[i]
		name, ours := st.Metadata[MetaTool].(string)
		if !ours {
			name = st.Agent
			if name == "" {
				name = st.ID
			}
		}
		call := Call{Name: name}
		if a, ok := st.Metadata[MetaArguments]; ok {
			if err := convert.Into(a, &call.Arguments); err != nil {
				return Sequence{}, fmt.Errorf("mcp: steps[%d].metadata.%s: %w", i, MetaArguments, err)
			}
		}
		s.Calls = append(s.Calls, call)
		if _, ok := defined[name]; ok {
			continue
		}
		t, err := toolFromStep(st, name, ours)
		if err != nil {
			return Sequence{}, fmt.Errorf("mcp: steps[%d]: %w", i, err)
		}
		defined[name] = t
		s.Tools = append(s.Tools, t)
	}
	if raw, ok := c.Metadata[MetaUnusedTools]; ok {
		var unused []*sdk.Tool
		if err := convert.Into(raw, &unused); err != nil {
			return Sequence{}, fmt.Errorf("mcp: metadata %s: %w", MetaUnusedTools, err)
		}
		for _, t := range unused {
			if t == nil || t.Name == "" {
				continue
			}
			if _, ok := defined[t.Name]; !ok {
				defined[t.Name] = t
				s.Tools = append(s.Tools, t)
			}
		}
	}
	if order := convert.Strings(c.Metadata, MetaToolOrder); len(order) > 0 {
		rank := map[string]int{}
		for i, n := range order {
			rank[n] = i
		}
		slices.SortStableFunc(s.Tools, func(a, b *sdk.Tool) int {
			ra, oka := rank[a.Name]
			rb, okb := rank[b.Name]
			switch {
			case oka && okb:
				return ra - rb
			case oka:
				return -1
			case okb:
				return 1
			}
			return 0
		})
	}
	for i := range c.Resources {
		r := &c.Resources[i]
		if !convert.Bool(r.Metadata, MetaResource) {
			continue
		}
		mr := &sdk.Resource{
			URI:         convert.String(r.Metadata, "uri"),
			Name:        convert.String(r.Metadata, "name"),
			Title:       convert.String(r.Metadata, "title"),
			Description: convert.String(r.Metadata, "description"),
			MIMEType:    r.Format,
		}
		if mr.URI == "" {
			mr.URI = r.Location
		}
		if m, ok := r.Metadata["mcpMeta"]; ok {
			if err := convert.Into(m, &mr.Meta); err != nil {
				return Sequence{}, fmt.Errorf("mcp: resources[%d].metadata.mcpMeta: %w", i, err)
			}
		}
		s.Resources = append(s.Resources, mr)
	}
	return s, nil
}

func toolFromStep(st *contract.ContractStep, name string, ours bool) (*sdk.Tool, error) {
	t := &sdk.Tool{Name: name, Description: st.Description, Title: convert.String(st.Metadata, MetaTitle)}
	if in, ok := st.Metadata[MetaInputSchema]; ok {
		t.InputSchema = convert.JSON(in)
	} else if !ours {
		t.InputSchema = map[string]any{"type": "object"}
	}
	for _, a := range st.Assertions {
		if a.Check.Type != "schema_match" || a.Check.Schema == nil {
			continue
		}
		if a.Condition == OutputSchemaCondition || (!ours && (a.Check.Target == "" || a.Check.Target == "output")) {
			t.OutputSchema = convert.JSON(a.Check.Schema)
			break
		}
	}
	if an, ok := st.Metadata[MetaAnnotations]; ok {
		if err := convert.Into(an, &t.Annotations); err != nil {
			return nil, fmt.Errorf("metadata %s: %w", MetaAnnotations, err)
		}
	}
	if m, ok := st.Metadata[MetaToolMeta]; ok {
		if err := convert.Into(m, &t.Meta); err != nil {
			return nil, fmt.Errorf("metadata %s: %w", MetaToolMeta, err)
		}
	}
	return t, nil
}
