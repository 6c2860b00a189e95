package trace

import (
	"context"
	"fmt"
	"time"

	"github.com/pactum/pactum/task"
)

// Export reads task id with its whole history, its artifacts and its
// execution record, and the same for each of its descendants, through c
// (so the caller in ctx sees only what it may: a task it may not see is
// not found), and returns them as a trace exported at at.
func Export(ctx context.Context, c *task.Coordinator, id string, at time.Time) (*Trace, error) {
	t, err := c.Get(ctx, id, -1)
	if err != nil {
		return nil, err
	}
	n, err := exportNode(ctx, c, t, 0)
	if err != nil {
		return nil, err
	}
	return &Trace{Version: Version, ExportedAt: at.UTC(), Node: *n}, nil
}

func exportNode(ctx context.Context, c *task.Coordinator, t *task.Task, depth int) (*Node, error) {
	recs, err := c.Timeline(ctx, t.ID)
	if err != nil {
		return nil, fmt.Errorf("task %s: timeline: %w", t.ID, err)
	}
	if recs == nil {
		recs = []task.Record{}
	}
	n := &Node{Task: t, Timeline: recs}
	if t.Children == 0 {
		return n, nil
	}
	if depth >= MaxDepth {
		return nil, fmt.Errorf("task %s: children nested deeper than %d levels", t.ID, MaxDepth)
	}
	kids, err := c.Children(ctx, t.ID, -1, true)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		kn, err := exportNode(ctx, c, k, depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, kn)
	}
	return n, nil
}
