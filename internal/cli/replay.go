package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/task"
)

// defaultReplayTimeout bounds the wait for a replay to settle.
const defaultReplayTimeout = 10 * time.Minute

// replayOptions are the flags `tasks replay` and `replay` share.
type replayOptions struct {
	agent        string
	contractPath string
	actor        string
	step         string
	workDir      string
	timeout      time.Duration
	wholeRun     bool
}

func (o *replayOptions) register(cmd *cobra.Command, agentUse string) {
	f := cmd.Flags()
	f.StringVar(&o.agent, "agent", "", agentUse)
	f.StringVar(&o.contractPath, "contract", "", "judge both answers offline by this contract file (default: the verdicts their gates recorded)")
	f.StringVar(&o.actor, "actor", "", "the actor the replay is submitted as (default: the original's, else cli)")
	f.StringVar(&o.step, "step", "", "the step of --contract a task on its own ran (default: its own step, else the contract's only step)")
	f.StringVar(&o.workDir, "workdir", "", "directory file resources are read from when judging by --contract (default: the current directory)")
	f.DurationVar(&o.timeout, "timeout", defaultReplayTimeout, "give up waiting for a replay to end after this long")
}

// loadJudge loads --contract, nil without it.
func (o *replayOptions) loadJudge() (*contract.Compiled, error) {
	if o.contractPath == "" {
		return nil, nil
	}
	_, c, err := contract.LoadWith(o.contractPath, contract.ValidateOptions{})
	if err != nil {
		return nil, fmt.Errorf("contract %s:\n%w", o.contractPath, indentErr(err))
	}
	return c, nil
}

func newTasksReplayCmd(cf *configFlags, asJSON *bool) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay TASK_ID [--agent NAME] [--contract F] [--whole-run]",
		Short: "Submit a recorded task's request again, to the same or another agent, and compare the two",
		Long: `Replay submits the request of a recorded task again as a new task: its
input message with all its parts and its envelope (matter, resource,
policy and approval references, metadata), with a new idempotency key and
a new context, linked to the original (envelope.replayOf, shown by tasks
get). It runs on a node assembled in this process from the configuration,
on its store, as pactum contract run does: the replay is an ordinary task,
admitted, audited and visible to its actor only (the original's, or
--actor). It waits for the replay to end (--timeout), then compares the
two: their states, their verdicts step by step with each check whose
outcome changed, and their answers as a unified line diff (data parts as
indented canonical JSON).

--agent replays on another agent (default: the original's). A step of a
multi-step run (a child task) is replayed alone: its agent (the step's,
from the contract its gate recorded, which the configuration serves, or
--contract) runs on the input the run handed it, and no other step runs;
its answer is judged by the step's contract offline. --whole-run replays
the run the step belongs to instead: the run's request, every step again.
A run's own id replays the whole run.

--contract F judges both answers offline by F (as pactum verify does), so
an agent without a live gate can be compared; without it the verdicts
their gates recorded are compared.

Exit status: 0 when nothing regressed, 1 on a regression (a step whose
verdict passed and now does not; a task or step that succeeded and now
does not), 2 when the task cannot be replayed or compared.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// namingStore names the store in a not found.
			return withExitCode(2, replayTask(cmd, cf, &o, args[0], *asJSON))
		},
	}
	o.register(cmd, "the agent to replay on (default: the original's; for a step of a run, the step's agent)")
	cmd.Flags().BoolVar(&o.wholeRun, "whole-run", false, "for a step of a run: replay the whole run (every step) rather than this step alone")
	return cmd
}

// replayTask is `tasks replay ID`.
func replayTask(cmd *cobra.Command, cf *configFlags, o *replayOptions, id string, asJSON bool) error {
	ctx := cmd.Context()
	judge, err := o.loadJudge()
	if err != nil {
		return err
	}
	srv, cfg, baseDir, stop, err := startConfigured(ctx, cmd, cf)
	if err != nil {
		return err
	}
	defer stop()
	coord := srv.Coordinator()
	t, err := coord.Get(ctx, id, 0)
	if err != nil {
		return err
	}
	for o.wholeRun && t.Envelope.ParentTaskID != "" {
		if t, err = coord.Get(ctx, t.Envelope.ParentTaskID, 0); err != nil {
			return err
		}
	}
	orig, err := trace.Export(ctx, coord, t.ID, time.Now())
	if err != nil {
		return err
	}
	r := &replayer{coord: coord, opts: o, judge: judge, cfg: cfg, baseDir: baseDir}
	res, err := r.replay(ctx, orig)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if err := printJSON(out, res.cmp); err != nil {
			return err
		}
	} else {
		printComparison(out, res)
	}
	if n := len(res.cmp.Regressions); n > 0 {
		return &exitErr{code: 1, err: fmt.Errorf("replay %s of task %s: %s", res.cmp.Replay.TaskID, res.cmp.Original.TaskID, plural(n, "regression", "regressions"))}
	}
	return nil
}

func newReplayCmd() *cobra.Command {
	var (
		o         replayOptions
		tracePath string
		asJSON    bool
	)
	cf := &configFlags{local: true}
	cmd := &cobra.Command{
		Use:   "replay --trace FILE|DIR --agent NAME [--contract F]",
		Short: "Replay recorded traces on an agent and report each regression: regression testing on recorded traffic",
		Long: `Replay reads traces (pactum tasks export; DIR: every *.json file in it, in
name order), submits each trace's request (its task's input message and
envelope, as pactum tasks replay does) to agent NAME as a new task on a
node assembled in this process from the configuration, waits for it to
end (--timeout each) and compares it with the recorded task: states,
verdicts step by step, answers as a unified line diff. It prints a table
per trace, then a summary line.

A trace of a multi-step run replayed on the run's agent (the contract's id)
runs the whole run again, step by step. The replay is linked to the
recorded task (envelope.replayOf) when that task is in the store.

--contract F judges both answers offline by F (as pactum verify does);
without it the verdicts their gates recorded are compared.

Exit status: 0 when no trace regressed, 1 when any did (a step whose
verdict passed and now does not; a task or step that succeeded and now
does not), 2 when a trace cannot be read or replayed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withExitCode(2, replayTraces(cmd, cf, &o, tracePath, asJSON))
		},
	}
	cmd.Flags().StringVar(&tracePath, "trace", "", "a trace file, or a directory of them (*.json)")
	o.register(cmd, "the agent to replay each trace on (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparisons as JSON")
	cf.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("agent", completeAgents(cf))
	return cmd
}

// tracedReplay is one trace's replay in `pactum replay --json`.
type tracedReplay struct {
	Trace      string            `json:"trace"`
	Comparison *trace.Comparison `json:"comparison"`
}

// replayTraces is `pactum replay`.
func replayTraces(cmd *cobra.Command, cf *configFlags, o *replayOptions, path string, asJSON bool) error {
	if path == "" || o.agent == "" {
		return errors.New("replay needs --trace FILE|DIR and --agent NAME")
	}
	judge, err := o.loadJudge()
	if err != nil {
		return err
	}
	files, err := traceFiles(path)
	if err != nil {
		return err
	}
	traces := make([]*trace.Trace, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("trace: %w", err)
		}
		if traces[i], err = trace.Decode(data); err != nil {
			return fmt.Errorf("trace %s:\n%w", f, indentErr(err))
		}
	}
	ctx := cmd.Context()
	srv, cfg, baseDir, stop, err := startConfigured(ctx, cmd, cf)
	if err != nil {
		return err
	}
	defer stop()
	r := &replayer{coord: srv.Coordinator(), opts: o, judge: judge, cfg: cfg, baseDir: baseDir}
	out := cmd.OutOrStdout()
	var all []tracedReplay
	var regressed []string
	for i, tr := range traces {
		res, err := r.replay(ctx, tr)
		if err != nil {
			return fmt.Errorf("trace %s: %w", files[i], err)
		}
		all = append(all, tracedReplay{Trace: files[i], Comparison: res.cmp})
		if len(res.cmp.Regressions) > 0 {
			regressed = append(regressed, files[i])
		}
		if !asJSON {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "trace %s\n", files[i])
			printComparison(out, res)
		}
	}
	if asJSON {
		if err := printJSON(out, all); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "\nreplayed %s on agent %s: %s\n", plural(len(files), "trace", "traces"), o.agent, replaySummary(len(files), regressed))
	}
	if len(regressed) > 0 {
		return &exitErr{code: 1, err: fmt.Errorf("%s regressed on agent %s: %s", plural(len(regressed), "trace", "traces"), o.agent, strings.Join(regressed, ", "))}
	}
	return nil
}

// replaySummary says how many of n replays regressed, and which.
func replaySummary(n int, regressed []string) string {
	if len(regressed) == 0 {
		return "no regression"
	}
	return fmt.Sprintf("%d with a regression (%s), %d without", len(regressed), strings.Join(regressed, ", "), n-len(regressed))
}

// traceFiles returns path, or the *.json files in directory path in name
// order.
func traceFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("trace: no *.json file in directory %s", path)
	}
	slices.Sort(files)
	return files, nil
}

// replayer submits recorded requests again and compares the answers.
type replayer struct {
	coord   *task.Coordinator
	opts    *replayOptions
	judge   *contract.Compiled // --contract; nil: the recorded verdicts
	cfg     *config.Config
	baseDir string
}

// replayed is one replay: its comparison with the original, and how it
// was run.
type replayed struct {
	cmp   *trace.Comparison
	actor string
}

// replay submits the request of orig's task again, waits for the new task
// to settle, and compares the two.
func (r *replayer) replay(ctx context.Context, orig *trace.Trace) (*replayed, error) {
	t := orig.Task
	judge := r.judge
	agentName := cmp.Or(r.opts.agent, t.Agent)
	step := r.opts.step
	if t.Envelope.ParentTaskID != "" {
		// A step of a run, alone: on the step's agent (its virtual agent
		// runs only inside its run), judged by the step's contract.
		step = cmp.Or(step, t.Envelope.Step)
		if judge == nil {
			judge = r.servedContract(orig)
		}
		if r.opts.agent == "" {
			s, ok := stepOf(judge, step)
			if !ok || s.Step().Agent == "" {
				return nil, fmt.Errorf("task %s ran step %s of run %s, whose agent is not known here: name the agent with --agent NAME or the contract with --contract FILE, or replay the whole run with --whole-run", t.ID, step, t.Envelope.ParentTaskID)
			}
			agentName = s.Step().Agent
		}
	}
	env := replayEnvelope(t, r.opts.actor)
	if _, err := r.coord.Get(ctx, t.ID, 0); err != nil {
		if task.ErrorCode(err) != task.CodeNotFound {
			return nil, err
		}
		env.ReplayOf = "" // a trace of a task this store does not hold
	}
	sub, err := r.coord.Submit(ctx, task.SubmitRequest{Agent: agentName, Envelope: env})
	if err != nil {
		return nil, fmt.Errorf("submit the replay of task %s to agent %s: %w", t.ID, agentName, err)
	}
	id := sub.Task.ID
	wctx, cancel := context.WithTimeout(ctx, r.opts.timeout)
	defer cancel()
	if err := r.settle(wctx, id); err != nil {
		if wctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("the replay %s of task %s did not end within %s; it goes on (pactum tasks watch %s)", id, t.ID, r.opts.timeout, id)
		}
		return nil, fmt.Errorf("wait for the replay %s: %w", id, err)
	}
	again, err := trace.Export(ctx, r.coord, id, time.Now())
	if err != nil {
		return nil, err
	}
	c, err := trace.Compare(ctx, orig, again, trace.CompareOptions{Contract: judge, Step: step, WorkDir: r.opts.workDir})
	if err != nil {
		return nil, err
	}
	return &replayed{cmp: c, actor: env.Actor}, nil
}

// errStepWaits ends the wait for a run one of whose steps waits for
// input: the run cannot end before someone answers.
var errStepWaits = errors.New("a step waits for input")

// settle waits until the task id ends or waits for input, or, for a run,
// until one of its steps waits for input (a step whose contract
// escalates): the run would wait for an answer, and the comparison shows
// that step where it stopped. It follows the run as contract run does
// (followRun), printing nothing.
func (r *replayer) settle(ctx context.Context, id string) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := &stepWriter{out: io.Discard}
	_, err := followRun(ctx, r.coord, id, w, func(*task.Task) {}, func(k *task.Task) {
		if t, err := r.coord.Wait(ctx, k.ID); err == nil && t.State == task.StateInputRequired {
			cancel(errStepWaits)
		}
	})
	if errors.Is(context.Cause(ctx), errStepWaits) {
		return nil
	}
	return err
}

// stepOf returns step id of c (false when c is nil or lacks it).
func stepOf(c *contract.Compiled, id string) (*contract.CompiledStep, bool) {
	if c == nil {
		return nil, false
	}
	return c.Step(id)
}

// servedContract returns the contract the configuration serves under
// which the gate of orig's task recorded its verdict (same id and
// digest), or nil.
func (r *replayer) servedContract(orig *trace.Trace) *contract.Compiled {
	vr, err := contract.Newest(orig.Timeline)
	if err != nil || vr == nil || vr.Contract == "" {
		return nil
	}
	c, err := findContract(r.cfg, r.baseDir, vr.Contract, nil)
	if err != nil {
		return nil
	}
	compiled, err := contract.Compile(c)
	if err != nil || (vr.ContractDigest != "" && compiled.Digest() != vr.ContractDigest) {
		return nil
	}
	return compiled
}

// replayEnvelope is the envelope that submits the request of t again:
// its input message (all its parts, its metadata) with a new id (the
// default idempotency key: a new one) and the envelope's matter,
// resource, policy and approval references and metadata, in a new
// context, under actor (default t's, else "cli", as contract run
// submits), linked to t. The agent is named by
// the submission, not by t's action.
func replayEnvelope(t *task.Task, actor string) task.Envelope {
	e := t.Envelope
	in := e.Input
	in.ID, in.TaskID, in.ContextID = task.NewID(), "", ""
	in.Role = task.RoleUser
	return task.Envelope{
		Actor: cmp.Or(actor, e.Actor, "cli"), Matter: e.Matter, Resource: e.Resource,
		PolicyRef: e.PolicyRef, ApprovalRef: e.ApprovalRef, Metadata: e.Metadata,
		Input: in, ReplayOf: t.ID,
	}
}

// printComparison prints a replay's comparison: a line naming both
// tasks, a table of the states and of the verdicts step by step (each
// changed check under its step), the answers that differ as unified
// diffs, then the regressions or that there are none.
func printComparison(out io.Writer, res *replayed) {
	c := res.cmp
	fmt.Fprintf(out, "replay %s of task %s (agent %s → %s, actor %s; verdicts: %s)\n",
		c.Replay.TaskID, c.Original.TaskID, c.Original.Agent, c.Replay.Agent, res.actor, c.JudgedBy)
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\tORIGINAL\tREPLAY\t")
	fmt.Fprintf(w, "task\t%s\t%s\t%s\n", c.Original.State, c.Replay.State, stateChange(c))
	for _, s := range c.Steps {
		fmt.Fprintf(w, "step %s\t%s\t%s\t%s\n", s.Step, stepVerdict(s.Original), stepVerdict(s.Replay), verdictChange(s))
	}
	w.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line != "" {
			fmt.Fprintln(out, strings.TrimRight(line, " \n"))
		}
	}
	for _, s := range c.Steps {
		for _, ch := range s.Checks {
			what := "now fails"
			if ch.Now {
				what = "now passes"
			}
			line := fmt.Sprintf("  %-10s [%s %s] step %s: %s", what, ch.Type, ch.Check, s.Step, ch.Message)
			if ch.Reason != "" && !ch.Now {
				line += ": " + ch.Reason
			}
			fmt.Fprintln(out, line)
		}
	}
	for _, a := range c.Answers {
		if a.Same {
			continue
		}
		what := "answer"
		if a.Step != "" {
			what = "answer of step " + a.Step
		}
		fmt.Fprintf(out, "%s differs:\n%s", what, a.Diff)
	}
	if len(c.Regressions) == 0 {
		fmt.Fprintf(out, "no regression (%s)\n", sameness(c))
		return
	}
	for _, r := range c.Regressions {
		fmt.Fprintf(out, "regression: %s\n", r)
	}
}

// stepVerdict is a step's verdict in the table: its status, and the
// number of checks a gate ran.
func stepVerdict(s trace.StepReport) string {
	v := strings.ReplaceAll(string(s.Status), "_", " ")
	if vr := s.VerifiedResult; vr != nil {
		n := len(vr.Verification.PreGate.Results) + len(vr.Verification.PostGate.Results)
		v += " (" + plural(n, "check", "checks") + ")"
	}
	return v
}

// stateChange is the last column of the task's row.
func stateChange(c *trace.Comparison) string {
	switch {
	case c.Original.State == c.Replay.State:
		return ""
	case c.Original.State == task.StateSucceeded:
		return "regression"
	}
	return "changed"
}

// verdictChange is the last column of a step's row.
func verdictChange(s trace.StepChange) string {
	switch {
	case s.Regression:
		return "regression"
	case s.Original.Status != s.Replay.Status || len(s.Checks) > 0:
		return "changed"
	}
	return ""
}

// sameness says what a comparison without regression found alike.
func sameness(c *trace.Comparison) string {
	var differ []string
	for _, a := range c.Answers {
		if !a.Same {
			differ = append(differ, cmp.Or(a.Step, "the task"))
		}
	}
	if len(differ) == 0 {
		return "same answers"
	}
	return "answers differ: " + strings.Join(differ, ", ")
}
