package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pactum/pactum/internal/toolargs"
)

// BridgeKey is the key, in a step's metadata, that makes the step a
// bridge into an MCP tool: with the value BridgeMCP, the resources the
// step consumes (another protocol's output, an A2A agent's for one) are
// mapped to the arguments of the tool its agent calls (ToolArguments),
// and its pre-gate checks them against the tool's input schema, read
// live from the MCP server (GateOptions.ToolSchema), before the tool is
// called (docs/contracts.md, "The cross-protocol bridge").
const BridgeKey = "bridge"

// BridgeMCP is the value of BridgeKey for a step whose agent is an mcp
// agent.
const BridgeMCP = "mcp"

// BridgeTool is the MCP tool a bridge step's agent calls, as its server
// lists it: what the step's pre-gate checked the bridged arguments
// against. The live gate reads it from the server (GateOptions.Tool) and
// records it in the step's verified result, where an offline check of the
// step (Replay) reads it back.
type BridgeTool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
}

// Bridged reports whether step s is a bridge into an MCP tool
// (BridgeKey).
func (s *CompiledStep) Bridged() bool { return isBridge(s.step) }

func isBridge(st *ContractStep) bool {
	v, _ := st.Metadata[BridgeKey].(string)
	return v == BridgeMCP
}

// ToolArguments maps resources (what one protocol's output held, with
// content) to the arguments of an MCP tool whose input schema is schema.
// The rule is the one the mcp agent runtime applies to a message, whose
// parts are the resources (InjectResources: a resource with Data is a
// data part, any other a text part):
//
//  1. the first resource with Data: its members, when it is a JSON
//     object, are the arguments; any other JSON (a list, a number) is an
//     error, there being no arguments to take from it;
//  2. without one, the resources' Text, joined by newlines, is the value
//     of the tool's only required string argument
//     (toolargs.TextArgument); a tool with no arguments gets none, and
//     any other tool is an error saying what it takes.
//
// It does not check the arguments against the schema: CheckArguments
// does, and the bridge (a bridge step's pre-gate, package
// contract/bridge) calls both.
func ToolArguments(rs []Resource, schema map[string]any) (map[string]any, error) {
	var texts []string
	for _, r := range rs {
		if r.Data == nil {
			texts = append(texts, r.Text)
			continue
		}
		obj, ok := r.Data.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("resource %s is JSON %s, not an object of tool arguments", r.ID, jsonKindOf(r.Data))
		}
		args := make(map[string]any, len(obj))
		for k, v := range obj {
			args[k] = v
		}
		return args, nil
	}
	text := strings.Join(texts, "\n")
	name, err := toolargs.TextArgument(schema, nil, text)
	if err != nil {
		return nil, err
	}
	args := map[string]any{}
	if name != "" {
		args[name] = text
	}
	return args, nil
}

func jsonKindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// ArgumentsError is a tool's arguments refused by its input schema: where
// in the arguments (Path, a JSON pointer, "" for the whole object), which
// schema keyword refused them (SchemaPath, a JSON pointer into the input
// schema, e.g. /properties/count/type; Keyword its last token), and why
// (Reason, e.g. "want integer, got string"). More lists the further
// failures, in the same form.
type ArgumentsError struct {
	Tool       string
	Path       string
	SchemaPath string
	Keyword    string
	Reason     string
	More       []string
}

// Error says it in one line: "/count: want integer, got string (schema
// /properties/count/type)".
func (e *ArgumentsError) Error() string {
	where := e.Path
	if where == "" {
		where = "/"
	}
	s := fmt.Sprintf("%s: %s (schema %s)", where, e.Reason, cmpOr(e.SchemaPath, "/"))
	if e.Tool != "" {
		s = fmt.Sprintf("the arguments do not match the input schema of tool %s: %s", e.Tool, s)
	}
	if len(e.More) > 0 {
		s += "; " + strings.Join(e.More, "; ")
	}
	return s
}

// CheckArguments checks args against an MCP tool's input schema (its own
// $schema says the draft; 2020-12 when it names none, as CompileSchema
// does). It returns nil, an *ArgumentsError naming the instance path and
// schema path of the first failure (by instance location), or an error
// for a schema that does not compile.
func CheckArguments(tool string, args map[string]any, schema map[string]any) error {
	sch, err := CompileSchema(schema, "a tool's input schema")
	if err != nil {
		return fmt.Errorf("the input schema of tool %s does not compile: %w", tool, err)
	}
	// The validator wants JSON's own values (float64 numbers): a round
	// trip through JSON gives them whatever decoded the arguments.
	doc, ok := normalizeJSON(args)
	if !ok {
		return fmt.Errorf("tool %s: the arguments are not JSON", tool)
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	out := &ArgumentsError{Tool: tool}
	for i, l := range leaves {
		path := instancePointer(l.InstanceLocation)
		kw := l.ErrorKind.KeywordPath()
		spath := schemaPointer(l.SchemaURL, kw)
		reason := l.ErrorKind.LocalizedString(schemaPrinter)
		if i == 0 {
			out.Path, out.SchemaPath, out.Reason = path, spath, reason
			if len(kw) > 0 {
				out.Keyword = kw[len(kw)-1]
			}
			continue
		}
		out.More = append(out.More, fmt.Sprintf("%s: %s (schema %s)", cmpOr(path, "/"), reason, cmpOr(spath, "/")))
	}
	return out
}

// schemaPointer is the JSON pointer, in the schema, of the keyword that
// failed: the fragment of the failing schema's URL and the keyword path.
func schemaPointer(url string, kw []string) string {
	frag := ""
	if i := strings.IndexByte(url, '#'); i >= 0 {
		frag = url[i+1:]
	}
	return strings.TrimSuffix(frag, "/") + instancePointer(kw)
}
