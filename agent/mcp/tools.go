package mcpagent

import (
	"context"
	"fmt"
)

// Tool is one tool of the server's tools/list, as the ToolSpec checks
// (package toolspec) compare it.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the tool's inputSchema as JSON decodes it.
	InputSchema map[string]any
}

// ToolName returns the configured tool (the `tool` setting).
func (r *Runtime) ToolName() string { return r.s.Tool }

// Server describes the server: its command or URL.
func (r *Runtime) Server() string { return r.s.server() }

// Tools lists the server's tools now (tools/list over the runtime's
// session, starting the server or connecting to it when there is no
// session yet). It also refreshes what calls know of the configured tool.
func (r *Runtime) Tools(ctx context.Context) ([]Tool, error) {
	s, err := r.acquire(ctx)
	if err != nil {
		return nil, err
	}
	var out []Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			s.markStale()
			return nil, fmt.Errorf("mcp: list the tools of %s: %w", r.s.server(), err)
		}
		out = append(out, Tool{Name: t.Name, Description: t.Description, InputSchema: asMap(t.InputSchema)})
	}
	return out, nil
}
