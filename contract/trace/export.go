package trace

import (
	"context"
	"fmt"
	"time"

	"github.com/pactum/pactum/contract"
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
	tr := &Trace{Version: Version, ExportedAt: at.UTC(), Node: *n}
	if refs := recorded(&tr.Node); len(refs) > 0 {
		tr.Contract = &refs[0]
	}
	return tr, nil
}

// recorded returns the contracts the gates in n and its descendants
// recorded on their verdicts, each once, in the order first met (a node
// before its children, records oldest first).
func recorded(n *Node) []ContractRef {
	var out []ContractRef
	seen := map[ContractRef]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		for _, r := range n.Timeline {
			vr, err := contract.NewestIn(r.Evidence)
			if err != nil || vr == nil || vr.Contract == "" {
				continue
			}
			ref := ContractRef{ID: vr.Contract, Digest: vr.ContractDigest}
			if !seen[ref] {
				seen[ref] = true
				out = append(out, ref)
			}
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(n)
	return out
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
