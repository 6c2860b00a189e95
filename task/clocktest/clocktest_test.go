package clocktest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task/clocktest"
)

// TestClock: time stands still until Advance; a timer fires once the clock
// reaches it, earliest first; a stopped timer never fires; d <= 0 fires at
// once; AfterFunc runs its function when due.
func TestClock(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := clocktest.New(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now %v", c.Now())
	}
	late, early, stopped := c.NewTimer(2*time.Second), c.NewTimer(time.Second), c.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Error("Stop of a pending timer reported it inactive")
	}
	now := c.NewTimer(0)
	select {
	case <-now.C():
	default:
		t.Error("a timer of 0 did not fire at once")
	}
	c.Advance(999 * time.Millisecond)
	select {
	case <-early.C():
		t.Fatal("a timer fired before its time")
	default:
	}
	ran := make(chan time.Time, 1)
	c.AfterFunc(time.Second, func() { ran <- c.Now() })
	c.Advance(time.Millisecond)
	if got := <-early.C(); !got.Equal(start.Add(time.Second)) {
		t.Errorf("early fired at %v", got)
	}
	select {
	case <-late.C():
		t.Fatal("late fired early")
	case <-stopped.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	c.Advance(2 * time.Second)
	if got := <-late.C(); !got.Equal(start.Add(2 * time.Second)) {
		t.Errorf("late fired at %v", got)
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterFunc's function did not run")
	}
	at := c.NewTimerAt(start)
	select {
	case <-at.C():
	default:
		t.Error("a timer at a past time did not fire at once")
	}
}

// TestWaitForTimer: WaitForTimer returns once a timer is set for the
// moment asked, whether it was set before the call or while it waited
// (by another goroutine, as the code under test sets its timers), and
// not for a timer set for another moment, nor one that fired or was
// stopped; when ctx ends first it says which timers were set.
func TestWaitForTimer(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := clocktest.New(start)
	ctx := context.Background()
	c.NewTimer(time.Second)
	if err := c.WaitForTimer(ctx, start.Add(time.Second)); err != nil {
		t.Fatalf("a timer set before the call: %v", err)
	}
	set := make(chan struct{})
	go func() {
		<-set
		tm := c.NewTimer(2 * time.Second)
		tm.Reset(3 * time.Second) // Reset sets it too
	}()
	close(set)
	if err := c.WaitForTimer(ctx, start.Add(3*time.Second)); err != nil {
		t.Fatalf("a timer set while waiting: %v", err)
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	stopped := c.NewTimer(4 * time.Second)
	stopped.Stop()
	c.Advance(time.Second) // fires the timer set for start+1s
	for _, when := range []time.Time{start.Add(time.Second), start.Add(4 * time.Second), start.Add(5 * time.Second)} {
		err := c.WaitForTimer(short, when)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitForTimer(%v) = %v, want the context's deadline: no timer is set for then", when, err)
		}
		if !strings.Contains(err.Error(), start.Add(3*time.Second).String()) {
			t.Errorf("the error does not name the timer set: %v", err)
		}
	}
}
