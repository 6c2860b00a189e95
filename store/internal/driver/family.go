package driver

import (
	"fmt"
	"time"

	"github.com/pactum/pactum/task"
)

// Parent and child tasks. A transition may set off transitions the store
// makes on its own, in the same transaction (task.Store.Transition's doc):
// a parent moving to waiting with no child left to wait for is queued at
// once; a child entering a Terminal state wakes its waiting parent; a
// parent entering a Terminal state cancels its unsettled descendants.
// Follow decides them, the same for every driver; the driver reads and
// locks the rows (Family) and writes what Follow changed.

// NoChildLeft is the reason of a parent's move from waiting to queued in
// the transition that made it wait, when none of its children is
// unsettled.
const NoChildLeft = "no child left to wait for"

// Family is what Follow reads through the driver's transaction. Tasks it
// returns need ID, State, Attempt, TurnStart, Seq, Children,
// Envelope.Actor, Envelope.ParentTaskID and Envelope.Step; what else they
// carry is written back unchanged by the driver's update.
type Family interface {
	// Lock returns task id, its row locked until the transaction ends
	// (where the database locks rows), or nil when it does not exist.
	Lock(id string) (*task.Task, error)
	// Unsettled returns the children of id that are not Terminal, oldest
	// first, each locked as Lock does.
	Unsettled(id string) ([]*task.Task, error)
	// CountUnsettled counts the children of id that are not Terminal,
	// reading what committed before the statement started (no lock).
	CountUnsettled(id string) (int, error)
}

// Moved is a task Follow moved: the driver writes its row, on the
// condition that it is still in From.
type Moved struct {
	Task *task.Task
	From task.State
}

// Follow applies to t (just moved by its own transition, which Writes
// already holds) and to its family what the store does on its own, adds
// each record and audit entry to w, and returns the other tasks it moved,
// in order. requeued reports that t itself moved on (waiting → queued):
// the driver writes t's row as it is now. node and now are the
// transition's.
func Follow(f Family, t *task.Task, node string, now time.Time, w *Writes) (requeued bool, moved []Moved, err error) {
	switch {
	case t.State == task.StateWaiting:
		n := 0
		if t.Children > 0 {
			if n, err = f.CountUnsettled(t.ID); err != nil {
				return false, nil, fmt.Errorf("count unsettled children of task %q: %w", t.ID, err)
			}
		}
		if n > 0 {
			return false, nil, nil
		}
		rec, err := Advance(t, requeue(NoChildLeft, node, now))
		if err != nil {
			return false, nil, err
		}
		w.Add(t, rec)
		return true, nil, nil
	case !t.State.Terminal():
		return false, nil, nil
	}
	if t.Children > 0 {
		if moved, err = cascade(f, t, node, now, w); err != nil {
			return false, nil, err
		}
	}
	if id := t.Envelope.ParentTaskID; id != "" {
		parent, err := f.Lock(id)
		if err != nil {
			return false, nil, fmt.Errorf("lock parent %q: %w", id, err)
		}
		if parent != nil && parent.State == task.StateWaiting {
			rec, err := Advance(parent, requeue(WakeReason(t), node, now))
			if err != nil {
				return false, nil, err
			}
			w.Add(parent, rec)
			moved = append(moved, Moved{Task: parent, From: task.StateWaiting})
		}
	}
	return false, moved, nil
}

// requeue is the change of a parent the store queues again: a new turn,
// runnable at once.
func requeue(reason, node string, now time.Time) Change {
	return Change{
		To: task.StateQueued, Reason: reason, Node: node, Now: now,
		SetRunAfter: true, RunAfter: now, NewTurn: true,
	}
}

// cascade cancels the unsettled descendants of root, which has just
// entered a Terminal state, level by level: each child's reason names its
// own parent. Canceling wakes nobody: the parent of each is Terminal.
func cascade(f Family, root *task.Task, node string, now time.Time, w *Writes) ([]Moved, error) {
	var moved []Moved
	for queue := []*task.Task{root}; len(queue) > 0; queue = queue[1:] {
		parent := queue[0]
		kids, err := f.Unsettled(parent.ID)
		if err != nil {
			return nil, fmt.Errorf("children of task %q: %w", parent.ID, err)
		}
		reason := CascadeReason(parent)
		for _, k := range kids {
			from := k.State
			rec, err := Advance(k, Change{To: task.StateCanceled, Reason: reason, Node: node, Now: now})
			if err != nil {
				return nil, fmt.Errorf("cancel child %q: %w", k.ID, err)
			}
			w.Add(k, rec)
			moved = append(moved, Moved{Task: k, From: from})
			if k.Children > 0 {
				queue = append(queue, k)
			}
		}
	}
	return moved, nil
}

// explains reports whether a task's reason says why it ended in s.
func explains(s task.State) bool {
	return s == task.StateFailed || s == task.StateDeadLetter || s == task.StateCanceled
}

// WakeReason is the reason of a parent's move to queued when child (now
// Terminal) settled: `child ID (step "build") dead_letter: <its reason>`.
func WakeReason(child *task.Task) string {
	s := fmt.Sprintf("child %s (step %q) %s", child.ID, child.Envelope.Step, child.State)
	if explains(child.State) && child.Reason != "" {
		s += ": " + child.Reason
	}
	return s
}

// CascadeReason is the reason of a child canceled because parent (now
// Terminal) ended: `parent ID canceled: <its reason>`.
func CascadeReason(parent *task.Task) string {
	s := fmt.Sprintf("parent %s %s", parent.ID, parent.State)
	if explains(parent.State) && parent.Reason != "" {
		s += ": " + parent.Reason
	}
	return s
}
