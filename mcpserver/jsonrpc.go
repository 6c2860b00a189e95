package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0 error codes the guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// statusCodedVersion is the first protocol version (SEP-2575) whose HTTP
// transport answers a request's JSON-RPC error with an HTTP status: 404
// for method not found, 400 for invalid params. Earlier versions answer
// it as any response, with 200.
const statusCodedVersion = "2026-07-28"

// method is what the guard knows of a method pactum serves: whether it is
// a notification (no id) or a request (an id), whether it needs params,
// and how its params decode.
type method struct {
	notification   bool
	paramsRequired bool
	decode         func(params json.RawMessage) error
}

// methods are the methods of the SDK's server that pactum serves, with
// the SDK's rules (mcp/server.go, serverMethodInfos) and params types.
// Messages for other methods go to the SDK, whose plain-text refusal the
// guard rewrites (see sdkRefusal): a custom method added through
// MCPServer still works.
var methods = map[string]method{
	"initialize":                       {paramsRequired: true, decode: decodeParams[mcp.InitializeParams]},
	"ping":                             {decode: decodeParams[mcp.PingParams]},
	"tools/list":                       {decode: decodeParams[mcp.ListToolsParams]},
	"tools/call":                       {paramsRequired: true, decode: decodeParams[mcp.CallToolParamsRaw]},
	"notifications/initialized":        {notification: true, decode: decodeParams[mcp.InitializedParams]},
	"notifications/cancelled":          {notification: true, decode: decodeParams[mcp.CancelledParams]},
	"notifications/progress":           {notification: true, paramsRequired: true, decode: decodeParams[mcp.ProgressNotificationParams]},
	"notifications/roots/list_changed": {notification: true, decode: decodeParams[mcp.RootsListChangedParams]},
}

// rpcGuard checks each POSTed JSON-RPC 2.0 message before the SDK sees
// it, so that a malformed message gets a JSON-RPC error with the right code
// in an application/json body instead of the SDK's plain-text 400 or its
// error code 0:
//   - a body that is not JSON: HTTP 400, -32700;
//   - a request or notification whose "jsonrpc" is not the string "2.0",
//     whose "method" is not a non-empty string, whose "id" is not a string
//     or an integer of at most 2^53 in magnitude (the SDK would change a
//     larger one; MCP forbids null ids), or whose "params" is not an
//     object: HTTP 400, -32600 (an array of params: -32602);
//   - a message for one of the methods pactum serves (methods) that is a
//     request without an id or a notification with one: HTTP 400, -32600;
//     one whose params are missing though required, or do not decode (a
//     numeric protocolVersion, a numeric tool name): -32602 naming the
//     member, as the response to a request (HTTP 200; 400 from protocol
//     version 2026-07-28 on) or with HTTP 400 for a notification;
//   - a method the SDK does not know: -32601, as the response to a
//     request (HTTP 200; 404 from 2026-07-28 on) or with HTTP 400 for a
//     notification.
//
// Batches and the client's responses pass through; so does a body larger
// than limit (the SDK refuses it). limit is the SDK's body limit (negative:
// none).
func rpcGuard(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		read := io.Reader(r.Body)
		if limit > 0 {
			read = io.LimitReader(r.Body, limit+1)
		}
		body, err := io.ReadAll(read)
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "reading the request body failed: "+err.Error())
			return
		}
		if limit > 0 && int64(len(body)) > limit {
			// Too large: the SDK answers 413 while it reads the rest.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		version := r.Header.Get("Mcp-Protocol-Version")
		v := checkMessage(body, version)
		if v.code != 0 {
			writeRPCError(w, v.status, v.id, v.code, v.msg)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		if v.method == "" {
			next.ServeHTTP(w, r)
			return
		}
		sw := &sdkRefusal{ResponseWriter: w, verdict: v, version: version}
		next.ServeHTTP(sw, r)
		sw.finish()
	})
}

// verdict is the guard's decision on one POSTed body.
type verdict struct {
	// status, id, code and msg are the refusal: HTTP status, id to answer
	// with (nil: null), JSON-RPC code and message. Code 0: the SDK may
	// have the message.
	status int
	id     json.RawMessage
	code   int
	msg    string
	// method is set when the SDK may have a request or notification for a
	// method the guard does not know: its plain-text refusal is rewritten.
	method string
	call   bool // the message has an id
}

// checkMessage checks one POSTed body, sent under protocol version (the
// Mcp-Protocol-Version header, maybe empty).
func checkMessage(body []byte, version string) (v verdict) {
	if !json.Valid(body) {
		return verdict{status: http.StatusBadRequest, code: codeParseError, msg: "the request body is not valid JSON"}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return verdict{} // a batch, or not an object: the SDK decides
	}
	raw, isRequest := m["method"]
	if !isRequest {
		if _, ok := m["result"]; ok {
			return verdict{}
		}
		if _, ok := m["error"]; ok {
			return verdict{}
		}
	}
	var id json.RawMessage
	bad := func(code int, format string, args ...any) verdict {
		return verdict{status: http.StatusBadRequest, id: id, code: code, msg: fmt.Sprintf(format, args...)}
	}
	rawID, isCall := m["id"]
	if isCall {
		if !validID(rawID) {
			return bad(codeInvalidRequest, "id must be a string or an integer between -2^53 and 2^53, got %.40s", rawID)
		}
		id = rawID
	}
	var jsonrpc, name string
	if json.Unmarshal(m["jsonrpc"], &jsonrpc) != nil || jsonrpc != "2.0" {
		return bad(codeInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	if !isRequest {
		return bad(codeInvalidRequest, "method is required")
	}
	if json.Unmarshal(raw, &name) != nil || name == "" {
		return bad(codeInvalidRequest, "method must be a non-empty string, got %.40s", raw)
	}
	params, hasParams := m["params"]
	if hasParams && string(params) == "null" {
		hasParams = false
	}
	if hasParams {
		switch params[0] {
		case '{':
		case '[':
			return bad(codeInvalidParams, "params must be an object: MCP methods take named parameters")
		default:
			return bad(codeInvalidRequest, "params must be an object, got %.40s", params)
		}
	}
	meth, known := methods[name]
	if !known {
		return verdict{method: name, call: isCall, id: id}
	}
	switch {
	case meth.notification && isCall:
		return bad(codeInvalidRequest, "%s is a notification: it takes no id", name)
	case !meth.notification && !isCall:
		return bad(codeInvalidRequest, "%s is a request: it needs an id", name)
	}
	var problem string
	switch {
	case !hasParams && meth.paramsRequired:
		problem = "params are required"
	case hasParams:
		if err := meth.decode(params); err != nil {
			problem = describeDecodeError(err)
		}
	}
	if problem == "" {
		return verdict{}
	}
	return verdict{status: answerStatus(version, isCall, codeInvalidParams), id: id, code: codeInvalidParams,
		msg: "invalid params of " + name + ": " + problem}
}

// answerStatus is the HTTP status of a JSON-RPC error with code answering
// a well-formed message under protocol version: a notification cannot
// be answered, so the HTTP status says it was refused.
func answerStatus(version string, isCall bool, code int) int {
	switch {
	case !isCall:
		return http.StatusBadRequest
	case version < statusCodedVersion:
		return http.StatusOK
	case code == codeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// paramsError is a member of params that does not decode.
type paramsError struct {
	member string // "name", "clientInfo.name"
	err    error
}

func (e *paramsError) Error() string { return "params." + e.member + ": " + e.err.Error() }
func (e *paramsError) Unwrap() error { return e.err }

// decodeParams decodes each member of params that names a field of T
// exactly, into that field's type, and returns the first that fails as a
// *paramsError. Like the SDK, which decodes with case-sensitive member
// names, it ignores other members (a "Name" beside "name").
func decodeParams[T any](params json.RawMessage) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return err
	}
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && name == "") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := members[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, reflect.New(f.Type).Interface()); err != nil {
			return &paramsError{member: name, err: err}
		}
	}
	return nil
}

// sdkRefusal passes the SDK's answer to a message for a method the guard
// does not know through, except a plain-text 400 refusing the message
// (the SDK's "JSON RPC not handled" and "invalid request" errors), which
// finish rewrites as a JSON-RPC error.
type sdkRefusal struct {
	http.ResponseWriter
	verdict verdict
	version string
	started bool // the SDK's answer went through
	held    bool // the SDK's plain-text 400 is held in buf
	buf     bytes.Buffer
}

// WriteHeader holds a plain-text 400 and passes any other status.
func (w *sdkRefusal) WriteHeader(status int) {
	if !w.started && !w.held && status == http.StatusBadRequest &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held = true
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(status)
}

// Write holds the body of a held refusal and passes any other.
func (w *sdkRefusal) Write(p []byte) (int, error) {
	if w.held {
		return w.buf.Write(p)
	}
	w.started = true
	return w.ResponseWriter.Write(p)
}

// Flush flushes what went through (an SSE stream of a custom method).
func (w *sdkRefusal) Flush() {
	if !w.held {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *sdkRefusal) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the held refusal: a method the SDK does not handle as
// -32601, an envelope it refuses (a missing or unexpected id, missing
// params) as -32600, anything else as the SDK wrote it.
func (w *sdkRefusal) finish() {
	if !w.held {
		return
	}
	text := strings.TrimSpace(w.buf.String())
	v := w.verdict
	switch {
	case strings.HasPrefix(text, "JSON RPC not handled"):
		writeRPCError(w.ResponseWriter, answerStatus(w.version, v.call, codeMethodNotFound), v.id, codeMethodNotFound,
			fmt.Sprintf("method not found: %.100q", v.method))
	case strings.HasPrefix(text, "invalid request"):
		writeRPCError(w.ResponseWriter, http.StatusBadRequest, v.id, codeInvalidRequest, text)
	default:
		w.ResponseWriter.WriteHeader(http.StatusBadRequest)
		_, _ = w.ResponseWriter.Write(w.buf.Bytes())
	}
}

// maxID is the largest integer id the SDK echoes unchanged: it decodes ids
// into float64 before it keeps them as int64.
const maxID = 1 << 53

// validID reports whether raw is an id the SDK echoes unchanged: a string,
// or an integer (no fraction or exponent) between -maxID and maxID.
func validID(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n >= -maxID && n <= maxID
}

// describeDecodeError words a decoding error of params for the caller,
// naming the member.
func describeDecodeError(err error) string {
	member := ""
	if pe, ok := errors.AsType[*paramsError](err); ok {
		member, err = pe.member, pe.err
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		if te.Field != "" {
			member = strings.TrimPrefix(member+"."+te.Field, ".")
		}
		if member != "" {
			return fmt.Sprintf("params.%s: got a %s, want %s", member, te.Value, kindOf(te.Type.Kind().String()))
		}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if member != "" {
		return "params." + member + ": " + msg
	}
	return msg
}

// kindOf names the JSON kind a Go kind decodes from.
func kindOf(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map", "ptr":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return "a number"
}

// writeRPCError writes a JSON-RPC 2.0 error response (id nil: null). The
// id is spliced in as sent: json.Marshal would re-escape it.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	errJSON, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	body := make([]byte, 0, len(errJSON)+len(id)+40)
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, id...)
	body = append(body, `,"error":`...)
	body = append(body, errJSON...)
	body = append(body, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
