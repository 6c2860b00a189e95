package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// Exit statuses of pactum run: the report's recommendation.
const (
	exitNeedsWork = 1
	exitBlocked   = 2
)

func newRunCmd() *cobra.Command {
	var (
		cf      configFlags
		agents  []string
		args    string
		actor   string
		timeout time.Duration
		run     func(cmd *cobra.Command, name, desc string) error
	)
	cmd := &cobra.Command{
		Use:   `run WORKFLOW "task description"`,
		Short: "Run a workflow: agents in sequence and in parallel, validated handoffs, one final report",
		Long: `Run assembles a pactum node in this process from the configuration (its
store, its agents, its definitions and workflows) and runs the workflow on
the task description as a parent task whose children are its agents: each
gets the description and every prior handoff, and must answer with a
handoff that the step's gate validates (a malformed one is retried with
the problems fed back, up to the agent's attempts).

Each agent is shown as it goes: started, handoff valid (or retried, with
why), and how long it took. The final report (INTEGRATION REPORT) is
printed at the end; 'pactum runs report RUN_ID' prints it again.

WORKFLOW is a built-in (feature, bugfix, refactor, security), a workflow
of the configuration, or custom with --agents a,b,c.

--arguments gives every agent of the run one more string: in its input
under "# Arguments" (after "# Task"), and as {{.Arguments}} in exec and
webhook templates. The run records it, so a restarted node keeps it.

Exit status: 0 when the report recommends SHIP, 1 for NEEDS WORK, 2 for
BLOCKED (or when the run could not run).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A run that could not run (or be followed): as BLOCKED.
			return withExitCode(exitBlocked, run(cmd, args[0], args[1]))
		},
	}
	run = func(cmd *cobra.Command, name, desc string) error {
		ctx := cmd.Context()
		if strings.TrimSpace(desc) == "" {
			return errors.New("the task description is empty")
		}
		if name == workflow.Custom && len(agents) == 0 {
			return errors.New("workflow custom needs --agents a,b,c (the agents to run, in order)")
		}
		if name != workflow.Custom && len(agents) > 0 {
			return fmt.Errorf("--agents is for the custom workflow; %s has its own agents", name)
		}
		srv, _, _, stop, err := startConfigured(ctx, cmd, &cf)
		if err != nil {
			return err
		}
		defer stop()
		w, err := srv.Workflow(name, agents)
		if err != nil {
			return err
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		r, err := runWorkflow(ctx, cmd.OutOrStdout(), srv.Coordinator(), w, desc, args, actor)
		if err != nil {
			return err
		}
		return recommendationExit(r)
	}
	cf.register(cmd)
	cmd.Flags().StringSliceVar(&agents, "agents", nil, "the agents of a custom workflow, in order (a,b,c)")
	cmd.Flags().StringVar(&args, "arguments", "", "a string given to every agent of the run (its input's \"# Arguments\", {{.Arguments}} in templates)")
	cmd.Flags().StringVar(&actor, "actor", "cli", "the actor the run is submitted as")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up waiting after this long (default: wait until the run ends)")
	return cmd
}

// recommendationExit is pactum run's exit status for r.
func recommendationExit(r *workflow.Report) error {
	switch r.Recommendation {
	case workflow.Ship:
		return nil
	case workflow.NeedsWork:
		return exitErrorf(exitNeedsWork, "the report recommends %s", r.Recommendation)
	}
	return exitErrorf(exitBlocked, "the report recommends %s", r.Recommendation)
}

// runWorkflow submits a run of w with the arguments args ("" for none)
// and prints its agents as they go, then the report.
func runWorkflow(ctx context.Context, out io.Writer, coord *task.Coordinator, w *workflow.Workflow, desc, args, actor string) (*workflow.Report, error) {
	in := task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(desc)}}
	agents := w.Agents()
	if w.Name == workflow.Custom {
		in.Metadata = workflow.CustomInput(agents)
	}
	in.Metadata = workflow.WithArguments(in.Metadata, args)
	sub, err := coord.Submit(ctx, task.SubmitRequest{Envelope: task.Envelope{
		Actor: actor, Action: workflow.RunAgent(w.Name), Input: in,
	}})
	if err != nil {
		return nil, fmt.Errorf("submit the run: %w", err)
	}
	run := sub.Task
	sw := &stepWriter{out: out, width: 4}
	for _, a := range agents {
		sw.width = max(sw.width, len(a))
	}
	sw.printf("run %s of workflow %s: %s\n", run.ID, w.Name, strings.Join(agents, " -> "))
	final, err := followRun(ctx, coord, run.ID, sw,
		func(k *task.Task) { sw.step(k.Envelope.Step, "started", fmt.Sprintf("task %s", k.ID)) },
		func(k *task.Task) { followStep(ctx, sw, coord, k) })
	if err != nil {
		return nil, fmt.Errorf("%w (the run goes on: pactum runs report %s)", err, run.ID)
	}
	if final.State != task.StateSucceeded {
		return nil, &exitErr{code: exitBlocked, err: sw.runFailed(final)}
	}
	r, err := workflow.ReportOf(final)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, exitErrorf(exitBlocked, "run %s has no report", final.ID)
	}
	sw.printf("\n%s", r.Text())
	return r, nil
}

// followStep follows an agent's step until it settles, printing each
// retry (a handoff that failed its gate, or an attempt that failed) and
// how it ended.
func followStep(ctx context.Context, sw *stepWriter, coord *task.Coordinator, k *task.Task) {
	id := k.Envelope.Step
	var last *task.Task
	var retries retryWatch
	for it, err := range coord.Follow(ctx, k.ID) {
		if err != nil {
			sw.step(id, "?", err.Error())
			return
		}
		cur := it.Task
		if it.Kind == task.FollowEvent {
			cur = it.Event.Task
		}
		if cur == nil {
			continue
		}
		last = cur
		if line, ok := retries.seen(cur); ok {
			sw.step(id, "retried", line)
		}
	}
	if last == nil {
		return
	}
	took := last.UpdatedAt.Sub(last.CreatedAt).Round(time.Millisecond)
	switch last.State {
	case task.StateSucceeded:
		sw.step(id, "valid", fmt.Sprintf("handoff valid, %s, in %s", plural(last.Attempt, "attempt", "attempts"), took))
	case task.StateInputRequired:
		sw.step(id, string(last.State), fmt.Sprintf("%s (in %s)", last.Reason, took))
	default:
		sw.stepFailed(id, string(last.State), fmt.Sprintf("%s (in %s)", reasonWithCode(last), took))
	}
}

func exitErrorf(code int, format string, args ...any) error {
	return &exitErr{code: code, err: fmt.Errorf(format, args...)}
}

func newRunsCmd() *cobra.Command {
	var (
		cf     configFlags
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{Use: "runs", Short: "Inspect workflow runs and their reports"}
	cf.registerStore(cmd, "configuration file (for its store and workflows)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	list := &cobra.Command{
		Use: "list", Short: "List workflow runs, newest first, with their recommendation", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			cfg, _, err := cf.load()
			if err != nil {
				return err
			}
			c, done, err := openCore(cmd.Context(), &cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			names := []string{workflow.Custom}
			for _, w := range workflow.Builtins() {
				names = append(names, w.Name)
			}
			for _, w := range cfg.Workflows {
				names = append(names, w.Name)
			}
			slices.Sort(names)
			names = slices.Compact(names)
			var runs []*task.Task
			for _, n := range names {
				page, err := c.List(cmd.Context(), task.ListParams{Agent: workflow.RunAgent(n), PageSize: limit, IncludeArtifacts: true})
				if err != nil {
					return err
				}
				runs = append(runs, page.Tasks...)
			}
			slices.SortFunc(runs, func(a, b *task.Task) int { return b.CreatedAt.Compare(a.CreatedAt) })
			runs = runs[:min(len(runs), limit)]
			type row struct {
				ID             string                  `json:"id"`
				Workflow       string                  `json:"workflow"`
				State          task.State              `json:"state"`
				Recommendation workflow.Recommendation `json:"recommendation,omitempty"`
				Task           string                  `json:"task"`
				Created        time.Time               `json:"createdAt"`
			}
			rows := make([]row, 0, len(runs))
			for _, t := range runs {
				r := row{ID: t.ID, Workflow: strings.TrimPrefix(t.Agent, workflow.RunAgent("")), State: t.State,
					Task: workflow.Description(t.Envelope.Input), Created: t.CreatedAt}
				if rep, err := workflow.ReportOf(t); err == nil && rep != nil {
					r.Recommendation = rep.Recommendation
				}
				rows = append(rows, r)
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no workflow runs in %s\n", cf.storeName())
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATE\tRECOMMENDATION\tCREATED\tTASK")
			for _, r := range rows {
				rec := string(r.Recommendation)
				if rec == "" {
					rec = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Workflow, r.State, rec, r.Created.Format(time.RFC3339), short(r.Task, 60))
			}
			return tw.Flush()
		},
	}
	list.Flags().IntVar(&limit, "limit", 20, fmt.Sprintf("how many runs (1..%d)", task.MaxPageSize))
	report := &cobra.Command{
		Use: "report RUN_ID", Short: "Print a finished run's report (exit status as pactum run's)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), &cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			t, err := c.Get(cmd.Context(), args[0], 0)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(t.Agent, workflow.RunAgent("")) {
				return fmt.Errorf("task %s is not a workflow run (its agent is %s)", t.ID, t.Agent)
			}
			r, err := workflow.ReportOf(t)
			if err != nil {
				return err
			}
			if r == nil {
				return exitErrorf(exitBlocked, "run %s has no report: it is %s%s", t.ID, t.State, reasonSuffix(t))
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), r); err != nil {
					return err
				}
			} else {
				fmt.Fprint(cmd.OutOrStdout(), r.Text())
			}
			return recommendationExit(r)
		},
	}
	report.ValidArgsFunction = completeRunIDs(&cf)
	cmd.AddCommand(list, report)
	namingStore(cmd, &cf)
	return cmd
}

func reasonSuffix(t *task.Task) string {
	if t.Reason == "" {
		return ""
	}
	return " (" + t.Reason + ")"
}
