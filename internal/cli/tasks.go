package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// access says whether a command only reads the store or also writes it.
type access int

const (
	// readWrite commands (tasks cancel|retry) open it as the server does.
	readWrite access = iota
	// readOnly commands (tasks list|get|timeline|export, runs list|report,
	// audit verify) open the store read-only: they never create, migrate
	// or write it, and they work on a read-only file.
	readOnly
	// glance is readOnly without the integrity check at open, which reads
	// the whole file: for shell completion, which must answer at once.
	glance
)

// openCore opens the configured store and a Coordinator without agents: it
// reads and changes task state (cancel, retry) under the same rules as the
// server; a running server picks the changes up through the store.
func openCore(ctx context.Context, cf *configFlags, mode access) (*task.Coordinator, func(), error) {
	st, err := openStore(ctx, cf, mode)
	if err != nil {
		return nil, nil, err
	}
	c, err := task.NewCoordinator(task.Options{Store: st, Node: "cli"})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return c, func() { st.Close() }, nil
}

// openStore opens the store the configuration (or --store) names. A
// read-only open of a store that does not exist says which store it looked
// for and how to name another.
func openStore(ctx context.Context, cf *configFlags, mode access) (task.Store, error) {
	cfg, _, err := cf.load()
	if err != nil {
		return nil, err
	}
	st, err := store.OpenWith(ctx, cfg.Store, store.Options{
		Logger: slog.New(slog.DiscardHandler), ReadOnly: mode != readWrite, SkipIntegrityCheck: mode == glance,
	})
	if err != nil {
		if errors.Is(err, store.ErrNoStore) {
			return nil, fmt.Errorf("open store %s (from %s): %w; name the store with --store DSN or with --config FILE", store.Redact(cfg.Store), cf.from, err)
		}
		return nil, fmt.Errorf("open store %s: %w", store.Redact(cfg.Store), err)
	}
	return st, nil
}

func newTasksCmd() *cobra.Command {
	var cf configFlags
	var asJSON bool
	cmd := &cobra.Command{Use: "tasks", Short: "Inspect and steer tasks in the store"}
	cf.registerStore(cmd, "configuration file (for its store)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")

	var (
		states    []string
		agentName string
		contextID string
		parentID  string
		limit     int
		page      string
		verbose   bool
	)
	list := &cobra.Command{
		Use: "list", Short: "List tasks, newest first (a parent's children oldest first)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			c, done, err := openCore(cmd.Context(), &cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			p := task.ListParams{Agent: agentName, ContextID: contextID, ParentTaskID: parentID, PageSize: limit, PageToken: page}
			for _, s := range states {
				st, err := task.ParseState(s)
				if err != nil {
					return err
				}
				p.States = append(p.States, st)
			}
			res, err := c.List(cmd.Context(), p)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			if len(res.Tasks) == 0 && page == "" {
				what := "no tasks"
				if len(states) > 0 || agentName != "" || contextID != "" || parentID != "" {
					what = "no tasks match the filters"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s in %s\n", what, cf.storeName())
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			// A parent's children are told apart by their step.
			stepCol := func(*task.Task) string { return "" }
			if parentID != "" {
				fmt.Fprint(w, "STEP\t")
				stepCol = func(t *task.Task) string { return t.Envelope.Step + "\t" }
			}
			fmt.Fprintln(w, "ID\tAGENT\tSTATE\tATTEMPT\tACTOR\tUPDATED\tREASON")
			for _, t := range res.Tasks {
				fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\n", stepCol(t), t.ID, t.Agent, t.State, attemptColumn(t), t.Envelope.Actor, t.UpdatedAt.Format(time.RFC3339), short(t.Reason, 60))
			}
			w.Flush()
			if res.NextPageToken != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "\n%d of %d shown; next page: --page %s\n", len(res.Tasks), res.TotalSize, res.NextPageToken)
			}
			return nil
		},
	}
	list.Flags().StringSliceVar(&states, "state", nil, "only tasks in these states")
	list.Flags().StringVar(&agentName, "agent", "", "only tasks of this agent")
	list.Flags().StringVar(&contextID, "context", "", "only tasks of this context")
	list.Flags().StringVar(&parentID, "parent", "", "only the children of this parent task, oldest first")
	list.Flags().IntVar(&limit, "limit", task.DefaultPageSize, fmt.Sprintf("page size (1..%d)", task.MaxPageSize))
	list.Flags().StringVar(&page, "page", "", "page token from a previous list")

	get := &cobra.Command{
		Use: "get TASK_ID", Short: "Show a task (and a parent's children)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), &cf, readOnly)
			if err != nil {
				return err
			}
			defer done()
			t, err := c.Get(cmd.Context(), args[0], -1)
			if err != nil {
				return err
			}
			if asJSON {
				n, err := loadTree(cmd.Context(), c, t, treeOptions{timeline: true, whole: true})
				if err != nil {
					return err
				}
				return printJSON(cmd.OutOrStdout(), n)
			}
			out := cmd.OutOrStdout()
			recs, err := c.Timeline(cmd.Context(), t.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "task     %s\nagent    %s (action %s)\nstate    %s\nattempt  %s\nactor    %s\ncontext  %s\ncreated  %s\nupdated  %s\n",
				t.ID, t.Agent, t.Envelope.Action, t.State, attemptLine(t, recs), t.Envelope.Actor, t.ContextID,
				t.CreatedAt.Format(time.RFC3339Nano), t.UpdatedAt.Format(time.RFC3339Nano))
			if t.Envelope.ParentTaskID != "" {
				fmt.Fprintf(out, "parent   %s (step %s)\n", t.Envelope.ParentTaskID, t.Envelope.Step)
			}
			if t.Envelope.ReplayOf != "" {
				fmt.Fprintf(out, "replays  %s\n", t.Envelope.ReplayOf)
			}
			if id := t.TraceID(); id != "" {
				fmt.Fprintf(out, "trace    %s\n", id)
			}
			if t.Reason != "" {
				reason := t.Reason
				if t.ErrorCode != "" {
					reason = string(t.ErrorCode) + ": " + reason
				}
				labeled(out, "reason", reason)
			}
			for _, m := range t.History {
				labeled(out, "["+string(m.Role)+"]", cmp.Or(partsText(m.Parts, "\n", verbose), "(no content)"))
			}
			for _, a := range t.Artifacts {
				labeled(out, "artifact", a.ID+": "+partsText(a.Parts, "", verbose))
			}
			vr, err := contract.Newest(recs)
			if err != nil {
				return err
			}
			printVerified(out, vr)
			if t.Children > 0 {
				n, err := loadTree(cmd.Context(), c, t, treeOptions{})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "children %d\n", len(n.ChildTasks))
				return printChildren(out, n)
			}
			return nil
		},
	}
	get.Flags().BoolVarP(&verbose, "verbose", "v", false, "print data parts as indented JSON (default: compact, one line)")
	timeline := &cobra.Command{
		Use: "timeline TASK_ID", Short: "Show a task's execution record with its evidence (and its children's)", Args: cobra.ExactArgs(1),
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
			n, err := loadTree(cmd.Context(), c, t, treeOptions{timeline: true})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), timelineEntries(n))
			}
			return printTimeline(cmd.OutOrStdout(), n, 0)
		},
	}
	var reason string
	cancel := &cobra.Command{
		Use: "cancel TASK_ID", Short: "Cancel a task that has not finished", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), &cf, readWrite)
			if err != nil {
				return err
			}
			defer done()
			t, err := c.Cancel(cmd.Context(), args[0], reason)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "task %s is %s\n", t.ID, t.State)
			return nil
		},
	}
	cancel.Flags().StringVar(&reason, "reason", "canceled from the command line", "reason recorded on the task")
	retry := &cobra.Command{
		Use: "retry TASK_ID", Short: "Queue a failed or dead-lettered task again, with a new turn of max_attempts attempts", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openCore(cmd.Context(), &cf, readWrite)
			if err != nil {
				return err
			}
			defer done()
			t, err := c.Retry(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "task %s is %s with a new turn of %d attempts (%d made so far; a running server picks it up)\n",
				t.ID, t.State, t.MaxAttempts, t.Attempt)
			return nil
		},
	}
	export := newTasksExportCmd(&cf)
	replay := newTasksReplayCmd(&cf, &asJSON)
	cmd.AddCommand(list, get, timeline, export, cancel, retry, replay, newTasksWatchCmd(&cf))
	namingStore(cmd, &cf)
	for _, sub := range []*cobra.Command{get, timeline, export, cancel, retry, replay} {
		sub.ValidArgsFunction = completeTaskIDs(&cf)
	}
	_ = list.RegisterFlagCompletionFunc("state", completeStates)
	_ = list.RegisterFlagCompletionFunc("agent", completeAgents(&cf))
	_ = list.RegisterFlagCompletionFunc("parent", completeTaskIDs(&cf))
	_ = replay.RegisterFlagCompletionFunc("agent", completeAgents(&cf))
	return cmd
}

// checkLimit refuses a --limit outside 1..task.MaxPageSize, naming the
// flag (the store would name its own pageSize parameter instead).
func checkLimit(limit int) error {
	if limit < 1 || limit > task.MaxPageSize {
		return task.Errorf(task.CodeInvalidArgument, "--limit %d is out of range: want 1 to %d", limit, task.MaxPageSize)
	}
	return nil
}

// attemptColumn is the ATTEMPT column of `tasks list`: the attempt within
// the turn and its bound, then the total once an earlier turn has run.
func attemptColumn(t *task.Task) string {
	s := fmt.Sprintf("%d/%d", t.TurnAttempt(), t.MaxAttempts)
	if t.TurnStart > 0 {
		s += fmt.Sprintf(" (%d in all)", t.Attempt)
	}
	return s
}

// attemptLine says how far t is through its attempts for `tasks get` and
// `tasks watch`: the attempt within the current turn and its bound, then,
// once an earlier turn has run, the total and what started the later turns
// (from the record, recs; nil to leave them out): "1 of 3 (4 in all, 1
// manual retry)". A turn not attempted yet says so rather than "0 of 3".
func attemptLine(t *task.Task, recs []task.Record) string {
	s := fmt.Sprintf("%d of %d", t.TurnAttempt(), t.MaxAttempts)
	if t.TurnAttempt() == 0 {
		s = fmt.Sprintf("none yet of %d", t.MaxAttempts)
	}
	if t.TurnStart == 0 {
		return s
	}
	parts := append([]string{fmt.Sprintf("%d in all", t.Attempt)}, turnsSummary(recs)...)
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// turnsSummary says what started a task's later turns, from its record:
// "1 manual retry", "2 answers", "3 wake-ups by children".
func turnsSummary(recs []task.Record) []string {
	var retries, answers, wakes int
	for _, r := range recs {
		switch {
		case !r.StartsTurn():
		case r.From == task.StateInputRequired:
			answers++
		case r.From == task.StateWaiting:
			wakes++
		default:
			retries++
		}
	}
	var parts []string
	if retries > 0 {
		parts = append(parts, plural(retries, "manual retry", "manual retries"))
	}
	if answers > 0 {
		parts = append(parts, plural(answers, "answer", "answers"))
	}
	if wakes > 0 {
		parts = append(parts, plural(wakes, "wake-up by a child", "wake-ups by children"))
	}
	return parts
}

// labelWidth is the width of the label column of `tasks get`.
const labelWidth = 9

// labeled prints text under label as `tasks get` lays it out: the first
// line after the label, each further line indented to the same column, so
// multi-line text (a message, an artifact, a reason) reads as one block.
func labeled(out io.Writer, label, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	fmt.Fprintf(out, "%-*s%s\n", labelWidth, label+" ", lines[0])
	for _, l := range lines[1:] {
		if l == "" {
			fmt.Fprintln(out)
			continue
		}
		fmt.Fprintf(out, "%*s%s\n", labelWidth, "", l)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// short returns s on one line, cut to at most n characters (runes) at a
// word boundary, with "…" marking the cut.
func short(s string, n int) string {
	s, _ = cut(s, n)
	return s
}

// cut is short that also reports whether it cut.
func cut(s string, n int) (string, bool) {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	rs := []rune(s)
	keep := max(n-1, 1) // and "…"
	head := string(rs[:keep])
	if rs[keep] != ' ' {
		// Back to the last space, unless that would throw away more than
		// half: one very long word is cut inside.
		if i := strings.LastIndexByte(head, ' '); i > 0 && utf8.RuneCountInString(head[:i]) > n/2 {
			head = head[:i]
		}
	}
	return strings.TrimRight(head, " ,;:") + "…", true
}

// progress is a progress line's text about task id: s cut to n characters
// at a word boundary, saying how to read the whole when it was cut.
func progress(s string, n int, id string) string {
	s, cutShort := cut(s, n)
	if cutShort {
		s += " (all of it: pactum tasks get " + id + ")"
	}
	return s
}

// partsText renders parts as the CLI prints a message or an artifact:
// text as it is (consecutive text parts joined by sep: "\n" between the
// parts of a message, "" between the chunks of a streamed artifact), a
// data part as JSON, compact or, with indent, indented, a URL as itself
// and raw bytes by their size and type. A part that is not text starts a
// line of its own, and so does the part after it, so JSON is never glued
// to text.
func partsText(parts []task.Part, sep string, indent bool) string {
	var b strings.Builder
	prevText := false
	for i, p := range parts {
		var s string
		switch p.Kind {
		case task.PartText:
			s = p.Text
		case task.PartData:
			s = dataText(p.Data, indent)
		case task.PartURL:
			s = p.URL
		case task.PartRaw:
			s = fmt.Sprintf("<%d bytes", len(p.Raw))
			if p.MediaType != "" {
				s += " " + p.MediaType
			}
			if p.Filename != "" {
				s += " " + p.Filename
			}
			s += ">"
		}
		if i > 0 {
			switch {
			case prevText && p.Kind == task.PartText:
				b.WriteString(sep)
			case !strings.HasSuffix(b.String(), "\n"):
				b.WriteByte('\n')
			}
		}
		b.WriteString(s)
		prevText = p.Kind == task.PartText
	}
	return b.String()
}

// dataText is a data part's JSON, compact or indented; JSON that does not
// parse is shown as it is stored.
func dataText(data []byte, indent bool) string {
	var buf bytes.Buffer
	var err error
	if indent {
		err = json.Indent(&buf, data, "", "  ")
	} else {
		err = json.Compact(&buf, data)
	}
	if err != nil {
		return string(data)
	}
	return buf.String()
}

// printVerified prints the verified result of a task's newest checked
// attempt as `tasks get` shows it: the verdict with its timings, then each
// failed assertion or pre-gate condition with its reason. Nothing for a
// task no contract checked.
func printVerified(out io.Writer, vr *contract.VerifiedResult) {
	if vr == nil {
		return
	}
	v := vr.Verification
	verdict := "passed"
	switch {
	case !v.PreGate.Passed:
		verdict = "blocked by the pre-gate (the agent did not run)"
	case !vr.Executed:
		verdict = "not run"
	case !v.Passed && vr.Error != "" && len(v.PostGate.Results) == 0:
		verdict = "not checked: the agent failed"
	case !v.Passed:
		verdict = "failed"
	}
	tm := v.Timing
	fmt.Fprintf(out, "verdict  %s (contract %s, step %s; %s: pre-gate %s, agent %s, post-gate %s)\n",
		verdict, vr.Contract, vr.Step, msDuration(tm.TotalMs), msDuration(tm.PreGateMs), msDuration(tm.ExecutionMs), msDuration(tm.PostGateMs))
	printGateProblems(out, v)
	for _, c := range v.ResourcesCreated {
		fmt.Fprintf(out, "  created  %s (%s) %s\n", c.ID, c.Type, c.Location)
	}
}

// msDuration shows a duration given in milliseconds.
func msDuration(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond).String()
}

// printGateProblems prints what blocked a checked attempt and each failed
// assertion with its reason, one indented line each: the lines `tasks get`
// and `verify` share.
func printGateProblems(out io.Writer, v contract.Verification) {
	for _, b := range v.PreGate.BlockedBy {
		fmt.Fprintf(out, "  blocked  %s\n", b)
	}
	for _, r := range v.PostGate.Results {
		if r.Passed {
			continue
		}
		line := r.Message
		if line == "" {
			line = r.Check
		}
		fmt.Fprintf(out, "  failed   [%s %s] %s", r.Type, r.Check, line)
		if r.Reason != "" {
			fmt.Fprintf(out, ": %s", r.Reason)
		}
		fmt.Fprintln(out)
	}
}
