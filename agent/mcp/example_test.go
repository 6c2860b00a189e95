package mcpagent_test

import (
	"fmt"

	mcpagent "github.com/pactum/pactum/agent/mcp"
)

// An MCP tool as an agent. Nothing starts until the first call; the
// description becomes the tool's own once the server has listed it.
func ExampleNew() {
	r, err := mcpagent.New(mcpagent.Settings{
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31"},
		Tool:    "echo",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	md := r.Metadata()
	fmt.Println(md.Type, md.Streaming)
	fmt.Println(md.Description)

	_, err = mcpagent.New(mcpagent.Settings{URL: "http://localhost:3001/mcp"})
	fmt.Println(err)
	// Output:
	// mcp true
	// Calls the MCP tool echo of npx
	// tool: required: the name of the tool to call
}
