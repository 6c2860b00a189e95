// Package contract is what pactum is named for: an AgentContract says what
// each step of an agent's work must hold before it runs (the pre-gate: its
// dependencies done, what it consumes present and valid) and what it must
// have produced (the post-gate: its assertions), and what to do when it
// does not (onViolation). Checked attempts leave a VerifiedResult on the
// record of the transition that ends them.
//
// The model follows the seed ORC-63 (types, field names, VerifiedResult);
// contracts are YAML or JSON files with those camelCase field names, or
// inline under an agent in the configuration. Compile prepares a contract
// once (schemas, regular expressions, JSONPath and CEL compiled at load);
// a CompiledStep's gates are task pipeline steps (task.Middleware).
//
// The package imports task and the libraries of its checks only; protocol
// adapters (A2A, MCP, Specwright, LangGraph, CrewAI, AutoGen) live in
// subpackages so that protocol SDKs and file formats stay out of it.
package contract
