// Package a2aserver serves pactum's agents over the A2A protocol (1.0, and
// 0.3 for clients that send no A2A-Version) on top of the orchestration core.
//
// Each configured agent gets a Handler, an a2asrv.RequestHandler built
// directly on *task.Coordinator: SendMessage submits or continues a task,
// streams follow Coordinator.Subscribe, push configurations live in the
// durable store. The SDK's executor, event queues and in-memory task store
// are never on the path, so A2A, MCP and the CLI share one lifecycle, one
// store and one audit trail.
//
// Server puts the handlers behind the official transports of a2a-go
// (JSON-RPC and HTTP+JSON, 1.0 and 0.3), negotiates the protocol version,
// bounds request bodies and serves the agent cards. GRPCServer serves the
// same handlers over A2A 1.0's gRPC binding (a2a-go's a2agrpc), one
// service for every agent, each call naming its agent in its tenant
// field, behind the same authentication. The push.Pusher it
// runs (package push) delivers task events to the webhooks clients
// registered.
//
// The wire mapping (state table, error table, envelope metadata) is
// documented in docs/a2a.md.
package a2aserver
