package a2aserver

import (
	"context"
	"errors"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver/internal/wire"
	"github.com/pactum/pactum/task"
)

// errorTable maps every exposed domain error code (task.Code.Exposed) to
// the A2A error a caller sees.
// It is the one place where pactum's codes meet the wire: JSON-RPC codes and
// HTTP statuses follow from the A2A error (internal/wire maps those).
// It lists the exposed codes (task.Code.Exposed); errors of the others are
// logged in full and shown to the caller as an internal error with a
// reference.
var errorTable = map[task.Code]error{
	task.CodeInvalidArgument:   a2a.ErrInvalidParams,
	task.CodeNotFound:          a2a.ErrTaskNotFound,
	task.CodeConflict:          a2a.ErrInvalidRequest,
	task.CodeIllegalTransition: a2a.ErrInvalidRequest,
	task.CodeNotCancelable:     a2a.ErrTaskNotCancelable,
	task.CodeNotRetryable:      a2a.ErrUnsupportedOperation,
	task.CodeForbidden:         a2a.ErrUnauthorized,
	task.CodePolicyDenied:      a2a.ErrUnauthorized,
	task.CodeApprovalRequired:  a2a.ErrUnauthorized,
	task.CodeUnsupported:       a2a.ErrUnsupportedOperation,
	task.CodeUnavailable:       a2a.ErrServerError,
	task.CodeTimeout:           a2a.ErrServerError,
}

// toA2AError translates err for the wire. Domain errors keep their message
// and carry their code in the ErrorInfo metadata ("pactumCode"); internal
// errors are logged in full under a fresh reference that the caller sees.
func toA2AError(ctx context.Context, log *slog.Logger, op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var de *task.Error
	if errors.As(err, &de) {
		if sentinel, ok := errorTable[de.Code]; ok && de.Code.Exposed() {
			return a2a.NewError(sentinel, de.Error()).WithErrorInfoMeta(map[string]string{"pactumCode": string(de.Code)})
		}
		return internalError(ctx, log, op, err)
	}
	for _, s := range wire.Sentinels() {
		if errors.Is(err, s) {
			if s == a2a.ErrInternalError {
				return internalError(ctx, log, op, err)
			}
			return err
		}
	}
	if code := task.ErrorCode(err); code.Exposed() {
		if sentinel, ok := errorTable[code]; ok {
			return a2a.NewError(sentinel, err.Error()).WithErrorInfoMeta(map[string]string{"pactumCode": string(code)})
		}
	}
	return internalError(ctx, log, op, err)
}

// internalError logs err in full and returns a short error naming a
// reference the operator can search the logs for.
func internalError(ctx context.Context, log *slog.Logger, op string, err error) error {
	ref := task.NewID()[:8]
	log.ErrorContext(ctx, "a2a request failed", "op", op, "ref", ref, "err", err)
	return a2a.NewError(a2a.ErrInternalError, "internal error (ref "+ref+")").
		WithErrorInfoMeta(map[string]string{"pactumCode": string(task.CodeInternal), "ref": ref})
}

// invalidParams returns an InvalidParams error with msg.
func invalidParams(msg string) error { return a2a.NewError(a2a.ErrInvalidParams, msg) }

// taskNotFound returns a TaskNotFound error naming id.
func taskNotFound(id string) error {
	return a2a.NewError(a2a.ErrTaskNotFound, "task "+id+" not found").
		WithErrorInfoMeta(map[string]string{"taskId": id, "pactumCode": string(task.CodeNotFound)})
}
