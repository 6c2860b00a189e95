package bridge_test

import (
	"context"
	"errors"
	"fmt"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/bridge"
)

// An A2A agent answered a task with two numbers; the MCP tool get-sum
// takes them as its arguments. A second answer holds a string where the
// tool's input schema wants a number: the bridge refuses it, naming where,
// and the tool is not called.
func ExampleCall() {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "tools", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "get-sum", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
		"required":   []any{"a", "b"}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called with " + string(req.Params.Arguments)}}}, nil
		})
	st, ct := sdk.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()

	answer := a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewDataPart(map[string]any{"a": 2, "b": 3}))
	res, err := bridge.Call(ctx, cs, answer, "get-sum")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)

	// A 0.2-shaped answer, as older agents send it.
	old := []byte(`{"role": "agent", "parts": [{"type": "data", "data": {"a": "2", "b": 3}}]}`)
	_, err = bridge.Call(ctx, cs, old, "get-sum")
	var ae *contract.ArgumentsError
	fmt.Println(errors.Is(err, bridge.ErrRefused), errors.As(err, &ae), ae.Path, ae.SchemaPath)
	fmt.Println(err)
	// Output:
	// called with {"a":2,"b":3}
	// true true /a /properties/a/type
	// bridge: refused: the arguments do not match the input schema of tool get-sum: /a: got string, want number (schema /properties/a/type)
}
