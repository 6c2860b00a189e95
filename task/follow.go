package task

import (
	"context"
	"fmt"
	"iter"
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

// FollowKind says what a FollowItem carries.
type FollowKind int

// Follow item kinds.
const (
	// FollowSnapshot is the first item: the task as stored when following
	// began, with its whole history and artifacts.
	FollowSnapshot FollowKind = iota + 1
	// FollowEvent is an event published after the snapshot. Status events
	// already reflected in an earlier item are not yielded.
	FollowEvent
	// FollowResync says events may have been missed (the subscription fell
	// behind, or a final status came without its task): Task is the task
	// as stored again, whole, and newer than every status yielded before.
	FollowResync
	// FollowGap says artifact chunks were lost (the subscription fell
	// behind) while the task's status did not change: Task is the task as
	// stored again, whole, at the status yielded last. The task's stored
	// artifacts hold what the chunks add up to once it is terminal.
	FollowGap
)

// FollowItem is one step of Coordinator.Follow.
type FollowItem struct {
	Kind FollowKind
	// Task is the stored task, whole, for FollowSnapshot and FollowResync.
	Task *Task
	// Event is set for FollowEvent.
	Event Event
	// ChunksLost is set on FollowResync and FollowGap items when artifact
	// chunks published since the previous item were lost: a consumer that
	// streams chunks should send the stored artifacts whole in the end.
	ChunksLost bool
}

// Settled reports whether the item shows the task terminal or waiting for
// input; it is then the last item Follow yields.
func (it FollowItem) Settled() bool {
	switch it.Kind {
	case FollowEvent:
		return it.Event.Kind == EventStatus && it.Event.Final
	case FollowGap:
		return false
	}
	return it.Task != nil && it.Task.State.Settled()
}

// Whole returns the task with its whole history and artifacts when the item
// carries it (a snapshot, a resync, or a status event marked Complete), or
// nil when the consumer must read it.
func (it FollowItem) Whole() *Task {
	if it.Kind == FollowEvent {
		if it.Event.Kind == EventStatus && it.Event.Complete {
			return it.Event.Task
		}
		return nil
	}
	return it.Task
}

// Follow yields task id as stored, then every event that follows it, until
// the task is settled (terminal or waiting for input: FollowItem.Settled)
// or ctx ends. When the subscription falls behind it re-reads the task and
// yields it as a FollowResync item if it changed (FollowGap if only
// artifact chunks were lost), so that a consumer never misses a status for
// good nor loses a chunk without being told. An error (the task cannot be
// read, or ctx's error) is yielded once and ends the sequence.
func (c *Coordinator) Follow(ctx context.Context, id string) iter.Seq2[FollowItem, error] {
	return c.follow(ctx, id, subscriberBuffer)
}

func (c *Coordinator) follow(ctx context.Context, id string, buffer int) iter.Seq2[FollowItem, error] {
	return func(yield func(FollowItem, error) bool) {
		q, cancel := c.broker.subscribeQueue(id, buffer)
		defer cancel()
		snap, err := c.read(ctx, id, -1)
		if err != nil {
			yield(FollowItem{}, err)
			return
		}
		c.followQueue(ctx, id, q, snap, yield)
	}
}

type followIdleKey struct{}

// WithFollowIdle returns ctx carrying idle, which a Follow ranging under
// it (Coordinator.Follow, Following.Follow) calls each time it has yielded
// every event it holds and is about to wait for more. A stream writer can
// then write what it is given without flushing, and flush in idle: events
// that arrive together (a blocking stream's whole run, released at its
// commit) leave in one write, and none waits in a buffer while the follow
// waits.
func WithFollowIdle(ctx context.Context, idle func()) context.Context {
	return context.WithValue(ctx, followIdleKey{}, idle)
}

// followQueue yields snap, then the events q receives (it was subscribed
// before snap was read or stored, so none is missed), until the task is
// settled, ctx ends or yield returns false.
func (c *Coordinator) followQueue(ctx context.Context, id string, q *queue, snap *Task, yield func(FollowItem, error) bool) {
	first := FollowItem{Kind: FollowSnapshot, Task: snap}
	if !yield(first, nil) || first.Settled() {
		return
	}
	lastSeq := snap.Seq
	idle, _ := ctx.Value(followIdleKey{}).(func())
	// resync yields t when it is newer than what was yielded (or, when
	// chunks were lost, as a gap), and reports whether to go on.
	resync := func(t *Task, chunks bool) bool {
		if t.Seq <= lastSeq {
			if !chunks {
				return true
			}
			return yield(FollowItem{Kind: FollowGap, Task: t, ChunksLost: true}, nil)
		}
		lastSeq = t.Seq
		it := FollowItem{Kind: FollowResync, Task: t, ChunksLost: chunks}
		return yield(it, nil) && !it.Settled()
	}
	var evs []Event
	for {
		if err := ctx.Err(); err != nil {
			yield(FollowItem{}, err)
			return
		}
		var lost, chunks bool
		evs, lost, chunks = q.take(evs)
		if lost {
			t, err := c.read(ctx, id, -1)
			if err != nil {
				yield(FollowItem{}, err)
				return
			}
			if !resync(t, chunks) {
				return
			}
		}
		for _, ev := range evs {
			if ev.Kind == EventStatus {
				if ev.Seq <= lastSeq {
					continue
				}
				if ev.Task == nil {
					if !ev.Final {
						continue
					}
					// A final status without its task: read it.
					t, err := c.Get(ctx, id, -1)
					if err != nil {
						yield(FollowItem{}, err)
						return
					}
					if !resync(t, false) {
						return
					}
					continue
				}
				lastSeq = ev.Seq
			}
			it := FollowItem{Kind: FollowEvent, Event: ev}
			if !yield(it, nil) || it.Settled() {
				return
			}
		}
		if len(evs) > 0 || lost {
			continue
		}
		if idle != nil {
			idle()
		}
		select {
		case <-ctx.Done():
			yield(FollowItem{}, ctx.Err())
			return
		case <-q.ready:
		}
	}
}

// Following is a task followed from its submission (SubmitAndFollow).
type Following struct {
	c    *Coordinator
	id   string
	q    *queue
	snap *Task
	// spec, when set, is the task's speculative creation, to wait for.
	spec *blocking
	stop func()
	once sync.Once
}

// SubmitAndFollow submits like Submit and returns, with the result, the
// new task to follow. It listens before the task exists and its sequence
// starts from the task the submission stored, without reading it back
// (a duplicate submission, or a store that did not return the task whole,
// is read once as Follow does). Range over Following.Follow once, or call
// Following.Stop, to end the subscription.
//
// The caller must tell nobody of the task but through Follow: a task this
// node claims at submit is created speculatively, as SubmitAndWait's is
// (its creation may commit with its end), and Follow yields nothing before
// the creation committed, or yields the error if it never does.
func (c *Coordinator) SubmitAndFollow(ctx context.Context, req SubmitRequest) (*SubmitResult, *Following, error) {
	if req.Envelope.TaskID == "" {
		req.Envelope.TaskID = NewID()
	}
	q, cancel := c.broker.subscribeQueue(req.Envelope.TaskID, subscriberBuffer)
	b := &blocking{follow: true, lost: make(chan error, 1), committed: make(chan struct{})}
	res, err := c.submitSpan(ctx, req, b)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	f := &Following{c: c, id: res.Task.ID, q: q, stop: cancel}
	if b.speculative {
		f.spec = b
	}
	if !res.Duplicate && res.Task.complete {
		f.snap = res.Task
	}
	return res, f, nil
}

// Follow yields the submitted task (FollowSnapshot), then what follows it,
// as Coordinator.Follow does, and ends the subscription when it returns.
// Only the first range over it yields anything.
func (f *Following) Follow(ctx context.Context) iter.Seq2[FollowItem, error] {
	return func(yield func(FollowItem, error) bool) {
		first := false
		f.once.Do(func() { first = true })
		if !first {
			return
		}
		defer f.stop()
		if f.spec != nil {
			select {
			case <-f.spec.committed:
			case err := <-f.spec.lost:
				yield(FollowItem{}, notCommitted(err))
				return
			case <-ctx.Done():
				yield(FollowItem{}, ctx.Err())
				return
			}
		}
		snap := f.snap
		if snap == nil {
			var err error
			if snap, err = f.c.read(ctx, f.id, -1); err != nil {
				yield(FollowItem{}, err)
				return
			}
		}
		f.c.followQueue(ctx, f.id, f.q, snap, yield)
	}
}

// Stop ends the subscription unless Follow is ranging over it; a Follow
// that had not started then yields nothing. Stopping twice is safe.
func (f *Following) Stop() {
	f.once.Do(f.stop)
}

// Wait blocks until the task is terminal or waits for input, and returns it
// with its whole history.
func (c *Coordinator) Wait(ctx context.Context, id string) (*Task, error) {
	for it, err := range c.follow(ctx, id, waiterBuffer) {
		if err != nil {
			return nil, err
		}
		if !it.Settled() {
			continue
		}
		if t := it.Whole(); t != nil {
			return t, nil
		}
		return c.Get(ctx, id, -1)
	}
	return nil, ctx.Err() // unreachable: Follow ends with a settled item or an error
}

// SubmitAndWait submits like Submit and waits like Wait. It listens before
// the task exists, so a task that finishes on this node is answered from
// its final event without reading it back. When this node claims the task
// at submit, the attempt runs on the calling goroutine (no worker of its
// own to hand over to and back from): the call then returns no sooner than
// that attempt's end is recorded, even if ctx ended before.
func (c *Coordinator) SubmitAndWait(ctx context.Context, req SubmitRequest) (*SubmitResult, error) {
	if req.Envelope.TaskID == "" {
		req.Envelope.TaskID = NewID()
	}
	ch, cancel := c.broker.subscribeFinal(req.Envelope.TaskID, waiterBuffer)
	defer cancel()
	b := &blocking{lost: make(chan error, 1)}
	res, err := c.submitSpan(ctx, req, b)
	if err != nil {
		return nil, err
	}
	if b.run != nil {
		// This node claimed the task: its attempt runs here, to its
		// recorded end, even if ctx ends meanwhile (as it would on a
		// worker of its own).
		b.run()
	}
	t := res.Task
	if t.State.Terminal() || t.State.Interrupted() {
		// Rejected at submit, or a duplicate of a finished task: the
		// returned task is whole.
		return res, nil
	}
	if !res.Duplicate {
		whole, err := finalEvent(ctx, ch, b.lost)
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

// notCommitted is the error of a submission whose speculative creation
// never committed (err is the commit's).
func notCommitted(err error) error {
	return fmt.Errorf("submit task: the store did not commit it: %w", err)
}

// finalEvent waits for the final event on ch and returns its task when the
// event carries it whole; nil when it does not or ch closed first. An error
// on lost (the task's speculative creation did not commit) ends the wait
// with that error.
//
// Events already on ch come first, even when ctx has ended: the caller's
// goroutine may have run the attempt itself, and its recorded end is the
// answer.
func finalEvent(ctx context.Context, ch <-chan Event, lost <-chan error) (*Task, error) {
	for {
		var ev Event
		var ok bool
		select {
		case ev, ok = <-ch:
		default:
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case err := <-lost:
				return nil, notCommitted(err)
			case ev, ok = <-ch:
			}
		}
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
