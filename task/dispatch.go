package task

import (
	"context"
	"sync/atomic"
	"time"
)

// pool is a worker pool: a bound on the concurrent attempts of its agents
// on this node (Options.Workers for the default pool, Options.Pools for
// the others). Each pool claims its own agents' tasks, so an agent never
// waits for a slot that another pool's agents hold.
type pool struct {
	name  string
	slots chan struct{}
	// agents are a named pool's agents: its claims take only their tasks.
	// except, on the default pool, are the named pools' agents: its
	// claims take every task but theirs (an agent this node does not
	// know included, which its attempt then fails).
	agents, except []string
	// backlog says queued work of the pool may be waiting for a free
	// slot.
	backlog atomic.Bool
	// wanted says a kick is for this pool: the dispatcher's next wake
	// claims for it. A claim holds every free slot of its pool while its
	// write runs, and a submission that finds none meanwhile is queued;
	// so a wake claims only for the pools it is for.
	wanted atomic.Bool
}

// poolOf returns the pool of agent's attempts: its spec's, or the default
// pool for an agent this node does not know.
func (c *Coordinator) poolOf(agent string) *pool {
	if spec, ok := c.agents[agent]; ok {
		return spec.pool
	}
	return c.pools[0]
}

// attempts counts the attempts running on this node (the slots taken).
func (c *Coordinator) attempts() int {
	n := 0
	for _, p := range c.pools {
		n += len(p.slots)
	}
	return n
}

// trySlot takes a slot of pool p if the coordinator runs and one is free.
// The slot counts as in flight at once, under the lock Stop takes, so Stop
// always waits for it; give it back with releaseSlot or use it with
// launch.
func (c *Coordinator) trySlot(p *pool) (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.stopped {
		return nil, false
	}
	select {
	case p.slots <- struct{}{}:
		c.inflight.Add(1)
		return c.runCtx, true
	default:
		return nil, false
	}
}

func (c *Coordinator) releaseSlot(p *pool) {
	<-p.slots
	c.inflight.Done()
}

// launch runs a claimed task on the slot (and in-flight count) its claimer
// took.
func (c *Coordinator) launch(ctx context.Context, t *Task) {
	go c.runClaimed(ctx, t)
}

// runClaimed runs a claimed task on the slot of its agent's pool its
// claimer took, then gives the slot back (also when the attempt panics:
// on a blocking request's goroutine the transport recovers the panic, and
// the slot must not stay taken; the task's lease then runs out and the
// reaper takes it back).
func (c *Coordinator) runClaimed(ctx context.Context, t *Task) {
	p := c.poolOf(t.Agent)
	defer func() {
		c.releaseSlot(p)
		// Work queued while every worker of the pool was busy waits for
		// a free one: wake the dispatcher now rather than at its next
		// poll.
		if p.backlog.Load() {
			c.kickPool(p)
		}
	}()
	c.execute(ctx, t)
}

// kickAt wakes the dispatcher for pool p (nil: every pool) when a task queued for later
// becomes due, so a retry's backoff is not rounded up to the next poll.
func (c *Coordinator) kickAt(at time.Time, p *pool) {
	if d := at.Sub(c.clock.Now()); d > 0 {
		c.clock.AfterFunc(d, func() { c.kickPool(p) })
		return
	}
	c.kickPool(p)
}

// kick wakes the dispatcher to claim for every pool.
func (c *Coordinator) kick() {
	for _, p := range c.pools {
		p.wanted.Store(true)
	}
	c.wakeUp()
}

// kickPool wakes the dispatcher to claim for pool p (nil: every pool).
func (c *Coordinator) kickPool(p *pool) {
	if p == nil {
		c.kick()
		return
	}
	p.wanted.Store(true)
	c.wakeUp()
}

func (c *Coordinator) wakeUp() {
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
			c.claimAndRun(ctx, true)
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
			c.claimAndRun(ctx, false)
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

// claimAndRun claims, for each worker pool (with kicked, only those a kick
// was for), as many of its agents' ready tasks as it has free slots and
// starts them, repeating while every claimed slot was filled.
func (c *Coordinator) claimAndRun(ctx context.Context, kicked bool) {
	for _, p := range c.pools {
		if !p.wanted.Swap(false) && kicked {
			continue
		}
		if p.name != "" && len(p.agents) == 0 {
			continue // sized, but no agent of this node is in it
		}
		c.claimPool(ctx, p)
	}
}

func (c *Coordinator) claimPool(ctx context.Context, p *pool) {
	for ctx.Err() == nil {
		// Assume a backlog until a claim finds fewer tasks than free
		// slots; set before counting the free slots, so an attempt that
		// ends after the count sees it and wakes the dispatcher again.
		p.backlog.Store(true)
		free := 0
		for free < cap(p.slots) {
			select {
			case p.slots <- struct{}{}:
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
		tasks, err := c.store.Claim(ctx, ClaimParams{Owner: c.nextOwner(), Node: c.node, Now: c.now(), LeaseFor: c.leaseFor, Limit: free, Agents: p.agents, Except: p.except})
		if err != nil && ctx.Err() == nil {
			c.log.Error("claim tasks", "pool", p.name, "err", err)
		}
		for range free - len(tasks) {
			c.releaseSlot(p)
		}
		for _, t := range tasks {
			c.observe(t.Agent, StateQueued, StateInProgress)
			c.logStep(t.ID, t.Agent, StateQueued, StateInProgress, "claimed")
			c.publishStatus(t)
			c.launch(c.runCtx, t)
		}
		if len(tasks) < free {
			p.backlog.Store(false)
			return
		}
	}
}
