package a2aagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/task"
)

// errAttemptTimeout is the cancellation cause of an attempt that ran past
// Settings.Timeout, telling it apart from a cancellation by the caller.
var errAttemptTimeout = errors.New("attempt timed out")

// errClosed is returned by calls on a closed runtime. It is retryable: the
// task runs again on a runtime that is open.
var errClosed = errors.New("a2a: runtime is closed")

// remoteErrors classifies the errors a remote agent declares (JSON-RPC error
// codes, REST error reasons), which the SDK surfaces as *a2a.Error wrapping
// these sentinels. Permanent errors say the request itself is wrong or not
// allowed, so sending it again cannot help.
var remoteErrors = []struct {
	err       error
	code      task.Code
	permanent bool
}{
	{a2a.ErrParseError, task.CodeInvalidArgument, true},
	{a2a.ErrInvalidRequest, task.CodeInvalidArgument, true},
	{a2a.ErrInvalidParams, task.CodeInvalidArgument, true},
	{a2a.ErrMethodNotFound, task.CodeUnsupported, true},
	{a2a.ErrUnsupportedOperation, task.CodeUnsupported, true},
	{a2a.ErrUnsupportedContentType, task.CodeUnsupported, true},
	{a2a.ErrPushNotificationNotSupported, task.CodeUnsupported, true},
	{a2a.ErrExtensionSupportRequired, task.CodeUnsupported, true},
	{a2a.ErrVersionNotSupported, task.CodeUnsupported, true},
	{a2a.ErrExtendedCardNotConfigured, task.CodeUnsupported, true},
	{a2a.ErrUnauthenticated, task.CodeForbidden, true},
	{a2a.ErrUnauthorized, task.CodeForbidden, true},
	// The remote task the message continues is gone or finished.
	{a2a.ErrTaskNotFound, task.CodeAgentFailed, true},
	{a2a.ErrTaskNotCancelable, task.CodeAgentFailed, true},
	// The remote side's own trouble: worth another attempt.
	{a2a.ErrInternalError, task.CodeUnavailable, false},
	{a2a.ErrServerError, task.CodeUnavailable, false},
	{a2a.ErrInvalidAgentResponse, task.CodeAgentFailed, false},
}

// statusRecorder remembers the HTTP status of the last response a call
// received. The SDK's JSON-RPC binding reports a non-200 status only as
// text, so the runtime observes it on the wire to tell a 404 (wrong URL:
// permanent) from a 503 (retryable).
type statusRecorder struct{ status atomic.Int32 }

type statusRecorderKey struct{}

func withStatusRecorder(ctx context.Context) (context.Context, *statusRecorder) {
	rec := &statusRecorder{}
	return context.WithValue(ctx, statusRecorderKey{}, rec), rec
}

func (r *statusRecorder) get() int {
	if r == nil {
		return 0
	}
	return int(r.status.Load())
}

func recordStatus(req *http.Request, resp *http.Response) {
	if rec, ok := req.Context().Value(statusRecorderKey{}).(*statusRecorder); ok && resp != nil {
		rec.status.Store(int32(resp.StatusCode))
	}
}

// interrupted returns the error for an attempt whose context ended, or nil
// while it runs. A timeout of the attempt itself is a retryable domain
// error; a cancellation by the caller is returned as its cause, for the
// core to recognise.
func (r *Runtime) interrupted(ctx context.Context, op string) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, errAttemptTimeout) {
		return task.Errorf(task.CodeTimeout, "a2a: %s: no answer within %s: %w", op, r.cfg.Timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("a2a: %s: %w", op, cause)
}

// callError classifies the error of a protocol call: what the remote agent
// declared, else what HTTP said, else a retryable transport failure
// (connection refused or reset, a stream cut short, DNS, TLS).
func (r *Runtime) callError(ctx context.Context, rec *statusRecorder, op string, err error) error {
	if ierr := r.interrupted(ctx, op); ierr != nil {
		return ierr
	}
	status := rec.get()
	var declared *a2a.Error
	if errors.As(err, &declared) {
		for _, e := range remoteErrors {
			if !errors.Is(err, e.err) {
				continue
			}
			if e.permanent {
				return task.Permanent(task.Errorf(e.code, "a2a: %s: remote agent refused: %w", op, err))
			}
			break
		}
		// A generic error body (a gateway's, say) maps to an internal
		// error; the status still tells a wrong request from an outage.
		if httpstatus.Classify(status) == httpstatus.Permanent {
			return task.Permanent(task.Errorf(httpstatus.Code(status), "a2a: %s: remote agent answered HTTP %d: %w", op, status, err))
		}
		return task.Errorf(task.CodeUnavailable, "a2a: %s: remote agent error: %w", op, err)
	}
	if httpstatus.Classify(status) == httpstatus.Permanent {
		return task.Permanent(task.Errorf(httpstatus.Code(status), "a2a: %s: remote agent answered HTTP %d: %w", op, status, err))
	}
	return task.Errorf(task.CodeUnavailable, "a2a: %s: %w", op, err)
}

// cardError classifies a failure to fetch or read the agent card. The
// message names the configured URL without its query, which may carry a
// token: errors end up in task records that callers read.
func (r *Runtime) cardError(ctx context.Context, err error) error {
	const op = "resolve agent card"
	if ierr := r.interrupted(ctx, op); ierr != nil {
		return ierr
	}
	var notOK *agentcard.ErrStatusNotOK
	if errors.As(err, &notOK) && httpstatus.Classify(notOK.StatusCode) == httpstatus.Permanent {
		return task.Permanent(r.redact(task.Errorf(httpstatus.Code(notOK.StatusCode), "a2a: %s at %s: %w", op, r.cfg.displayURL(), err)))
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return task.Permanent(r.redact(task.Errorf(task.CodeAgentFailed, "a2a: %s at %s: unreadable card: %w", op, r.cfg.displayURL(), err)))
	}
	return r.redact(task.Errorf(task.CodeUnavailable, "a2a: %s at %s: %w", op, r.cfg.displayURL(), err))
}

// redact removes the configured URL's query from e's message (net/http
// quotes the full URL in its errors). The wrapped error is left as is.
func (r *Runtime) redact(e *task.Error) *task.Error {
	if u, err := url.Parse(r.cfg.URL); err == nil && u.RawQuery != "" {
		e.Message = strings.ReplaceAll(e.Message, u.RawQuery, "REDACTED")
	}
	return e
}
