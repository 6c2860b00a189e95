package task

import (
	"context"
	"testing"
	"time"
)

// TestCancelBeforeAttemptRegisters: a cancel that finds the attempt claimed
// but not yet registered stops it the moment it registers; a relayed event
// for a task not running here leaves nothing behind.
func TestCancelBeforeAttemptRegisters(t *testing.T) {
	c := &Coordinator{running: map[string]*runEntry{}, stopPending: map[string]time.Time{}, clock: RealClock{}}
	if c.stopAttempt("t1", true) {
		t.Fatal("stopAttempt reported a running attempt that was not registered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.register("t1", cancel)
	if ctx.Err() == nil {
		t.Fatal("an attempt canceled before it registered kept running")
	}
	if len(c.stopPending) != 0 {
		t.Fatalf("pending stops left after registration: %v", c.stopPending)
	}
	c.stopAttempt("elsewhere", false)
	if len(c.stopPending) != 0 {
		t.Fatalf("a relayed event remembered a task that does not run here: %v", c.stopPending)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	c.register("t2", cancel2)
	if !c.stopAttempt("t2", true) || ctx2.Err() == nil {
		t.Fatal("stopAttempt did not stop a registered attempt")
	}
}
