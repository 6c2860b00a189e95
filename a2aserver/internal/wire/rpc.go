package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	m, ok := scanMembers(trimmed)
	if !ok {
		m = decodeMembers(trimmed)
	}
	return m.check()
}

// The members ParseRequest looks at, in members' slots.
const (
	memberJSONRPC = iota
	memberID
	memberMethod
	memberParams
	memberCount
)

var memberNames = [memberCount]string{"jsonrpc", "id", "method", "params"}

// members holds a request object's members that JSON-RPC defines: each
// one's last value, and the name of the first that occurs more than once.
type members struct {
	raw   [memberCount]json.RawMessage
	seen  [memberCount]bool
	twice [memberCount]bool
	// first is the first name seen twice, "" for none.
	first string
}

func (m *members) set(key string, v json.RawMessage) {
	for i, name := range memberNames {
		if key != name {
			continue
		}
		if m.seen[i] {
			m.twice[i] = true
			if m.first == "" {
				m.first = name
			}
		}
		m.seen[i], m.raw[i] = true, v
		return
	}
}

// decodeMembers reads the members of obj (a valid JSON object) with
// encoding/json: the general path, for names written with escapes.
func decodeMembers(obj []byte) members {
	var m members
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return m // unreachable: obj is valid JSON
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return m
		}
		m.set(key, v)
	}
	return m
}

// scanMembers reads the members of obj (a valid JSON object, json.Valid
// said so) without decoding: each value is the slice of obj it occupies,
// as json.Decoder would give it. It declines (false) a member name that
// has an escape, which decodeMembers then reads. This saves the decoder's
// ~45 allocations on every JSON-RPC request.
func scanMembers(obj []byte) (members, bool) {
	var m members
	i := skipSpace(obj, 1)
	if obj[i] == '}' {
		return m, true
	}
	for {
		// obj[i] is the opening quote of a member name.
		end := skipString(obj, i)
		name := obj[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return m, false
		}
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // the colon
		vend := skipValue(obj, i)
		m.set(string(name), obj[i:vend:vend])
		i = skipSpace(obj, vend)
		if obj[i] == '}' {
			return m, true
		}
		i = skipSpace(obj, i+1) // the comma
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that opens at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// check applies JSON-RPC 2.0's rules to the members read.
func (m *members) check() (*Request, *Refusal) {
	q := &Request{}
	if m.seen[memberID] {
		raw := m.raw[memberID]
		if m.twice[memberID] {
			return nil, refuse(nil, a2a.ErrInvalidRequest, "the request has more than one id member")
		}
		if !validID(raw) {
			return nil, refuse(nil, a2a.ErrInvalidRequest,
				"id must be a string, an integer (no fraction or exponent) or null, got %.40s", raw)
		}
		q.ID = raw
	}
	if m.first != "" {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "the request has more than one %s member", m.first)
	}
	if raw := m.raw[memberJSONRPC]; !m.seen[memberJSONRPC] || !isString(raw, "2.0") {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	raw := m.raw[memberMethod]
	switch {
	case !m.seen[memberMethod]:
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method is required")
	case !decodeString(raw, &q.Method):
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must be a string, got %.40s", raw)
	case q.Method == "":
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must not be empty")
	}
	if m.seen[memberParams] {
		raw := m.raw[memberParams]
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

// isString reports whether raw (valid JSON) decodes to the string want.
func isString(raw json.RawMessage, want string) bool {
	var s string
	return decodeString(raw, &s) && s == want
}

// decodeString decodes raw (valid JSON) into s as json.Unmarshal does,
// reporting whether it is a string (null leaves s as it was). A string of
// printable ASCII without escapes is its own text; others go through
// encoding/json.
func decodeString(raw json.RawMessage, s *string) bool {
	if n := len(raw); n >= 2 && raw[0] == '"' {
		plain := true
		for _, c := range raw[1 : n-1] {
			if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
				plain = false
				break
			}
		}
		if plain {
			*s = string(raw[1 : n-1])
			return true
		}
	}
	return json.Unmarshal(raw, s) == nil
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
