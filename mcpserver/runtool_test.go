package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// greetInput is the input of the test's own run tool: a name, the
// envelope fields and how long to wait.
type greetInput struct {
	Name string `json:"name" jsonschema:"who to greet"`
	mcpserver.MessageInput
	mcpserver.WaitInput
}

// TestRunTool: a tool registered through Options.Tools (RunTool) is
// listed with the schema of its input, submits the Run its start makes
// (agent, input, metadata) as the caller and waits for the task like a
// waiting submit_task; start runs as the authenticated caller; its refusals are tool errors, a domain error's
// code shown as it is and any other error as an internal one.
func TestRunTool(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen *task.Request
	var caller string
	greet := mcpserver.RunTool(&mcp.Tool{Name: "greet", Title: "Greet", Description: "Greets a name."},
		func(ctx context.Context, in greetInput) (*mcpserver.Run, error) {
			mu.Lock()
			caller = task.Caller(ctx)
			mu.Unlock()
			switch in.Name {
			case "nobody":
				return nil, task.Errorf(task.CodeNotFound, "no one is called %q", in.Name)
			case "boom":
				return nil, errors.New("the greeter broke")
			}
			in.Text = "hello " + in.Name
			return &mcpserver.Run{Agent: "greeter", Input: in.MessageInput, Metadata: map[string]any{"pactum": map[string]any{"name": in.Name}}, Wait: in.WaitInput}, nil
		})
	if greet.Name() != "greet" {
		t.Errorf("Name() = %q", greet.Name())
	}
	b := setup(t, func(c *setupConfig) {
		c.opts.Tools = []mcpserver.Tool{greet}
		c.opts.PerAgentTools = true
		c.opts.Actor = func(context.Context, *mcp.CallToolRequest) string { return "alice" }
		c.agents = append(c.agents, task.AgentSpec{Name: "greeter", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			mu.Lock()
			seen = req
			mu.Unlock()
			return &task.Result{Artifacts: []task.Artifact{{ID: "greeting", Parts: []task.Part{task.TextPart(req.Message.Text())}}}}, nil
		})})
	})
	cs := b.connect(t, nil)
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tool *mcp.Tool
	for _, tl := range res.Tools {
		if tl.Name == "greet" {
			tool = tl
		}
	}
	if tool == nil || tool.Description != "Greets a name." {
		t.Fatalf("tools/list: greet = %+v", tool)
	}
	in := schemaObject(t, "greet", "input", tool.InputSchema)
	props, _ := in["properties"].(map[string]any)
	for _, f := range []string{"name", "text", "idempotency_key", "matter", "wait_timeout_seconds"} {
		if _, ok := props[f]; !ok {
			t.Errorf("greet input schema lacks %q", f)
		}
	}
	if req, _ := in["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("greet input schema requires %v, want [name]", in["required"])
	}

	out := call[mcpserver.SubmitTaskOutput](t, cs, "greet", map[string]any{"name": "ada", "matter": "m-1"})
	if out.State != "succeeded" || out.Agent != "greeter" || out.Matter != "m-1" || out.Actor != "alice" || len(out.Artifacts) != 1 {
		t.Fatalf("greet: %+v", out)
	}
	mu.Lock()
	md, _ := seen.Message.Metadata["pactum"].(map[string]any)
	if seen.Message.Text() != "hello ada" || md["name"] != "ada" {
		t.Errorf("the greeter got %q with metadata %v", seen.Message.Text(), seen.Message.Metadata)
	}
	mu.Unlock()

	if e := callErr(t, cs, "greet", map[string]any{"name": "nobody"}); e.Code != string(task.CodeNotFound) || e.Message != `no one is called "nobody"` {
		t.Errorf("refused: %+v", e)
	}
	if e := callErr(t, cs, "greet", map[string]any{"name": "boom"}); e.Code != string(task.CodeInternal) || strings.Contains(e.Message, "broke") || e.Ref == "" {
		t.Errorf("broken: %+v", e)
	}
	if e := callErr(t, cs, "greet", map[string]any{"name": "ada", "wait_timeout_seconds": -1}); e.Code != string(task.CodeInvalidArgument) {
		t.Errorf("bad wait: %+v", e)
	}
	if e := callErr(t, cs, "greet", map[string]any{"text": "x"}); e.Code != string(task.CodeInvalidArgument) {
		t.Errorf("no name: %+v", e)
	}
	mu.Lock()
	if caller != "alice" {
		t.Errorf("start ran as %q, want the authenticated caller alice", caller)
	}
	mu.Unlock()
}
