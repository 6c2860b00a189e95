package task

import (
	"context"
	"errors"
	"log/slog"
)

// renewLease keeps the lease of the attempt running under ctx until ctx
// ends, from its first renewal (due a third of the way through the lease,
// when execute starts it) on; it stops the attempt (cancel) when the lease
// is lost or about to end without a renewal.
func (c *Coordinator) renewLease(ctx context.Context, cancel context.CancelFunc, t *Task, log *slog.Logger) {
	// Renewals come every third of a lease; after a failed one, sooner, so
	// that a passing error gets several more tries before the deadline
	// below gives up on the lease.
	every, retry := c.leaseFor/3, c.leaseFor/12
	next := c.clock.NewTimer(0)
	defer next.Stop()
	// held is when this node's lease ends as far as it can know: the
	// claim's expiry, then each successful renewal's, counted from before
	// the renewal was sent so that it never overstates. Past it another
	// node may claim the task, so an attempt whose renewals kept failing
	// (the store unreachable) is stopped a third of a lease before then,
	// which leaves the runtime time to end it (an exec command's
	// kill_grace) and absorbs some clock skew between nodes.
	held := t.LeaseExpires
	if held.IsZero() {
		held = c.now().Add(c.leaseFor)
	}
	margin := c.leaseFor / 3
	expiry := timerAt(c.clock, held.Add(-margin))
	defer func() { expiry.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C():
			log.Warn("lease about to end without a renewal; stopping attempt", "lease_expires", held)
			cancel()
			return
		case <-next.C():
		}
		if ctx.Err() != nil {
			// Ended while the timer fired: nothing left to keep.
			return
		}
		sent := c.now()
		err := c.store.RenewLease(ctx, RenewParams{TaskID: t.ID, Owner: t.LeaseOwner, Now: sent, LeaseFor: c.leaseFor})
		switch {
		case errors.Is(err, ErrStateConflict) || errors.Is(err, ErrNotFound):
			log.Info("lease lost; stopping attempt")
			cancel()
			return
		case err == nil:
			held = sent.Add(c.leaseFor)
			expiry.Stop()
			expiry = timerAt(c.clock, held.Add(-margin))
			next.Reset(every)
		default:
			if ctx.Err() == nil {
				log.Warn("renew lease", "err", err, "lease_expires", held)
			}
			next.Reset(retry)
		}
	}
}
