package a2aserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// This file is the JSON-RPC 2.0 edge in front of a2a-go's JSON-RPC
// handlers: the server checks the request object itself, hands the SDK a
// clean one, and corrects what the SDK would answer differently from
// JSON-RPC 2.0 (docs/a2a.md, "JSON-RPC 2.0").

// rpcRequest is a JSON-RPC request object that passed the envelope checks.
type rpcRequest struct {
	// id is the id member exactly as sent; nil when the request has none
	// (a notification).
	id json.RawMessage
	// method is the method name; rawMethod is its JSON as sent.
	method    string
	rawMethod json.RawMessage
	// params is the params object as sent, nil when absent or null.
	params json.RawMessage
}

// notification reports whether the request has no id: JSON-RPC 2.0 says
// the server must not answer it.
func (q *rpcRequest) notification() bool { return q.id == nil }

// rpcRefusal is a request the server answers itself, with id (nil: null).
type rpcRefusal struct {
	id  json.RawMessage
	err error
}

func refuse(id json.RawMessage, sentinel error, format string, args ...any) *rpcRefusal {
	return &rpcRefusal{id: id, err: a2a.NewError(sentinel, fmt.Sprintf(format, args...))}
}

// parseRPCRequest checks a JSON-RPC 2.0 request object: valid JSON (else
// -32700), one object (batches are not supported), "jsonrpc" the string
// "2.0", "method" a non-empty string, "id" absent, null, a string or an
// integer, "params" absent, null or an object (else -32600; an array is
// -32602, A2A methods take named parameters). A refusal carries the id when
// the id itself was valid.
func parseRPCRequest(body []byte) (*rpcRequest, *rpcRefusal) {
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

	q := &rpcRequest{}
	if raw, ok := members["id"]; ok {
		if slices.Contains(twice, "id") {
			return nil, refuse(nil, a2a.ErrInvalidRequest, "the request has more than one id member")
		}
		if !validRPCID(raw) {
			return nil, refuse(nil, a2a.ErrInvalidRequest,
				"id must be a string, an integer (no fraction or exponent) or null, got %.40s", raw)
		}
		q.id = raw
	}
	if len(twice) > 0 {
		return nil, refuse(q.id, a2a.ErrInvalidRequest, "the request has more than one %s member", twice[0])
	}
	var version string
	if raw, ok := members["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return nil, refuse(q.id, a2a.ErrInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	raw, ok := members["method"]
	switch {
	case !ok:
		return nil, refuse(q.id, a2a.ErrInvalidRequest, "method is required")
	case json.Unmarshal(raw, &q.method) != nil:
		return nil, refuse(q.id, a2a.ErrInvalidRequest, "method must be a string, got %.40s", raw)
	case q.method == "":
		return nil, refuse(q.id, a2a.ErrInvalidRequest, "method must not be empty")
	}
	q.rawMethod = raw
	if raw, ok := members["params"]; ok {
		switch raw[0] {
		case '{':
			q.params = raw
		case 'n': // null: as if absent
		case '[':
			return nil, refuse(q.id, a2a.ErrInvalidParams, "params must be an object: A2A methods take named parameters")
		default:
			return nil, refuse(q.id, a2a.ErrInvalidRequest, "params must be an object, got %.40s", raw)
		}
	}
	return q, nil
}

// validRPCID reports whether raw (valid JSON) is an id pactum accepts: a
// string, null, or a number written as an integer. JSON-RPC 2.0 says ids
// SHOULD NOT have fractional parts; an exponent or fraction is refused
// rather than rounded, and integers of any size are echoed as sent.
func validRPCID(raw json.RawMessage) bool {
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

// rpcIDToken is the id the SDK sees in place of the caller's. rpcWriter
// puts the caller's id, as sent, back into each response: the SDK decodes
// numeric ids into float64, which would turn a 30-digit id into another
// number.
const rpcIDToken = "pactum:request-id"

// forward returns the request object handed to the SDK: jsonrpc, the id
// token (when the request has an id), method, and params ({} when absent:
// JSON-RPC 2.0 lets a request omit params, which a2a-go would refuse).
func (q *rpcRequest) forward() []byte {
	b := make([]byte, 0, len(q.params)+len(q.rawMethod)+64)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if q.id != nil {
		b = append(b, `"id":"`+rpcIDToken+`",`...)
	}
	b = append(b, `"method":`...)
	b = append(b, q.rawMethod...)
	b = append(b, `,"params":`...)
	if q.params == nil {
		b = append(b, `{}`...)
	} else {
		b = append(b, q.params...)
	}
	return append(b, '}')
}

// serveRPC hands a checked request to the SDK's JSON-RPC handler h. A
// notification is executed with its answer discarded and answered 204 No
// Content once the call returns; every other response passes through
// rpcWriter.
func serveRPC(w http.ResponseWriter, r *http.Request, h http.Handler, q *rpcRequest, legacy bool) {
	body := q.forward()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if q.notification() {
		h.ServeHTTP(&discardWriter{header: http.Header{}}, r)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.ServeHTTP(&rpcWriter{ResponseWriter: w, req: q, legacy: legacy}, r)
}

// discardWriter is the response writer of a notification: everything
// written is dropped.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// rpcWriter corrects the SDK's JSON-RPC responses on their way out. The
// SDK writes each response (or each SSE event) in one Write, starting with
// {"jsonrpc":"2.0","id":…, so each write is rewritten whole:
//   - the id token becomes the caller's id as sent;
//   - a parse error (-32700) becomes invalid params (-32602) naming the
//     member that did not decode: the body was valid JSON (checked before),
//     so a decoding failure is one of the params (an unknown part kind, a
//     bad timestamp), which a2a-go reports as a parse error; its
//     invalid-params errors for a member of the wrong JSON type are
//     reworded the same way;
//   - a response without a Content-Type (a2a-go's 0.3 handler sets none)
//     gets application/json.
type rpcWriter struct {
	http.ResponseWriter
	req         *rpcRequest
	legacy      bool
	wroteHeader bool
}

var (
	rpcPrefix      = []byte(`{"jsonrpc":"2.0","id":"` + rpcIDToken + `"`)
	rpcParseError  = []byte(`,"error":{"code":-32700,`)
	rpcTypeError   = []byte(`,"error":{"code":-32602,"message":"invalid params: json: `)
	sseDataPrefix  = []byte("data: ")
	rpcResponseEnd = "\n"
)

func (w *rpcWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rpcWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if _, err := w.ResponseWriter.Write(w.rewrite(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// rewrite returns p, one response or one "data: " line of an SSE event,
// with the caller's id and the corrected error code.
func (w *rpcWriter) rewrite(p []byte) []byte {
	var prefix []byte
	doc := p
	if rest, ok := bytes.CutPrefix(p, sseDataPrefix); ok {
		prefix, doc = sseDataPrefix, rest
	}
	rest, ok := bytes.CutPrefix(doc, rpcPrefix)
	if !ok {
		return p
	}
	if bytes.HasPrefix(rest, rpcParseError) || bytes.HasPrefix(rest, rpcTypeError) {
		var resp struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(doc, &resp)
		trailer := doc[len(bytes.TrimRight(doc, " \r\n")):]
		out := append([]byte(nil), prefix...)
		out = append(out, rpcErrorBody(w.req.id, w.paramsError(resp.Error.Message))...)
		if len(trailer) == 0 {
			trailer = []byte(rpcResponseEnd)
		}
		return append(out, trailer...)
	}
	out := make([]byte, 0, len(p)+len(w.req.id))
	out = append(out, prefix...)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, w.req.id...)
	return append(out, rest...)
}

// paramsError returns the InvalidParams error for params the SDK could not
// decode: it names the member that does not decode, found by decoding the
// params again member by member into the SDK's request type.
func (w *rpcWriter) paramsError(sdkMsg string) error {
	msg := strings.TrimPrefix(strings.TrimPrefix(sdkMsg, a2a.ErrParseError.Error()+": "), a2a.ErrInvalidParams.Error()+": ")
	types := paramTypes
	if w.legacy {
		types = legacyParamTypes
	}
	if t, ok := types[w.req.method]; ok && w.req.params != nil {
		if path, err := locateDecodeError(t, w.req.params, "params"); path != "" {
			msg = fmt.Sprintf("%s: %v", path, err)
		}
	}
	return a2a.NewError(a2a.ErrInvalidParams, "invalid params: "+msg)
}

// Flush implements http.Flusher for the SDK's SSE writer.
func (w *rpcWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *rpcWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// paramTypes and legacyParamTypes are the types a2a-go decodes each
// method's params into (A2A 1.0 and 0.3).
var (
	paramTypes = map[string]reflect.Type{
		"SendMessage":                      reflect.TypeFor[a2a.SendMessageRequest](),
		"SendStreamingMessage":             reflect.TypeFor[a2a.SendMessageRequest](),
		"GetTask":                          reflect.TypeFor[a2a.GetTaskRequest](),
		"ListTasks":                        reflect.TypeFor[a2a.ListTasksRequest](),
		"CancelTask":                       reflect.TypeFor[a2a.CancelTaskRequest](),
		"SubscribeToTask":                  reflect.TypeFor[a2a.SubscribeToTaskRequest](),
		"GetTaskPushNotificationConfig":    reflect.TypeFor[a2a.GetTaskPushConfigRequest](),
		"CreateTaskPushNotificationConfig": reflect.TypeFor[a2a.PushConfig](),
		"ListTaskPushNotificationConfigs":  reflect.TypeFor[a2a.ListTaskPushConfigRequest](),
		"DeleteTaskPushNotificationConfig": reflect.TypeFor[a2a.DeleteTaskPushConfigRequest](),
		"GetExtendedAgentCard":             reflect.TypeFor[a2a.GetExtendedAgentCardRequest](),
	}
	legacyParamTypes = map[string]reflect.Type{
		"message/send":                        reflect.TypeFor[a2alegacy.MessageSendParams](),
		"message/stream":                      reflect.TypeFor[a2alegacy.MessageSendParams](),
		"tasks/get":                           reflect.TypeFor[a2alegacy.TaskQueryParams](),
		"tasks/cancel":                        reflect.TypeFor[a2alegacy.TaskIDParams](),
		"tasks/resubscribe":                   reflect.TypeFor[a2alegacy.TaskIDParams](),
		"tasks/pushNotificationConfig/get":    reflect.TypeFor[a2alegacy.GetTaskPushConfigParams](),
		"tasks/pushNotificationConfig/set":    reflect.TypeFor[a2alegacy.TaskPushConfig](),
		"tasks/pushNotificationConfig/list":   reflect.TypeFor[a2alegacy.ListTaskPushConfigParams](),
		"tasks/pushNotificationConfig/delete": reflect.TypeFor[a2alegacy.DeleteTaskPushConfigParams](),
	}
)

// locateDecodeError decodes raw into a new value of type t and, when that
// fails, returns the path of the innermost member that fails on its own
// (path names raw) and its error; "" when raw decodes. Objects are followed
// into struct fields (by JSON name) and map values, arrays into elements.
// It runs on the error path only.
func locateDecodeError(t reflect.Type, raw json.RawMessage, path string) (string, error) {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			fields := jsonFields(t)
			for _, name := range slices.Sorted(maps.Keys(members)) {
				ft, ok := fields[name]
				if !ok {
					continue
				}
				if p, e := locateDecodeError(ft, members[name], path+"."+name); p != "" {
					return p, e
				}
			}
		}
	case reflect.Map:
		var members map[string]json.RawMessage
		if t.Key().Kind() == reflect.String && json.Unmarshal(raw, &members) == nil {
			for _, name := range slices.Sorted(maps.Keys(members)) {
				if p, e := locateDecodeError(t.Elem(), members[name], path+"."+name); p != "" {
					return p, e
				}
			}
		}
	case reflect.Slice:
		// Each element is tried as a one-element array of t, so that a
		// slice type that decodes itself (a2a-go's parts) decides.
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for i, e := range elems {
				one := append(append([]byte{'['}, e...), ']')
				oneErr := json.Unmarshal(one, reflect.New(t).Interface())
				if oneErr == nil {
					continue
				}
				p := fmt.Sprintf("%s[%d]", path, i)
				if t.Elem().Kind() != reflect.Interface {
					if dp, de := locateDecodeError(t.Elem(), e, p); dp != "" {
						return dp, de
					}
				}
				return p, decodeError(e, oneErr)
			}
		}
	}
	return path, decodeError(raw, err)
}

// decodeError words err, the error of decoding raw, for a caller: a
// mismatch of JSON kinds says what was sent and what is wanted.
func decodeError(raw json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil && te.Field == "" {
		if want := wantKind(te.Type); want != "" {
			return fmt.Errorf("got %s, want %s", jsonKind(raw), want)
		}
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// wantKind names the JSON kind a value of Go type t is decoded from, or ""
// when the type decodes itself (its own error says more).
func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		return "an object"
	}
	return ""
}

// jsonFields maps the JSON member names of struct type t (exported fields,
// embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// jsonKind names the kind of JSON value raw is, for messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
