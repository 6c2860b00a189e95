package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ProtocolAdapter converts one protocol's description of a piece of agent
// work (an A2A task, an MCP tool sequence, a Specwright spec, a LangGraph
// graph, a CrewAI project, an AutoGen team) to and from a contract, and
// translates between the protocol's execution output and contract
// resources. Adapters live in subpackages of contract (contract/a2a,
// contract/mcp, contract/specwright, contract/langgraph, contract/crewai,
// contract/autogen) so that protocol SDKs stay out of this package;
// each also offers typed functions, so Go users do not pass any.
//
// The any-typed methods accept the adapter's own Go types (a value or a
// pointer) and, for ToContract, the same shape as JSON: []byte,
// json.RawMessage or a decoded map[string]any (and, for an adapter whose
// workflow spans files, Documents). Anything else is an error
// wrapping ErrUnsupportedInput.
type ProtocolAdapter interface {
	// Protocol names the protocol ("a2a", "mcp", "langgraph", …); it is the
	// contract's protocol field and the registry's key.
	Protocol() string
	// Version is the protocol version the adapter speaks ("1.0").
	Version() string
	// Description says what the adapter converts, for people.
	Description() string
	// ToContract converts a protocol workflow to a contract.
	ToContract(workflow any, opts AdapterOptions) (*AgentContract, error)
	// FromContract converts a contract back to the protocol's workflow
	// type (a value of the adapter's Workflow type).
	FromContract(c *AgentContract) (any, error)
	// ExtractResources returns what a step's protocol output created (an
	// A2A task or message, an MCP tool result, a Specwright chunk's
	// output): each resource's description and, when the output holds
	// it, its content (Resource's Text, Data and MediaType), so that a
	// later step, or another protocol's InjectContext, can be given it.
	// An adapter whose output only names what was made (a file written
	// elsewhere) says so in its documentation and leaves the content
	// empty.
	ExtractResources(output any, step *ContractStep) ([]Resource, error)
	// InjectContext gives a step its protocol-shaped input carrying the
	// resources earlier steps created: an A2A message, MCP tool-call
	// arguments, a Specwright prompt.
	InjectContext(step *ContractStep, available []Resource) (any, error)
}

// Detector is implemented by adapters that can recognize their workflow's
// shape (Registry.Detect).
type Detector interface {
	// Detects reports whether workflow has this adapter's shape. It must
	// not panic on any input.
	Detects(workflow any) bool
	// LooksFor says, for people, what shape Detects recognizes; an input
	// no adapter claims is reported with every adapter's LooksFor.
	LooksFor() string
}

// ValidatorRegistrar is implemented by adapters that bring custom check
// types (for example specwright's file-export): Registry.Register calls
// RegisterValidators once per registration with a function that makes a
// validator available to every contract compiled afterwards. Registering
// the same name again from the same protocol is a no-op, so an adapter may
// be added to several registries; a name that is a built-in check type or
// was registered by other code is an error.
type ValidatorRegistrar interface {
	RegisterValidators(register func(name string, v Validator) error) error
}

// AdapterOptions tune ToContract.
type AdapterOptions struct {
	// AutoAssertions adds assertions the adapter can derive from the
	// workflow (each adapter documents which).
	AutoAssertions bool
	// Strictness is the contract's strictness (empty: the default, loose).
	Strictness Strictness
	// ResourceMappings maps a protocol's kind of thing (each adapter
	// documents its keys: "file", "data", "artifact", …) to the contract
	// resource type it becomes, overriding the mapping table.
	ResourceMappings map[string]string
	// PreserveMetadata copies the protocol's extension metadata (and
	// what the mapping table does not carry) into the contract's metadata,
	// so FromContract gives it back.
	PreserveMetadata bool
	// MaxSteps, when positive, keeps only the first MaxSteps steps (and
	// drops dependencies on the steps left out).
	MaxSteps int
}

// ErrUnsupportedInput is wrapped by an adapter's error for a value that is
// not its workflow or output type.
var ErrUnsupportedInput = errors.New("unsupported input")

// MapResourceType returns the resource type the protocol kind becomes:
// opts.ResourceMappings[kind] when set (it must name a resource type),
// else def.
func (opts AdapterOptions) MapResourceType(kind string, def ResourceType) (ResourceType, error) {
	t, ok := opts.ResourceMappings[kind]
	if !ok {
		return def, nil
	}
	switch rt := ResourceType(t); rt {
	case ResourceFile, ResourceData, ResourceMessage, ResourceArtifact:
		return rt, nil
	}
	return "", fmt.Errorf("resourceMappings[%q]: %q is not a resource type (file, data, message, artifact)", kind, t)
}

// Decode converts v to T for an adapter's any-typed methods: a T or a
// non-nil *T is returned as is; []byte, json.RawMessage and decoded JSON
// (map[string]any, []any) are decoded into T. Anything else is an error
// wrapping ErrUnsupportedInput.
func Decode[T any](v any) (T, error) {
	var zero T
	switch x := v.(type) {
	case T:
		return x, nil
	case *T:
		if x == nil {
			return zero, fmt.Errorf("%w: nil %T", ErrUnsupportedInput, v)
		}
		return *x, nil
	case json.RawMessage:
		return decodeJSON[T](x)
	case []byte:
		return decodeJSON[T](x)
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return zero, fmt.Errorf("%w: %w", ErrUnsupportedInput, err)
		}
		return decodeJSON[T](b)
	}
	return zero, fmt.Errorf("%w: %T (want %T or its JSON)", ErrUnsupportedInput, v, zero)
}

func decodeJSON[T any](b []byte) (T, error) {
	var out T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		var zero T
		return zero, fmt.Errorf("decode %T: %w", out, err)
	}
	return out, nil
}

// JSONObject returns the top-level members of v seen as JSON: []byte and
// json.RawMessage are parsed, map[string]any is taken as is, and any other
// value is marshaled first. It reports false when v is not a JSON object.
// Detectors use it to look at an input's shape.
func JSONObject(v any) (map[string]json.RawMessage, bool) {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil, false
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(x); err != nil {
			return nil, false
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// JSONKind says what JSON value raw holds: "object", "array", "string",
// "number", "bool", "null", or "" when raw is empty or not JSON.
func JSONKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return "number"
	}
	return ""
}

// Document is one file of a workflow, by name (used in errors) and
// content.
type Document struct {
	Name string
	Data []byte
}

// Documents is a workflow given as several files, such as a CrewAI
// project's agents.yaml and tasks.yaml. An adapter whose workflow spans
// files accepts it in ToContract and Detects (adapters whose workflow is
// one document accept a Documents of one); errors about a file's content
// name the file (and line, for YAML).
type Documents []Document
