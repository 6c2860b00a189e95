package server

import (
	"context"
	"fmt"

	"github.com/pactum/pactum/agent"
	mcpagent "github.com/pactum/pactum/agent/mcp"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/toolspec"
)

// LiveFinding is what checking one MCP agent against its server found.
type LiveFinding struct {
	// Agent is the agent's name; Server its server's command or URL.
	Agent, Server string
	// ToolSpec is the ToolSpec checked: the agent's (adapter_id mcp), or,
	// for an MCP agent without one, a ToolSpec that maps the agent's
	// tool with no recorded input schema (only the tool's presence is
	// checked).
	ToolSpec toolspec.ToolSpec
	// Tools are the tools the server listed (nil when it was not
	// reached).
	Tools []toolspec.LiveTool
	// Violations are the breaking differences: the tool disappeared
	// (assertion 3), or its input schema changed against the ToolSpec's
	// recorded input_schema (required added, property removed, type
	// changed: assertion 4).
	Violations []toolspec.Violation
	// Err is why the server could not be reached or listed.
	Err error
}

// CheckLive connects to the server of every `mcp` agent of cfg (stdio:
// starts it; HTTP: connects), lists its tools and checks the agent's
// ToolSpec against them (toolspec.CheckLive): the live half of `pactum
// toolspec verify --live`. A configuration that does not check
// (config.Errors) is returned as the error; servers that cannot be
// reached are findings with Err set.
func CheckLive(ctx context.Context, cfg *config.Config, baseDir string) ([]LiveFinding, error) {
	tools, errs := loadToolSpecs(ctx, cfg, baseDir)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	var out []LiveFinding
	for _, ac := range cfg.Agents {
		if ac.Type != mcpagent.Type {
			continue
		}
		ts, named := tools.byID[ac.ToolSpec]
		if named && !toolspec.IsLive(ts) {
			continue // checked against a catalogue, not the server
		}
		a, err := agent.New(ctx, agent.Spec(cfg.AgentSpec(ac, baseDir)))
		if err != nil {
			return out, config.Errors(cfg.AgentError(ac, err)).Err()
		}
		rt, ok := a.(*mcpagent.Runtime)
		if !ok {
			_ = agent.Close(a)
			return out, fmt.Errorf("agent %q: runtime %T is not an MCP runtime", ac.Name, a)
		}
		if !named {
			ts = toolspec.ToolSpec{ToolID: ac.Name, ExecutionMode: toolspec.Remote, AdapterID: toolspec.LiveAdapter, AdapterOperation: rt.ToolName()}
		}
		f := LiveFinding{Agent: ac.Name, Server: rt.Server(), ToolSpec: ts}
		f.Tools, f.Err = liveTools(rt)(ctx)
		if f.Err == nil {
			f.Violations = toolspec.CheckLive(ts, f.Tools)
		}
		if cerr := agent.Close(a); cerr != nil && f.Err == nil {
			f.Err = fmt.Errorf("close: %w", cerr)
		}
		out = append(out, f)
	}
	return out, nil
}
