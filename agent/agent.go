// Package agent defines pactum's agent runtimes: how pactum calls an agent.
// A runtime implements Agent (Invoke, required) and optionally Streamer,
// Canceler, io.Closer and MetadataProvider. Runtimes register a type name and
// a constructor (Register); configuration selects them by `type:`.
package agent

import (
	"context"
	"time"

	"github.com/pactum/pactum/task"
)

// Agent is the one method every runtime has: run one attempt to completion.
type Agent interface {
	Invoke(ctx context.Context, req *task.Request) (*task.Result, error)
}

// Streamer is implemented by runtimes that produce output incrementally.
// Stream calls emit for each chunk and returns the final result; chunks
// already emitted need not be repeated in the result's artifacts.
type Streamer interface {
	Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error)
}

// Canceler is implemented by runtimes that must tell a remote side that an
// attempt was canceled (canceling ctx stops local work by itself).
type Canceler interface {
	Cancel(ctx context.Context, taskID string) error
}

// Rejoiner is implemented by runtimes whose next attempt joins remote
// work an earlier attempt of the same task started, instead of starting
// it again (langgraph: the run of the turn, found on the thread). When
// the node shuts down and its drain is over (the attempt's context
// canceled with task.ErrShutdown), such a runtime's Cancel is not called,
// so that the work goes on where it runs and the attempt after the
// restart takes its outcome.
type Rejoiner interface {
	Rejoins() bool
}

// Metadata describes a runtime instance for cards and `pactum agents`.
type Metadata struct {
	Type        string
	Description string
	// Streaming reports whether the runtime emits chunks while it runs.
	Streaming bool
	// Nodes reports whether the runtime reports the nodes of the graph
	// its agent runs as each ends (task.Request.OnNode), so that a
	// contract can check each node (`contract: {nodes: true}`).
	Nodes bool
	// Processes reports whether each attempt starts an operating-system
	// process of its own (exec). Such agents share a small worker pool
	// of their own (config `workers.processes`), so that they bound how
	// many processes run at once without making other agents wait.
	Processes bool
	// InputModes and OutputModes are media types.
	InputModes  []string
	OutputModes []string
}

// MetadataProvider is implemented by runtimes that describe themselves.
type MetadataProvider interface {
	Metadata() Metadata
}

// cancelTimeout bounds a forwarded cancel.
const cancelTimeout = 5 * time.Second

// Role is what an agent definition (a markdown file whose front matter
// names the agent and whose body is its role) gives the agent built from
// it, beyond its runtime's settings. A runtime that takes a Role makes it
// reach the model: the openai runtime sends System as the system prompt;
// the exec runtime hands all three to its command's templates.
type Role struct {
	// System is the definition's role body: the system prompt.
	System string
	// Tools are the tools the definition lets the agent use, as written
	// in its front matter ("Read", "Bash(git diff:*)"); nil when it names
	// none.
	Tools []string
	// Model is the definition's model as written ("sonnet", "inherit", a
	// model name); "" when it names none.
	Model string
}
