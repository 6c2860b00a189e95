package task

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// execute runs one claimed attempt to its recorded end.
func (c *Coordinator) execute(parent context.Context, t *Task) {
	log := c.log.With("task", t.ID, "agent", t.Agent, "attempt", t.Attempt)
	spec, ok := c.agents[t.Agent]
	// The attempt's span; parent itself stays span-free, as the record's
	// writes below use it.
	spanCtx, span := c.startAttempt(parent, t)
	defer span.End()
	finish := func(p TransitionParams) {
		attemptEnded(span, p)
		p.TaskID, p.From, p.LeaseOwner = t.ID, StateInProgress, t.LeaseOwner
		// The attempt's own context may be canceled; the record must still
		// be written.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(parent), 30*time.Second)
		defer cancel()
		if _, err := c.transition(wctx, t, p); err != nil {
			if errors.Is(err, ErrStateConflict) {
				log.Info("attempt result discarded: task moved on (canceled or lease lost)")
				// Whoever moved it may be another process (pactum tasks
				// cancel): tell this node's subscribers where it is now.
				if cur, gerr := c.store.GetTask(wctx, t.ID, 0); gerr == nil {
					c.publishStatus(cur)
				}
				return
			}
			log.Error("record attempt result", "err", err)
		}
	}
	if !ok {
		finish(TransitionParams{To: StateFailed, ErrorCode: CodeNotFound, Reason: fmt.Sprintf("agent %q is not configured on node %s", t.Agent, c.node)})
		return
	}

	ctx, cancel := context.WithTimeout(spanCtx, spec.Timeout)
	defer cancel()
	entry := c.register(t.ID, cancel)
	defer func() {
		c.mu.Lock()
		// The next attempt of the task may have registered already (this
		// attempt's end queued it, and a worker claimed it): leave its
		// entry alone.
		if c.running[t.ID] == entry {
			delete(c.running, t.ID)
		}
		c.mu.Unlock()
	}()
	// The lease is first renewed a third of the way through it: an
	// attempt that ends before (most do) starts no goroutine for it.
	renew := c.clock.AfterFunc(c.leaseFor/3, func() { c.renewLease(ctx, cancel, t, log) })
	defer renew.Stop()

	req := &Request{TaskID: t.ID, ContextID: t.ContextID, Agent: t.Agent, Attempt: t.Attempt, Envelope: t.Envelope, History: t.History}
	req.Message = t.Envelope.Input
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == RoleUser {
			req.Message = t.History[i]
			break
		}
	}
	a := &Attempt{Task: t, Agent: spec, Request: req}
	// ended completes what the attempt's end records with what the
	// pipeline's steps decided and saw.
	ended := func(p TransitionParams) TransitionParams {
		p.PolicyVersion = a.PolicyVersion
		a.mu.Lock()
		p.Audit, p.Evidence = append(p.Audit, a.audit...), append(p.Evidence, a.evidence...)
		a.mu.Unlock()
		return p
	}
	if t.Children > 0 {
		kids, err := c.children(ctx, t.ID)
		if err != nil {
			finish(ended(c.failure(ctx, spec, t, err)))
			return
		}
		req.Children = kids
	}

	acc := newAccumulator()
	emit := func(ch ArtifactChunk) error {
		if ch.Artifact.ID == "" {
			ch.Artifact.ID = "artifact-1"
		}
		acc.add(ch)
		c.publish(Event{Kind: EventArtifact, TaskID: t.ID, ContextID: t.ContextID, Seq: t.Seq, Chunk: &ch, At: c.now()})
		return ctx.Err()
	}
	run := c.tracedPipeline(ctx, spec.pipeline, a, func(ctx context.Context) (*Result, error) {
		start := c.clock.Now()
		res, err := spec.Runner.Run(ctx, a.Request, emit)
		if c.observer != nil {
			c.observer.AttemptFinished(spec.Name, c.clock.Now().Sub(start), err)
		}
		return res, err
	})
	res, err := runGuarded(ctx, run)
	if p := (*panicked)(nil); errors.As(err, &p) {
		log.Error("attempt panicked", "panic", p.value, "stack", string(p.stack))
	}
	if err == nil && res == nil {
		res = &Result{}
	}
	if err != nil {
		if parent.Err() != nil {
			// Shutting down, the drain is over: the attempt has returned
			// (its processes are gone), so release the task now rather
			// than leave it to its lease.
			p := c.released(t)
			log.Info("attempt interrupted by shutdown; task released", "to", p.To)
			finish(ended(p))
			return
		}
		p := c.failure(ctx, spec, t, err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.ErrorCode = CodeTimeout
			p.Reason = fmt.Sprintf("attempt %d of %d exceeded the agent timeout of %s", t.TurnAttempt(), t.MaxAttempts, spec.Timeout)
		}
		if fbs, ok := feedbackOf(err); ok && p.To == StateQueued {
			for i, fb := range fbs {
				if fb.ID == "" {
					fb.ID = NewID()
				}
				// The feedback is the last message, the user's; a
				// rejected answer before it is the agent's.
				mark := RetryFeedback
				fb.Role = RoleUser
				if i < len(fbs)-1 {
					fb.Role, mark = RoleAgent, RetryAnswer
				}
				// Marked, so that the next attempt can be given the
				// whole task again (Request.Retry).
				fb.Metadata = maps.Clone(fb.Metadata)
				if fb.Metadata == nil {
					fb.Metadata = map[string]any{}
				}
				fb.Metadata[RetryKey] = mark
				fb.TaskID, fb.ContextID = t.ID, t.ContextID
				p.Messages = append(p.Messages, fb)
			}
		}
		log.Warn("attempt failed", "to", p.To, "err", err)
		finish(ended(p))
		return
	}
	p := TransitionParams{To: StateSucceeded, Artifacts: acc.merge(res.Artifacts), StatusMessage: res.Message, Reason: res.Reason}
	if res.Message != nil {
		m := *res.Message
		if m.ID == "" {
			m.ID = NewID()
		}
		m.Role, m.TaskID, m.ContextID = RoleAgent, t.ID, t.ContextID
		p.StatusMessage = &m
		p.Messages = []Message{m}
	}
	switch {
	case res.InputRequired && (len(res.Spawn) > 0 || res.Wait):
		p = c.failure(ctx, spec, t, Permanent(Errorf(CodeAgentFailed, "agent %q both asked for input and spawned or waited for children", spec.Name)))
	case len(res.Spawn) > 0 || res.Wait:
		if p, err = c.await(ctx, t, req.Children, res, p); err != nil {
			p = c.failure(ctx, spec, t, err)
		}
	case res.InputRequired:
		p.To = StateInputRequired
		if p.Reason == "" {
			p.Reason = "agent asked for input"
		}
	}
	finish(ended(p))
}

// released is the end of an attempt that this node's shutdown cut: like
// an expired lease, the attempt counts, and the task is queued again at
// once (no backoff: the agent did nothing wrong) or, when that was its
// turn's last attempt, dead-lettered.
func (c *Coordinator) released(t *Task) TransitionParams {
	p := TransitionParams{ErrorCode: CodeNodeStopped}
	if _, spent := c.turnAttempts(t); spent {
		p.To = StateDeadLetter
		p.Reason = fmt.Sprintf("node %s stopped during attempt %d of %d, the last", c.node, t.TurnAttempt(), t.MaxAttempts)
		return p
	}
	p.To, p.RunAfter = StateQueued, c.now()
	p.Reason = fmt.Sprintf("node %s stopped during attempt %d of %d; queued again", c.node, t.TurnAttempt(), t.MaxAttempts)
	return p
}

// runningHere reports whether an attempt of task id is still executing on
// this node.
func (c *Coordinator) runningHere(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.running[id]
	return ok
}

// accumulator folds streamed chunks into whole artifacts so that the stored
// result holds what subscribers saw.
type accumulator struct {
	order []string
	byID  map[string]*streamed
}

// streamed is one artifact as its chunks have built it so far. Text
// appended to its last part collects in tail, not in the part: a model
// streams its answer a token a chunk, and concatenating each to the part's
// string would copy the whole text every time (quadratic in the chunks;
// ~28 % of a 10 KB echo's CPU, docs/benchmarks.md, issue 31).
type streamed struct {
	art Artifact
	// tail, when not empty, is the whole text of the last part (which is
	// a text part), its Text not updated yet.
	tail strings.Builder
}

// settle puts tail into the last part.
func (s *streamed) settle() {
	if s.tail.Len() > 0 {
		s.art.Parts[len(s.art.Parts)-1].Text = s.tail.String()
		s.tail = strings.Builder{}
	}
}

func newAccumulator() *accumulator { return &accumulator{byID: map[string]*streamed{}} }

func (a *accumulator) add(ch ArtifactChunk) {
	cur, ok := a.byID[ch.Artifact.ID]
	if !ok || !ch.Append {
		art := ch.Artifact
		art.Parts = slices.Clone(art.Parts)
		if !ok {
			a.order = append(a.order, art.ID)
		}
		a.byID[art.ID] = &streamed{art: art}
		return
	}
	for _, p := range ch.Artifact.Parts {
		n := len(cur.art.Parts)
		if n > 0 && p.Kind == PartText && cur.art.Parts[n-1].Kind == PartText {
			if cur.tail.Len() == 0 {
				cur.tail.WriteString(cur.art.Parts[n-1].Text)
			}
			cur.tail.WriteString(p.Text)
			continue
		}
		cur.settle()
		cur.art.Parts = append(cur.art.Parts, p)
	}
}

// merge returns the streamed artifacts followed by the result's own; a
// result artifact with a streamed ID replaces the streamed one.
func (a *accumulator) merge(final []Artifact) []Artifact {
	out := make([]Artifact, 0, len(a.order)+len(final))
	seen := map[string]bool{}
	for _, f := range final {
		if f.ID != "" {
			seen[f.ID] = true
		}
	}
	for _, id := range a.order {
		if !seen[id] {
			s := a.byID[id]
			s.settle()
			out = append(out, s.art)
		}
	}
	for i, f := range final {
		if f.ID == "" {
			f.ID = fmt.Sprintf("artifact-%d", len(a.order)+i+1)
		}
		out = append(out, f)
	}
	return out
}

// panicked is how an attempt ends whose agent (or a step of its
// pipeline) panicked: a failed attempt, retried like any other, rather
// than a process brought down with every other task it was running.
type panicked struct {
	value any
	stack []byte
}

func (p *panicked) Error() string { return fmt.Sprintf("the agent panicked: %v", p.value) }

// runGuarded runs an attempt's pipeline, turning a panic into a
// *panicked error. A panic on a goroutine the agent started itself is
// beyond it.
func runGuarded(ctx context.Context, run func(context.Context) (*Result, error)) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &panicked{value: v, stack: debug.Stack()}
		}
	}()
	return run(ctx)
}
