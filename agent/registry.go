package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"github.com/pactum/pactum/task"
)

// Spec is what a runtime's constructor receives from configuration.
type Spec struct {
	// Name is the agent's name (unique in a config).
	Name string
	// Type is the runtime type name, e.g. "exec".
	Type string
	// Decode decodes the runtime's own settings (the mapping under the key
	// named after the type) into v, strictly: unknown keys are errors that
	// name the file, line and field path. Nil means no settings were given.
	Decode func(v any) error
	// BaseDir resolves relative paths (the config file's directory).
	BaseDir string
}

// DecodeInto decodes the spec's settings into v, leaving v untouched when
// there are none.
func (s Spec) DecodeInto(v any) error {
	if s.Decode == nil {
		return nil
	}
	return s.Decode(v)
}

// WorkDir resolves a runtime's working-directory setting against the
// configuration: empty is BaseDir, a relative path is taken from BaseDir,
// an absolute one is kept.
func (s Spec) WorkDir(dir string) string {
	switch {
	case dir == "":
		return s.BaseDir
	case !filepath.IsAbs(dir) && s.BaseDir != "":
		return filepath.Join(s.BaseDir, dir)
	}
	return dir
}

// Factory builds an agent from its spec. It validates the settings and
// returns an error naming the offending field.
type Factory func(ctx context.Context, spec Spec) (Agent, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a runtime type available to configuration. Third-party
// runtimes call it from an init function. Registering a type twice panics.
func Register(typ string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[typ]; dup {
		panic(fmt.Sprintf("agent: runtime type %q registered twice", typ))
	}
	factories[typ] = f
}

// Types returns the registered runtime type names, sorted.
func Types() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(factories))
	for k := range factories {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// New builds the agent that spec describes.
func New(ctx context.Context, spec Spec) (Agent, error) {
	mu.RLock()
	f, ok := factories[spec.Type]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("agent %q: unknown runtime type %q (known: %v)", spec.Name, spec.Type, Types())
	}
	a, err := f(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("agent %q (%s): %w", spec.Name, spec.Type, err)
	}
	return a, nil
}

// Runner adapts an Agent to the core's task.Runner, streaming when the
// runtime can and forwarding cancellation to a Canceler when ctx ends early.
func Runner(a Agent) task.Runner { return runner{a} }

type runner struct{ a Agent }

func (r runner) Run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	if c, ok := r.a.(Canceler); ok {
		stop := context.AfterFunc(ctx, func() {
			if rj, ok := r.a.(Rejoiner); ok && rj.Rejoins() && errors.Is(context.Cause(ctx), task.ErrShutdown) {
				return // the next attempt joins the remote work
			}
			// The attempt's ctx is already done; give the remote side its
			// own short-lived context.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
			defer cancel()
			_ = c.Cancel(cctx, req.TaskID)
		})
		defer stop()
	}
	if s, ok := r.a.(Streamer); ok && emit != nil {
		return s.Stream(ctx, req, emit)
	}
	return r.a.Invoke(ctx, req)
}

// Close closes a if it holds resources.
func Close(a Agent) error {
	if c, ok := a.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// MetadataOf returns a's metadata, or a default for runtimes without any.
func MetadataOf(a Agent) Metadata {
	if m, ok := a.(MetadataProvider); ok {
		return m.Metadata()
	}
	_, streams := a.(Streamer)
	return Metadata{Streaming: streams, InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}}
}
