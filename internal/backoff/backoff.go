// Package backoff computes the waits between retries: exponential growth
// from an initial wait, a cap, and random jitter taken off each wait so
// that callers that failed together do not retry together. Every retry
// loop in pactum (the task core's retry policy, the webhook and push
// deliveries, the MCP restarts, PostgreSQL's serialization retries) keeps
// its own values and shares this arithmetic. It imports only the standard
// library, so that the domain core may import it.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Exponential is an exponential backoff with jitter. The zero value waits
// nothing.
type Exponential struct {
	// Initial is the wait before the first retry (n = 1); each later
	// retry doubles it. Zero or negative: no wait at all.
	Initial time.Duration
	// Max caps the wait before jitter. Zero or negative: no cap (the
	// wait saturates at the largest time.Duration instead of
	// overflowing).
	Max time.Duration
	// Jitter is the random fraction, 0 to 1, taken off each wait: the
	// wait d becomes d·(1 - Jitter·r) with r in [0, 1), so it lies in
	// (d·(1-Jitter), d]. Zero or negative: none; above 1 counts as 1.
	Jitter float64
	// Rand returns the random r in [0, 1) for the jitter. Default:
	// math/rand/v2's Float64. Tests pass a constant for a deterministic
	// wait, or a seeded source's Float64 for a repeatable sequence.
	Rand func() float64
}

// Delay returns the wait before retry n, n ≥ 1 (a smaller n counts as
// 1): Initial·2^(n-1), capped at Max, less the jitter.
func (e Exponential) Delay(n int) time.Duration {
	d := e.Base(n)
	if d <= 0 || e.Jitter <= 0 {
		return d
	}
	r := rand.Float64
	if e.Rand != nil {
		r = e.Rand
	}
	return d - time.Duration(float64(d)*min(e.Jitter, 1)*r())
}

// Base returns the wait before retry n before jitter: Initial·2^(n-1),
// capped at Max; it is the longest Delay(n) can return.
func (e Exponential) Base(n int) time.Duration {
	if e.Initial <= 0 {
		return 0
	}
	d := e.Initial
	for i := 1; i < n; i++ {
		if e.Max > 0 && d >= e.Max {
			break
		}
		if d > math.MaxInt64/2 {
			d = math.MaxInt64
			break
		}
		d *= 2
	}
	if e.Max > 0 && d > e.Max {
		d = e.Max
	}
	return d
}
