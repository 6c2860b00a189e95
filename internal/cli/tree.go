package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
)

// taskNode is a task with its execution record and its child tasks, each
// a taskNode itself: what `tasks get --json` prints. The task is embedded,
// so every field of the task object stays as it was (its "children" is the
// number of children it spawned); "timeline" and "childTasks" are added,
// and "verifiedResult", the verified result of the newest attempt a
// contract checked, for a task whose agent has a contract. A task without
// children has no "childTasks".
type taskNode struct {
	*task.Task
	// TraceID is the task's trace id, from its stored traceparent.
	TraceID        string                   `json:"traceId,omitempty"`
	Timeline       []task.Record            `json:"timeline"`
	VerifiedResult *contract.VerifiedResult `json:"verifiedResult,omitempty"`
	ChildTasks     []*taskNode              `json:"childTasks,omitempty"`
}

// timelineEntry is one entry of `tasks timeline --json`: a record, and for
// a record of a child task, the child's parent and step.
type timelineEntry struct {
	task.Record
	ParentTaskID string `json:"parentTaskId,omitempty"`
	Step         string `json:"step,omitempty"`
}

// maxDepth bounds how deep a tree of tasks is followed: parents are created
// before their children, so the tree has no cycles, but a bound keeps a
// damaged store from sending the CLI round in circles.
const maxDepth = 64

// treeOptions says what loadTree reads for each task below the root.
type treeOptions struct {
	// timeline loads every task's execution record.
	timeline bool
	// whole loads every child's whole history and its artifacts.
	whole bool
}

// loadTree returns t with its descendants. A task whose Children count is
// zero is not asked for children.
func loadTree(ctx context.Context, c *task.Coordinator, t *task.Task, o treeOptions) (*taskNode, error) {
	return loadNode(ctx, c, t, o, 0)
}

func loadNode(ctx context.Context, c *task.Coordinator, t *task.Task, o treeOptions, depth int) (*taskNode, error) {
	n := &taskNode{Task: t, TraceID: t.TraceID()}
	if o.timeline {
		recs, err := c.Timeline(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		n.Timeline = recs
		if n.VerifiedResult, err = contract.Newest(recs); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	if t.Children == 0 {
		return n, nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("task %s: children nested deeper than %d levels", t.ID, maxDepth)
	}
	hl := 0
	if o.whole {
		hl = -1
	}
	kids, err := c.Children(ctx, t.ID, hl, o.whole)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		kn, err := loadNode(ctx, c, k, o, depth+1)
		if err != nil {
			return nil, err
		}
		n.ChildTasks = append(n.ChildTasks, kn)
	}
	return n, nil
}

// timelineEntries flattens n's timeline and its descendants' into the
// shape of `tasks timeline --json`: n's records first, then each child's
// (and under it, its own children's), depth first, oldest child first.
func timelineEntries(n *taskNode) []timelineEntry {
	out := []timelineEntry{}
	var walk func(n *taskNode)
	walk = func(n *taskNode) {
		for _, r := range n.Timeline {
			out = append(out, timelineEntry{Record: r, ParentTaskID: n.Envelope.ParentTaskID, Step: n.Envelope.Step})
		}
		for _, k := range n.ChildTasks {
			walk(k)
		}
	}
	walk(n)
	return out
}

// printChildren prints the tree below n as `tasks get` shows it: one row
// per child (step, id, agent, state, attempt, reason), grandchildren
// indented under their parent.
func printChildren(out io.Writer, n *taskNode) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  STEP\tTASK\tAGENT\tSTATE\tATTEMPT\tREASON")
	var walk func(n *taskNode, depth int)
	walk = func(n *taskNode, depth int) {
		for _, k := range n.ChildTasks {
			reason := k.Reason
			if k.ErrorCode != "" && reason != "" {
				reason = string(k.ErrorCode) + ": " + reason
			}
			fmt.Fprintf(w, "%s%s\t%s\t%s\t%s\t%s\t%s\n", strings.Repeat("  ", depth+1), k.Envelope.Step, k.ID, k.Agent, k.State, attemptColumn(k.Task), short(reason, 60))
			walk(k, depth+1)
		}
	}
	walk(n, 0)
	return w.Flush()
}

// printTimeline prints n's execution record as `tasks timeline` shows it,
// each record followed by the evidence stored with it, then each child's
// under a header line naming it, indented one level deeper.
func printTimeline(out io.Writer, n *taskNode, depth int) error {
	indent := strings.Repeat("  ", depth)
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	// ATTEMPT is the attempt within its turn, IN ALL the total the record
	// stores; a turn starts where a record says so.
	fmt.Fprintln(w, "SEQ\tAT\tFROM\tTO\tATTEMPT\tIN ALL\tNODE\tPOLICY\tREASON")
	turnStart := 0
	for _, r := range n.Timeline {
		if r.StartsTurn() {
			turnStart = r.Attempt
		}
		reason := r.Reason
		if r.ErrorCode != "" {
			reason = string(r.ErrorCode) + ": " + reason
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.Seq, r.At.Format(time.RFC3339Nano), r.From, r.To, r.Attempt-turnStart, r.Attempt, r.Node, r.PolicyVersion, short(reason, 80))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// The table is aligned as a whole, then each record's evidence goes
	// under its line: the header is line 0, record i is line i+1.
	lines := strings.SplitAfter(table.String(), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(out, indent+line); err != nil {
			return err
		}
		if i == 0 || i > len(n.Timeline) {
			continue
		}
		for _, e := range n.Timeline[i-1].Evidence {
			if _, err := io.WriteString(out, indent+"    "+evidenceLine(e)+"\n"); err != nil {
				return err
			}
		}
	}
	for _, k := range n.ChildTasks {
		fmt.Fprintf(out, "\n%s  step %s: task %s (agent %s, %s, %s)\n", indent, k.Envelope.Step, k.ID, k.Agent, k.State, k.AttemptSummary())
		if err := printTimeline(out, k, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// evidenceLine says what one piece of evidence holds: "evidence policy
// decision: allow (1.5ms): approval covers the action".
func evidenceLine(e task.Evidence) string {
	s := "evidence " + e.Step + " " + string(e.Kind)
	if e.Outcome != "" {
		s += ": " + e.Outcome
	}
	if e.Duration > 0 {
		s += " (" + e.Duration.String() + ")"
	}
	if e.Message != "" {
		s += ": " + short(e.Message, 100)
	}
	return s
}
