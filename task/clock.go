package task

import "time"

// Clock is where a Coordinator reads the time and sets its timers: every
// timestamp it records and every delay it waits (dispatcher polls, retry
// backoffs, lease renewals and the lease watch, the reaper, the relay's
// reconnect backoff) goes through it, so a test can drive time by hand.
// Attempt timeouts are context deadlines and follow the real clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed (at once when d <= 0), as time.NewTimer.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine once d has passed, as
	// time.AfterFunc; the returned Timer's channel is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's timer. Stop and Reset behave as time.Timer's do (Go
// 1.23 and later): after either returns, no stale time is received from C.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// RealClock is the Clock of the standard library's time package, the
// default.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc returns time.AfterFunc(d, f).
func (RealClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// nowClock is RealClock with another source of the current time: what
// Options.Now alone configures.
type nowClock struct {
	RealClock
	now func() time.Time
}

func (n nowClock) Now() time.Time { return n.now() }

// TimerAtClock is a Clock that can also set a timer for a moment rather
// than a duration, in one step. A fake clock implements it so that the
// clock cannot move between reading its time and setting the timer, which
// would make the timer fire late by however far it moved.
type TimerAtClock interface {
	Clock
	// NewTimerAt returns a timer that fires at when by the clock's time
	// (at once when when has passed).
	NewTimerAt(when time.Time) Timer
}

// timerAt returns a timer of clk that fires at when.
func timerAt(clk Clock, when time.Time) Timer {
	if a, ok := clk.(TimerAtClock); ok {
		return a.NewTimerAt(when)
	}
	return clk.NewTimer(when.Sub(clk.Now()))
}
