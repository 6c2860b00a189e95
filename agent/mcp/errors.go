package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os/exec"
	"slices"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// maxReasonLen bounds the server text quoted in an error.
const maxReasonLen = 1000

// wireErrors classifies the JSON-RPC errors a server answers a request
// with. Permanent errors say the request itself is wrong, so sending it
// again cannot help; other codes are the server's own trouble.
var wireErrors = map[int64]struct {
	code      task.Code
	permanent bool
}{
	jsonrpc.CodeParseError:                    {task.CodeInvalidArgument, true},
	jsonrpc.CodeInvalidRequest:                {task.CodeInvalidArgument, true},
	jsonrpc.CodeInvalidParams:                 {task.CodeInvalidArgument, true},
	jsonrpc.CodeMethodNotFound:                {task.CodeUnsupported, true},
	sdk.CodeMissingRequiredClientCapabilities: {task.CodeUnsupported, true},
	sdk.CodeUnsupportedProtocolVersion:        {task.CodeUnsupported, true},
	sdk.CodeURLElicitationRequired:            {task.CodeUnsupported, true},
	jsonrpc.CodeInternalError:                 {task.CodeUnavailable, false},
}

// interrupted returns the error of an operation whose context ended: the
// runtime was closed (retryable), or the attempt was canceled or timed out
// (returned as its cause, for the core to recognise).
func interrupted(ctx context.Context, op string) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	return fmt.Errorf("mcp: %s: %w", op, cause)
}

// The codes of the SDK's own *jsonrpc.Error values, which report the state
// of the connection, not an answer from the server.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	// codeRejected marks a request the transport could not deliver (a
	// refused or broken HTTP connection, a 502, 503, 504 or 429) without
	// breaking the session.
	codeRejected = -32005
)

// findWire returns the first JSON-RPC error in err's tree for which match
// holds, nil if there is none.
func findWire(err error, match func(*jsonrpc.Error) bool) *jsonrpc.Error {
	if werr, ok := err.(*jsonrpc.Error); ok && match(werr) {
		return werr
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			return findWire(e, match)
		}
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if werr := findWire(e, match); werr != nil {
				return werr
			}
		}
	}
	return nil
}

// declared returns the first JSON-RPC error in err's tree that the server
// declared, nil if there is none.
func declared(err error) *jsonrpc.Error {
	return findWire(err, func(e *jsonrpc.Error) bool {
		return !slices.Contains([]int64{codeClientClosing, codeServerClosing, codeRejected}, e.Code)
	})
}

// rejected reports whether the transport failed to deliver a request but
// kept the session.
func rejected(err error) bool {
	return findWire(err, func(e *jsonrpc.Error) bool { return e.Code == codeRejected }) != nil
}

// wireError classifies a JSON-RPC error answer, or returns nil when err is
// not one.
func wireError(op string, err error) error {
	werr := declared(err)
	if werr == nil {
		return nil
	}
	c, ok := wireErrors[werr.Code]
	if !ok {
		c.code = task.CodeAgentFailed
	}
	e := task.Errorf(c.code, "mcp: %s: server answered error %d: %s: %w", op, werr.Code, clip(werr.Message), err)
	if c.permanent {
		return task.Permanent(e)
	}
	return e
}

// startError classifies a failure to start a session. A program that
// cannot be started stays so; an HTTP 4xx other than 408 and 429 says the
// endpoint or the credentials are wrong. Everything else (the server
// exited during the handshake, a refused connection, a 5xx) is retryable.
func (r *Runtime) startError(ctx context.Context, op string, s *session, err error) error {
	if ctx.Err() != nil {
		return interrupted(ctx, op)
	}
	var se *startErr
	if errors.As(err, &se) {
		err = fmt.Errorf("mcp: %s: cannot start: %w", op, se.err)
		for _, perm := range []error{exec.ErrNotFound, fs.ErrNotExist, fs.ErrPermission, syscall.ENOEXEC, syscall.ENOTDIR, syscall.E2BIG} {
			if errors.Is(err, perm) {
				return task.Permanent(task.Errorf(task.CodeInvalidArgument, "%w", err))
			}
		}
		return task.Errorf(task.CodeUnavailable, "%w", err)
	}
	if status := s.httpStatus(); httpstatus.Classify(status) == httpstatus.Permanent {
		return task.Permanent(task.Errorf(httpstatus.Code(status), "mcp: %s: HTTP %d %s: %w", op, status, http.StatusText(status), err))
	}
	if werr := wireError(op, err); werr != nil {
		return werr
	}
	detail := ""
	if s != nil {
		detail = s.exitDetail()
	}
	return task.Errorf(task.CodeUnavailable, "mcp: %s: %w%s", op, err, detail)
}

// listError classifies a failure to list the server's tools on a new
// session.
func (r *Runtime) listError(ctx context.Context, s *session, err error) error {
	op := "list the tools of " + r.s.server()
	if ctx.Err() != nil {
		return interrupted(ctx, op)
	}
	if werr := wireError(op, err); werr != nil {
		return werr
	}
	return task.Errorf(task.CodeUnavailable, "mcp: %s: %w%s", op, err, s.exitDetail())
}

// callError classifies a failed request on an established session. A
// broken connection drops the session: the next attempt starts a new one.
func (r *Runtime) callError(ctx context.Context, s *session, err error) error {
	op := fmt.Sprintf("call tool %q of %s", r.s.Tool, r.s.server())
	switch {
	case ctx.Err() != nil:
		// The SDK has told the server that the request is canceled.
		return interrupted(ctx, op)
	case r.ctx.Err() != nil:
		return fmt.Errorf("mcp: %s: %w", op, errClosed)
	}
	if werr := wireError(op, err); werr != nil {
		return werr
	}
	if rejected(err) {
		return task.Errorf(task.CodeUnavailable, "mcp: %s: request failed: %w", op, err)
	}
	r.endSession(s, err, true)
	return task.Errorf(task.CodeUnavailable, "mcp: %s: connection lost: %w%s", op, err, s.exitDetail())
}

// notSent reports whether a call failed without reaching the tool,
// because the session had already ended (on pactum's side, or on an HTTP
// server that no longer knows it): sending it again on a new session
// cannot run the tool twice.
func notSent(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, syscall.EPIPE)
}

// toolError is the permanent error of a result flagged isError.
func toolError(tool string, res *sdk.CallToolResult) error {
	text := contentText(res.Content)
	if text == "" {
		text = "(no error text)"
	}
	return task.Permanent(task.Errorf(task.CodeAgentFailed, "mcp: tool %q reported an error: %s", tool, clip(text)))
}

// clip bounds s to maxReasonLen bytes, at a character boundary.
func clip(s string) string {
	if len(s) <= maxReasonLen {
		return s
	}
	cut := maxReasonLen
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// startErr is a failure to start the server program.
type startErr struct{ err error }

func (e *startErr) Error() string { return e.err.Error() }
func (e *startErr) Unwrap() error { return e.err }

// statusRecorder remembers the HTTP status of the last POST response of a
// session start, so that a 404 (wrong URL) or 401 (bad token) is told
// from an outage. The SDK reports a status only as text.
type statusRecorder struct{ status atomic.Int32 }

type statusKey struct{}

// httpStatus returns the status recorded while s started, 0 if none.
func (s *session) httpStatus() int {
	if s == nil || s.status == nil {
		return 0
	}
	return int(s.status.status.Load())
}
