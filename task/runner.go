package task

import "context"

// Request is what an agent runtime receives for one attempt.
type Request struct {
	TaskID    string
	ContextID string
	Agent     string
	Attempt   int
	Envelope  Envelope
	// Message is the newest user message: the envelope's input on the first
	// turn, the caller's answer after input_required.
	Message Message
	// History is the conversation so far, oldest first, Message included.
	History []Message
}

// Result is what an attempt produced.
type Result struct {
	Artifacts []Artifact
	// Message is an optional agent message for the final status.
	Message *Message
	// InputRequired pauses the task in input_required; Message says what the
	// agent needs.
	InputRequired bool
}

// Emit receives streamed artifact chunks while an attempt runs.
type Emit func(ArtifactChunk) error

// Runner runs one attempt of a task. Package agent adapts every agent runtime
// to it. A returned error fails the attempt; wrap it with Permanent when a
// retry cannot help. Runners must return promptly when ctx is canceled.
type Runner interface {
	Run(ctx context.Context, req *Request, emit Emit) (*Result, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req *Request, emit Emit) (*Result, error)

// Run implements Runner.
func (f RunnerFunc) Run(ctx context.Context, req *Request, emit Emit) (*Result, error) {
	return f(ctx, req, emit)
}

// Gate is a check on the execution path: Before runs after the task is
// claimed and before the agent is called; After runs on what it produced.
// A non-nil error blocks the step and fails the attempt permanently with
// CodeGateBlocked. Contract verification plugs in here.
type Gate interface {
	Before(ctx context.Context, req *Request) error
	After(ctx context.Context, req *Request, res *Result) error
}
