package task

import (
	"context"
	"fmt"
)

// A parent task is an ordinary task whose runner returned Result.Spawn: a
// multi-step run (a contract with several steps, a workflow) whose steps
// are child tasks. The package that owns the run supplies the runner,
// which is its decision logic: called with Request.Children, it spawns
// the next children, waits, or finishes. The store does the rest in the
// transactions it already writes: the spawn commits with the parent's move
// to waiting, a child's end queues its waiting parent again, and a parent's
// end cancels the children still running. A crash anywhere leaves a state
// the next node goes on from: finished children are never run again,
// because the parent decides from what is stored.

// Children returns every child of parent, oldest first, reading all
// pages: each with its newest historyLength messages (all for < 0) and,
// with artifacts, its artifacts. An authenticated caller (WithCaller)
// sees only its own tasks, as with List.
func (c *Coordinator) Children(ctx context.Context, parent string, historyLength int, artifacts bool) ([]*Task, error) {
	return collectChildren(ctx, c.List, parent, historyLength, artifacts)
}

// children returns what a parent's runner gets as Request.Children.
func (c *Coordinator) children(ctx context.Context, parent string) ([]*Task, error) {
	return collectChildren(ctx, c.store.ListTasks, parent, 1, true)
}

func collectChildren(ctx context.Context, list func(context.Context, ListParams) (*TaskPage, error), parent string, historyLength int, artifacts bool) ([]*Task, error) {
	var out []*Task
	p := ListParams{ParentTaskID: parent, PageSize: MaxPageSize, HistoryLength: historyLength, IncludeArtifacts: artifacts}
	for {
		page, err := list(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list children of task %s: %w", parent, err)
		}
		out = append(out, page.Tasks...)
		if page.NextPageToken == "" {
			return out, nil
		}
		p.PageToken = page.NextPageToken
	}
}

// await turns a parent's result into its move to waiting: the children of
// res.Spawn are resolved, validated and admitted as submitted tasks are,
// and created in the same transaction. An invalid child is a permanent
// error of the parent's runner: nothing is spawned.
func (c *Coordinator) await(ctx context.Context, t *Task, existing []*Task, res *Result, p TransitionParams) (TransitionParams, error) {
	used := make(map[string]bool, len(existing)+len(res.Spawn))
	for _, k := range existing {
		used[k.Envelope.Step] = true
	}
	for i, ch := range res.Spawn {
		if ch.Step == "" {
			return p, Permanent(Errorf(CodeInvalidArgument, "spawn[%d]: a child needs a step name", i))
		}
		if used[ch.Step] {
			return p, Permanent(Errorf(CodeInvalidArgument, "spawn[%d]: task %s already has a child for step %q", i, t.ID, ch.Step))
		}
		used[ch.Step] = true
		spec, err := c.resolve(ch.Agent, ch.Action)
		if err != nil {
			return p, Permanent(fmt.Errorf("spawn[%d] (step %q): %w", i, ch.Step, err))
		}
		pe := &t.Envelope
		env := Envelope{
			IdempotencyKey: t.ID + "/" + ch.Step,
			Actor:          pe.Actor,
			Matter:         pe.Matter,
			Resource:       orElse(ch.Resource, pe.Resource),
			Action:         spec.Action,
			Input:          ch.Input,
			ContextID:      t.ContextID,
			PolicyRef:      pe.PolicyRef,
			ApprovalRef:    pe.ApprovalRef,
			CorrelationID:  pe.CorrelationID,
			ParentTaskID:   t.ID,
			Step:           ch.Step,
			Metadata:       ch.Metadata,
		}
		if env.Input.ID == "" {
			env.Input.ID = NewID()
		}
		if err := c.validateEnvelope(&env); err != nil {
			return p, Permanent(fmt.Errorf("spawn[%d] (step %q): %w", i, ch.Step, err))
		}
		_, cp, err := c.newTask(ctx, spec, env)
		if err != nil {
			return p, fmt.Errorf("spawn[%d] (step %q): %w", i, ch.Step, err)
		}
		p.Spawn = append(p.Spawn, cp)
	}
	p.To = StateWaiting
	if p.Reason == "" {
		p.Reason = fmt.Sprintf("waiting for children (%d spawned now, %d before)", len(res.Spawn), len(existing))
	}
	return p, nil
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// settled tells this node's subscribers, workers and dispatcher what a
// committed terminal transition of nt changed besides nt: a parent the
// store queued again, and children the store canceled.
func (c *Coordinator) settled(ctx context.Context, nt *Task) {
	if id := nt.Envelope.ParentTaskID; id != "" {
		if parent, err := c.store.GetTask(ctx, id, 0); err == nil {
			c.publishStatus(parent)
			if parent.State == StateQueued {
				c.kickAt(parent.RunAfter, c.poolOf(parent.Agent))
			}
		} else {
			c.log.Warn("read parent after its child settled", "task", nt.ID, "parent", id, "err", err)
		}
	}
	if nt.Children > 0 {
		c.publishDescendants(ctx, nt.ID)
	}
}

// publishDescendants publishes the state of parent's children (and theirs)
// and stops those canceled that run here.
func (c *Coordinator) publishDescendants(ctx context.Context, parent string) {
	kids, err := c.children(ctx, parent)
	if err != nil {
		c.log.Warn("read children of a settled parent", "task", parent, "err", err)
		return
	}
	for _, k := range kids {
		k.History, k.Artifacts = nil, nil
		c.publishStatus(k)
		if k.State == StateCanceled {
			c.stopAttempt(k.ID, true)
		}
		if k.Children > 0 {
			c.publishDescendants(ctx, k.ID)
		}
	}
}

// spawned publishes the children a parent's transition created and wakes
// the dispatcher for them.
func (c *Coordinator) spawned(ctx context.Context, parent string, spawn []CreateParams) {
	for _, cp := range spawn {
		c.observeSteps(cp.Task.ID, cp.Task.Agent, cp.Steps)
	}
	defer c.kick()
	kids, err := c.children(ctx, parent)
	if err != nil {
		c.log.Warn("read spawned children", "task", parent, "err", err)
		return
	}
	for _, k := range kids[max(0, len(kids)-len(spawn)):] {
		k.History, k.Artifacts = nil, nil
		c.publishStatus(k)
	}
}
