package backoff_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/backoff"
)

func fixed(r float64) func() float64 { return func() float64 { return r } }

// TestDelay: growth, the cap, n < 1, saturation without a cap, and the
// jitter's bounds with the random value at either end of [0, 1).
func TestDelay(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	below1 := math.Nextafter(1, 0)
	tests := []struct {
		name string
		e    backoff.Exponential
		n    int
		want time.Duration
	}{
		{"zero value", backoff.Exponential{}, 3, 0},
		{"negative initial", backoff.Exponential{Initial: -ms, Max: time.Second}, 3, 0},
		{"first", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, 1, 100 * ms},
		{"n zero counts as 1", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, 0, 100 * ms},
		{"n negative counts as 1", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, -5, 100 * ms},
		{"doubles", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, 4, 800 * ms},
		{"capped", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, 5, time.Second},
		{"capped far out", backoff.Exponential{Initial: 100 * ms, Max: time.Second}, 1 << 30, time.Second},
		{"initial above max", backoff.Exponential{Initial: 2 * time.Second, Max: time.Second}, 1, time.Second},
		{"no cap", backoff.Exponential{Initial: time.Second}, 11, 1024 * time.Second},
		{"no cap saturates", backoff.Exponential{Initial: time.Second}, 200, math.MaxInt64},
		{"jitter r=0 takes nothing", backoff.Exponential{Initial: 100 * ms, Max: time.Second, Jitter: 0.5, Rand: fixed(0)}, 2, 200 * ms},
		{"jitter r=0.5", backoff.Exponential{Initial: 100 * ms, Max: time.Second, Jitter: 0.5, Rand: fixed(0.5)}, 2, 150 * ms},
		{"jitter r→1 stays above the floor", backoff.Exponential{Initial: 100 * ms, Max: time.Second, Jitter: 0.5, Rand: fixed(below1)}, 2, 100*ms + 1},
		{"jitter on the cap", backoff.Exponential{Initial: 100 * ms, Max: time.Second, Jitter: 0.2, Rand: fixed(0.5)}, 9, 900 * ms},
		{"jitter above 1 counts as 1", backoff.Exponential{Initial: 100 * ms, Jitter: 3, Rand: fixed(0.25)}, 1, 75 * ms},
		{"negative jitter is none", backoff.Exponential{Initial: 100 * ms, Jitter: -1, Rand: fixed(0.5)}, 1, 100 * ms},
	}
	for _, tt := range tests {
		if got := tt.e.Delay(tt.n); got != tt.want {
			t.Errorf("%s: Delay(%d) = %s, want %s", tt.name, tt.n, got, tt.want)
		}
	}
}

// TestDelayJitterRange: with the default random source every wait lies in
// (base·(1-Jitter), base], and the waits are not all the same.
func TestDelayJitterRange(t *testing.T) {
	t.Parallel()
	for _, jitter := range []float64{0.2, 0.5, 1} {
		e := backoff.Exponential{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: jitter}
		for n := 1; n <= 6; n++ {
			base := e.Base(n)
			floor := time.Duration(float64(base) * (1 - jitter))
			seen := map[time.Duration]bool{}
			for range 200 {
				d := e.Delay(n)
				if d <= floor && jitter < 1 || d < 0 || d > base {
					t.Fatalf("jitter %g: Delay(%d) = %s, want in (%s, %s]", jitter, n, d, floor, base)
				}
				seen[d] = true
			}
			if len(seen) < 2 {
				t.Errorf("jitter %g: Delay(%d) always %s", jitter, n, e.Delay(n))
			}
		}
	}
}

// TestDelaySeeded: a seeded source gives a repeatable sequence.
func TestDelaySeeded(t *testing.T) {
	t.Parallel()
	seq := func() []time.Duration {
		e := backoff.Exponential{Initial: time.Second, Max: time.Minute, Jitter: 0.5, Rand: rand.New(rand.NewPCG(1, 2)).Float64}
		var ds []time.Duration
		for n := 1; n <= 8; n++ {
			ds = append(ds, e.Delay(n))
		}
		return ds
	}
	a, b := seq(), seq()
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("same seed, different waits: %v and %v", a, b)
	}
}

func ExampleExponential() {
	e := backoff.Exponential{
		Initial: 500 * time.Millisecond,
		Max:     5 * time.Second,
		Jitter:  0.2,
		Rand:    func() float64 { return 0.5 }, // a deterministic 10% off
	}
	for n := 1; n <= 6; n++ {
		fmt.Println(n, e.Delay(n))
	}
	// Output:
	// 1 450ms
	// 2 900ms
	// 3 1.8s
	// 4 3.6s
	// 5 4.5s
	// 6 4.5s
}
