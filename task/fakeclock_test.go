package task

import (
	"slices"
	"sync"
	"time"
)

// FakeClock is a Clock for tests (of this package and of task_test): time
// stands still until Advance moves it, which fires every timer that came
// due. A timer set to d <= 0 fires at once.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
}

// NewFakeClock returns a FakeClock that reads now.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now, timers: map[*fakeTimer]bool{}}
}

var _ Clock = (*FakeClock)(nil)

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires once the clock has moved d on.
func (c *FakeClock) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// NewTimerAt returns a timer that fires once the clock reaches when; the
// clock cannot move between reading its time and setting the timer.
func (c *FakeClock) NewTimerAt(when time.Time) Timer {
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
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{clock: c, fn: f}
	t.Reset(d)
	return t
}

// Advance moves the clock d on and fires the timers that came due, earliest
// first.
func (c *FakeClock) Advance(d time.Duration) {
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
	clock *FakeClock
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
