// Package exec runs a command-line agent (type "exec"): OpenClaw,
// `claude -p`, `codex exec`, or any script. Each attempt starts the command
// once, hands it the message text (on standard input, as an argument, or
// through the templated command line) and turns its standard output into
// the answer.
//
// The command runs in its own process group. When the attempt ends early
// (canceled, timed out, output over the limit) the whole group gets SIGTERM
// and, after a grace period, SIGKILL; whatever is left of the group when the
// command exits is killed too, so an attempt never leaves processes behind.
//
// The command does not outlive pactum either. On Linux it gets SIGKILL
// when the pactum process ends, however it ends (kill -9 included). Each
// running group is recorded under RunDir; constructing a runtime kills
// every recorded group whose pactum process is gone (what a crash left
// behind: the command's own children, or everything where there is no
// parent-death signal) before it returns, so a node kills its leftovers
// before it claims work. A new attempt of a task waits until the group of
// the task's previous attempt in this runtime is gone (it is killed), and
// Close kills the groups still running.
//
// Standard output and error are read from pipes of the runtime's own, not
// through os/exec's copying, so that nothing the command wrote is lost:
// when the command exits, what it started gets kill_grace to close them,
// the rest of the group is killed, and then the pipe is read to its end
// however slowly its lines are taken (a streamed chunk waits on its
// subscribers). See outputPipe.
package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/internal/answer"
	"github.com/pactum/pactum/agent/internal/procgroup"
	"github.com/pactum/pactum/agent/internal/tail"
	"github.com/pactum/pactum/agent/internal/tmpl"
	"github.com/pactum/pactum/task"
)

// Type is the runtime type name used in configuration.
const Type = "exec"

// Defaults of Settings.
const (
	DefaultMaxOutputBytes = 4 << 20
	DefaultKillGrace      = 5 * time.Second
)

// Input modes.
const (
	InputStdin = "stdin"
	InputArg   = "arg"
	InputNone  = "none"
)

// Output modes.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// artifactName names the artifact an attempt produces.
const artifactName = "output"

// stderrTailBytes is how much of the end of standard error a failure
// reports.
const stderrTailBytes = 2048

func init() {
	agent.Register(Type, func(_ context.Context, spec agent.Spec) (agent.Agent, error) {
		var s Settings
		if err := spec.DecodeInto(&s); err != nil {
			return nil, err
		}
		s.Dir = spec.WorkDir(s.Dir)
		if s.RunDir != "" && !filepath.IsAbs(s.RunDir) && spec.BaseDir != "" {
			s.RunDir = filepath.Join(spec.BaseDir, s.RunDir)
		}
		return New(s)
	})
}

// Settings configures an exec runtime: the mapping under `exec:` in an
// agent's configuration.
type Settings struct {
	// Command is the program and its arguments. Required. Each element is a
	// Go text/template over the attempt: .Input (the message text),
	// .TaskID, .ContextID, .Attempt, .Action, .Actor, .Data (the JSON of
	// the message's first data part, or null), .Message, .Metadata,
	// .Arguments (a workflow run's arguments) and, for an agent built from
	// a definition (Role), .System, .Tools and .Model; the function json
	// quotes a value ({{json .Input}}). A program without a slash is
	// looked up in PATH; one with a slash is relative to Dir.
	Command []string `yaml:"command"`
	// Input says how the message text reaches the command: "stdin" writes
	// it to standard input, "arg" appends it as the last argument, "none"
	// sends nothing (use {{.Input}} in Command). Default: "stdin".
	Input string `yaml:"input"`
	// Output says how standard output is read: "text" takes it as the
	// answer (without trailing newlines); "json" parses it as one JSON
	// document and takes the value Answer points to. Default: "text".
	Output string `yaml:"output"`
	// Answer is a JSON pointer (RFC 6901, e.g. "/result/text") to the answer
	// in JSON output. A string answer becomes a text part, an object or
	// array a data part. Only with output "json". Default: "", the whole
	// document.
	Answer string `yaml:"answer"`
	// InputRequired is a JSON pointer (RFC 6901, e.g. "/needs_input") to a
	// boolean in JSON output. When it is true the command is asking for
	// input: the answer becomes the agent's question and the task waits in
	// input_required for the caller's reply, which reaches the command as
	// the message of the next run. False, null or nothing there is an
	// ordinary answer; another value fails the task permanently. Only with
	// output "json". Default: "", the command never asks.
	InputRequired string `yaml:"input_required"`
	// Stream emits each line of standard output as an artifact chunk as
	// soon as it is written; the last line needs no newline. Every line
	// the command wrote is emitted, however slowly emit takes them: the
	// command's exit does not cut the reading short. Default: false.
	Stream bool `yaml:"stream"`
	// Timeout bounds one attempt. Default: 0, no limit beyond the task's.
	Timeout time.Duration `yaml:"timeout"`
	// KillGrace is how long a command may take to exit after SIGTERM before
	// it gets SIGKILL, and how long what it started may keep its standard
	// output or error open after it exited before the rest of its group is
	// killed (the output is read to its end either way). Default: 5s.
	KillGrace time.Duration `yaml:"kill_grace"`
	// Env sets environment variables of the command. A value may reference
	// pactum's own environment as ${VAR}; an unset VAR is a configuration
	// error. Default: none.
	Env map[string]string `yaml:"env"`
	// InheritEnv passes pactum's environment on to the command, under Env.
	// When false the command sees Env only (add PATH if it needs one).
	// Default: true.
	InheritEnv *bool `yaml:"inherit_env"`
	// Dir is the working directory. In configuration a relative Dir is
	// relative to the configuration file's directory. Default: that
	// directory (in Go: the current directory).
	Dir string `yaml:"dir"`
	// PermanentExitCodes are exit codes that mean a retry cannot help (bad
	// input, for instance): the task fails without being retried. Default:
	// none, every failure may be retried.
	PermanentExitCodes []int `yaml:"permanent_exit_codes"`
	// MaxOutputBytes bounds standard output; a command that writes more is
	// stopped and the attempt fails permanently. Default: 4194304 (4 MiB).
	MaxOutputBytes int `yaml:"max_output_bytes"`
	// RunDir is the directory where the runtime records the process group
	// of each running attempt, so that the groups a crashed server left
	// behind are found and killed at the next start (see the package
	// documentation). It is meant to be one per machine and user: a
	// runtime kills only groups whose pactum process is gone, never those
	// of another running server. Created with mode 0700; it must belong to
	// the user pactum runs as. In configuration a relative RunDir is
	// relative to the configuration file's directory. Default: pactum/procs
	// under the user's cache directory ($XDG_CACHE_HOME or ~/.cache on
	// Linux), or pactum-UID/procs under the temporary directory when there
	// is none.
	RunDir string `yaml:"run_dir"`
	// Models maps a model alias (sonnet, haiku, inherit: the names agent
	// definitions use) to the model name the command takes: {{.Model}} is
	// a definition's model looked up here (a definition without a model
	// looks up inherit), else the model as written, except that inherit
	// and no model are "" (the command's own default). Default: none.
	Models map[string]string `yaml:"models"`
	// Role is the agent definition the agent serves, which its templates
	// read as .System (the role body), .Tools and .Model; pactum sets it
	// for an agent built from a definition. Not configuration. Default:
	// nil, the three are empty.
	Role *agent.Role `yaml:"-"`
}

func (s Settings) withDefaults() Settings {
	if s.Input == "" {
		s.Input = InputStdin
	}
	if s.Output == "" {
		s.Output = OutputText
	}
	if s.KillGrace == 0 {
		s.KillGrace = DefaultKillGrace
	}
	if s.MaxOutputBytes == 0 {
		s.MaxOutputBytes = DefaultMaxOutputBytes
	}
	return s
}

// validate checks settings that need no parsing; New reports template,
// pointer and environment errors the same way, naming the field.
func (s Settings) validate() error {
	if len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "" {
		return errors.New("command: required: the program to run and its arguments, e.g. [claude, -p]")
	}
	switch s.Input {
	case InputStdin, InputArg, InputNone:
	default:
		return fmt.Errorf("input: must be stdin, arg or none (got %q)", s.Input)
	}
	switch s.Output {
	case OutputText, OutputJSON:
	default:
		return fmt.Errorf("output: must be text or json (got %q)", s.Output)
	}
	if s.Answer != "" && s.Output != OutputJSON {
		return errors.New("answer: needs output: json")
	}
	if s.InputRequired != "" && s.Output != OutputJSON {
		return errors.New("input_required: needs output: json")
	}
	if s.InputRequired != "" && s.Stream {
		// Streamed lines become the task's artifact before the question is
		// known, and a question leaves no artifact of its own.
		return errors.New("input_required: cannot be combined with stream: true (the streamed lines would stay on the task as its artifact)")
	}
	if s.Timeout < 0 {
		return fmt.Errorf("timeout: must not be negative (got %s)", s.Timeout)
	}
	if s.KillGrace < 0 {
		return fmt.Errorf("kill_grace: must not be negative (got %s)", s.KillGrace)
	}
	if s.MaxOutputBytes < 0 {
		return fmt.Errorf("max_output_bytes: must not be negative (got %d)", s.MaxOutputBytes)
	}
	for i, c := range s.PermanentExitCodes {
		if c < 1 || c > 255 {
			return fmt.Errorf("permanent_exit_codes[%d]: must be between 1 and 255 (got %d)", i, c)
		}
	}
	if _, ok := s.Models[""]; ok {
		return errors.New(`models: an alias may not be empty (a definition without a model looks up "inherit")`)
	}
	return procgroup.CheckSettings(s.Env, s.Dir)
}

// Runtime runs one command per attempt.
type Runtime struct {
	s       Settings
	argv    []*tmpl.Template
	answer  answer.Pointer
	ask     *answer.Pointer // input_required; nil when not set
	inherit bool
	env     []string // the Env entries, expanded, sorted by name
	procs   *procgroup.Dir

	mu      sync.Mutex
	closed  bool
	running map[*attemptProc]struct{}
	byTask  map[string]*attemptProc // the latest attempt of each task
}

// attemptProc is the command of a running attempt.
// afterStart, when set (by tests), runs between a command's start and the
// moment its group is known to the runtime.
var afterStart func()

type attemptProc struct {
	attempt int
	pgid    int           // 0 until started
	started chan struct{} // closed once pgid is set
	done    chan struct{} // closed once its group is gone
}

var (
	_ agent.Agent            = (*Runtime)(nil)
	_ agent.Streamer         = (*Runtime)(nil)
	_ agent.MetadataProvider = (*Runtime)(nil)
	_ io.Closer              = (*Runtime)(nil)
)

// ErrClosed is returned by attempts started after Close.
var ErrClosed = errors.New("exec: runtime closed")

// New returns a runtime for s, or an error naming the setting that is
// wrong. It expands ${VAR} references in Env now, from the current
// environment. Before it returns it kills the process groups that pactum
// processes now gone left running (recorded under RunDir), and waits
// until they are gone; an error then names run_dir.
func New(s Settings) (*Runtime, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	r := &Runtime{s: s, inherit: s.InheritEnv == nil || *s.InheritEnv}
	for i, a := range s.Command {
		t, err := tmpl.Parse(fmt.Sprintf("command[%d]", i), a)
		if err != nil {
			return nil, fmt.Errorf("command[%d]: %w", i, err)
		}
		r.argv = append(r.argv, t)
	}
	p, err := answer.ParsePointer(s.Answer)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	r.answer = p
	if s.InputRequired != "" {
		p, err := answer.ParsePointer(s.InputRequired)
		if err != nil {
			return nil, fmt.Errorf("input_required: %w", err)
		}
		r.ask = &p
	}
	if r.env, err = tmpl.ExpandEnvList(s.Env, os.LookupEnv); err != nil {
		return nil, err
	}
	if r.env == nil && !r.inherit {
		r.env = []string{} // nil would mean "inherit" to os/exec
	}
	if r.procs, err = procgroup.Open(s.RunDir); err != nil {
		return nil, fmt.Errorf("run_dir: %w", err)
	}
	if _, err := r.procs.Sweep(context.Background(), slog.Default()); err != nil {
		return nil, fmt.Errorf("run_dir: kill what a stopped pactum left running: %w", err)
	}
	r.running = map[*attemptProc]struct{}{}
	r.byTask = map[string]*attemptProc{}
	return r, nil
}

// Close kills the commands still running and waits until their process
// groups are gone; attempts started after Close fail with ErrClosed. A
// server drains its attempts before it closes its runtimes, so this
// matters only for commands that outlived the drain. Closing twice is
// safe.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	procs := make([]*attemptProc, 0, len(r.running))
	for p := range r.running {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	for _, p := range procs {
		r.mu.Lock()
		pgid := p.pgid
		r.mu.Unlock()
		if pgid != 0 {
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
		}
		<-p.done
	}
	return nil
}

// claim registers an attempt of taskID. A command of an earlier attempt
// of the task still running here has lost its lease (the task was claimed
// again, which counts up its attempt): it is killed, and claim returns
// once its group is gone, so two attempts of one task never run at once
// in one runtime. Calls without a task id, or repeating an attempt number
// (a caller of Invoke, not a Coordinator), are not matched.
func (r *Runtime) claim(ctx context.Context, taskID string, attempt int) (*attemptProc, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
		prev := r.byTask[taskID]
		if taskID == "" || prev == nil || prev.attempt >= attempt {
			p := &attemptProc{attempt: attempt, started: make(chan struct{}), done: make(chan struct{})}
			r.running[p] = struct{}{}
			if taskID != "" && prev == nil {
				r.byTask[taskID] = p
			}
			r.mu.Unlock()
			return p, nil
		}
		pgid := prev.pgid
		r.mu.Unlock()
		if pgid == 0 {
			// Still starting: its group is not known yet. Wait until it
			// is (then kill it), or until the start failed.
			select {
			case <-prev.started:
			case <-prev.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		_ = procgroup.Signal(pgid, syscall.SIGKILL)
		select {
		case <-prev.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release ends p's registration once its group is gone.
func (r *Runtime) release(taskID string, p *attemptProc) {
	r.mu.Lock()
	delete(r.running, p)
	if r.byTask[taskID] == p {
		delete(r.byTask, taskID)
	}
	r.mu.Unlock()
	close(p.done)
}

// WorkDir returns the directory the command runs in ("" for pactum's
// own): where a contract's file resources are looked for.
func (r *Runtime) WorkDir() string { return r.s.Dir }

// Metadata implements agent.MetadataProvider.
func (r *Runtime) Metadata() agent.Metadata {
	out := "text/plain"
	if r.s.Output == OutputJSON {
		out = "application/json"
	}
	return agent.Metadata{
		Type:        Type,
		Description: "Runs " + filepath.Base(r.s.Command[0]),
		Streaming:   r.s.Stream,
		Processes:   true,
		InputModes:  []string{"text/plain"},
		OutputModes: []string{out},
	}
}

// Invoke runs the command once and returns its answer.
func (r *Runtime) Invoke(ctx context.Context, req *task.Request) (*task.Result, error) {
	return r.run(ctx, req, nil)
}

// Stream runs the command once; with Stream set, each line of standard
// output is emitted as a chunk as soon as the command writes it. The result
// holds the whole answer as the same artifact. (A command that may ask for
// input, InputRequired, cannot stream.)
func (r *Runtime) Stream(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	if !r.s.Stream {
		emit = nil
	}
	return r.run(ctx, req, emit)
}

// ResolveModel returns the model name {{.Model}} is for a definition's
// model alias: the Models entry of alias (of inherit when alias is ""),
// else alias itself, except that inherit and "" without an entry are "".
func (r *Runtime) ResolveModel(alias string) string {
	if alias == "" {
		alias = inherit
	}
	if m, ok := r.s.Models[alias]; ok {
		return m
	}
	if alias == inherit {
		return ""
	}
	return alias
}

// inherit is the model alias that means the agent's own model.
const inherit = "inherit"

// data returns the template data of req: tmpl.NewData and the Role.
func (r *Runtime) data(req *task.Request) tmpl.Data {
	d := tmpl.NewData(req)
	d.SetRole(r.s.Role, r.ResolveModel)
	return d
}

func (r *Runtime) run(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
	data := r.data(req)
	argv := make([]string, len(r.argv), len(r.argv)+1)
	for i, t := range r.argv {
		a, err := t.Execute(data)
		if err != nil {
			return nil, task.Permanent(fmt.Errorf("command[%d]: %w", i, err))
		}
		argv[i] = a
	}
	if r.s.Input == InputArg {
		argv = append(argv, data.Input)
	}
	name := argv[0]

	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	if r.s.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(runCtx, r.s.Timeout, errTimeout)
		defer cancel()
	}

	cmd := osexec.CommandContext(runCtx, name, argv[1:]...)
	cmd.Dir = r.s.Dir
	cmd.Env = r.environ()
	cmd.Cancel = func() error { return procgroup.Signal(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = r.s.KillGrace
	if r.s.Input == InputStdin {
		cmd.Stdin = strings.NewReader(data.Input)
	}
	id := answer.NewID()
	stdout := &stdoutWriter{max: r.s.MaxOutputBytes, fail: fail}
	if emit != nil {
		stdout.stream = answer.NewStream(emit, id, artifactName)
	}
	stderr := tail.Buffer{Max: stderrTailBytes}

	ap, err := r.claim(ctx, req.TaskID, req.Attempt)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	// Standard output and error go through pipes of our own, read by
	// outputPipe, not through os/exec's copying: os/exec closes its pipes
	// WaitDelay after the command's exit whatever they still hold, and a
	// slow subscriber (emit) holds up the reading. See outputPipe.
	var pipes [2]struct{ r, w *os.File }
	for i := range pipes {
		if pipes[i].r, pipes[i].w, err = os.Pipe(); err != nil {
			for _, p := range pipes[:i] {
				p.r.Close()
				p.w.Close()
			}
			r.release(req.TaskID, ap)
			return nil, fmt.Errorf("command %s: output pipe: %w", name, err)
		}
	}
	cmd.Stdout, cmd.Stderr = pipes[0].w, pipes[1].w
	group, err := r.procs.Start(cmd, procgroup.Label{Kind: Type, Agent: req.Agent, TaskID: req.TaskID, Attempt: req.Attempt})
	for _, p := range pipes {
		p.w.Close() // the command has its own copies
	}
	if err != nil {
		for _, p := range pipes {
			p.r.Close()
		}
		r.release(req.TaskID, ap)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("command %s: %w", name, ctxErr)
		}
		if errors.Is(err, procgroup.ErrRecord) {
			return nil, fmt.Errorf("command %s: %w", name, err)
		}
		return nil, startError(name, err)
	}
	out := []*outputPipe{readOutput(pipes[0].r, stdout), readOutput(pipes[1].r, &stderr)}
	if afterStart != nil {
		afterStart()
	}
	r.mu.Lock()
	ap.pgid = group.Pgid
	close(ap.started)
	closed := r.closed
	r.mu.Unlock()
	if closed {
		_ = procgroup.Signal(group.Pgid, syscall.SIGKILL)
	}
	waitErr := cmd.Wait()
	// The command has exited. What it started may still hold its output
	// open: it gets kill_grace to finish (none when the attempt has failed
	// already, or when standard input used it up), then whatever the
	// command left running in its group goes, before the attempt counts
	// as over. Only then is the output read to its end: everything written
	// to it by then, however long the reading takes.
	grace := r.s.KillGrace
	if runCtx.Err() != nil || errors.Is(waitErr, osexec.ErrWaitDelay) {
		grace = 0
	}
	waitOutput(runCtx, grace, out...)
	gerr := group.Done(context.WithoutCancel(ctx))
	readErr := out[0].finish()
	_ = out[1].finish() // standard error is only a tail for messages
	r.release(req.TaskID, ap)
	if gerr != nil {
		return nil, fmt.Errorf("command %s: %w", name, gerr)
	}

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errTimeout):
		return nil, fmt.Errorf("command %s: timed out after %s: %w", name, r.s.Timeout, context.DeadlineExceeded)
	case cause != nil:
		// The output went over the limit, or a chunk could not be emitted.
		return nil, fmt.Errorf("command %s: %w", name, cause)
	}
	var exit *osexec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		return nil, r.exitError(name, exit, stderr.String())
	case waitErr != nil && !errors.Is(waitErr, osexec.ErrWaitDelay):
		// ErrWaitDelay: the command succeeded but something it started
		// kept its standard input open; it has just been killed.
		return nil, fmt.Errorf("command %s: %w", name, waitErr)
	}
	if readErr != nil {
		return nil, fmt.Errorf("command %s: read standard output: %w", name, readErr)
	}
	if err := stdout.flush(); err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	return r.result(id, name, stdout.buf.Bytes())
}

var errTimeout = errors.New("timeout")

func (r *Runtime) environ() []string {
	if !r.inherit {
		return r.env
	}
	if len(r.env) == 0 {
		return nil // inherit as is
	}
	// Later entries win in os/exec, so Env overrides the inherited values.
	return append(os.Environ(), r.env...)
}

func (r *Runtime) result(id, name string, out []byte) (*task.Result, error) {
	if r.s.Output == OutputText {
		return answer.Text(id, artifactName, strings.TrimRight(string(out), "\r\n")), nil
	}
	doc, err := answer.Decode(out)
	if err != nil {
		return nil, fmt.Errorf("command %s: output: %w", name, err)
	}
	v, ok := r.answer.Lookup(doc)
	if !ok {
		return nil, fmt.Errorf("command %s: output has no value at answer pointer %q", name, r.answer)
	}
	res, err := answer.FromJSON(id, artifactName, doc, v, r.ask)
	if err != nil {
		return nil, fmt.Errorf("command %s: output: %w", name, err)
	}
	return res, nil
}

func (r *Runtime) exitError(name string, exit *osexec.ExitError, stderr string) error {
	var msg string
	code := exit.ExitCode()
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		msg = fmt.Sprintf("command %s was killed by signal %s", name, ws.Signal())
	} else {
		msg = fmt.Sprintf("command %s exited with code %d", name, code)
	}
	if stderr != "" {
		msg += ": " + stderr
	}
	var err error = &exitError{msg: msg, err: exit}
	if slices.Contains(r.s.PermanentExitCodes, code) {
		return task.Permanent(err)
	}
	return err
}

// exitError reports a failed command with the end of its standard error,
// keeping the *os/exec.ExitError for errors.As.
type exitError struct {
	msg string
	err *osexec.ExitError
}

func (e *exitError) Error() string { return e.msg }
func (e *exitError) Unwrap() error { return e.err }

// startError classifies a failure to start: a missing or unusable program
// stays missing on retry.
func startError(name string, err error) error {
	err = fmt.Errorf("command %s cannot start: %w", name, err)
	for _, perm := range []error{osexec.ErrNotFound, fs.ErrNotExist, fs.ErrPermission, syscall.ENOEXEC, syscall.ENOTDIR, syscall.E2BIG} {
		if errors.Is(err, perm) {
			return task.Permanent(err)
		}
	}
	return err
}

// stdoutWriter collects standard output up to a limit and, when streaming,
// emits each complete line as a chunk. The goroutine of an outputPipe
// calls Write, and run reads the buffer once that goroutine is done.
type stdoutWriter struct {
	buf    bytes.Buffer
	max    int
	stream *answer.Stream
	sent   int // bytes of buf already emitted
	fail   context.CancelCauseFunc
	err    error
}

func (w *stdoutWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.buf.Len()+len(p) > w.max {
		return 0, w.stop(task.Permanent(fmt.Errorf("output exceeds max_output_bytes (%d bytes)", w.max)))
	}
	w.buf.Write(p)
	if w.stream == nil {
		return len(p), nil
	}
	b := w.buf.Bytes()
	for {
		i := bytes.IndexByte(b[w.sent:], '\n')
		if i < 0 {
			return len(p), nil
		}
		end := w.sent + i + 1
		if err := w.stream.Write(string(b[w.sent:end])); err != nil {
			return 0, w.stop(err)
		}
		w.sent = end
	}
}

// stop ends the attempt with err: the command is killed and Write refuses
// further output.
func (w *stdoutWriter) stop(err error) error {
	w.err = err
	w.fail(err)
	return err
}

// flush emits what remains after the last newline and closes the artifact.
func (w *stdoutWriter) flush() error {
	if w.stream == nil {
		return nil
	}
	if err := w.stream.Write(string(w.buf.Bytes()[w.sent:])); err != nil {
		return err
	}
	return w.stream.Close()
}
