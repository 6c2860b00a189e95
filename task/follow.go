package task

import (
	"context"
	"sync"
)

// Subscribe returns the task's stored state and a channel of the events that
// follow it. The channel closes when the subscription is dropped (call
// cancel) or falls behind; a consumer that sees it close early re-reads the
// task. Events already reflected in the snapshot are filtered out.
func (c *Coordinator) Subscribe(ctx context.Context, id string) (*Task, <-chan Event, func(), error) {
	return c.subscribe(ctx, id, -1, subscriberBuffer)
}

func (c *Coordinator) subscribe(ctx context.Context, id string, historyLength, buffer int) (*Task, <-chan Event, func(), error) {
	ch, cancel := c.broker.subscribe(id, buffer)
	t, err := c.read(ctx, id, historyLength)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	out := make(chan Event, 16)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for ev := range ch {
			if ev.Kind == EventStatus && ev.Seq <= t.Seq {
				continue
			}
			select {
			case out <- ev:
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return t, out, func() { once.Do(func() { close(done); cancel() }) }, nil
}

// Wait blocks until the task is terminal or waits for input, and returns it
// with its whole history.
func (c *Coordinator) Wait(ctx context.Context, id string) (*Task, error) {
	for {
		t, ch, cancel, err := c.subscribe(ctx, id, -1, waiterBuffer)
		if err != nil {
			return nil, err
		}
		if t.State.Terminal() || t.State.Interrupted() {
			cancel()
			return t, nil
		}
		final := false
	loop:
		for {
			select {
			case <-ctx.Done():
				cancel()
				return nil, ctx.Err()
			case ev, ok := <-ch:
				if !ok {
					break loop
				}
				if ev.Final {
					final = true
					break loop
				}
			}
		}
		cancel()
		if final {
			return c.Get(ctx, id, -1)
		}
	}
}

// SubmitAndWait submits like Submit and waits like Wait. It listens before
// the task exists, so a task that finishes on this node is answered from
// its final event without reading it back.
func (c *Coordinator) SubmitAndWait(ctx context.Context, req SubmitRequest) (*SubmitResult, error) {
	if req.Envelope.TaskID == "" {
		req.Envelope.TaskID = NewID()
	}
	ch, cancel := c.broker.subscribe(req.Envelope.TaskID, waiterBuffer)
	defer cancel()
	res, err := c.Submit(ctx, req)
	if err != nil {
		return nil, err
	}
	t := res.Task
	if t.State.Terminal() || t.State.Interrupted() {
		// Rejected at submit, or a duplicate of a finished task: the
		// returned task is whole.
		return res, nil
	}
	if !res.Duplicate {
		whole, err := finalEvent(ctx, ch)
		if err != nil {
			return nil, err
		}
		if whole != nil {
			res.Task = whole
			return res, nil
		}
	}
	// A duplicate still running, a final event without the whole task, or
	// a subscription that fell behind: read it.
	if res.Task, err = c.Wait(ctx, t.ID); err != nil {
		return nil, err
	}
	return res, nil
}

// finalEvent waits for the final event on ch and returns its task when the
// event carries it whole; nil when it does not or ch closed first.
func finalEvent(ctx context.Context, ch <-chan Event) (*Task, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-ch:
			if !ok {
				return nil, nil
			}
			if !ev.Final {
				continue
			}
			if ev.Complete {
				return ev.Task, nil
			}
			return nil, nil
		}
	}
}
