// Package negotiation validates contracts against what an agent can
// honour and negotiates them between two parties: a proposer offers a
// contract, the provider (the agent that would run it) accepts it,
// counter-proposes modifications or rejects it, and so on until one side
// accepts or rejects. An accepted contract is signed by both parties
// (Ed25519 JWS, detached, over the contract's RFC 8785 canonical form)
// and verifiable on its own (Accepted.Verify).
//
// A negotiation is a task of a hidden agent (Agent(name)): each move is a
// message of the task's history, each round a turn of its lifecycle
// (input_required while the proposer answers a counter-proposal), so it
// is stored, audited and resumed after a crash like any task. Provider
// holds the provider's side: its runner (Provider.Runner) decides each
// round from the task's history alone. docs/contracts.md, "Validate and
// negotiate", describes the protocol.
package negotiation
