// Package parity proves, in CI, that pactum's MCP bridge does not change
// what its canonical A2A transport means.
//
// pactum has one orchestration core (task.Coordinator) behind two
// transports: A2A (a2aserver) and MCP (mcpserver). The tests in this
// package build a real node the way `pactum serve` does, drive each golden
// trace under testdata/traces once through A2A (JSON-RPC, with the official
// a2a-go client) and once through MCP (the official go-sdk client over
// streamable HTTP), each run on a fresh SQLite store, and then read the
// canonical data straight from the store: every task's execution record
// and the hash-chained audit log. Normalised (task ids replaced by the
// trace's aliases, times and node names by placeholders), the two runs must
// be identical, and identical to testdata/golden/<trace>.json. Regenerate
// the golden files with
//
//	go test ./internal/e2e/parity -update
//
// and review the diff: a change there is a change in what pactum records.
//
// A trace's steps are submit, get, cancel, retry, wait_state and continue
// (trace_test.go). continue answers a task waiting in input_required: an
// A2A SendMessage whose message names the task, MCP continue_task; both
// call Coordinator.Continue. Since the answers a continue delivers are
// recorded in neither the records nor the audit log, the canonical outcome
// of a trace that continues a task also holds that task's stored
// conversation. The node serves, besides testdata/pactum.yaml, the agent
// ask (a Go function given in code), which asks for a name and greets it.
//
// The package holds no code outside its tests; docs/mcp.md ("Parity with
// A2A") describes the trace language and how each step maps onto each
// transport.
package parity
