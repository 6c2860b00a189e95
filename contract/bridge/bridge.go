// Package bridge hands an A2A agent's output to an MCP tool: the
// cross-protocol bridge of docs/contracts.md ("The cross-protocol
// bridge"). The output (an A2A task or message, of protocol 1.0 or the
// earlier 0.2 and 0.3 shapes) is read with the A2A protocol adapter
// (contract/a2a), mapped to the tool's arguments by pactum's one rule
// (contract.ToolArguments), injected into the call with the MCP protocol
// adapter (contract/mcp) and checked against the tool's inputSchema as
// the MCP server lists it now (tools/list, read live with the official
// go-sdk client). Arguments the schema refuses never reach the tool: the
// error names where in the arguments and which schema keyword refused
// them ("/a: got string, want number (schema /properties/a/type)").
//
// In a contract, the same bridge is a step whose metadata says
// bridge: mcp (contract.BridgeKey): its pre-gate makes the same check
// before its mcp agent calls the tool.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/a2a"
	"github.com/pactum/pactum/contract/mcp"
)

// ErrRefused is wrapped by every error that says the A2A output does not
// fit the tool: no arguments could be taken from it, or the arguments do
// not match the tool's input schema (then errors.As finds the
// *contract.ArgumentsError naming the paths).
var ErrRefused = errors.New("refused")

// StepID is the id of the step the A2A output is extracted as (it names
// the resources: text_a2a_0, data_a2a_1, …).
const StepID = "a2a"

// Tool returns the tool named name as the server of cs lists it now
// (tools/list, every page), or an error when it lists no such tool.
func Tool(ctx context.Context, cs *sdk.ClientSession, name string) (*sdk.Tool, error) {
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("bridge: list the tools: %w", err)
		}
		if t.Name == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("bridge: the MCP server lists no tool %q", name)
}

// Arguments returns the arguments an A2A agent's output (see
// a2a.Adapter.ExtractResources for the forms it takes) gives tool:
//
//  1. the output is extracted with the A2A adapter, with content; what
//     the agent answered is its artifacts when it produced any, else the
//     text and data parts of its message (a task's status message);
//  2. those resources become the tool's arguments by
//     contract.ToolArguments: the first one holding JSON data gives its
//     object's members, else their text goes into the tool's only
//     required string argument;
//  3. the call is built with the MCP adapter (mcp.InjectArguments) from
//     the tool's name, input schema and those arguments;
//  4. the arguments are checked against the tool's input schema
//     (contract.CheckArguments).
//
// An output the adapter cannot read is an error wrapping
// contract.ErrUnsupportedInput; one that does not fit the tool wraps
// ErrRefused.
func Arguments(output any, tool *sdk.Tool) (map[string]any, error) {
	if tool == nil {
		return nil, errors.New("bridge: no tool")
	}
	schema, err := inputSchema(tool)
	if err != nil {
		return nil, err
	}
	rs, err := a2a.New().ExtractResources(output, &contract.ContractStep{ID: StepID})
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	args, err := contract.ToolArguments(Answer(rs), schema)
	if err != nil {
		return nil, fmt.Errorf("bridge: tool %s: %w: %w", tool.Name, ErrRefused, err)
	}
	step := &contract.ContractStep{ID: tool.Name, Agent: tool.Name, Metadata: map[string]any{
		mcp.MetaTool: tool.Name, mcp.MetaArguments: args, mcp.MetaInputSchema: schema,
	}}
	call, err := mcp.New().InjectContext(step, nil)
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	args, _ = call.(map[string]any)
	if err := contract.CheckArguments(tool.Name, args, schema); err != nil {
		var ae *contract.ArgumentsError
		if errors.As(err, &ae) {
			return nil, fmt.Errorf("bridge: %w: %w", ErrRefused, err)
		}
		return nil, fmt.Errorf("bridge: %w", err)
	}
	return args, nil
}

// Answer keeps, of the resources an A2A output was extracted as, what
// the agent answered: its artifacts when there are any, else the text and
// data parts of its message. File resources carry no arguments.
func Answer(rs []contract.Resource) []contract.Resource {
	var arts, parts []contract.Resource
	for _, r := range rs {
		switch r.Type {
		case contract.ResourceArtifact:
			arts = append(arts, r)
		case contract.ResourceMessage, contract.ResourceData:
			parts = append(parts, r)
		}
	}
	if len(arts) > 0 {
		return arts
	}
	return parts
}

// Call bridges an A2A agent's output to the tool named name on the
// server of cs: the tool is read live (Tool), the arguments made and
// checked (Arguments), and only then is the tool called. A refusal
// (ErrRefused) calls nothing.
func Call(ctx context.Context, cs *sdk.ClientSession, output any, name string) (*sdk.CallToolResult, error) {
	tool, err := Tool(ctx, cs, name)
	if err != nil {
		return nil, err
	}
	args, err := Arguments(output, tool)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("bridge: call tool %s: %w", name, err)
	}
	return res, nil
}

// inputSchema is the tool's input schema as a JSON object (the client
// decodes it as one; a tool built in Go may hold any JSON-encodable
// value).
func inputSchema(t *sdk.Tool) (map[string]any, error) {
	if m, ok := t.InputSchema.(map[string]any); ok {
		return m, nil
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("bridge: tool %s: input schema: %w", t.Name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("bridge: tool %s: the input schema is not a JSON object", t.Name)
	}
	return m, nil
}
