package task

import (
	"errors"
	"fmt"
)

// Code is a machine-readable domain error code. Each transport maps codes
// once, in one table, to its own wire errors.
type Code string

// Domain error codes.
const (
	CodeInvalidArgument   Code = "invalid_argument"
	CodeNotFound          Code = "not_found"
	CodeConflict          Code = "conflict"           // idempotency key reused with another payload
	CodeIllegalTransition Code = "illegal_transition" // lifecycle violation
	CodeNotCancelable     Code = "not_cancelable"
	CodeNotRetryable      Code = "not_retryable"
	CodeForbidden         Code = "forbidden"         // actor may not call the action
	CodePolicyDenied      Code = "policy_denied"     // policy engine refused
	CodeApprovalRequired  Code = "approval_required" // sensitive action without policy/approval reference
	CodeUnsupported       Code = "unsupported"
	CodeUnavailable       Code = "unavailable"
	CodeTimeout           Code = "timeout"
	CodeAgentFailed       Code = "agent_failed"
	CodeGateBlocked       Code = "gate_blocked"
	// CodeContractViolation: a step's output broke its contract (an
	// assertion failed) and its contract says fail. It is a task's error
	// code, never a request's: the failed assertions are in the task's
	// reason and verified result, which its caller reads.
	CodeContractViolation Code = "contract_violation"
	// CodeToolspecViolation: the ToolSpec of the agent's tool broke one
	// of the six adapter contract assertions at execution (package
	// toolspec). Like contract_violation, a task's code, not a request's.
	CodeToolspecViolation Code = "toolspec_violation"
	CodeLeaseExpired      Code = "lease_expired"
	// CodeNodeStopped: the node running the attempt shut down before it
	// ended, and released the task (queued again, or dead-lettered when
	// that was its last attempt).
	CodeNodeStopped Code = "node_stopped"
	CodeInternal    Code = "internal"
)

// exposed says, for every code, whether transports show an error of that
// code to the caller as it is (true) or log it under a reference and show
// only the reference (false): an agent's failure, a blocking gate, an
// expired lease and internal errors can carry details of the agent or the
// node. Every transport asks Code.Exposed, so they cannot disagree.
var exposed = map[Code]bool{
	CodeInvalidArgument: true, CodeNotFound: true, CodeConflict: true, CodeIllegalTransition: true,
	CodeNotCancelable: true, CodeNotRetryable: true, CodeForbidden: true, CodePolicyDenied: true,
	CodeApprovalRequired: true, CodeUnsupported: true, CodeUnavailable: true, CodeTimeout: true,
	CodeAgentFailed: false, CodeGateBlocked: false, CodeContractViolation: false, CodeToolspecViolation: false, CodeLeaseExpired: false, CodeNodeStopped: false, CodeInternal: false,
}

// Exposed reports whether a transport shows an error of code c to its
// caller with its message; false for the codes it must hide and for any
// code this package does not declare.
func (c Code) Exposed() bool { return exposed[c] }

// Sentinel errors that callers test with errors.Is. Drivers translate their
// own errors into them.
var (
	ErrNotFound          = errors.New("not found")
	ErrIllegalTransition = errors.New("illegal transition")
	// ErrStateConflict means a conditional update found the task in another
	// state (or under another lease) than the writer expected: somebody else
	// moved it first. Nothing was written.
	ErrStateConflict = errors.New("task state changed concurrently")
	// ErrDuplicate means (actor, idempotency key) already names a task.
	ErrDuplicate = errors.New("duplicate idempotency key")
	// ErrShutdown is the cause (context.Cause) of an attempt's context
	// canceled because its node shuts down and the drain is over, as
	// opposed to a caller's cancel (context.Canceled) or the agent's
	// timeout: the task is released to run again, so a runtime whose next
	// attempt can join remote work an attempt started leaves that work
	// running instead of canceling it.
	ErrShutdown = errors.New("the node is shutting down and the drain is over")
)

// ErrBadPageToken is what a store answers to a ListTasks page token it did
// not issue. Its message is the caller's: it names no driver.
var ErrBadPageToken = &Error{Code: CodeInvalidArgument, Message: "page token is not valid: pass the nextPageToken of an earlier page, unchanged"}

// Error is the domain error: a code for machines, a message for people.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Code)
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error; a %w verb in format is kept for errors.Is.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// ErrorCode returns the domain code carried by err, CodeNotFound for
// ErrNotFound, and CodeInternal for anything else.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrIllegalTransition):
		return CodeIllegalTransition
	}
	return CodeInternal
}

// permanentError marks an agent error that retrying cannot fix.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Permanent marks err as permanent: the attempt fails and the task is not
// retried automatically. Agent runtimes use it for errors such as bad input.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
