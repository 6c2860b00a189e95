// Package task is pactum's orchestration core: the task envelope, the
// lifecycle and its transition table, the append-only execution record, the
// domain errors and the Coordinator that every transport (A2A, MCP, CLI, Go
// library) calls.
//
// The package knows nothing of HTTP, SQL, subprocesses or wire protocols. It
// declares the interfaces it consumes: Store (a storage driver), Runner (an
// agent runtime), PolicyEngine and Middleware (a step of the execution
// pipeline around each attempt: contract gates, ToolSpec checks). Leaves
// implement them.
//
// A multi-step run (a contract with several steps, a workflow) is a parent
// task whose Runner is the run's decision logic: it returns Result.Spawn to
// start child tasks and is called again, with Request.Children, each time
// one of them settles (see parent.go).
package task
