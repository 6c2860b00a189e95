package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/task"
)

// watchEvery is how often `tasks watch` reads the task again. The command
// runs in a process of its own, beside the server: the server's events do
// not reach it (the embedded SQLite store has no relay between processes),
// so it polls the shared store, which every store driver supports.
const watchEvery = 200 * time.Millisecond

func newTasksWatchCmd(cf *configFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "watch TASK_ID",
		Short: "Follow a task until it ends, printing its state changes and then its answer",
		Long: `Watch follows a task in the store until it is terminal or waits for input:
each change of state (and of attempt) is printed on stderr as it happens,
and the answer (the task's artifacts) on stdout at the end. It reads the
store, not a server, so it re-attaches to a task whatever started it (a
'pactum send' that was interrupted, another client, a retry) and works from
any process that can open the store.

Exit status: 0 when the task succeeded or waits for input, 1 when it
failed, was rejected, dead-lettered or canceled, 130 when interrupted (the
task goes on).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTaskIDs(cf),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			return watchTask(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), c, args[0], watchEvery)
		},
	}
}

// watchTask polls task id every interval until it settles, saying each
// change on errw and the answer on out.
func watchTask(ctx context.Context, out, errw io.Writer, c *task.Coordinator, id string, every time.Duration) error {
	t, err := c.Get(ctx, id, 0)
	if err != nil {
		return err
	}
	if t.Attempt == 0 && !t.State.Settled() {
		fmt.Fprintf(errw, "task %s on %s: %s, waiting for its first attempt (of %d)\n", t.ID, t.Agent, t.State, t.MaxAttempts)
	} else {
		fmt.Fprintf(errw, "task %s on %s: %s (%s)\n", t.ID, t.Agent, t.State, "attempt "+attemptLine(t, nil))
	}
	last := t
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !t.State.Settled() {
		select {
		case <-ctx.Done():
			return &exitErr{code: exitInterrupted, err: fmt.Errorf("stopped watching; task %s goes on (%s): 'pactum tasks cancel %s' cancels it", t.ID, t.State, t.ID)}
		case <-tick.C:
		}
		if t, err = c.Get(ctx, id, 0); err != nil {
			if ctx.Err() != nil {
				continue // said above, on the next turn of the loop
			}
			return err
		}
		if t.Seq == last.Seq {
			continue
		}
		if t.State != last.State || t.Attempt != last.Attempt {
			line := fmt.Sprintf("→ %s (%s)", t.State, "attempt "+attemptLine(t, nil))
			if t.Reason != "" && t.Reason != last.Reason && !t.State.Settled() {
				line += ": " + progress(t.Reason, 200, t.ID)
			}
			fmt.Fprintln(errw, line)
		}
		last = t
	}
	// The whole task, for its artifacts and status message.
	if t, err = c.Get(ctx, id, -1); err != nil {
		return err
	}
	for _, a := range t.Artifacts {
		if text := partsText(a.Parts, "", false); text != "" {
			fmt.Fprintln(out, text)
		}
	}
	msg := ""
	if t.StatusMessage != nil {
		msg = partsText(t.StatusMessage.Parts, "\n", false)
	}
	switch {
	case t.State == task.StateSucceeded:
		if len(t.Artifacts) == 0 && msg != "" {
			fmt.Fprintln(out, msg) // the answer came as a message
		}
		return nil
	case t.State == task.StateInputRequired:
		fmt.Fprintf(errw, "→ input_required: %s\nanswer with: pactum send URL --task %s \"answer\"\n", cmp.Or(msg, t.Reason), t.ID)
		return nil
	}
	what := string(t.State)
	if t.Rejected {
		what = "rejected"
	}
	reason := t.Reason
	if t.ErrorCode != "" {
		reason = string(t.ErrorCode) + ": " + reason
	}
	return fmt.Errorf("task %s ended %s (%s): %s", t.ID, what, "attempt "+attemptLine(t, nil), reason)
}
