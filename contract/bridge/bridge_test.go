package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/bridge"
)

// server is an MCP server of the official go-sdk, on in-memory
// transports, with the tools of server-everything the tests use: get-sum
// (two numbers) and echo (a string); calls counts the calls of each.
type server struct {
	cs    *sdk.ClientSession
	calls map[string]*atomic.Int32
}

func setup(t testing.TB) *server {
	t.Helper()
	ctx := context.Background()
	s := &server{calls: map[string]*atomic.Int32{"get-sum": {}, "echo": {}}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "tools", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "get-sum", InputSchema: map[string]any{
		"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
		"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
		"required":   []any{"a", "b"},
	}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.calls["get-sum"].Add(1)
		var args struct{ A, B float64 }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("The sum of %g and %g is %g.", args.A, args.B, args.A+args.B)}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"},
	}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.calls["echo"].Add(1)
		var args struct{ Message string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + args.Message}}}, nil
	})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.cs, err = sdk.NewClient(&sdk.Implementation{Name: "pactum", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cs.Close(); _ = ss.Close() })
	return s
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// completed is an A2A 1.0 task as an agent answers it: an artifact and
// a status message holding the same parts (as pactum's echo agent does).
func completed(parts ...*a2asdk.Part) *a2asdk.Task {
	return &a2asdk.Task{ID: "t", ContextID: "c",
		Status:    a2asdk.TaskStatus{State: a2asdk.TaskStateCompleted, Message: a2asdk.NewMessage(a2asdk.MessageRoleAgent, parts...)},
		Artifacts: []*a2asdk.Artifact{{ID: "a", Name: "echo", Parts: parts}}}
}

func TestCall(t *testing.T) {
	t.Parallel()
	s := setup(t)
	for _, tc := range []struct {
		name   string
		output any
		tool   string
		want   string
		// refused: the error says it, and the tool was not called.
		refused, path, schemaPath string
	}{
		{"1.0 task, data artifact", completed(a2asdk.NewDataPart(map[string]any{"a": 2, "b": 3})), "get-sum", "The sum of 2 and 3 is 5.", "", "", ""},
		{"1.0 message, text", a2asdk.NewMessage(a2asdk.MessageRoleAgent, a2asdk.NewTextPart("hello")), "echo", "Echo: hello", "", "", ""},
		{"1.0 task as JSON", mustJSON(t, completed(a2asdk.NewTextPart("from JSON"))), "echo", "Echo: from JSON", "", "", ""},
		{"0.2 message, parts with type", []byte(`{"role": "agent", "parts": [{"type": "data", "data": {"a": 1.5, "b": 2}}]}`), "get-sum", "The sum of 1.5 and 2 is 3.5.", "", "", ""},
		{"0.2 task, its status message", []byte(`{"id": "t", "sessionId": "s", "status": {"state": "completed", "message": {"role": "agent", "parts": [{"type": "text", "text": "old"}]}}}`), "echo", "Echo: old", "", "", ""},
		{"a string for a number", completed(a2asdk.NewDataPart(map[string]any{"a": "2", "b": 3})), "get-sum", "",
			"/a: got string, want number (schema /properties/a/type)", "/a", "/properties/a/type"},
		{"missing b", completed(a2asdk.NewDataPart(map[string]any{"a": 2})), "get-sum", "", "missing property 'b'", "", "/required"},
		{"text for two numbers", completed(a2asdk.NewTextPart("2 and 3")), "get-sum", "", `the tool requires "a", "b"`, "", ""},
		{"a list", completed(a2asdk.NewDataPart([]any{2, 3})), "get-sum", "", "is JSON an array, not an object of tool arguments", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.calls[tc.tool].Load()
			res, err := bridge.Call(t.Context(), s.cs, tc.output, tc.tool)
			if tc.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := text(res); got != tc.want {
					t.Fatalf("tool said %q, want %q", got, tc.want)
				}
				return
			}
			if !errors.Is(err, bridge.ErrRefused) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("err %v, want a refusal saying %q", err, tc.refused)
			}
			if tc.schemaPath != "" {
				var ae *contract.ArgumentsError
				if !errors.As(err, &ae) || ae.Path != tc.path || ae.SchemaPath != tc.schemaPath {
					t.Fatalf("err %v, want instance path %q and schema path %q", err, tc.path, tc.schemaPath)
				}
			}
			if n := s.calls[tc.tool].Load(); n != before {
				t.Fatalf("the tool was called after a refusal")
			}
		})
	}
}

func TestCallUnknownToolAndOutput(t *testing.T) {
	t.Parallel()
	s := setup(t)
	if _, err := bridge.Call(t.Context(), s.cs, completed(a2asdk.NewTextPart("x")), "nope"); err == nil || !strings.Contains(err.Error(), `no tool "nope"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, err := bridge.Call(t.Context(), s.cs, 42, "echo"); !errors.Is(err, contract.ErrUnsupportedInput) {
		t.Fatalf("not an A2A output: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzArguments: any output, as JSON, never panics the bridge; it is
// read, refused, or not an A2A output.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{`{"role": "agent", "parts": [{"type": "data", "data": {"a": 1, "b": 2}}]}`,
		`{"id": "t", "status": {"state": "completed"}, "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}]}`,
		`{"parts": [{"data": [1]}]}`, `{"parts": [{"kind": "file", "file": {"uri": "u"}}]}`, `{}`, `[]`} {
		f.Add([]byte(s))
	}
	tool := &sdk.Tool{Name: "get-sum", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}, "required": []any{"a", "b"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		args, err := bridge.Arguments(data, tool)
		switch {
		case err == nil:
			if _, ok := args["a"]; !ok {
				t.Fatalf("arguments %v passed without a", args)
			}
		case errors.Is(err, bridge.ErrRefused), errors.Is(err, contract.ErrUnsupportedInput):
		default:
			if !strings.Contains(err.Error(), "decode") {
				t.Fatalf("unexpected error kind: %v", err)
			}
		}
	})
}
