package a2aserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/pactum/pactum/a2aserver/internal/wire"
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
			wire.WriteRPCError(w, http.StatusRequestEntityTooLarge, nil, a2a.NewError(a2a.ErrInvalidRequest, msg))
		} else {
			wire.WriteStatus(w, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", a2a.ErrInvalidRequest, msg)
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
			wire.WriteRPCError(w, http.StatusBadRequest, nil, a2a.NewError(a2a.ErrParseError, msg))
		} else {
			wire.WriteStatus(w, http.StatusBadRequest, "INVALID_ARGUMENT", a2a.ErrParseError, msg)
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
	err := versionNotSupported(requested, supportedVersions, "no A2A-Version means 0.3")
	if rpc {
		wire.WriteRPCError(w, http.StatusOK, id, err)
		return
	}
	wire.WriteStatus(w, http.StatusBadRequest, "FAILED_PRECONDITION", err, err.Message)
}

// versionNotSupported is the VersionNotSupported error of a request for
// version requested where supported are served; note ends the message.
func versionNotSupported(requested string, supported []a2a.ProtocolVersion, note string) *a2a.Error {
	names := make([]string, len(supported))
	for i, v := range supported {
		names[i] = string(v)
	}
	msg := fmt.Sprintf("A2A protocol version %q is not supported; supported versions: %s (%s)", requested, strings.Join(names, ", "), note)
	return a2a.NewError(a2a.ErrVersionNotSupported, msg).WithErrorInfoMeta(map[string]string{
		"requestedVersion": requested, "supportedVersions": strings.Join(names, ","),
	})
}
