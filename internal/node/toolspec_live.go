package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/pactum/pactum/agent"
	mcpagent "github.com/pactum/pactum/agent/mcp"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/toolspec"
)

// LiveServer is what reading the server of one `mcp` agent found.
type LiveServer struct {
	// Agent is the agent's name; Server its server's command or URL; Tool
	// the tool the agent calls.
	Agent, Server, Tool string
	// ToolSpec is the agent's ToolSpec when it takes the server as its
	// adapter contract (adapter_id mcp), else nil.
	ToolSpec *toolspec.ToolSpec
	// Contract is the server's tools as an adapter contract
	// (toolspec.LiveContract) under toolspec.LiveAdapterID(Agent): what
	// `pactum toolspec lock` records and `verify --live` compares with
	// the lock. Empty when Err is set.
	Contract toolspec.AdapterContract
	// Tools are the tools the server listed (nil when it was not
	// reached).
	Tools []toolspec.LiveTool
	// Err is why the server could not be reached or listed.
	Err error
}

// LiveServers connects to the server of every `mcp` agent of cfg (stdio:
// starts it; HTTP: connects), in the configuration's order, and lists its
// tools: the live half of `pactum toolspec lock --config` and `verify
// --live`. A configuration whose ToolSpecs do not check (config.Errors)
// is returned as the error; a server that cannot be reached is a
// LiveServer with Err set.
func LiveServers(ctx context.Context, cfg *config.Config, baseDir string) ([]LiveServer, error) {
	tools, errs := loadToolSpecs(ctx, cfg, baseDir)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	var out []LiveServer
	for _, ac := range cfg.Agents {
		if ac.Type != mcpagent.Type {
			continue
		}
		a, err := agent.New(ctx, agent.Spec(cfg.AgentSpec(ac, baseDir)))
		if err != nil {
			return out, cfg.AgentError(ac, err).Err()
		}
		rt, ok := a.(*mcpagent.Runtime)
		if !ok {
			return out, errors.Join(fmt.Errorf("agent %q: runtime %T is not an MCP runtime", ac.Name, a), agent.Close(a))
		}
		s := LiveServer{Agent: ac.Name, Server: rt.Server(), Tool: rt.ToolName()}
		if ts, named := tools.byID[ac.ToolSpec]; named && toolspec.IsLive(ts) {
			s.ToolSpec = &ts
		}
		s.Tools, s.Err = liveTools(rt)(ctx)
		if cerr := agent.Close(a); cerr != nil && s.Err == nil {
			s.Err = fmt.Errorf("close: %w", cerr)
		}
		if s.Err == nil {
			s.Contract = toolspec.LiveContract(toolspec.LiveAdapterID(ac.Name), s.Tools)
		}
		out = append(out, s)
	}
	return out, nil
}

// ConfigToolSpecs decodes the ToolSpecs of cfg's `toolspecs:` (strictly:
// unknown keys and wrong types are errors at file:line), without checking
// them against a catalogue.
func ConfigToolSpecs(cfg *config.Config) ([]toolspec.ToolSpec, error) {
	var out []toolspec.ToolSpec
	var errs config.Errors
	for i := range cfg.ToolSpecs {
		ts, es := decodeToolSpec(cfg.ToolSpecSource(i))
		errs = append(errs, es...)
		if es == nil {
			out = append(out, ts)
		}
	}
	return out, errs.Err()
}

// decodeToolSpec decodes one entry of `toolspecs:`.
func decodeToolSpec(src config.ToolSpecSource) (toolspec.ToolSpec, config.Errors) {
	var ts toolspec.ToolSpec
	if err := src.Decode(&ts); err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			return ts, es
		}
		return ts, config.Errors{src.Error("", err.Error(), err)}
	}
	return ts, nil
}
