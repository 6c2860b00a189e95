package python

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/agent/internal/tail"
)

// workerSource is the worker program, run with `python -u -c`.
//
//go:embed worker.py
var workerSource string

const (
	// stopGrace is how long a worker may take to exit after its standard
	// input is closed, and then after SIGTERM, before it is killed.
	stopGrace = 3 * time.Second
	// stderrTailBytes is how much of the end of a worker's standard error
	// errors quote.
	stderrTailBytes = 2048
	// exitWait bounds how long an error waits for a dead worker to be
	// reaped, to quote its exit status.
	exitWait = time.Second
)

// worker is one running Python worker and the invocations in flight on
// it.
type worker struct {
	log   *slog.Logger
	cmd   *exec.Cmd
	group *procgroup.Group
	stdin *os.File
	// stderr keeps the end of the worker's standard error and logs each
	// line.
	stderr *tail.Lines
	// ready is the worker's first reply.
	ready reply

	writeMu sync.Mutex

	mu      sync.Mutex
	calls   map[string]*call
	dead    error // why the worker is gone; nil while it runs
	aborted error // why pactum killed it, if it did

	// exited is closed when the process is reaped, gone when the reader
	// has seen the end of its output and every call has been told.
	exited  chan struct{}
	waitErr error
	gone    chan struct{}

	stopOnce sync.Once
}

// call is one invocation waiting for its replies. The reader appends to
// its queue without blocking; the invoking goroutine takes them off.
type call struct {
	mu     sync.Mutex
	queue  []reply
	notify chan struct{} // capacity 1
}

func newCall() *call { return &call{notify: make(chan struct{}, 1)} }

func (c *call) put(r reply) {
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *call) take() []reply {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue = nil
	return q
}

// workerConfig is what the worker gets as its argument.
type workerConfig struct {
	Object    string   `json:"object"`
	Framework string   `json:"framework"`
	Path      []string `json:"path,omitempty"`
	InputKey  *string  `json:"input_key,omitempty"`
	OutputKey string   `json:"output_key,omitempty"`
}

// startWorker starts a worker in its own process group, recorded in
// procs, and waits for its ready line. A worker that cannot use its
// object answers fatal: that is a *fatalError.
func startWorker(ctx context.Context, procs *procgroup.Dir, label procgroup.Label, s Settings, env []string, log *slog.Logger) (*worker, error) {
	cfg, err := json.Marshal(workerConfig{Object: s.Object, Framework: s.Framework, Path: s.Path, InputKey: s.InputKey, OutputKey: s.OutputKey})
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_, _ = inR.Close(), inW.Close()
		return nil, err
	}
	w := &worker{
		log: log, stdin: inW, calls: map[string]*call{},
		stderr: &tail.Lines{Max: stderrTailBytes, Log: func(line string) { log.Info("python: worker stderr", "line", line) }},
		exited: make(chan struct{}), gone: make(chan struct{}),
	}
	cmd := exec.Command(s.Python, "-u", "-c", workerSource, string(cfg))
	cmd.Dir, cmd.Env = s.Dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, w.stderr
	cmd.WaitDelay = time.Second
	w.group, err = procs.Start(cmd, label)
	_, _ = inR.Close(), outW.Close()
	if err != nil {
		_, _ = inW.Close(), outR.Close()
		return nil, err
	}
	w.cmd = cmd
	go func() {
		w.waitErr = cmd.Wait()
		close(w.exited)
		// What the worker forked (multiprocessing, os.fork) holds its
		// output pipe open: kill it, so that the reader sees the end.
		_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
	}()

	first := make(chan reply, 1)
	go w.read(outR, first)
	t := time.NewTimer(s.StartTimeout)
	defer t.Stop()
	select {
	case r, ok := <-first:
		if !ok {
			w.stop()
			return nil, fmt.Errorf("the worker exited before it was ready%s", w.detail())
		}
		if r.Op == opFatal {
			w.stop()
			return nil, &fatalError{msg: r.Error, typ: r.Type}
		}
		if r.Op != opReady {
			w.stop()
			return nil, fmt.Errorf("the worker's first line is %q, want ready", r.Op)
		}
		w.ready = r
		return w, nil
	case <-t.C:
		w.stop()
		return nil, fmt.Errorf("the worker was not ready after start_timeout (%s): importing the object takes longer, or it hangs%s", s.StartTimeout, w.detail())
	case <-ctx.Done():
		w.stop()
		return nil, ctx.Err()
	}
}

// fatalError is a worker's fatal reply: the object cannot be imported or
// used.
type fatalError struct{ msg, typ string }

func (e *fatalError) Error() string { return e.msg }

// read reads the worker's replies until the end of its output, hands each
// to its call and, once the worker is gone, fails the calls left. The
// first reply goes to first (closed if there is none).
func (w *worker) read(out *os.File, first chan<- reply) {
	defer out.Close()
	br := bufio.NewReaderSize(out, 64<<10)
	gotFirst := false
	var cause error
	for {
		line, err := readLine(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				cause = err
			}
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := decodeReply(line)
		if !gotFirst && (err != nil || (r.Op != opReady && r.Op != opFatal)) {
			// Before the worker has its descriptor to itself, the
			// interpreter's start (a sitecustomize, a .pth file) may
			// print: not the worker's, and harmless.
			w.log.Info("python: worker stdout before it was ready", "line", strings.ToValidUTF8(string(line[:min(len(line), 512)]), "\uFFFD"))
			continue
		}
		if err != nil {
			// The worker writes nothing else on this descriptor: a bad
			// line means it can no longer be trusted.
			cause = err
			break
		}
		if !gotFirst {
			gotFirst = true
			first <- r
			continue
		}
		w.mu.Lock()
		c := w.calls[r.ID]
		w.mu.Unlock()
		if c != nil {
			c.put(r)
		}
	}
	if !gotFirst {
		close(first)
	}
	// The worker is gone (give it a moment to be reaped, so that the
	// error can quote its exit), or broke the protocol; what it left
	// running goes too.
	w.mu.Lock()
	if w.aborted != nil {
		cause = w.aborted
	}
	w.mu.Unlock()
	var err error
	if cause != nil {
		_ = procgroup.Signal(w.pid(), syscall.SIGKILL)
		err = fmt.Errorf("the python worker was stopped: %w%s", cause, w.detail())
	} else {
		err = fmt.Errorf("the python worker exited%s", w.detail())
		_ = procgroup.Signal(w.pid(), syscall.SIGKILL)
	}
	w.mu.Lock()
	w.dead = err
	calls := w.calls
	w.calls = map[string]*call{}
	w.mu.Unlock()
	for _, c := range calls {
		c.put(reply{Op: opFatal, Error: err.Error()})
	}
	close(w.gone)
	w.stop()
}

// readLine reads one line, without its newline, of at most maxLine
// bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine+1 {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", errBadReply, maxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line[:len(line)-1], []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// send writes one request.
func (w *worker) send(req *request) error {
	b, err := encodeRequest(req)
	if err != nil {
		return err
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if _, err := w.stdin.Write(b); err != nil {
		return fmt.Errorf("write to the python worker: %w", err)
	}
	return nil
}

// register adds a call, or returns why the worker cannot take it.
func (w *worker) register(id string) (*call, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dead != nil {
		return nil, w.dead
	}
	c := newCall()
	w.calls[id] = c
	return c, nil
}

func (w *worker) unregister(id string) {
	w.mu.Lock()
	delete(w.calls, id)
	w.mu.Unlock()
}

// pingWait bounds how long responsive waits for the worker's pong.
const pingWait = 2 * time.Second

// responsive reports whether the worker's event loop answers a ping
// within pingWait: a loop blocked by an async function that does not
// await answers nothing.
func (w *worker) responsive() bool {
	id := "ping-" + strconv.FormatInt(pingSeq.Add(1), 10)
	c, err := w.register(id)
	if err != nil {
		return false
	}
	defer w.unregister(id)
	if w.send(&request{Op: opPing, ID: id}) != nil {
		return false
	}
	t := time.NewTimer(pingWait)
	defer t.Stop()
	for {
		select {
		case <-c.notify:
			for _, r := range c.take() {
				if r.Op == opPong {
					return true
				}
				if r.Op == opFatal {
					return false
				}
			}
		case <-t.C:
			return false
		}
	}
}

var pingSeq atomic.Int64

// abort kills the worker for cause; the calls in flight fail with it.
func (w *worker) abort(cause error) {
	w.mu.Lock()
	if w.aborted == nil {
		w.aborted = cause
	}
	if w.dead == nil {
		// No new call goes to it from now on.
		w.dead = fmt.Errorf("the python worker was stopped: %w", cause)
	}
	w.mu.Unlock()
	w.log.Warn("python: killing the worker", "pid", w.ready.PID, "cause", cause)
	_ = procgroup.Signal(w.pid(), syscall.SIGKILL)
}

// alive reports whether the worker still runs.
func (w *worker) alive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead == nil
}

// pid is the worker's group: the shim's (or the interpreter's) process
// id.
func (w *worker) pid() int { return w.cmd.Process.Pid }

// stop shuts the worker down: close its standard input (it cancels what
// runs and exits), then SIGTERM, then SIGKILL; whatever it left running
// in its group goes too. Safe to call more than once.
func (w *worker) stop() {
	w.stopOnce.Do(func() {
		_ = w.stdin.Close()
		if !w.wait(stopGrace) {
			_ = procgroup.Signal(w.pid(), syscall.SIGTERM)
			if !w.wait(stopGrace) {
				_ = procgroup.Signal(w.pid(), syscall.SIGKILL)
				<-w.exited
			}
		}
		if err := w.group.Done(context.Background()); err != nil {
			w.log.Warn("python: worker's process group", "err", err)
		}
	})
}

func (w *worker) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.exited:
		return true
	case <-t.C:
		return false
	}
}

// detail describes how the worker ended, for errors: its exit status
// (waiting up to exitWait for it) and the end of its standard error.
func (w *worker) detail() string {
	var b strings.Builder
	if w.wait(exitWait) {
		var exit *exec.ExitError
		switch {
		case errors.As(w.waitErr, &exit):
			fmt.Fprintf(&b, " (%s)", exit.ProcessState)
		case w.waitErr == nil:
			b.WriteString(" (exit status 0)")
		}
	}
	if t := strings.TrimSpace(w.stderr.String()); t != "" {
		b.WriteString(": ")
		b.WriteString(lastLines(t, 5))
	}
	return b.String()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
