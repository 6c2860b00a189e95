package wire

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// errorTable is every A2A error the server answers, with its JSON-RPC code
// (specification §9.5) and its HTTP status and google.rpc code
// (specification §5.4, §11.6), in the order an error is matched: the first
// sentinel it wraps decides. An error that wraps none is an internal error.
// It is the one table of error codes on the A2A wire.
var errorTable = []struct {
	err        error
	rpc        int
	httpStatus int
	grpc       string
}{
	{a2a.ErrParseError, -32700, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrInvalidRequest, -32600, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrMethodNotFound, -32601, http.StatusNotImplemented, "UNIMPLEMENTED"},
	{a2a.ErrInvalidParams, -32602, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrInternalError, -32603, http.StatusInternalServerError, "INTERNAL"},
	{a2a.ErrServerError, -32000, http.StatusInternalServerError, "INTERNAL"},
	{a2a.ErrTaskNotFound, -32001, http.StatusNotFound, "NOT_FOUND"},
	{a2a.ErrTaskNotCancelable, -32002, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrPushNotificationNotSupported, -32003, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnsupportedOperation, -32004, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnsupportedContentType, -32005, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrInvalidAgentResponse, -32006, http.StatusInternalServerError, "INTERNAL"},
	{a2a.ErrExtendedCardNotConfigured, -32007, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrExtensionSupportRequired, -32008, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrVersionNotSupported, -32009, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnauthenticated, -31401, http.StatusUnauthorized, "UNAUTHENTICATED"},
	{a2a.ErrUnauthorized, -31403, http.StatusForbidden, "PERMISSION_DENIED"},
	// A call whose context ended: HTTP+JSON has statuses for it, JSON-RPC
	// answers an internal error.
	{context.Canceled, -32603, 499, "CANCELLED"},
	{context.DeadlineExceeded, -32603, http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"},
}

// Sentinels are the A2A errors the codec has codes for, in the order they
// are matched (context errors left out).
func Sentinels() []error {
	out := make([]error, 0, len(errorTable))
	for _, e := range errorTable {
		if e.err != context.Canceled && e.err != context.DeadlineExceeded {
			out = append(out, e.err)
		}
	}
	return out
}

// lookup returns the row of err in errorTable and whether there is one.
func lookup(err error) (int, bool) {
	for i, e := range errorTable {
		if errors.Is(err, e.err) {
			return i, true
		}
	}
	return 0, false
}

// RPCCode returns the JSON-RPC error code of err (-32603 for an error of
// no A2A kind).
func RPCCode(err error) int {
	if i, ok := lookup(err); ok {
		return errorTable[i].rpc
	}
	return -32603
}

// HTTPStatus returns the HTTP status and google.rpc code of err on the
// HTTP+JSON binding (500 INTERNAL for an error of no A2A kind).
func HTTPStatus(err error) (int, string) {
	if i, ok := lookup(err); ok {
		return errorTable[i].httpStatus, errorTable[i].grpc
	}
	return http.StatusInternalServerError, "INTERNAL"
}

// reason returns the ErrorInfo reason of err. The context errors, which
// A2A names no reason for, are internal errors.
func reason(err error) string {
	if i, ok := lookup(err); ok && errorTable[i].err != context.Canceled && errorTable[i].err != context.DeadlineExceeded {
		return a2a.ErrorReason(errorTable[i].err)
	}
	return "INTERNAL_ERROR"
}

// details returns the details of err on the wire: its structured details
// (an a2a.Error's Details) as a google.protobuf.Struct, its typed details
// other than ErrorInfo, then one google.rpc.ErrorInfo with the A2A reason
// and domain whose metadata holds the time, taskID (when not empty) and
// the metadata of any ErrorInfo err carries.
func details(err error, taskID string) []*errordetails.Typed {
	meta := map[string]string{"timestamp": time.Now().UTC().Format(time.RFC3339)}
	if taskID != "" {
		meta["taskId"] = taskID
	}
	var out []*errordetails.Typed
	var ae *a2a.Error
	if errors.As(err, &ae) {
		if len(ae.Details) > 0 {
			out = append(out, errordetails.NewFromStruct(ae.Details))
		}
		for _, d := range ae.TypedDetails {
			if d.TypeURL != errordetails.ErrorInfoType {
				out = append(out, d)
				continue
			}
			switch m := d.Value["metadata"].(type) {
			case map[string]string:
				maps.Copy(meta, m)
			case map[string]any:
				for k, v := range m {
					if s, ok := v.(string); ok {
						meta[k] = s
					}
				}
			}
		}
	}
	return append(out, errordetails.NewErrorInfo(reason(err), a2a.ProtocolDomain, meta))
}

// rpcError is a JSON-RPC 2.0 error object.
type rpcError struct {
	Code    int                   `json:"code"`
	Message string                `json:"message"`
	Data    []*errordetails.Typed `json:"data,omitempty"`
}

// AppendRPCError appends to dst the JSON-RPC 2.0 response of err for the
// request id (as the caller sent it; nil writes null), without a newline.
func AppendRPCError(dst []byte, id json.RawMessage, err error) []byte {
	body, mErr := json.Marshal(rpcError{Code: RPCCode(err), Message: err.Error(), Data: details(err, "")})
	if mErr != nil {
		body = []byte(`{"code":-32603,"message":"internal error"}`)
	}
	dst = appendRPCHead(dst, id)
	dst = append(dst, `,"error":`...)
	dst = append(dst, body...)
	return append(dst, '}')
}

// AppendRPCResult appends to dst the JSON-RPC 2.0 response carrying
// result (its JSON; nil: a response without a result member, as a2a-go
// answers the operations that return nothing) for the request id, without
// a newline.
func AppendRPCResult(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = appendRPCResultHead(dst, id, result != nil)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendRPCResultHead appends what AppendRPCResult writes before the
// result's JSON: the head for id and, when there is a result, its name.
func appendRPCResultHead(dst []byte, id json.RawMessage, result bool) []byte {
	dst = appendRPCHead(dst, id)
	if result {
		dst = append(dst, `,"result":`...)
	}
	return dst
}

// appendRPCHead appends the start of a response for id. The id is written
// as sent: decoding and encoding it again would turn a large integer into
// another number and re-escape a string.
func appendRPCHead(dst []byte, id json.RawMessage) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	return append(dst, id...)
}

// statusError is the google.rpc.Status error response of HTTP+JSON.
type statusError struct {
	Error statusBody `json:"error"`
}

type statusBody struct {
	Code    int                   `json:"code"`
	Status  string                `json:"status"`
	Message string                `json:"message"`
	Details []*errordetails.Typed `json:"details,omitempty"`
}

// AppendRESTError appends to dst the HTTP+JSON error body of err (the
// google.rpc.Status form), without a newline, and returns its HTTP status.
// taskID, when not empty, is the task the request named (in the
// ErrorInfo's metadata).
func AppendRESTError(dst []byte, err error, taskID string) ([]byte, int) {
	status, grpc := HTTPStatus(err)
	return appendStatus(dst, status, grpc, err.Error(), details(err, taskID)), status
}

// AppendStatus appends the HTTP+JSON error body of err with an HTTP status
// and google.rpc code chosen by the caller (a refusal with no A2A error of
// its own: an unknown route, a body too large), and msg as its message.
func AppendStatus(dst []byte, status int, grpc string, err error, msg string) []byte {
	return appendStatus(dst, status, grpc, msg, details(err, ""))
}

func appendStatus(dst []byte, status int, grpc, msg string, d []*errordetails.Typed) []byte {
	b, mErr := json.Marshal(statusError{Error: statusBody{Code: status, Status: grpc, Message: msg, Details: d}})
	if mErr != nil {
		b = []byte(`{"error":{"code":500,"status":"INTERNAL","message":"internal error"}}`)
	}
	return append(dst, b...)
}
