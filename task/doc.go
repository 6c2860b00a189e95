// Package task is pactum's orchestration core: the task envelope, the
// lifecycle and its transition table, the append-only execution record, the
// domain errors and the Coordinator that every transport (A2A, MCP, CLI, Go
// library) calls.
//
// The package knows nothing of HTTP, SQL, subprocesses or wire protocols. It
// declares the interfaces it consumes: Store (a storage driver), Runner (an
// agent runtime), PolicyEngine and Gate. Leaves implement them.
package task
