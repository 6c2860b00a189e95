package task

import (
	"context"
	"time"
)

// trySlot takes a worker slot if the coordinator runs and one is free. The
// slot counts as in flight at once, under the lock Stop takes, so Stop
// always waits for it; give it back with releaseSlot or use it with launch.
func (c *Coordinator) trySlot() (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.stopped {
		return nil, false
	}
	select {
	case c.slots <- struct{}{}:
		c.inflight.Add(1)
		return c.runCtx, true
	default:
		return nil, false
	}
}

func (c *Coordinator) releaseSlot() {
	<-c.slots
	c.inflight.Done()
}

// launch runs a claimed task on the slot (and in-flight count) its claimer
// took.
func (c *Coordinator) launch(ctx context.Context, t *Task) {
	go c.runClaimed(ctx, t)
}

// runClaimed runs a claimed task on the slot its claimer took, then gives
// the slot back (also when the attempt panics: on a blocking request's
// goroutine the transport recovers the panic, and the slot must not stay
// taken; the task's lease then runs out and the reaper takes it back).
func (c *Coordinator) runClaimed(ctx context.Context, t *Task) {
	defer func() {
		c.releaseSlot()
		// Work queued while every worker was busy waits for a free one:
		// wake the dispatcher now rather than at its next poll.
		if c.backlog.Load() {
			c.kick()
		}
	}()
	c.execute(ctx, t)
}

// kickAt wakes the dispatcher when a task queued for later becomes due, so
// a retry's backoff is not rounded up to the next poll.
func (c *Coordinator) kickAt(at time.Time) {
	if d := at.Sub(c.clock.Now()); d > 0 {
		c.clock.AfterFunc(d, c.kick)
		return
	}
	c.kick()
}

func (c *Coordinator) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Coordinator) dispatchLoop(ctx context.Context) {
	defer c.loops.Done()
	timer := c.clock.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
			// A kick is for work this node queued; its own backoffs wake it
			// through kickAt, so the poll timer keeps running as it is.
			c.claimAndRun(ctx)
			continue
		case <-timer.C():
		}
		// Poll: catch tasks that other processes queued, and backoffs that
		// ended. A claim holds every free worker slot until its write
		// returns, and a submission that finds none meanwhile is queued
		// instead of claimed at once (one commit more, and a wait for
		// this loop); so claim only when a read says something is due.
		// A failed read claims anyway. (A task queued by a node whose
		// clock runs ahead is due here when this clock reaches its time,
		// or at once when that node's queued event wakes this loop.)
		next := c.poll
		at, err := c.store.NextRunAfter(ctx)
		if err != nil || (!at.IsZero() && !at.After(c.clock.Now())) {
			c.claimAndRun(ctx)
			at, err = c.store.NextRunAfter(ctx)
		}
		if err == nil && !at.IsZero() {
			if d := at.Sub(c.clock.Now()); d < next {
				next = max(d, time.Millisecond)
			}
		}
		timer.Reset(next)
	}
}

// claimAndRun claims as many ready tasks as there are free workers and
// starts them, repeating while every claimed slot was filled.
func (c *Coordinator) claimAndRun(ctx context.Context) {
	for ctx.Err() == nil {
		// Assume a backlog until a claim finds fewer tasks than free
		// workers; set before counting the free slots, so an attempt that
		// ends after the count sees it and wakes the dispatcher again.
		c.backlog.Store(true)
		free := 0
		for free < cap(c.slots) {
			select {
			case c.slots <- struct{}{}:
				c.inflight.Add(1)
				free++
				continue
			default:
			}
			break
		}
		if free == 0 {
			return
		}
		tasks, err := c.store.Claim(ctx, ClaimParams{Owner: c.nextOwner(), Node: c.node, Now: c.now(), LeaseFor: c.leaseFor, Limit: free})
		if err != nil && ctx.Err() == nil {
			c.log.Error("claim tasks", "err", err)
		}
		for range free - len(tasks) {
			c.releaseSlot()
		}
		for _, t := range tasks {
			c.observe(t.Agent, StateQueued, StateInProgress)
			c.logStep(t.ID, t.Agent, StateQueued, StateInProgress, "claimed")
			c.publishStatus(t)
			c.launch(c.runCtx, t)
		}
		if len(tasks) < free {
			c.backlog.Store(false)
			return
		}
	}
}
