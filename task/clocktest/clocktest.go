// Package clocktest is a task.Clock for tests: a clock that stands still
// until the test moves it, so that backoffs, leases and timeouts are
// exercised without sleeping and without depending on the machine's speed.
package clocktest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pactum/pactum/task"
)

// Clock is a task.Clock for tests: time stands still until Advance moves
// it, which fires every timer that came due. A timer set to d <= 0 fires
// at once. Give it to a Coordinator (task.Options.Clock) and move it in
// the test instead of sleeping.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
	// set, when not nil, is closed when a timer is next set (WaitForTimer).
	set chan struct{}
}

// New returns a Clock that reads now.
func New(now time.Time) *Clock {
	return &Clock{now: now, timers: map[*fakeTimer]bool{}}
}

var _ task.TimerAtClock = (*Clock)(nil)

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires once the clock has moved d on.
func (c *Clock) NewTimer(d time.Duration) task.Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// NewTimerAt returns a timer that fires once the clock reaches when; the
// clock cannot move between reading its time and setting the timer.
func (c *Clock) NewTimerAt(when time.Time) task.Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.when = when
	if !when.After(c.now) {
		t.fire()
	} else {
		c.add(t)
	}
	return t
}

// AfterFunc calls f in its own goroutine once the clock has moved d on.
func (c *Clock) AfterFunc(d time.Duration, f func()) task.Timer {
	t := &fakeTimer{clock: c, fn: f}
	t.Reset(d)
	return t
}

// Advance moves the clock d on and fires the timers that came due, earliest
// first.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for t := range c.timers {
		if !t.when.After(c.now) {
			due = append(due, t)
		}
	}
	slices.SortFunc(due, func(a, b *fakeTimer) int { return a.when.Compare(b.when) })
	for _, t := range due {
		delete(c.timers, t)
		t.fire()
	}
}

// WaitForTimer blocks until a timer is set to fire at when (set by
// NewTimer, NewTimerAt, AfterFunc or Reset, and neither fired nor stopped
// since), or ctx ends. The code under test sets its timers from its own
// goroutines, so a test cannot tell from the outside whether a timer it
// expects has been set yet; Advance would then move the clock past a
// timer set just after, which would wait a whole period more. Waiting for
// the timer first makes each Advance fire what the test means it to.
func (c *Clock) WaitForTimer(ctx context.Context, when time.Time) error {
	for {
		c.mu.Lock()
		for t := range c.timers {
			if t.when.Equal(when) {
				c.mu.Unlock()
				return nil
			}
		}
		if c.set == nil {
			c.set = make(chan struct{})
		}
		set := c.set
		c.mu.Unlock()
		select {
		case <-set:
		case <-ctx.Done():
			c.mu.Lock()
			var pending []time.Time
			for t := range c.timers {
				pending = append(pending, t.when)
			}
			now := c.now
			c.mu.Unlock()
			slices.SortFunc(pending, time.Time.Compare)
			return fmt.Errorf("clocktest: no timer set for %v (now %v; timers set for %v): %w", when, now, pending, ctx.Err())
		}
	}
}

// add sets t, with the clock's lock held, and wakes WaitForTimer.
func (c *Clock) add(t *fakeTimer) {
	c.timers[t] = true
	if c.set != nil {
		close(c.set)
		c.set = nil
	}
}

type fakeTimer struct {
	clock *Clock
	when  time.Time
	ch    chan time.Time // nil for AfterFunc's timers
	fn    func()
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	active := t.clock.timers[t]
	delete(t.clock.timers, t)
	t.drain()
	return active
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	active := t.clock.timers[t]
	delete(t.clock.timers, t)
	t.drain()
	t.when = t.clock.now.Add(d)
	if d <= 0 {
		t.fire()
	} else {
		t.clock.add(t)
	}
	return active
}

// fire runs with the clock's lock held.
func (t *fakeTimer) fire() {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.ch <- t.when:
	default:
	}
}

// drain runs with the clock's lock held: after Stop or Reset no stale time
// is received, as with time.Timer since Go 1.23.
func (t *fakeTimer) drain() {
	if t.ch == nil {
		return
	}
	select {
	case <-t.ch:
	default:
	}
}
