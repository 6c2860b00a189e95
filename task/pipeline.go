package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Middleware is one step of the execution pipeline: the chain of steps
// around one attempt of one agent, in the spirit of river's
// WorkerMiddleware. Handle gets the attempt and next, which runs the rest
// of the pipeline (the following steps, then the agent's runner). A step
// may run code before and after next, refuse the attempt (return an error
// without calling next: Refuse), answer instead of the agent (return a
// Result without calling next), change what next returned, and add
// evidence (Attempt.AddEvidence), which is committed with the transition
// that ends the attempt.
//
// The order is fixed and documented in docs/design.md: the built-in
// "policy" step (the execute-time re-check of sensitive actions), the
// built-in "dry_run" step (answers with a simulation for an agent in dry
// run), Options.Middleware in order, the agent's AgentSpec.Middleware in
// order, then the runner. The first step is the outermost: it sees the
// attempt first and the result last.
//
// An error a step returns fails the attempt as a runner's error does:
// retried with backoff unless it is Permanent (Refuse's is). The
// attempt's timeout covers the whole pipeline.
type Middleware interface {
	// Name names the step in evidence and logs ("policy", "dry_run",
	// "contract.pre", …).
	Name() string
	Handle(ctx context.Context, a *Attempt, next Next) (*Result, error)
}

// Next runs the rest of the pipeline.
type Next func(ctx context.Context) (*Result, error)

// MiddlewareFunc returns a Middleware named name that runs fn.
func MiddlewareFunc(name string, fn func(ctx context.Context, a *Attempt, next Next) (*Result, error)) Middleware {
	return middlewareFunc{name: name, fn: fn}
}

type middlewareFunc struct {
	name string
	fn   func(ctx context.Context, a *Attempt, next Next) (*Result, error)
}

func (m middlewareFunc) Name() string { return m.name }
func (m middlewareFunc) Handle(ctx context.Context, a *Attempt, next Next) (*Result, error) {
	return m.fn(ctx, a, next)
}

// Refuse returns the error a pipeline step returns to refuse an attempt:
// the attempt fails permanently with CodeGateBlocked and the reason.
func Refuse(format string, args ...any) error {
	return Permanent(&Error{Code: CodeGateBlocked, Message: fmt.Sprintf(format, args...)})
}

// WithFeedback returns err carrying msg for the task's next attempt: when
// the failure is retried (the task goes back to queued), msg is appended
// to the task's history as a user message in the same transaction, so the
// next attempt's Request.Message is msg and the agent sees what to fix (a
// contract's retry-with-feedback). When the failure is not retried, msg is
// dropped. The error stays err for errors.Is, IsPermanent and ErrorCode.
func WithFeedback(err error, msg Message) error {
	if err == nil {
		return nil
	}
	return &feedbackError{err: err, msg: msg}
}

// WithAnswerFeedback is WithFeedback for an answer a step rejected:
// when the failure is retried, answer (the agent's rejected answer) is
// appended to the history as an agent message before msg, so an agent
// that reads the whole conversation (a model) sees its own answer and
// then what to fix in it.
func WithAnswerFeedback(err error, answer, msg Message) error {
	if err == nil {
		return nil
	}
	return &feedbackError{err: err, answer: &answer, msg: msg}
}

type feedbackError struct {
	err    error
	answer *Message
	msg    Message
}

func (f *feedbackError) Error() string { return f.err.Error() }
func (f *feedbackError) Unwrap() error { return f.err }

// feedbackOf returns the messages WithFeedback or WithAnswerFeedback
// attached to err, in history order.
func feedbackOf(err error) ([]Message, bool) {
	var f *feedbackError
	if !errors.As(err, &f) {
		return nil, false
	}
	if f.answer != nil {
		return []Message{*f.answer, f.msg}, true
	}
	return []Message{f.msg}, true
}

// Attempt is one attempt of one task as the pipeline's steps see it.
type Attempt struct {
	// Task is the claimed task as stored; steps must not modify it.
	Task *Task
	// Agent is the agent's registration.
	Agent *AgentSpec
	// Request is what the runner will get; a step may change it before
	// it calls next.
	Request *Request
	// PolicyVersion is recorded on the transition that ends the attempt.
	PolicyVersion string

	mu       sync.Mutex
	step     string
	evidence []Evidence
	audit    []AuditInput
}

// Number returns the attempt's number within the task's current turn
// (Task.TurnAttempt): 1 for the first.
func (a *Attempt) Number() int { return a.Task.TurnAttempt() }

// AddEvidence adds e to what the transition ending the attempt records. An
// empty e.Step is set to the name of the step that is running.
func (a *Attempt) AddEvidence(e Evidence) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Step == "" {
		e.Step = a.step
	}
	a.evidence = append(a.evidence, e)
}

// Evidence returns the evidence added so far, in order.
func (a *Attempt) Evidence() []Evidence {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Evidence(nil), a.evidence...)
}

func (a *Attempt) enter(name string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	prev := a.step
	a.step = name
	return prev
}

// pipeline runs steps around last: steps[0] outermost.
func pipeline(steps []Middleware, a *Attempt, last Next) Next {
	next := last
	for i := len(steps) - 1; i >= 0; i-- {
		step, inner := steps[i], next
		next = func(ctx context.Context) (*Result, error) {
			prev := a.enter(step.Name())
			defer a.enter(prev)
			return step.Handle(ctx, a, inner)
		}
	}
	return next
}
