package httpguard_test

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/httpguard"
)

// TestLimitListener: with n connections open the next Accept waits (and
// says so through full) until one closes; closing a connection twice frees
// one slot only; closing the listener ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var full atomic.Int32
	ln := httpguard.LimitListener(inner, 1, func() { full.Add(1) })
	defer ln.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	dial()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted while the first was open")
	case <-time.After(300 * time.Millisecond):
	}
	if full.Load() == 0 {
		t.Error("full was not called while Accept waited")
	}
	first.Close()
	first.Close()
	second, ok := <-accepted
	if !ok {
		t.Fatal("Accept failed after a slot came free")
	}
	defer second.Close()
	// The double Close of first freed one slot, not two: with second open,
	// a third connection waits.
	dial()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a third connection was accepted while the second was open (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	ln.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Accept on a closed listener returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end a waiting Accept")
	}
}
