// Package wire is pactum's codec of the A2A wire: what a JSON-RPC 2.0 or
// HTTP+JSON answer looks like, byte for byte, for A2A 1.0 and 0.3.
//
// It holds the one table of A2A error codes (JSON-RPC codes, HTTP statuses
// and google.rpc codes), the error bodies of both bindings with their
// google.rpc.ErrorInfo details, JSON-RPC results with the caller's id
// echoed as sent, the strict JSON-RPC 2.0 envelope check, the decode
// errors that name the parameter that did not decode, and the
// Server-Sent Events framing of streams. It knows nothing of pactum's
// tasks: a2aserver's dispatcher decides what to answer and writes it
// through this package. docs/design.md ("The A2A wire") says why pactum
// writes these bytes itself rather than through a2a-go's transports.
package wire
