package postgres

import (
	"context"
	"log/slog"
	"time"
)

// DefaultSealEvery is Options.SealEvery's default.
const DefaultSealEvery = 50 * time.Millisecond

// sealer is a store's background sealer: it seals the entries the store's
// own transactions leave pending as soon as they commit (wake), and, every
// Options.SealEvery, whatever else is pending (entries of a node that
// stopped before its sealer got to them).
type sealer struct {
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// startSealer starts s's background sealer.
func (s *Store) startSealer(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.sealer = &sealer{wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go s.runSealer(ctx, every)
}

// wakeSealer tells the background sealer, if there is one, that a
// transaction committed pending entries. It never blocks: wake-ups that
// arrive while the sealer is at work make it go round once more.
func (s *Store) wakeSealer() {
	if s.sealer == nil {
		return
	}
	select {
	case s.sealer.wake <- struct{}{}:
	default:
	}
}

// stopSealer stops the background sealer and waits for it, then seals
// what is still pending, for at most stopSealTimeout: a node that shuts
// down cleanly leaves nothing for the others to pick up. A seal that fails
// or is cut short leaves its entries pending for the next sealer.
func (s *Store) stopSealer() {
	if s.sealer == nil {
		return
	}
	s.sealer.cancel()
	<-s.sealer.done
	ctx, cancel := context.WithTimeout(context.Background(), stopSealTimeout)
	defer cancel()
	if err := s.sealBeforeRead(ctx); err != nil {
		s.log.Warn("postgres: close: audit entries left pending for another node", slog.Any("err", err))
	}
}

// stopSealTimeout bounds the last seal of Close.
const stopSealTimeout = 5 * time.Second

// sealGap is the least time between two background seal attempts of a
// store. Under load the commits that wake the sealer come far faster than
// seals complete; the gap lets one seal take many transactions' entries,
// and keeps the sealers of several nodes from trying the lock in a tight
// loop while one of them holds it. A seal is a commit of its own, whose
// WAL flush the next task commits queue behind: at one client a 2 ms gap
// sealed after nearly every request (1.7 flushes per request), 10 ms
// after one in two or three (1.1–1.3), for 5–10 % more requests a second.
// Readers do not wait for it: they seal what is pending first.
const sealGap = 10 * time.Millisecond

func (s *Store) runSealer(ctx context.Context, every time.Duration) {
	defer close(s.sealer.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	// retry is set when another session was sealing: it may have read the
	// pending rows before this store's last commit, so look again soon.
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.sealer.wake:
		case <-retry:
		case <-tick.C:
			// Cheap when there is nothing to do, as on an idle cluster.
			pending, err := s.pendingExists(ctx)
			if err != nil || !pending {
				if err != nil && ctx.Err() == nil {
					s.log.Warn("postgres: sealer: look for pending audit entries", slog.Any("err", err))
				}
				continue
			}
		}
		retry = nil
		busy := s.sealAll(ctx)
		// The gap follows every attempt, a busy one too: until issue 31
		// a sealer that found another one at work tried again at its
		// store's next commit, which under load is at once, so with
		// several nodes the sealers that found the lock taken kept
		// trying (two round trips each time).
		pause := time.NewTimer(sealGap)
		select {
		case <-ctx.Done():
			pause.Stop()
			return
		case <-pause.C:
		}
		if busy {
			// The other sealer may have read the pending rows before
			// this store's last commit: look again now.
			retry = closedChan
		}
	}
}

// closedChan is always ready: a retry that is due.
var closedChan = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

// sealAll seals until nothing that committed before is pending, and
// reports whether it found another session sealing (then it stops: that
// sealer is taking the entries, and runSealer looks again shortly).
func (s *Store) sealAll(ctx context.Context) (busy bool) {
	for ctx.Err() == nil {
		var n int
		err := s.inTx(ctx, func(x *txn) error {
			var err error
			n, busy, err = x.sealPending(true, sealBatch)
			return err
		})
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("postgres: sealer: seal pending audit entries", slog.Any("err", err))
			}
			return false
		case busy:
			return true
		case n < sealBatch:
			return false
		}
	}
	return false
}
