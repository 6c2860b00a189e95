package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/task"
)

// exitWait bounds how long a failed call waits for its dead server to be
// reaped, so that its error can quote the exit status.
const exitWait = time.Second

// session is one client session with the server, shared by all calls
// until it ends.
type session struct {
	want   string // the configured tool
	log    *slog.Logger
	cs     *sdk.ClientSession
	proc   *proc           // stdio servers only
	status *statusRecorder // HTTP servers only
	// closing is set when pactum ends the session itself.
	closing atomic.Bool

	endOnce   sync.Once
	closeOnce sync.Once
	closeErr  error

	mu    sync.Mutex
	tool  *sdk.Tool // nil until listed, or when the server lacks it
	tools []string  // the names listed, for errors
	stale bool      // the server's tool list changed since it was read
}

// acquire returns the current session, starting one if there is none.
// Only one caller starts a session at a time; the others wait for it.
func (r *Runtime) acquire(ctx context.Context) (*session, error) {
	if s, err := r.current(); s != nil || err != nil {
		return s, err
	}
	select {
	case r.connecting <- struct{}{}:
	case <-ctx.Done():
		return nil, interrupted(ctx, "connect to "+r.s.server())
	case <-r.ctx.Done():
		return nil, errClosed
	}
	defer func() { <-r.connecting }()
	if s, err := r.current(); s != nil || err != nil {
		// Another caller started one while this one waited.
		return s, err
	}
	s, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		s.closing.Store(true)
		_ = s.close()
		return nil, errClosed
	}
	r.sess = s
	r.mu.Unlock()
	r.bg.Go(func() { r.watch(s) })
	return s, nil
}

// current returns the session, nil if there is none, or errClosed. A
// session whose connection has ended stays current until its watcher, or
// a call that failed on it, drops it: every end is counted towards the
// restart backoff before the next start.
func (r *Runtime) current() (*session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	return r.sess, nil
}

// start waits out the restart backoff, then starts the server (or connects
// to it) and lists its tools.
func (r *Runtime) start(ctx context.Context) (*session, error) {
	op := "connect to " + r.s.server()
	if r.s.Command != "" {
		op = "start " + r.s.server()
	}
	// Closing the runtime ends a start in progress too.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(r.ctx, func() { cancel(errClosed) })
	defer stop()

	if err := r.backoff(ctx, op); err != nil {
		return nil, err
	}
	s, err := r.connect(ctx)
	if err != nil {
		err = r.startError(ctx, op, s, err)
		if !task.IsPermanent(err) && ctx.Err() == nil {
			r.failed(err)
		}
		return nil, err
	}
	if _, err := s.list(ctx); err != nil {
		s.closing.Store(true)
		_ = s.close()
		err = r.listError(ctx, s, err)
		if !task.IsPermanent(err) && ctx.Err() == nil {
			r.failed(err)
		}
		return nil, err
	}
	r.log.Info("mcp: session started", "server", r.s.server(), "tool", r.s.Tool, "pid", s.pid())
	return s, nil
}

// connect starts the server program or opens the HTTP session. On failure
// the returned session, if not nil, holds what is known of the program,
// which has been stopped.
func (r *Runtime) connect(ctx context.Context) (*session, error) {
	s := &session{want: r.s.Tool, log: r.log}
	var transport sdk.Transport
	if r.s.Command != "" {
		label := procgroup.Label{Kind: Type, Agent: r.name}
		p, err := startProc(r.procs, label, r.s.Command, r.s.Args, r.s.Dir, r.env, func(line string) {
			r.log.Debug("mcp: server stderr", "line", line)
		})
		if err != nil {
			return nil, &startErr{err}
		}
		s.proc = p
		transport = &sdk.IOTransport{
			Reader: &tapReader{progressTap{r: p.stdout, on: r.dispatchProgress}},
			Writer: p.stdin,
		}
	} else {
		transport = &sdk.StreamableClientTransport{Endpoint: r.s.URL, HTTPClient: r.httpClient}
		s.status = &statusRecorder{}
		ctx = context.WithValue(ctx, statusKey{}, s.status)
	}
	cs, err := r.client.Connect(ctx, transport, nil)
	if err != nil {
		if s.proc != nil {
			s.proc.stop()
		}
		return s, err
	}
	s.cs = cs
	return s, nil
}

// watch waits for the session to end by itself, and drops it: the
// connection ended, or a stdio server's program exited.
func (r *Runtime) watch(s *session) {
	conn := make(chan struct{})
	r.bg.Go(func() {
		_ = s.cs.Wait()
		close(conn)
	})
	var exited <-chan struct{}
	if s.proc != nil {
		exited = s.proc.exited
	}
	select {
	case <-conn:
	case <-exited:
		// Whatever the program left running goes with it, and with them
		// the last holders of its standard output: the calls in flight
		// see the end of the stream.
		s.proc.signal(syscall.SIGKILL)
	}
	if s.closing.Load() {
		return
	}
	err := errors.New("the server closed the session")
	if s.proc != nil {
		err = fmt.Errorf("server %s exited%s", r.s.server(), s.proc.detail(exitWait))
	}
	r.log.Warn("mcp: session ended", "server", r.s.server(), "err", err)
	r.endSession(s, err, true)
}

// endSession drops s if it is current and closes it in the background.
// failure says whether the end counts towards the restart backoff. Only
// the first call for a session has effect.
func (r *Runtime) endSession(s *session, cause error, failure bool) {
	s.endOnce.Do(func() {
		r.mu.Lock()
		if r.sess == s {
			r.sess = nil
		}
		if failure {
			r.failures++
			r.lastFailure = time.Now()
			r.lastErr = cause
		}
		r.mu.Unlock()
		s.closing.Store(true)
		r.bg.Go(func() { _ = s.close() })
	})
}

// failed counts a failure to start a session towards the backoff.
func (r *Runtime) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	r.lastFailure = time.Now()
	r.lastErr = err
}

// succeeded resets the backoff after a call that got an answer.
func (r *Runtime) succeeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures, r.lastErr = 0, nil
}

// restartDelay is the wait before the next start after n failures in a
// row: none after the first, then RestartBackoff doubling up to
// MaxRestartBackoff, without jitter.
func (r *Runtime) restartDelay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return backoff.Exponential{Initial: r.s.RestartBackoff, Max: r.s.MaxRestartBackoff}.Delay(n - 1)
}

// backoff waits until the server may be started again. When the attempt's
// deadline comes first it fails at once, retryably, with the last
// failure.
func (r *Runtime) backoff(ctx context.Context, op string) error {
	r.mu.Lock()
	at := r.lastFailure.Add(r.restartDelay(r.failures))
	n, last := r.failures, r.lastErr
	r.mu.Unlock()
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(at) {
		return task.Errorf(task.CodeUnavailable, "mcp: %s: restart delayed %s after %d failures in a row, past the attempt's deadline; last failure: %w",
			op, wait.Round(time.Millisecond), n, last)
	}
	r.log.Info("mcp: waiting before restart", "server", r.s.server(), "wait", wait, "failures", n)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return interrupted(ctx, op)
	}
}

// lookup returns the definition of the configured tool, listing the
// server's tools again when the list changed or the tool was missing.
func (s *session) lookup(ctx context.Context, r *Runtime) (*sdk.Tool, error) {
	s.mu.Lock()
	tool, stale := s.tool, s.stale
	s.mu.Unlock()
	if tool == nil || stale {
		var err error
		if tool, err = s.list(ctx); err != nil {
			return nil, r.callError(ctx, s, err)
		}
	}
	if tool == nil {
		s.mu.Lock()
		names := s.tools
		s.mu.Unlock()
		return nil, task.Permanent(task.Errorf(task.CodeNotFound, "mcp: server %s has no tool %q (it has: %s)",
			r.s.server(), r.s.Tool, strings.Join(names, ", ")))
	}
	r.mu.Lock()
	r.description = tool.Description
	r.mu.Unlock()
	return tool, nil
}

// list reads the server's tool list and returns the configured tool, nil
// if the server does not have it.
func (s *session) list(ctx context.Context) (*sdk.Tool, error) {
	s.mu.Lock()
	s.stale = false
	s.mu.Unlock()
	var found *sdk.Tool
	var names []string
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			s.markStale()
			return nil, err
		}
		names = append(names, t.Name)
		if t.Name == s.want {
			found = t
		}
	}
	s.mu.Lock()
	s.tool, s.tools = found, names
	s.mu.Unlock()
	return found, nil
}

func (s *session) markStale() {
	s.mu.Lock()
	s.stale = true
	s.mu.Unlock()
}

// close ends the session and, for a stdio server, stops the program. It is
// safe to call more than once and from several goroutines. The error is
// that of ending the session (a DELETE to a gone HTTP server, say); the
// program is stopped regardless.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		if s.cs != nil {
			// Waits for calls in flight, then closes the server's standard
			// input or ends the HTTP session.
			s.closeErr = s.cs.Close()
		}
		if s.proc != nil {
			s.proc.stop()
		}
		if s.closeErr != nil && s.log != nil {
			s.log.Debug("mcp: session closed with an error", "err", s.closeErr)
		}
	})
	return s.closeErr
}

// pid is the stdio server's process id, 0 for HTTP sessions.
func (s *session) pid() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.pid()
}

// exitDetail describes how a stdio server ended, for errors; "" for HTTP
// sessions.
func (s *session) exitDetail() string {
	if s == nil || s.proc == nil {
		return ""
	}
	return s.proc.detail(exitWait)
}

// dispatchProgress hands a progress notification to the call it belongs
// to, if that call is still running.
func (r *Runtime) dispatchProgress(p *sdk.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if v, ok := r.progress.Load(token); ok {
		v.(*progressSink).add(p)
	}
}
