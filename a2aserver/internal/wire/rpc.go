package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Request is a JSON-RPC request object that passed the envelope checks.
type Request struct {
	// ID is the id member exactly as sent; nil when the request has none
	// (a notification).
	ID json.RawMessage
	// Method is the method name.
	Method string
	// Params is the params object as sent, nil when absent or null.
	Params json.RawMessage
}

// Notification reports whether the request has no id: JSON-RPC 2.0 says
// the server must not answer it.
func (q *Request) Notification() bool { return q.ID == nil }

// Refusal is a request the server answers itself, with id (nil: null).
type Refusal struct {
	// ID is the request's id when it was valid, else nil.
	ID json.RawMessage
	// Err is the JSON-RPC error to answer.
	Err error
}

func refuse(id json.RawMessage, sentinel error, format string, args ...any) *Refusal {
	return &Refusal{ID: id, Err: a2a.NewError(sentinel, fmt.Sprintf(format, args...))}
}

// ParseRequest checks a JSON-RPC 2.0 request object: valid JSON (else
// -32700), one object (batches are not supported), "jsonrpc" the string
// "2.0", "method" a non-empty string, "id" absent, null, a string or an
// integer, "params" absent, null or an object (else -32600; an array is
// -32602, A2A methods take named parameters). A refusal carries the id when
// the id itself was valid.
func ParseRequest(body []byte) (*Request, *Refusal) {
	if !json.Valid(body) {
		return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] != '{' {
		return nil, refuse(nil, a2a.ErrInvalidRequest, "a JSON-RPC request must be a JSON object (batches are not supported)")
	}
	members := map[string]json.RawMessage{}
	var twice []string
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
		}
		switch key {
		case "jsonrpc", "id", "method", "params":
			if _, dup := members[key]; dup {
				twice = append(twice, key)
			}
			members[key] = v
		}
	}

	q := &Request{}
	if raw, ok := members["id"]; ok {
		if slices.Contains(twice, "id") {
			return nil, refuse(nil, a2a.ErrInvalidRequest, "the request has more than one id member")
		}
		if !validID(raw) {
			return nil, refuse(nil, a2a.ErrInvalidRequest,
				"id must be a string, an integer (no fraction or exponent) or null, got %.40s", raw)
		}
		q.ID = raw
	}
	if len(twice) > 0 {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "the request has more than one %s member", twice[0])
	}
	var version string
	if raw, ok := members["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	raw, ok := members["method"]
	switch {
	case !ok:
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method is required")
	case json.Unmarshal(raw, &q.Method) != nil:
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must be a string, got %.40s", raw)
	case q.Method == "":
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must not be empty")
	}
	if raw, ok := members["params"]; ok {
		switch raw[0] {
		case '{':
			q.Params = raw
		case 'n': // null: as if absent
		case '[':
			return nil, refuse(q.ID, a2a.ErrInvalidParams, "params must be an object: A2A methods take named parameters")
		default:
			return nil, refuse(q.ID, a2a.ErrInvalidRequest, "params must be an object, got %.40s", raw)
		}
	}
	return q, nil
}

// validID reports whether raw (valid JSON) is an id pactum accepts: a
// string, null, or a number written as an integer. JSON-RPC 2.0 says ids
// SHOULD NOT have fractional parts; an exponent or fraction is refused
// rather than rounded, and integers of any size are echoed as sent.
func validID(raw json.RawMessage) bool {
	switch {
	case raw[0] == '"', string(raw) == "null":
		return true
	}
	digits := strings.TrimPrefix(string(raw), "-")
	if digits == "" || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	return strings.Trim(digits, "0123456789") == ""
}
