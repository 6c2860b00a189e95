package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0 error codes the guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// rpcGuard checks the JSON-RPC 2.0 envelope of each POSTed message before
// the SDK sees it, so that a malformed message gets a JSON-RPC error with
// the right code instead of the SDK's plain-text 400 or its error code 0:
//   - a body that is not JSON: HTTP 400, -32700;
//   - a request or notification whose "jsonrpc" is not the string "2.0",
//     whose "method" is not a non-empty string, whose "id" is not a string
//     or an integer of at most 2^53 in magnitude (the SDK would change a
//     larger one; MCP forbids null ids), or whose "params" is not an
//     object: HTTP 400,
//     -32600 (an array of params: -32602);
//   - an initialize request whose params do not decode (a numeric
//     protocolVersion, say): a -32602 response naming the member.
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
		if status, id, code, msg := checkMessage(body); code != 0 {
			writeRPCError(w, status, id, code, msg)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// checkMessage checks one POSTed body and returns the refusal (HTTP
// status, id to answer with, JSON-RPC code and message), or code 0 when the
// SDK may have it.
func checkMessage(body []byte) (status int, id json.RawMessage, code int, msg string) {
	if !json.Valid(body) {
		return http.StatusBadRequest, nil, codeParseError, "the request body is not valid JSON"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return 0, nil, 0, "" // a batch, or not an object: the SDK decides
	}
	raw, isRequest := m["method"]
	if !isRequest {
		if _, ok := m["result"]; ok {
			return 0, nil, 0, ""
		}
		if _, ok := m["error"]; ok {
			return 0, nil, 0, ""
		}
	}
	bad := func(code int, format string, args ...any) (int, json.RawMessage, int, string) {
		return http.StatusBadRequest, id, code, fmt.Sprintf(format, args...)
	}
	if rawID, ok := m["id"]; ok {
		if !validID(rawID) {
			return bad(codeInvalidRequest, "id must be a string or an integer between -2^53 and 2^53, got %.40s", rawID)
		}
		id = rawID
	}
	var version, method string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return bad(codeInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	if !isRequest {
		return bad(codeInvalidRequest, "method is required")
	}
	if json.Unmarshal(raw, &method) != nil || method == "" {
		return bad(codeInvalidRequest, "method must be a non-empty string, got %.40s", raw)
	}
	params, ok := m["params"]
	if !ok || string(params) == "null" {
		return 0, nil, 0, ""
	}
	switch params[0] {
	case '{':
	case '[':
		return bad(codeInvalidParams, "params must be an object: MCP methods take named parameters")
	default:
		return bad(codeInvalidRequest, "params must be an object, got %.40s", params)
	}
	if method == "initialize" && id != nil {
		var p mcp.InitializeParams
		if err := json.Unmarshal(params, &p); err != nil {
			return http.StatusOK, id, codeInvalidParams, "invalid params of initialize: " + describeDecodeError(err)
		}
	}
	return 0, nil, 0, ""
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
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("params.%s: got a %s, want %s", te.Field, te.Value, kindOf(te.Type.Kind().String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
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
