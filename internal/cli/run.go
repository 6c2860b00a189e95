package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/telemetry"
	"github.com/pactum/pactum/internal/version"
	"github.com/pactum/pactum/task"
)

func newContractRunCmd() *cobra.Command {
	var (
		cf      configFlags
		actor   string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   `run FILE "input"`,
		Short: "Run a multi-step contract on the configured agents and show each step live",
		Long: `Run assembles a pactum node in this process from the configuration (its
store, its agents, its contracts), adds the contract FILE to the contracts
it serves when it is not one of them, and runs the contract on the input as
a parent task whose children are its steps: each on its agent, behind the
step's own gate, in dependsOn order, independent steps in parallel.

Each step is shown as it goes: when it starts, then passed (with its checks
and timing) or failed (with the assertion that failed, or what blocked it).
The run's verified results are printed at the end. The run is an ordinary
task in the store: 'pactum tasks get ID' shows it and its steps afterwards.

Exit status: 0 when the run succeeded, 1 when it failed.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			file, input := args[0], args[1]
			c, _, err := contract.Load(file)
			if err != nil {
				return fmt.Errorf("contract %s: %w", file, err)
			}
			cfg, baseDir, err := cf.load()
			if err != nil {
				return err
			}
			abs, err := filepath.Abs(file)
			if err != nil {
				return err
			}
			served := false
			for i := range cfg.Contracts {
				if p, err := filepath.Abs(cfg.ContractFile(i, baseDir).File); err == nil && p == abs {
					served = true
				}
			}
			if !served {
				cfg.AddContract(abs)
			}
			srv, stop, err := startNode(ctx, cmd, cfg, baseDir)
			if err != nil {
				return err
			}
			defer stop()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return runContract(ctx, cmd.OutOrStdout(), srv.Coordinator(), c, input, actor)
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&actor, "actor", "cli", "the actor the run is submitted as")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up waiting after this long (default: wait until the run ends)")
	return cmd
}

// startNode builds and starts a node of cfg in this process, logging
// errors only, for a command that runs something on it and exits (contract
// run, run); stop drains it for up to 30s.
// startConfigured loads the configuration cf names and starts a node on
// it in this process (startNode).
func startConfigured(ctx context.Context, cmd *cobra.Command, cf *configFlags) (srv *node.Server, cfg *config.Config, baseDir string, stop func(), err error) {
	cfg, baseDir, err = cf.load()
	if err != nil {
		return nil, nil, "", nil, err
	}
	srv, stop, err = startNode(ctx, cmd, cfg, baseDir)
	return srv, cfg, baseDir, stop, err
}

func startNode(ctx context.Context, cmd *cobra.Command, cfg *config.Config, baseDir string) (srv *node.Server, stop func(), err error) {
	log, err := newLogger(cmd.ErrOrStderr(), cfg.Log.Format, "error")
	if err != nil {
		return nil, nil, err
	}
	stopTracing, err := telemetry.Setup(ctx, version.String(), log)
	if err != nil {
		return nil, nil, err
	}
	srv, err = node.New(ctx, cfg, baseDir, nil, log)
	if err != nil {
		flushTracing(stopTracing, log)
		return nil, nil, err
	}
	if err := srv.Start(ctx); err != nil {
		_ = srv.Stop(context.Background())
		flushTracing(stopTracing, log)
		return nil, nil, err
	}
	return srv, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Stop(sctx)
		flushTracing(stopTracing, log)
	}, nil
}

// runContract submits a run of c and prints its steps as they go.
func runContract(ctx context.Context, out io.Writer, coord *task.Coordinator, c *contract.AgentContract, input, actor string) error {
	sub, err := coord.Submit(ctx, task.SubmitRequest{Envelope: task.Envelope{
		Actor: actor, Action: c.ID,
		Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(input)}},
	}})
	if err != nil {
		return fmt.Errorf("submit the run: %w", err)
	}
	run := sub.Task
	w := &stepWriter{out: out, width: 4}
	for _, s := range c.Steps {
		w.width = max(w.width, len(s.ID))
	}
	w.printf("run %s of contract %s (%s)\n", run.ID, c.ID, plural(len(c.Steps), "step", "steps"))
	final, err := followRun(ctx, coord, run.ID, w,
		func(k *task.Task) { w.step(k.Envelope.Step, "started", fmt.Sprintf("task %s on %s", k.ID, k.Agent)) },
		func(k *task.Task) { w.follow(ctx, coord, k) })
	if err != nil {
		return err
	}
	if final.State != task.StateSucceeded {
		return w.runFailed(final)
	}
	for _, a := range final.Artifacts {
		if a.Name == contract.RunArtifact && len(a.Parts) > 0 {
			w.printf("%s\n", a.Parts[0].Text)
		}
	}
	w.printf("run %s succeeded\n", final.ID)
	return nil
}

// followRun follows the parent task id until it settles: each child is
// announced by started as soon as it shows and then followed by follow in
// a goroutine of its own, all of which end before followRun returns the
// settled parent, read back whole.
func followRun(ctx context.Context, coord *task.Coordinator, id string, w *stepWriter, started, follow func(k *task.Task)) (*task.Task, error) {
	var wg sync.WaitGroup
	followed := map[string]chan struct{}{} // closed when the child's follow has printed its end
	// watch starts following each child not followed yet. A child that
	// has settled gets its last line printed before a new child is
	// announced: a step spawned because another one passed is shown
	// starting after that one's "passed", whichever goroutine ran first.
	watch := func() {
		kids, err := coord.Children(ctx, id, 0, false)
		if err != nil {
			w.printf("read the run's steps: %v\n", err)
			return
		}
		fresh := slices.ContainsFunc(kids, func(k *task.Task) bool { return followed[k.ID] == nil })
		for _, k := range kids {
			if done := followed[k.ID]; done != nil && fresh && k.State.Terminal() {
				select {
				case <-done:
				case <-ctx.Done():
				}
			}
		}
		for _, k := range kids {
			if followed[k.ID] != nil {
				continue
			}
			done := make(chan struct{})
			followed[k.ID] = done
			started(k)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done)
				follow(k)
			}()
		}
	}
	var final *task.Task
	for it, err := range coord.Follow(ctx, id) {
		if err != nil {
			wg.Wait()
			return nil, fmt.Errorf("follow the run %s: %w", id, err)
		}
		cur := it.Task
		if it.Kind == task.FollowEvent {
			cur = it.Event.Task
		}
		if cur == nil {
			continue
		}
		if cur.Children > len(followed) {
			watch()
		}
		if it.Settled() {
			final = cur
		}
	}
	if final != nil {
		watch() // a step whose spawn the events did not show
	}
	wg.Wait()
	if final == nil {
		return nil, fmt.Errorf("the run %s did not end", id)
	}
	return coord.Get(ctx, id, 0)
}

// stepWriter prints the lines of a run from several goroutines.
type stepWriter struct {
	mu    sync.Mutex
	out   io.Writer
	width int
	// failed are the steps whose line said they did not pass, and why.
	failed []string
}

// stepFailed prints the line of a step that did not pass and remembers
// that its reason has been said.
func (w *stepWriter) stepFailed(id, what, detail string) {
	w.step(id, what, detail)
	w.mu.Lock()
	w.failed = append(w.failed, id)
	w.mu.Unlock()
}

// runFailed is the error of a run that did not succeed. When the lines of
// its steps said why, it does not say it again (the failure is printed
// once); otherwise it gives the run's reason.
func (w *stepWriter) runFailed(final *task.Task) error {
	w.mu.Lock()
	failed := slices.Clone(w.failed)
	w.mu.Unlock()
	if len(failed) == 0 {
		return fmt.Errorf("run %s %s: %s", final.ID, final.State, final.Reason)
	}
	return fmt.Errorf("run %s %s at step %s (why: above; all of it: pactum tasks get %s)", final.ID, final.State, strings.Join(failed, ", "), final.ID)
}

func (w *stepWriter) printf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.out, format, args...)
}

func (w *stepWriter) step(id, what, detail string) {
	w.printf("  %-*s  %-7s  %s\n", w.width, id, what, detail)
}

// follow follows a step's task until it settles and prints how it ended,
// with its verified result.
func (w *stepWriter) follow(ctx context.Context, coord *task.Coordinator, k *task.Task) {
	id := k.Envelope.Step
	var last *task.Task
	var retries retryWatch
	for it, err := range coord.Follow(ctx, k.ID) {
		if err != nil {
			w.step(id, "?", err.Error())
			return
		}
		if t := it.Task; t != nil {
			last = t
		} else if it.Kind == task.FollowEvent && it.Event.Task != nil {
			last = it.Event.Task
		} else {
			continue
		}
		if line, ok := retries.seen(last); ok {
			w.step(id, "retried", line)
		}
	}
	if last == nil {
		return
	}
	recs, err := coord.Timeline(ctx, k.ID)
	if err != nil {
		w.step(id, "?", err.Error())
		return
	}
	vr, _ := contract.Newest(recs)
	took := last.UpdatedAt.Sub(last.CreatedAt).Round(time.Millisecond)
	switch {
	case last.State == task.StateSucceeded && vr != nil && vr.Verification.Passed:
		t := vr.Verification.Timing
		w.step(id, "passed", fmt.Sprintf("%s in %s (pre-gate %.1f ms, agent %.1f ms, post-gate %.1f ms)",
			plural(len(vr.Verification.PostGate.Results), "check", "checks"), took, t.PreGateMs, t.ExecutionMs, t.PostGateMs))
	case last.State == task.StateSucceeded:
		detail := "not checked"
		if vr != nil {
			detail = "delivered despite a violation: " + failedChecks(vr)
		}
		w.step(id, "passed", fmt.Sprintf("%s, in %s", detail, took))
	case last.State == task.StateInputRequired:
		w.step(id, "asks", fmt.Sprintf("waits for an answer (task %s): %s", k.ID, last.Reason))
	case vr != nil && !vr.Verification.PreGate.Passed:
		w.stepFailed(id, "blocked", strings.Join(vr.Verification.PreGate.BlockedBy, "; "))
	case vr != nil && vr.Executed && vr.Verification.PostGate.Results != nil && len(vr.Verification.PostGate.Results) > 0:
		w.stepFailed(id, "failed", fmt.Sprintf("%s, in %s", failedChecks(vr), took))
	case last.State.Terminal() && last.State != task.StateSucceeded:
		w.stepFailed(id, string(last.State), reasonWithCode(last))
	default:
		w.step(id, string(last.State), last.Reason)
	}
}

// reasonWithCode is t's reason after its error code: "agent_failed:
// command sh exited with code 3".
func reasonWithCode(t *task.Task) string {
	if t.ErrorCode == "" {
		return t.Reason
	}
	return string(t.ErrorCode) + ": " + t.Reason
}

// retryWatch notices, in the states of a step's task as it is followed,
// each retry: the task queued again after an attempt of its turn failed
// (an agent's error, a contract violation under onViolation: retry, a
// handoff that failed its gate).
type retryWatch struct{ attempt int }

// seen returns the line that says t was just retried and why, the first
// time t shows queued after a given attempt.
func (r *retryWatch) seen(t *task.Task) (string, bool) {
	if t.State != task.StateQueued || t.Attempt <= t.TurnStart || t.Attempt <= r.attempt {
		return "", false
	}
	r.attempt = t.Attempt
	return fmt.Sprintf("attempt %d: %s", t.Attempt, progress(t.Reason, 300, t.ID)), true
}

// failedChecks names the failed checks of vr: each assertion's message and
// the check's reason.
func failedChecks(vr *contract.VerifiedResult) string {
	var parts []string
	for _, r := range vr.Verification.PostGate.Results {
		if r.Passed {
			continue
		}
		s := r.Message
		if s == "" {
			s = r.Check + " check"
		}
		if r.Reason != "" {
			s += " (" + r.Reason + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return vr.Error
	}
	return strings.Join(parts, "; ")
}

// flushTracing sends the spans still buffered (tracing's shutdown from
// telemetry.Setup), for up to five seconds, logging a failure.
func flushTracing(stop func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("tracing: spans lost at shutdown", "err", err)
	}
}
