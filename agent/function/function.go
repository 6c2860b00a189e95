// Package function serves a Go function as an agent. It is for programs that
// embed pactum as a library; configuration cannot select it, since a
// function only exists in the program that defines it.
//
// New takes the full request and result; Text is the shortcut for functions
// from text to text; Streaming lets a function emit artifact chunks while it
// runs.
package function

import (
	"context"
	"fmt"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type reported in metadata.
const Type = "function"

// Func runs one attempt of a task.
type Func func(ctx context.Context, req *task.Request) (*task.Result, error)

// StreamFunc runs one attempt of a task, emitting artifact chunks as it
// goes. Chunks it emitted need not be repeated in the result.
type StreamFunc func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error)

// Runtime is a Go function served as an agent.
type Runtime struct {
	name      string
	fn        StreamFunc
	streaming bool
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
)

// New returns a runtime that calls fn for every attempt. The function
// decides what is retryable: it wraps errors a retry cannot fix with
// task.Permanent. New panics if fn is nil.
func New(name string, fn Func) *Runtime {
	if fn == nil {
		panic("function.New: nil function")
	}
	return &Runtime{name: name, fn: func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return fn(ctx, req)
	}}
}

// Text returns a runtime for a function from text to text: it receives the
// text of the newest user message (after feedback, the whole task:
// task.Request.Text), and its output becomes one text artifact
// named "output" and the final agent message. Text panics if fn is nil.
func Text(name string, fn func(ctx context.Context, input string) (string, error)) *Runtime {
	if fn == nil {
		panic("function.Text: nil function")
	}
	return New(name, func(ctx context.Context, req *task.Request) (*task.Result, error) {
		out, err := fn(ctx, req.Text())
		if err != nil {
			return nil, err
		}
		return answer.Text(answer.NewID(), "output", out), nil
	})
}

// Streaming returns a runtime that calls fn with an emit function for
// artifact chunks. When the runtime is invoked without streaming, the
// chunks are gathered into the result's artifacts instead. Streaming panics
// if fn is nil.
func Streaming(name string, fn StreamFunc) *Runtime {
	if fn == nil {
		panic("function.Streaming: nil function")
	}
	return &Runtime{name: name, fn: fn, streaming: true}
}

// Name returns the name the function was registered with.
func (r *Runtime) Name() string { return r.name }

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	return agent.Metadata{
		Type:        Type,
		Description: fmt.Sprintf("Go function %s", r.name),
		Streaming:   r.streaming,
		InputModes:  []string{"text/plain"},
		OutputModes: []string{"text/plain"},
	}
}

// Invoke calls the function. A streaming function's chunks are gathered
// into artifacts, added to the result unless it already holds an artifact
// with the same ID.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	if !r.streaming {
		return r.call(ctx, req, nil)
	}
	var g gatherer
	res, err := r.call(ctx, req, g.emit)
	if err != nil {
		return nil, err
	}
	return g.merge(res), nil
}

// Stream calls the function with emit.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.call(ctx, req, emit)
}

// call runs the function, turning a panic into an error so that one bad
// request cannot take the server down. Like any other error it may be
// retried; the function's author decides what is permanent.
func (r *Runtime) call(ctx context.Context, req *task.Request, emit task.Emit) (res *task.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("function %s panicked: %v", r.name, p)
		}
	}()
	res, err = r.fn(ctx, req, emit)
	if err == nil && res == nil {
		res = &task.Result{}
	}
	return res, err
}

// gatherer rebuilds artifacts from chunks for an Invoke of a streaming
// function.
type gatherer struct {
	order []string
	byID  map[string]*task.Artifact
}

func (g *gatherer) emit(c task.ArtifactChunk) error {
	if g.byID == nil {
		g.byID = map[string]*task.Artifact{}
	}
	a, ok := g.byID[c.Artifact.ID]
	if !ok {
		g.order = append(g.order, c.Artifact.ID)
	}
	if !ok || !c.Append {
		cp := c.Artifact
		cp.Parts = append([]task.Part(nil), c.Artifact.Parts...)
		g.byID[c.Artifact.ID] = &cp
		return nil
	}
	a.Parts = append(a.Parts, c.Artifact.Parts...)
	return nil
}

func (g *gatherer) merge(res *task.Result) *task.Result {
	if len(g.order) == 0 {
		return res
	}
	have := make(map[string]bool, len(res.Artifacts))
	for _, a := range res.Artifacts {
		have[a.ID] = true
	}
	for _, id := range g.order {
		if !have[id] {
			res.Artifacts = append(res.Artifacts, *g.byID[id])
		}
	}
	return res
}
