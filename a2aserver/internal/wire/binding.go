package wire

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Binding is one of the four ways the server speaks A2A.
type Binding uint8

const (
	// JSONRPC is A2A 1.0 over JSON-RPC 2.0.
	JSONRPC Binding = iota
	// JSONRPC03 is A2A 0.3 over JSON-RPC 2.0.
	JSONRPC03
	// REST is A2A 1.0 over HTTP+JSON.
	REST
	// REST03 is A2A 0.3 over HTTP+JSON (proto JSON of google.a2a.v1,
	// routes under /v1).
	REST03
)

// RPC reports whether b is a JSON-RPC binding.
func (b Binding) RPC() bool { return b == JSONRPC || b == JSONRPC03 }

// Legacy reports whether b speaks A2A 0.3.
func (b Binding) Legacy() bool { return b == JSONRPC03 || b == REST03 }

// String names the binding as docs and messages do.
func (b Binding) String() string {
	switch b {
	case JSONRPC:
		return "A2A 1.0 JSON-RPC"
	case JSONRPC03:
		return "A2A 0.3 JSON-RPC"
	case REST:
		return "A2A 1.0 HTTP+JSON"
	case REST03:
		return "A2A 0.3 HTTP+JSON"
	}
	return "unknown binding"
}

// WriteResult writes a successful answer whose result is body (its JSON):
// on JSON-RPC the response for id (nil body: no result member), on
// HTTP+JSON the body itself (A2A 1.0 ends it with a newline, as 0.3 does
// not). Every answer is application/json.
func WriteResult(w http.ResponseWriter, b Binding, id json.RawMessage, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	switch b {
	case JSONRPC, JSONRPC03:
		// AppendRPCResult's bytes and a newline, the body written where
		// it is rather than copied into the response.
		head := appendRPCResultHead(make([]byte, 0, len(id)+32), id, body != nil)
		writeWhole(w, head, body, rpcEnd)
	case REST:
		if body != nil {
			writeWhole(w, append(body, '\n'))
		}
	default:
		writeWhole(w, body)
	}
}

// chunkingAfter is how much of a body net/http holds before it sends the
// headers: a handler's whole body up to that length gets a Content-Length
// from net/http itself, a longer one is sent chunked (its
// bufferBeforeChunkingSize).
const chunkingAfter = 2048

// rpcEnd ends a JSON-RPC response and its line.
var rpcEnd = []byte("}\n")

// writeWhole writes parts, the whole answer, with its Content-Length: a
// longer answer (a checked agent's, 2.6 KB with its verified result
// twice) would otherwise go chunked, framed and flushed twice for a
// length known from the start. Shorter ones are left to net/http, which
// sets the same header.
func writeWhole(w http.ResponseWriter, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > chunkingAfter {
		w.Header()["Content-Length"] = []string{strconv.Itoa(n)}
	}
	for _, p := range parts {
		if len(p) > 0 {
			if _, err := w.Write(p); err != nil {
				return
			}
		}
	}
}

// WriteError writes err as b answers it: a JSON-RPC error response for id
// (HTTP 200), or an HTTP+JSON google.rpc.Status body with the status the
// error maps to (A2A 0.3 as application/problem+json, as a2a-go's 0.3
// transport writes it). taskID, when not empty, is the task an HTTP+JSON
// request named.
func WriteError(w http.ResponseWriter, b Binding, id json.RawMessage, err error, taskID string) {
	if b.RPC() {
		WriteRPCError(w, http.StatusOK, id, err)
		return
	}
	body, status := AppendRESTError(nil, err, taskID)
	writeREST(w, b, status, body)
}

// WriteRPCError writes the JSON-RPC error response of err for id with an
// HTTP status (200, but for a refusal before any method is known: a body
// too large, a request to the endpoint with GET).
func WriteRPCError(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(AppendRPCError(nil, id, err), '\n'))
}

// WriteStatus writes an HTTP+JSON error with an HTTP status and
// google.rpc code chosen by the caller and msg as its message (AppendStatus).
func WriteStatus(w http.ResponseWriter, status int, grpc string, err error, msg string) {
	writeREST(w, REST, status, AppendStatus(nil, status, grpc, err, msg))
}

func writeREST(w http.ResponseWriter, b Binding, status int, body []byte) {
	ct := "application/json"
	if b == REST03 {
		ct = "application/problem+json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
