package driver

import (
	"fmt"
	"time"

	"github.com/pactum/pactum/task"
)

// NewTask is what CreateTask writes, planned from its CreateParams before
// any SQL runs: the same for every driver, which then only stores it.
type NewTask struct {
	// Task is the task as stored: requested, then moved by the steps (and
	// the claim), without History.
	Task *task.Task
	// Now is CreateParams.Now as stored (Norm).
	Now time.Time
	// Writes holds the records of the steps and the audit entries in the
	// order they are sealed: CreateParams.Audit, then each step's Audit
	// followed by the step's own transition entry.
	Writes Writes
	// Envelope is Task.Envelope as JSON.
	Envelope string
	// History is CreateParams.Task.History, one JSON message each.
	History []string
	// Actor and Key are the envelope's idempotency scope and key.
	Actor, Key string
	// Idempotent is true when the key is to be taken: a key and a TTL.
	Idempotent bool
	// KeyExpires is when the key stops naming the task (Idempotent only).
	KeyExpires time.Time
}

// PlanCreate checks p and plans the task it creates. It walks the input in
// the order it would be written (p.Audit, then each step: its audit data,
// Rejected, the transition; then the claim) and returns the first fault, so
// the error names the step at fault and is the same on every driver. Errors
// start with "create task"; the driver prefixes its name.
func PlanCreate(p task.CreateParams) (*NewTask, error) {
	if p.Task == nil || p.Task.ID == "" {
		return nil, task.Errorf(task.CodeInvalidArgument, "create task: CreateParams.Task with an ID is required")
	}
	id := p.Task.ID
	if p.Now.IsZero() {
		return nil, task.Errorf(task.CodeInvalidArgument, "create task %q: CreateParams.Now is zero", id)
	}
	if err := CheckAudit(p.Audit); err != nil {
		return nil, fmt.Errorf("create task %q: %w", id, err)
	}
	now := Norm(p.Now)
	t := &task.Task{
		ID:          id,
		ContextID:   p.Task.ContextID,
		Agent:       p.Task.Agent,
		Envelope:    p.Task.Envelope,
		PayloadHash: p.Task.PayloadHash,
		State:       task.StateRequested,
		MaxAttempts: p.Task.MaxAttempts,
		RunAfter:    Norm(p.Task.RunAfter),
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	out := &NewTask{Task: t, Now: now}
	w := &out.Writes
	w.Audit = append(w.Audit, p.Audit...)
	for i, st := range p.Steps {
		if err := CheckAudit(st.Audit); err != nil {
			return nil, fmt.Errorf("create task %q: step %d: %w", id, i, err)
		}
		if st.Rejected && st.To != task.StateFailed {
			return nil, task.Errorf(task.CodeInvalidArgument, "create task %q: step %d: Rejected is only valid with To %s", id, i, task.StateFailed)
		}
		w.Audit = append(w.Audit, st.Audit...)
		rec, err := Advance(t, Change{
			To: st.To, Reason: st.Reason, ErrorCode: st.ErrorCode, PolicyVersion: st.PolicyVersion,
			Node: p.Node, Now: now,
		})
		if err != nil {
			return nil, fmt.Errorf("create task %q: step %d: %w", id, i, err)
		}
		t.Rejected = st.Rejected
		w.Add(t, rec)
	}
	if c := p.Claim; c != nil && t.State == task.StateQueued {
		if c.Owner == "" || c.LeaseFor <= 0 {
			return nil, task.Errorf(task.CodeInvalidArgument, "create task %q: Claim needs an Owner and a positive LeaseFor", id)
		}
		rec, err := Claim(t, c.Owner, c.Node, now, c.LeaseFor)
		if err != nil {
			return nil, fmt.Errorf("create task %q: claim: %w", id, err)
		}
		w.Add(t, rec)
	}
	if w.Err != nil {
		return nil, fmt.Errorf("create task %q: %w", id, w.Err)
	}
	env, err := marshalJSON(&t.Envelope)
	if err != nil {
		return nil, fmt.Errorf("create task %q: encode envelope: %w", id, err)
	}
	out.Envelope = string(env)
	if out.History, err = EncodeAll(p.Task.History); err != nil {
		return nil, fmt.Errorf("create task %q: encode history: %w", id, err)
	}
	out.Actor, out.Key = t.Envelope.Actor, t.Envelope.IdempotencyKey
	if p.IdempotencyTTL > 0 && out.Key != "" {
		out.Idempotent = true
		out.KeyExpires = Norm(now.Add(p.IdempotencyTTL))
	}
	return out, nil
}
