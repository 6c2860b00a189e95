// Package clocktest is a task.Clock for tests: a clock that stands still
// until the test moves it, so that backoffs, leases and timeouts are
// exercised without sleeping and without depending on the machine's speed.
package clocktest

import (
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
		c.timers[t] = true
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
		t.clock.timers[t] = true
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
