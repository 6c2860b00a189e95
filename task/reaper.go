package task

import (
	"context"
	"errors"
	"fmt"
	"time"
)

func (c *Coordinator) reapLoop(ctx context.Context) {
	defer c.loops.Done()
	every := min(c.leaseFor/2, time.Second)
	lastPurge := c.clock.Now().Add(-purgeEvery) // purge once at start
	tick := c.clock.NewTimer(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		tick.Reset(every)
		c.ReapExpired(ctx)
		if now := c.clock.Now(); now.Sub(lastPurge) >= purgeEvery {
			lastPurge = now
			if n, err := c.store.PurgeIdempotencyKeys(ctx, c.now()); err != nil && ctx.Err() == nil {
				c.log.Warn("purge expired idempotency keys", "err", err)
			} else if n > 0 {
				c.log.Debug("purged expired idempotency keys", "count", n)
			}
		}
	}
}

// purgeEvery is how often expired idempotency keys are deleted.
const purgeEvery = time.Minute

// ReapExpired requeues (or dead-letters, when attempts are spent) tasks whose
// lease ended: their worker crashed or was cut off.
func (c *Coordinator) ReapExpired(ctx context.Context) {
	now := c.now()
	tasks, err := c.store.ExpiredLeases(ctx, now, 100)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("list expired leases", "err", err)
		}
		return
	}
	for _, t := range tasks {
		if c.runningHere(t.ID) {
			// This node's attempt has not returned yet (its lease watch
			// is stopping it): a new attempt would run beside it. Its
			// own end records the outcome, or the next reap requeues it.
			continue
		}
		p := TransitionParams{
			TaskID: t.ID, From: StateInProgress, LeaseOwner: t.LeaseOwner, LeaseExpiredBefore: now,
			ErrorCode: CodeLeaseExpired, Reason: fmt.Sprintf("lease of %s expired during attempt %d of %d", t.LeaseOwner, t.TurnAttempt(), t.MaxAttempts),
		}
		used, spent := c.turnAttempts(t)
		if spec, ok := c.agents[t.Agent]; ok && !spent {
			p.To, p.RunAfter = StateQueued, now.Add(spec.Retry.Backoff(used))
		} else if !spent {
			p.To, p.RunAfter = StateQueued, now
		} else {
			p.To = StateDeadLetter
		}
		if _, err := c.transition(ctx, t, p); err != nil && !errors.Is(err, ErrStateConflict) {
			c.log.Error("requeue expired task", "task", t.ID, "err", err)
		}
	}
	if len(tasks) > 0 {
		c.kick()
	}
}
