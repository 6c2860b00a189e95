package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/agent/internal/tmpl"
	"github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "python"

// artifactName names the artifact an attempt produces.
const artifactName = "output"

// cancelGrace is how long a canceled attempt waits for the worker to
// confirm that the coroutine was canceled.
const cancelGrace = 2 * time.Second

func init() { agent.Register(Type, build) }

func build(_ context.Context, spec agent.Spec) (agent.Agent, error) {
	var s Settings
	if err := spec.DecodeInto(&s); err != nil {
		return nil, err
	}
	s.Dir = spec.WorkDir(s.Dir)
	return New(s, WithName(spec.Name))
}

// Option adjusts a runtime built by New.
type Option func(*Runtime)

// WithLogger sets the logger of the runtime's records, the worker's
// standard error among them. Default slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(r *Runtime) {
		if l != nil {
			r.log = l
		}
	}
}

// WithName sets the agent name that labels the runtime's log records and
// its worker's process record. Default "".
func WithName(name string) Option { return func(r *Runtime) { r.name = name } }

// WithRunDir sets the directory of process records (package procgroup's
// Dir), which a restarted pactum sweeps. Default: the user's cache
// directory's pactum/procs.
func WithRunDir(dir string) Option { return func(r *Runtime) { r.runDir = dir } }

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// errClosed is returned by attempts on a closed runtime. It is retryable:
// the task runs again on a runtime that is open.
var errClosed = errors.New("python: runtime is closed")

// Runtime runs a Python object in one long-lived worker. It is safe for
// concurrent use; build it with New and release it with Close.
type Runtime struct {
	name   string
	s      Settings
	log    *slog.Logger
	env    []string // nil inherits pactum's
	runDir string
	procs  *procgroup.Dir

	// ctx ends when the runtime is closed.
	ctx    context.Context
	cancel context.CancelFunc
	// starting admits one worker start at a time.
	starting chan struct{}

	mu          sync.Mutex
	w           *worker
	closed      bool
	failures    int // worker failures in a row
	lastFailure time.Time
	lastErr     error
	byTask      map[string]inflight // the newest invocation of each task
	description string              // the object's, once a worker said
}

type inflight struct {
	id      string
	attempt int
	w       *worker
	done    chan struct{} // closed when the attempt's call is over
}

// New returns a runtime for s, or an error naming the setting that is
// wrong. It expands ${VAR} references in Env now and kills the worker
// groups that pactum processes now gone left running. The worker starts
// on the first attempt.
func New(s Settings, opts ...Option) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	s = s.resolve()
	r := &Runtime{s: s, log: slog.Default(), starting: make(chan struct{}, 1), byTask: map[string]inflight{}}
	env, err := tmpl.ExpandEnvList(s.Env, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	switch {
	case s.InheritEnv != nil && !*s.InheritEnv:
		r.env = append([]string{}, env...)
	case len(env) > 0:
		r.env = append(os.Environ(), env...)
	}
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("agent", r.name, "runtime", Type)
	if r.procs, err = procgroup.Open(r.runDir); err != nil {
		return nil, fmt.Errorf("python: process record directory: %w", err)
	}
	if _, err := r.procs.Sweep(context.Background(), r.log); err != nil {
		return nil, fmt.Errorf("python: kill what a stopped pactum left running in %s: %w", r.procs.Path(), err)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// Metadata implements agent.MetadataProvider. The description is the
// function's docstring once a worker has imported it.
func (r *Runtime) Metadata() agent.Metadata {
	r.mu.Lock()
	desc := r.description
	r.mu.Unlock()
	if desc == "" {
		desc = "Runs the Python object " + r.s.Object
	}
	return agent.Metadata{
		Type:        Type,
		Description: desc,
		Streaming:   true,
		InputModes:  []string{"text/plain", "application/json"},
		OutputModes: []string{"text/plain", "application/json"},
	}
}

// Invoke runs the object once and returns its answer.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream runs the object once, streaming when the object streams
// (astream, an async generator): each piece becomes an artifact chunk.
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	return r.run(ctx, req, emit)
}

func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	in := inputOf(req)
	id := answer.NewID()
	done := make(chan struct{})
	defer close(done)
	// A request that never reached a worker (it was gone already) goes to
	// a new one, once.
	for resend := true; ; resend = false {
		w, err := r.acquire(ctx)
		if err != nil {
			return nil, err
		}
		c, err := w.register(id)
		if err == nil {
			if err = r.supersede(ctx, req, inflight{id: id, attempt: req.Attempt, w: w, done: done}); err == nil {
				err = w.send(&request{Op: opInvoke, ID: id, Stream: emit != nil, Input: in})
			}
			if err != nil {
				w.unregister(id)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("python: %s: %w", r.s.Object, context.Cause(ctx))
			}
			if resend {
				continue
			}
			return nil, r.unavailable(err)
		}
		defer r.release(req.TaskID, id)
		defer w.unregister(id)
		return r.wait(ctx, w, id, c, emit)
	}
}

// wait collects the replies of invocation id until its end.
func (r *Runtime) wait(ctx context.Context, w *worker, id string, c *call, emit task.Emit) (*task.Result, error) {
	stream := answer.NewStream(emit, id, artifactName)
	var canceled <-chan time.Time
	done := ctx.Done()
	closing := r.ctx.Done()
	for {
		select {
		case <-c.notify:
		case <-done:
			// Cancel the coroutine and give the worker a moment to say so.
			done, closing = nil, nil
			_ = w.send(&request{Op: opCancel, ID: id})
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			canceled = t.C
			continue
		case <-closing:
			return nil, errClosed
		case <-canceled:
			if w.responsive() {
				r.log.Warn("python: the worker did not confirm a cancel in time; the coroutine is still ending", "grace", cancelGrace)
			} else {
				// Nothing runs on that loop any more: start afresh.
				w.abort(fmt.Errorf("its event loop did not answer for %s after a cancel: an async function blocks it (time.sleep, sync I/O?)", cancelGrace))
			}
			return nil, fmt.Errorf("python: %s: %w", r.s.Object, context.Cause(ctx))
		}
		for _, rp := range c.take() {
			switch rp.Op {
			case opChunk:
				if done == nil {
					continue // canceled: nobody listens
				}
				if err := stream.Write(rp.Text); err != nil {
					_ = w.send(&request{Op: opCancel, ID: id})
					return nil, err
				}
			case opResult:
				r.succeeded()
				if ctx.Err() != nil {
					return nil, fmt.Errorf("python: %s: %w", r.s.Object, context.Cause(ctx))
				}
				if err := stream.Close(); err != nil {
					return nil, err
				}
				return r.result(id, rp.Output, rp.InputRequired)
			case opError:
				r.succeeded() // the worker works; the object failed
				if ctx.Err() != nil {
					return nil, fmt.Errorf("python: %s: %w", r.s.Object, context.Cause(ctx))
				}
				return nil, task.Errorf(task.CodeAgentFailed, "python: %s raised %s", r.s.Object, rp.Error)
			case opCanceled:
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("python: %s: canceled: %w", r.s.Object, context.Cause(ctx))
				}
				return nil, task.Errorf(task.CodeAgentFailed, "python: %s: canceled: a later attempt of the task superseded this one", r.s.Object)
			case opFatal:
				// The worker died (the reader's own reply).
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("python: %s: %w", r.s.Object, context.Cause(ctx))
				}
				return nil, r.unavailable(errors.New(rp.Error))
			}
		}
	}
}

// questionKey marks, in its metadata, the agent message of a question
// the object asked, so that the reply is recognized as its answer
// (input.Resume).
const questionKey = "pactum.python.question"

// result maps the worker's output, a JSON value, onto the attempt's
// result: a string as text, an object or array as data, null as empty
// text; a question pauses the task for input.
func (r *Runtime) result(id string, out json.RawMessage, ask bool) (*task.Result, error) {
	v, err := answer.Decode(out)
	if err != nil {
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "python: %s: output: %w", r.s.Object, err))
	}
	if v == nil {
		v = ""
	}
	var res *task.Result
	if ask {
		res, err = answer.Question(v)
		if err == nil {
			res.Message.Metadata = map[string]any{questionKey: true}
		}
	} else {
		res, err = answer.Value(id, artifactName, v)
	}
	if err != nil {
		return nil, task.Permanent(task.Errorf(task.CodeAgentFailed, "python: %s: output: %w", r.s.Object, err))
	}
	return res, nil
}

func (r *Runtime) unavailable(err error) error {
	if errors.Is(err, errClosed) {
		return err
	}
	return task.Errorf(task.CodeUnavailable, "python: %s: %w", r.s.Object, err)
}

// supersede records call as the newest invocation of req's task and
// cancels an earlier attempt of the task that still runs here: its lease
// was lost (the task was claimed again, which counts its attempt up). It
// waits, up to cancelGrace, until that attempt is over, so that two
// attempts of one task do not run at once.
func (r *Runtime) supersede(ctx context.Context, req *task.Request, call inflight) error {
	if req.TaskID == "" {
		return nil
	}
	r.mu.Lock()
	prev, ok := r.byTask[req.TaskID]
	if ok && prev.attempt > req.Attempt {
		r.mu.Unlock()
		return nil
	}
	r.byTask[req.TaskID] = call
	r.mu.Unlock()
	if !ok || prev.attempt >= req.Attempt || prev.id == call.id {
		return nil
	}
	r.log.Warn("python: a later attempt of the task arrived; canceling the earlier one",
		"task", req.TaskID, "attempt", req.Attempt, "earlier", prev.attempt)
	_ = prev.w.send(&request{Op: opCancel, ID: prev.id})
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	select {
	case <-prev.done:
	case <-t.C:
		r.log.Warn("python: the earlier attempt did not end in time; running the later one anyway", "task", req.TaskID, "grace", cancelGrace)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// release forgets invocation id of taskID once it is over.
func (r *Runtime) release(taskID, id string) {
	r.mu.Lock()
	if v, ok := r.byTask[taskID]; ok && v.id == id {
		delete(r.byTask, taskID)
	}
	r.mu.Unlock()
}

// acquire returns the running worker, starting one if there is none.
func (r *Runtime) acquire(ctx context.Context) (*worker, error) {
	if w, err := r.current(); w != nil || err != nil {
		return w, err
	}
	select {
	case r.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("python: start the worker: %w", context.Cause(ctx))
	case <-r.ctx.Done():
		return nil, errClosed
	}
	defer func() { <-r.starting }()
	if w, err := r.current(); w != nil || err != nil {
		return w, err
	}
	if err := r.backoff(ctx); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel)
	defer stop()
	label := procgroup.Label{Kind: Type, Agent: r.name}
	w, err := startWorker(sctx, r.procs, label, r.s, r.env, r.log)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil, errClosed
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("python: start the worker: %w", context.Cause(ctx))
		}
		err = r.startError(err)
		if !task.IsPermanent(err) {
			r.failed(err)
		}
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		w.stop()
		return nil, errClosed
	}
	r.w = w
	if w.ready.Description != "" {
		r.description = w.ready.Description
	}
	r.mu.Unlock()
	r.log.Info("python: worker started", "object", r.s.Object, "framework", w.ready.Framework,
		"streaming", w.ready.Streaming, "python", w.ready.Python, "pid", w.ready.PID)
	go r.watch(w)
	return w, nil
}

// startError classifies a failed start: an object that cannot be
// imported and an interpreter that cannot run stay so on retry.
func (r *Runtime) startError(err error) error {
	var fatal *fatalError
	if errors.As(err, &fatal) {
		return task.Permanent(task.Errorf(task.CodeAgentFailed, "python: cannot load %s: %s", r.s.Object, fatal.msg))
	}
	for _, perm := range []error{exec.ErrNotFound, fs.ErrNotExist, fs.ErrPermission, syscall.ENOEXEC} {
		if errors.Is(err, perm) {
			return task.Permanent(task.Errorf(task.CodeAgentFailed, "python: cannot start the interpreter %s: %w", r.s.Python, err))
		}
	}
	return task.Errorf(task.CodeUnavailable, "python: start the worker for %s: %w", r.s.Object, err)
}

// current returns the running worker, nil if there is none, or
// errClosed.
func (r *Runtime) current() (*worker, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.w != nil && !r.w.alive() {
		return nil, nil // its watcher drops it
	}
	return r.w, nil
}

// watch drops w once it is gone and counts its end as a failure unless
// the runtime stopped it.
func (r *Runtime) watch(w *worker) {
	<-w.gone
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == w {
		r.w = nil
	}
	for k, v := range r.byTask {
		if v.w == w {
			delete(r.byTask, k)
		}
	}
	if r.closed {
		return
	}
	r.failures++
	r.lastFailure = time.Now()
	r.lastErr = w.dead
	r.log.Warn("python: worker ended", "object", r.s.Object, "err", w.dead)
}

func (r *Runtime) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	r.lastFailure = time.Now()
	r.lastErr = err
}

func (r *Runtime) succeeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures, r.lastErr = 0, nil
}

// backoff waits until a worker may be started again: at once after one
// failure, then RestartBackoff doubling up to MaxRestartBackoff. When the
// attempt's deadline comes first it fails at once, retryably.
func (r *Runtime) backoff(ctx context.Context) error {
	r.mu.Lock()
	n, last := r.failures, r.lastErr
	var wait time.Duration
	if n > 1 {
		wait = time.Until(r.lastFailure.Add(backoff.Exponential{Initial: r.s.RestartBackoff, Max: r.s.MaxRestartBackoff}.Delay(n - 1)))
	}
	r.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return task.Errorf(task.CodeUnavailable, "python: restart of the worker delayed %s after %d failures in a row, past the attempt's deadline; last failure: %w",
			wait.Round(time.Millisecond), n, last)
	}
	r.log.Info("python: waiting before restarting the worker", "wait", wait, "failures", n)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("python: start the worker: %w", context.Cause(ctx))
	case <-r.ctx.Done():
		return errClosed
	}
}

// Close stops the worker (it cancels what runs, then exits; it is killed
// if it does not) and returns once its process group is gone. Attempts
// in flight fail with a retryable error. Closing twice is safe.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	w := r.w
	r.w = nil
	r.mu.Unlock()
	r.cancel()
	// Wait for a start in progress to end, and keep the slot.
	r.starting <- struct{}{}
	if w != nil {
		w.stop()
	}
	return nil
}

// inputOf is what the worker gets for req.
func inputOf(req *task.Request) *input {
	in := &input{Text: req.Text(), ContextID: req.ContextID, TaskID: req.TaskID}
	// The data part is the turn's request's: on an attempt after feedback
	// the newest message is the feedback, and Text holds all three.
	orig := req.Original()
	for _, p := range orig.Parts {
		if p.Kind == task.PartData && len(p.Data) > 0 && json.Valid(p.Data) {
			var obj map[string]json.RawMessage
			if json.Unmarshal(p.Data, &obj) == nil && obj != nil {
				in.Data = p.Data
				break
			}
		}
	}
	h := req.History
	if n := len(h); n > 0 && (h[n-1].ID == req.Message.ID || h[n-1].Role == task.RoleUser) {
		h = h[:n-1]
	}
	if n := len(h); n > 0 && h[n-1].Role == task.RoleAgent && h[n-1].Metadata[questionKey] == true {
		in.Resume = true
	}
	for _, m := range h {
		role := "user"
		if m.Role == task.RoleAgent {
			role = "assistant"
		}
		in.History = append(in.History, turn{Role: role, Text: task.Render(m)})
	}
	return in
}
