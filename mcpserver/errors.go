package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/task"
)

// toolError is the error a tool handler returns: what the caller sees. The
// SDK turns it into a tool error result; resultMiddleware then gives that
// result its structured content.
type toolError struct {
	info ErrorInfo
}

func (e *toolError) Error() string { return e.info.Code + ": " + e.info.Message }

// invalidArgument returns the tool error for a malformed argument.
func invalidArgument(format string, args ...any) *toolError {
	return &toolError{ErrorInfo{Code: string(task.CodeInvalidArgument), Message: fmt.Sprintf(format, args...)}}
}

// toToolError translates err for the caller. Domain errors keep their code
// and message when their code is exposed (task.Code.Exposed, the same rule
// the A2A transport applies); anything else is internal:
// logged in full under a reference that the caller sees. A canceled request
// is "unavailable" and not logged as an error.
func toToolError(ctx context.Context, log *slog.Logger, tool string, err error) *toolError {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		log.DebugContext(ctx, "mcp tool call ended by its context", "tool", tool, "err", err)
		return &toolError{ErrorInfo{Code: string(task.CodeUnavailable), Message: "the request was canceled or timed out: " + err.Error()}}
	}
	code := task.ErrorCode(err)
	if code.Exposed() {
		return &toolError{ErrorInfo{Code: string(code), Message: err.Error()}}
	}
	return internalError(ctx, log, tool, err)
}

// internalError logs err in full and returns a short error naming a
// reference the operator can search the logs for.
func internalError(ctx context.Context, log *slog.Logger, tool string, err error) *toolError {
	ref := task.NewID()[:8]
	log.ErrorContext(ctx, "mcp tool call failed", "tool", tool, "ref", ref, "err", err)
	return &toolError{ErrorInfo{Code: string(task.CodeInternal), Message: "internal error (ref " + ref + ")", Ref: ref}}
}

// resultMiddleware finishes every tools/call answer:
//
//   - A tool error result gets an ErrorInfo as structured content and
//     "code: message" as its text. Handler errors arrive as *toolError.
//     Any other error was raised by the SDK before the handler ran —
//     arguments that are not valid JSON or do not match the input schema —
//     and becomes invalid_argument with the SDK's explanation.
//   - A panic in a handler becomes an internal tool error instead of taking
//     the process down (the SDK does not recover).
func resultMiddleware(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			tool := ""
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				tool = p.Name
			}
			defer func() {
				if v := recover(); v != nil {
					te := internalError(ctx, log, tool, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
					res, err = errorResult(te.info), nil
				}
			}()
			res, err = next(ctx, method, req)
			ctr, ok := res.(*mcp.CallToolResult)
			if err != nil || !ok || ctr == nil || !ctr.IsError {
				return res, err
			}
			cause := ctr.GetError()
			if cause == nil {
				return res, nil
			}
			var te *toolError
			if !errors.As(cause, &te) {
				te = &toolError{ErrorInfo{Code: string(task.CodeInvalidArgument), Message: cause.Error()}}
			}
			return errorResult(te.info), nil
		}
	}
}

// errorResult is the tool error result carrying info.
func errorResult(info ErrorInfo) *mcp.CallToolResult {
	structured, _ := json.Marshal(info)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: info.Code + ": " + info.Message}},
		StructuredContent: json.RawMessage(structured),
		IsError:           true,
	}
}
