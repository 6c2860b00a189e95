package task

import (
	"context"
	"time"

	"github.com/pactum/pactum/internal/backoff"
)

// Relay carries task events between nodes that share one store, so a
// client streaming from one node sees every event of a task another node
// runs. A PostgreSQL store offers one over LISTEN/NOTIFY; the embedded
// SQLite store, one node per file, needs none.
//
// The Coordinator hands every event it publishes to Send and puts what
// Listen delivers on its local broker. Send must not block on the network
// for long (queue and forward in the background) and must keep one task's
// events in order. Listen runs until ctx ends or the connection breaks; the
// Coordinator calls it again after an error. Each time Listen starts
// listening it delivers an Event of Kind EventResync, since events sent
// while it was not listening are lost: the Coordinator then ends its local
// subscriptions, whose consumers re-read the stored state, and scans for
// queued work. An event that arrives through a relay is never Complete: its
// Task carries no history or artifacts. Listen need not deliver what the
// same relay sent (the Coordinator published it already; it ignores events
// whose Node is its own in any case).
type Relay interface {
	Send(ev Event)
	Listen(ctx context.Context, deliver func(Event)) error
}

// publish puts ev on the local broker and, when ev started here, on the
// relay.
func (c *Coordinator) publish(ev Event) {
	c.broker.Publish(ev)
	if c.relay != nil && ev.Node == "" {
		ev.Node, ev.Complete = c.node, false
		if ev.Task != nil {
			snap := *ev.Task
			snap.History, snap.Artifacts, snap.complete = nil, nil, false
			ev.Task = &snap
		}
		c.relay.Send(ev)
	}
}

// relayLoop delivers other nodes' events until ctx ends, listening again
// after a broken connection.
func (c *Coordinator) relayLoop(ctx context.Context) {
	defer c.loops.Done()
	// 100 ms doubling to 5 s without jitter (one listener per node); a
	// connection that held for a minute starts the count again.
	relayBackoff := backoff.Exponential{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	failures := 0
	for {
		start := c.clock.Now()
		err := c.relay.Listen(ctx, c.deliverRemote)
		if ctx.Err() != nil {
			return
		}
		if c.clock.Now().Sub(start) > time.Minute {
			failures = 0
		}
		failures++
		delay := relayBackoff.Delay(failures)
		c.log.Warn("event relay stopped; listening again", "err", err, "in", delay)
		wait := c.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C():
		}
		// Whatever was queued meanwhile is found by a scan, not an event.
		c.kick()
	}
}

// deliverRemote handles an event another node published: local
// subscribers get it; a task queued elsewhere wakes the dispatcher; a task
// this node is running that another node moved on (canceled) stops at
// once instead of at the next lease renewal.
func (c *Coordinator) deliverRemote(ev Event) {
	if ev.Kind == EventResync {
		c.broker.Reset()
		c.kick()
		return
	}
	if ev.Node == "" || ev.Node == c.node {
		return
	}
	ev.Complete = false
	if ev.Task != nil && (ev.Task.complete || ev.Task.History != nil || ev.Task.Artifacts != nil) {
		snap := *ev.Task
		snap.History, snap.Artifacts, snap.complete = nil, nil, false
		ev.Task = &snap
	}
	c.broker.Publish(ev)
	if ev.Kind != EventStatus {
		return
	}
	switch {
	case ev.State == StateQueued:
		at := time.Time{}
		var p *pool // an event without its task: every pool
		if ev.Task != nil {
			at, p = ev.Task.RunAfter, c.poolOf(ev.Task.Agent)
		}
		c.kickAt(at, p)
	case ev.State != StateInProgress:
		if c.stopAttempt(ev.TaskID, false) {
			c.log.Info("task moved on by another node; stopping attempt", "task", ev.TaskID, "state", ev.State, "node", ev.Node)
		}
	}
}

// stopAttempt stops this node's attempt of a task that was moved on
// (canceled) and reports whether one was running. With remember, an attempt
// claimed here but not yet registered is remembered, so it stops as soon as
// it registers instead of running its agent to the end (Cancel uses it; a
// relayed event does not, as most name tasks that never run here);
// remembered entries older than a minute are forgotten.
func (c *Coordinator) stopAttempt(id string, remember bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.running[id]; e != nil {
		e.cancel()
		return true
	}
	if !remember {
		return false
	}
	now := c.clock.Now()
	for k, at := range c.stopPending {
		if now.Sub(at) > time.Minute {
			delete(c.stopPending, k)
		}
	}
	c.stopPending[id] = now
	return false
}

// runEntry is an attempt executing on this node.
type runEntry struct{ cancel context.CancelFunc }

// register makes a running attempt stoppable by stopAttempt. An attempt
// canceled between its claim and now stops at once, before its agent runs.
func (c *Coordinator) register(id string, cancel context.CancelFunc) *runEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &runEntry{cancel: cancel}
	c.running[id] = e
	if _, ok := c.stopPending[id]; ok {
		delete(c.stopPending, id)
		cancel()
	}
	return e
}
