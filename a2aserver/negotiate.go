package a2aserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// supportedVersions are the protocol versions the server negotiates, newest
// first.
var supportedVersions = []a2a.ProtocolVersion{a2a.Version, a2av0.Version}

// requestedVersion returns the version a request asks for: the A2A-Version
// header, else the A2A-Version query parameter (which the specification
// allows instead of the header), else "".
func requestedVersion(r *http.Request) string {
	v := r.Header.Get(a2a.SvcParamVersion)
	if v == "" {
		v = r.URL.Query().Get(a2a.SvcParamVersion)
	}
	return strings.TrimSpace(v)
}

// negotiate maps a requested version to the one served: empty means 0.3
// (as the specification requires); a version matches on Major.Minor, a
// patch number being ignored.
func negotiate(v string) (a2a.ProtocolVersion, bool) {
	if v == "" {
		return a2av0.Version, true
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false
		}
	}
	mm := a2a.ProtocolVersion(parts[0] + "." + parts[1])
	for _, s := range supportedVersions {
		if mm == s {
			return s, true
		}
	}
	return "", false
}

// Method names of the two JSON-RPC bindings, to point a caller who used
// the other version's names at the header.
var (
	v1Methods = map[string]bool{
		"SendMessage": true, "SendStreamingMessage": true, "GetTask": true, "ListTasks": true, "CancelTask": true,
		"SubscribeToTask": true, "GetTaskPushNotificationConfig": true, "CreateTaskPushNotificationConfig": true,
		"ListTaskPushNotificationConfigs": true, "DeleteTaskPushNotificationConfig": true, "GetExtendedAgentCard": true,
	}
	v0Methods = map[string]bool{
		"message/send": true, "message/stream": true, "tasks/get": true, "tasks/cancel": true, "tasks/resubscribe": true,
		"tasks/pushNotificationConfig/get": true, "tasks/pushNotificationConfig/set": true,
		"tasks/pushNotificationConfig/list": true, "tasks/pushNotificationConfig/delete": true,
		"agent/getAuthenticatedExtendedCard": true,
	}
)

// crossVersionHint returns a MethodNotFound error that names the header
// when a JSON-RPC request uses the other protocol version's method name.
func crossVersionHint(served a2a.ProtocolVersion, method string) error {
	switch {
	case served == a2av0.Version && v1Methods[method]:
		return a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf(
			"method %q belongs to A2A 1.0, but the request is served as A2A 0.3 because it carries no A2A-Version header; send A2A-Version: 1.0", method))
	case served == a2a.Version && v0Methods[method]:
		return a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf(
			"method %q belongs to A2A 0.3, but the request asks for A2A 1.0; use the 1.0 method names or omit A2A-Version", method))
	}
	return nil
}

// readBody reads the whole request body, at most MaxBodyBytes, and puts it
// back for the transport. An oversized body is answered at once (413, as a
// JSON-RPC or HTTP+JSON error) and the connection is closed.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, rpc bool) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	limit := s.opts.MaxBodyBytes
	tooLarge := func() ([]byte, bool) {
		msg := fmt.Sprintf("request body is larger than the limit of %d bytes", limit)
		w.Header().Set("Connection", "close")
		if rpc {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, a2a.NewError(a2a.ErrInvalidRequest, msg))
		} else {
			writeRESTError(w, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, msg)
		}
		return nil, false
	}
	if r.ContentLength > limit {
		return tooLarge()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		msg := "reading the request body failed: " + err.Error()
		if rpc {
			writeRPCError(w, http.StatusBadRequest, nil, a2a.NewError(a2a.ErrParseError, msg))
		} else {
			writeRESTError(w, http.StatusBadRequest, "INVALID_ARGUMENT", a2a.ErrParseError, msg)
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, true
}

// writeVersionNotSupported answers a request for a protocol version the
// server does not speak.
func writeVersionNotSupported(w http.ResponseWriter, rpc bool, requested string, id json.RawMessage) {
	supported := make([]string, len(supportedVersions))
	for i, v := range supportedVersions {
		supported[i] = string(v)
	}
	msg := fmt.Sprintf("A2A protocol version %q is not supported; supported versions: %s (no A2A-Version means 0.3)", requested, strings.Join(supported, ", "))
	err := a2a.NewError(a2a.ErrVersionNotSupported, msg).WithErrorInfoMeta(map[string]string{
		"requestedVersion": requested, "supportedVersions": strings.Join(supported, ","),
	})
	if rpc {
		writeRPCError(w, http.StatusOK, id, err)
		return
	}
	writeRESTError(w, http.StatusBadRequest, "FAILED_PRECONDITION", err, msg)
}

// rpcErrorCodes are the JSON-RPC codes of the errors the server writes
// itself (the SDK's transports write the rest).
var rpcErrorCodes = []struct {
	err  error
	code int
}{
	{a2a.ErrParseError, -32700},
	{a2a.ErrInvalidRequest, -32600},
	{a2a.ErrMethodNotFound, -32601},
	{a2a.ErrInvalidParams, -32602},
	{a2a.ErrVersionNotSupported, -32009},
}

// writeRPCError writes a JSON-RPC 2.0 error response with id (as sent by
// the caller; nil writes null).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(rpcErrorBody(id, err), '\n'))
}

// rpcErrorBody encodes a JSON-RPC 2.0 error response in the form the SDK
// uses: code, message, and a google.rpc.ErrorInfo in data.
func rpcErrorBody(id json.RawMessage, err error) []byte {
	code := -32603
	for _, c := range rpcErrorCodes {
		if errors.Is(err, c.err) {
			code = c.code
			break
		}
	}
	errJSON, mErr := json.Marshal(struct {
		Code    int                   `json:"code"`
		Message string                `json:"message"`
		Data    []*errordetails.Typed `json:"data"`
	}{code, err.Error(), []*errordetails.Typed{errorInfo(err)}})
	if mErr != nil {
		errJSON = []byte(`{"code":-32603,"message":"internal error"}`)
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	// The id is spliced in as sent: json.Marshal would re-escape it
	// (a string id "&" would come back as "\u0026").
	out := make([]byte, 0, len(errJSON)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":`...)
	out = append(out, errJSON...)
	return append(out, '}')
}

// writeRESTError writes an HTTP+JSON error in the google.rpc.Status form
// the specification and the SDK's clients expect.
func writeRESTError(w http.ResponseWriter, status int, grpcStatus string, err error, msg string) {
	resp := map[string]any{
		"error": map[string]any{
			"code":    status,
			"status":  grpcStatus,
			"message": msg,
			"details": []*errordetails.Typed{errorInfo(err)},
		},
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// restStatuses are the HTTP statuses of A2A errors (specification §5.4),
// for the errors the server writes itself.
var restStatuses = []struct {
	err    error
	status int
	grpc   string
}{
	{a2a.ErrParseError, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrInvalidRequest, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrMethodNotFound, http.StatusNotImplemented, "UNIMPLEMENTED"},
	{a2a.ErrInvalidParams, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrTaskNotFound, http.StatusNotFound, "NOT_FOUND"},
	{a2a.ErrTaskNotCancelable, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrPushNotificationNotSupported, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnsupportedOperation, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnsupportedContentType, http.StatusBadRequest, "INVALID_ARGUMENT"},
	{a2a.ErrExtendedCardNotConfigured, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrExtensionSupportRequired, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrVersionNotSupported, http.StatusBadRequest, "FAILED_PRECONDITION"},
	{a2a.ErrUnauthenticated, http.StatusUnauthorized, "UNAUTHENTICATED"},
	{a2a.ErrUnauthorized, http.StatusForbidden, "PERMISSION_DENIED"},
	{context.Canceled, 499, "CANCELLED"},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"},
}

// writeA2ARESTError writes err as an HTTP+JSON error with the status the
// specification maps it to (500 INTERNAL for anything else).
func writeA2ARESTError(w http.ResponseWriter, err error) {
	status, grpc := http.StatusInternalServerError, "INTERNAL"
	for _, s := range restStatuses {
		if errors.Is(err, s.err) {
			status, grpc = s.status, s.grpc
			break
		}
	}
	writeRESTError(w, status, grpc, err, err.Error())
}

// errorInfo returns the google.rpc.ErrorInfo detail of err: its A2A reason,
// the A2A domain, and any metadata err carries.
func errorInfo(err error) *errordetails.Typed {
	meta := map[string]string{"timestamp": time.Now().UTC().Format(time.RFC3339)}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		for _, d := range ae.TypedDetails {
			if d.TypeURL != errordetails.ErrorInfoType {
				continue
			}
			if m, ok := d.Value["metadata"].(map[string]string); ok {
				for k, v := range m {
					meta[k] = v
				}
			}
		}
	}
	return errordetails.NewErrorInfo(a2a.ErrorReason(err), a2a.ProtocolDomain, meta)
}
