package contract_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// sumSchema is the input schema server-everything's get-sum lists.
var sumSchema = map[string]any{
	"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
	"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
	"required":   []any{"a", "b"},
}

var echoSchema = map[string]any{
	"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"},
}

func res(id string, text string, data any) contract.Resource {
	return contract.Resource{ContractResource: contract.ContractResource{ID: id}, Text: text, Data: data}
}

func TestToolArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		rs     []contract.Resource
		schema map[string]any
		want   string // arguments as key=value, sorted
		err    string
	}{
		{"data object", []contract.Resource{res("t", "ignored", nil), res("d", "", map[string]any{"a": 2.0, "b": 3.0})}, sumSchema, "a=2 b=3", ""},
		{"text into the one required string", []contract.Resource{res("t", "hello", nil)}, echoSchema, "message=hello", ""},
		{"texts joined", []contract.Resource{res("t", "a", nil), res("u", "b", nil)}, echoSchema, "message=a\nb", ""},
		{"data that is a list", []contract.Resource{res("d", "", []any{1.0})}, sumSchema, "", "resource d is JSON an array"},
		{"text for two numbers", []contract.Resource{res("t", "2 and 3", nil)}, sumSchema, "", `the tool requires "a", "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args, err := contract.ToolArguments(tc.rs, tc.schema)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kv(args); got != tc.want {
				t.Fatalf("args %q, want %q", got, tc.want)
			}
		})
	}
}

func kv(m map[string]any) string {
	var out []string
	for _, k := range []string{"a", "b", "message"} {
		if v, ok := m[k]; ok {
			out = append(out, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(out, " ")
}

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	count := map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}, "tag": map[string]any{"type": "string"}}, "required": []any{"count"}}
	for _, tc := range []struct {
		name   string
		args   map[string]any
		schema map[string]any
		msg    string
		path   string
		spath  string
		kw     string
	}{
		{"fits", map[string]any{"a": 1.0, "b": 2.0}, sumSchema, "", "", "", ""},
		{"wrong type", map[string]any{"count": "3"}, count, "/count: got string, want integer (schema /properties/count/type)", "/count", "/properties/count/type", "type"},
		{"missing required", map[string]any{"a": 1.0}, sumSchema, "/: missing property 'b' (schema /required)", "", "/required", "required"},
		{"draft-07 schema, number as string", map[string]any{"a": "1", "b": 2.0}, sumSchema, "/a: got string, want number (schema /properties/a/type)", "/a", "/properties/a/type", "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := contract.CheckArguments("t", tc.args, tc.schema)
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *contract.ArgumentsError
			if !errors.As(err, &ae) {
				t.Fatalf("err %v, want an *ArgumentsError", err)
			}
			if !strings.Contains(err.Error(), tc.msg) || ae.Path != tc.path || ae.SchemaPath != tc.spath || ae.Keyword != tc.kw {
				t.Fatalf("err %q (path %q schema %q keyword %q), want %q", err, ae.Path, ae.SchemaPath, ae.Keyword, tc.msg)
			}
		})
	}
	if err := contract.CheckArguments("t", nil, map[string]any{"type": 5}); err == nil || errors.As(err, new(*contract.ArgumentsError)) {
		t.Fatalf("a schema that does not compile: %v", err)
	}
}

// bridgeContract: fetch (an A2A agent, say) creates the data resource
// numbers; sum, a bridge into an MCP tool, consumes it as its arguments.
func bridgeContract() *contract.AgentContract {
	return &contract.AgentContract{
		Version: "1.0", ID: "bridged",
		Resources: []contract.ContractResource{{ID: "numbers", Type: contract.ResourceData}},
		Steps: []contract.ContractStep{
			{ID: "fetch", Agent: "remote", Creates: []string{"numbers"}},
			{ID: "sum", Agent: "get-sum", DependsOn: []string{"fetch"}, Consumes: []string{"numbers"},
				Metadata: map[string]any{contract.BridgeKey: contract.BridgeMCP}},
		},
	}
}

// TestBridgeStep: a bridge step's pre-gate checks the previous step's
// output, mapped to the tool's arguments, against the tool's input
// schema; arguments that fit reach the tool as the step's only input,
// arguments that do not are refused naming the schema path, and the tool
// is not called. Replay of the recorded step says what the live gate
// said, from the tool recorded in its verified result.
func TestBridgeStep(t *testing.T) {
	t.Parallel()
	tool := &contract.BridgeTool{Name: "get-sum", InputSchema: sumSchema}
	for _, tc := range []struct {
		name    string
		numbers any
		refused string
	}{
		{"fits", map[string]any{"a": 2, "b": 3}, ""},
		{"a string for a number", map[string]any{"a": "2", "b": 3}, "/a: got string, want number (schema /properties/a/type)"},
		{"missing b", map[string]any{"a": 2}, "/: missing property 'b' (schema /required)"},
		{"a list", []any{2, 3}, "resource numbers is JSON an array, not an object of tool arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var called atomic.Int32
			b := setupRunGates(t, bridgeContract(), contract.RunOptions{}, map[string]task.RunnerFunc{
				"fetch": func(context.Context, *task.Request, task.Emit) (*task.Result, error) {
					return dataResult(tc.numbers), nil
				},
				"sum": func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
					called.Add(1)
					return textResult("summed"), nil
				},
			}, func(step string) contract.GateOptions {
				return contract.GateOptions{Tool: func(context.Context, *task.Attempt) (*contract.BridgeTool, error) { return tool, nil }}
			})
			parent, kids := b.run(t, "add these")
			if tc.refused == "" {
				if parent.State != task.StateSucceeded || called.Load() != 1 {
					t.Fatalf("run %s (%s), tool called %d times", parent.State, parent.Reason, called.Load())
				}
				in := b.inputs["sum"]
				if len(in.Parts) != 1 || in.Parts[0].Kind != task.PartData || in.Text() != "" {
					t.Fatalf("the bridge step's input %+v, want the arguments alone", in)
				}
			} else {
				if parent.State != task.StateFailed || parent.ErrorCode != task.CodeContractViolation || called.Load() != 0 ||
					!strings.Contains(parent.Reason, "pre-gate blocked: bridge refused: ") || !strings.Contains(parent.Reason, tc.refused) {
					t.Fatalf("run %s %s %q, tool called %d times; want refused with %q", parent.State, parent.ErrorCode, parent.Reason, called.Load(), tc.refused)
				}
			}
			var sum *task.Task
			for _, k := range kids {
				if k.Envelope.Step == "sum" {
					sum = k
				}
			}
			recs, err := b.coord.Timeline(context.Background(), sum.ID)
			if err != nil {
				t.Fatal(err)
			}
			live, err := contract.Newest(recs)
			if err != nil || live == nil || live.Tool == nil || live.Tool.Name != "get-sum" {
				t.Fatalf("live verified result %+v %v, want the tool recorded", live, err)
			}
			s, _ := b.compiled.Step("sum")
			vr := s.Replay(context.Background(), contract.FromRecord(sum, recs), contract.ReplayOptions{
				Resources: contract.StepResources(s, sum.Envelope.Input), Done: contract.DoneSteps(kids)})
			if !reflect.DeepEqual(vr.Verification.PreGate, live.Verification.PreGate) || vr.Error != live.Error {
				t.Fatalf("offline %+v (%s)\nlive %+v (%s)", vr.Verification.PreGate, vr.Error, live.Verification.PreGate, live.Error)
			}
			if tc.refused != "" {
				for _, r := range vr.Verification.PreGate.Results {
					if r.Check == "bridge" && (r.Passed || !strings.Contains(r.Reason, tc.refused)) {
						t.Fatalf("bridge result %+v", r)
					}
				}
			}
		})
	}
}

// TestBridgeStepWithoutTool: a bridge step whose tool was not read is
// blocked: there is nothing to check its arguments against.
func TestBridgeStepWithoutTool(t *testing.T) {
	t.Parallel()
	comp, err := contract.Compile(bridgeContract())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := comp.Step("sum")
	g := s.PreGate(context.Background(), &contract.Input{Resources: map[string]contract.Resource{"numbers": res("numbers", "", map[string]any{"a": 1.0, "b": 2.0})}})
	if g.Passed || len(g.BlockedBy) != 1 || !strings.Contains(g.BlockedBy[0], "was not read") {
		t.Fatalf("%+v", g)
	}
	g = s.PreGate(context.Background(), &contract.Input{Tool: &contract.BridgeTool{Name: "get-sum", InputSchema: sumSchema},
		Resources: map[string]contract.Resource{"numbers": res("numbers", "", map[string]any{"a": 1.0, "b": 2.0})}})
	if !g.Passed {
		t.Fatalf("%+v", g)
	}
}
