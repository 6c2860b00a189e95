package mcpagent

import (
	"testing"
	"time"
)

// TestRestartDelay: no wait after the first failure, then restart_backoff
// doubling per further failure up to max_restart_backoff, with no jitter.
func TestRestartDelay(t *testing.T) {
	t.Parallel()
	r := &Runtime{s: Settings{RestartBackoff: time.Second, MaxRestartBackoff: 5 * time.Second}}
	for n, want := range map[int]time.Duration{-1: 0, 0: 0, 1: 0, 2: time.Second, 3: 2 * time.Second, 4: 4 * time.Second, 5: 5 * time.Second, 1000: 5 * time.Second} {
		if got := r.restartDelay(n); got != want {
			t.Errorf("restartDelay(%d) = %s, want %s", n, got, want)
		}
	}
}
