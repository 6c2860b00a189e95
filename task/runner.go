package task

import (
	"context"
	"time"
)

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
	// Children are the tasks this task has spawned (Result.Spawn), oldest
	// first, each with its artifacts and status: what a parent decides its
	// next step from. Empty for a task that spawned none.
	Children []*Task
	// OnNode, when set, is called by a runtime whose agent runs a graph
	// of named nodes inside one attempt (a LangGraph graph) as each node
	// ends, in order; a runtime that cannot see nodes ignores it. A
	// pipeline step sets it before it calls next (a contract gate that
	// checks each node against its step). An error it returns stops the
	// attempt: the runtime stops the agent's work (cancels the run where
	// it runs) and returns that error unchanged.
	OnNode NodeFunc
}

// Node is what one node of the graph an agent runs produced in an
// attempt: reported by the runtime through Request.OnNode.
type Node struct {
	// Name is the node's name.
	Name string
	// Result is its output shaped as an attempt's (for a LangGraph node
	// its state update as a status message and an artifact); nil when it
	// failed.
	Result *Result
	// Err is the node's error as text, when it failed.
	Err string
	// Start and End bound the node's run, as far as the runtime knows
	// them.
	Start, End time.Time
}

// NodeFunc receives the nodes of an attempt (Request.OnNode).
type NodeFunc func(ctx context.Context, n Node) error

// Result is what an attempt produced.
type Result struct {
	Artifacts []Artifact
	// Message is an optional agent message for the final status.
	Message *Message
	// InputRequired pauses the task in input_required; Message says what the
	// agent needs.
	InputRequired bool
	// Spawn makes the task a parent: the children are created in the same
	// transaction as the transition that ends this attempt, which moves
	// the task to waiting. It holds no worker and no lease there; when a
	// child settles the task is queued again and its runner is called with
	// Request.Children to decide the next step: spawn more, wait, or finish
	// (a Result with neither Spawn nor Wait ends the task as usual).
	Spawn []Child
	// Wait keeps a parent waiting for the children it has already spawned
	// (the next child to settle wakes it again). Without unsettled children
	// it is queued again at once.
	Wait bool
	// Reason, when set, is recorded as the reason of the transition that
	// ends the attempt.
	Reason string
}

// Child is a task a parent spawns: one step of a multi-step run. The child
// has the parent's actor, matter, context, policy and approval references;
// it is validated and admitted like a submitted task (an agent that does
// not exist or an action the actor may not call fails the parent's
// attempt, nothing spawned), and its idempotency is its Step: a parent
// never has two children with one Step.
type Child struct {
	// Step names the step, unique among the parent's children (required).
	Step string
	// Agent names the child's agent; when empty it is resolved from
	// Action.
	Agent  string
	Action string
	// Resource defaults to the parent's.
	Resource string
	// Input is the child's input message (at least one part).
	Input    Message
	Metadata map[string]any
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
