package push

import (
	"testing"
	"time"
)

// TestPushBackoff: the wait after the n-th failed delivery attempt is
// InitialBackoff doubling up to MaxBackoff, less up to a fifth, and stays
// at MaxBackoff however many attempts failed.
func TestPushBackoff(t *testing.T) {
	t.Parallel()
	p := New(nil, Options{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for n, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 64: time.Second, 1000: time.Second} {
		for range 50 {
			if d := p.backoff(n); d <= base*8/10 || d > base {
				t.Fatalf("backoff(%d) = %s, want in (%s, %s]", n, d, base*8/10, base)
			}
		}
	}
}

// TestPushCatchUpGraceDefault: the default grace is 30s plus every
// attempt's timeout and every backoff but the jitter, however many
// attempts are configured (doubling the backoff must not overflow).
func TestPushCatchUpGraceDefault(t *testing.T) {
	t.Parallel()
	p := New(nil, Options{MaxAttempts: 100, Timeout: time.Second, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second})
	// Backoffs: 0.5s, 1s, 2s, 4s, 8s, 16s, then 93 of 30s.
	want := 30*time.Second + 100*time.Second + 31500*time.Millisecond + 93*30*time.Second
	if got := p.opts.CatchUpGrace; got != want {
		t.Errorf("CatchUpGrace = %s, want %s", got, want)
	}
}
