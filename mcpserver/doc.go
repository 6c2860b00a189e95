// Package mcpserver serves pactum's orchestration core over the Model
// Context Protocol, with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A Server exposes the Coordinator as typed MCP tools: submit_task,
// get_task, list_tasks, cancel_task, retry_task, continue_task and
// list_agents, with Options.PerAgentTools one tool per agent, and the
// tools the node registers in Options.Tools (RunTool: run_contract and
// run_workflow, whose rules stay with packages contract and workflow). Every tool is a thin
// translation onto the same Coordinator calls the A2A transport makes
// (Submit, Get, List, Cancel, Retry, Subscribe), and submit_task builds the
// task envelope by the same rules as A2A's SendMessage, so a task submitted
// through MCP has the same lifecycle, execution record and audit entries as
// one submitted through A2A.
//
// Tools are registered with mcp.AddTool, so their input and output JSON
// schemas are generated from the Go types in this package and the SDK
// validates arguments before a handler runs. Answers are structured content
// (TaskInfo and friends). Domain errors become tool error results (IsError)
// whose structured content is an ErrorInfo ({"code", "message"}); the codes
// are task.Code values, shown as they are when task.Code.Exposed says so.
//
// The same Server is served over streamable HTTP (Handler, mounted at /mcp
// next to A2A, guarded against DNS rebinding) and over stdin/stdout
// (RunStdio, for desktop clients). docs/mcp.md documents the tools, their
// schemas and the error codes.
package mcpserver
