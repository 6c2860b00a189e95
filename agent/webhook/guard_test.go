package webhook

import (
	"errors"
	"testing"
	"time"

	"github.com/pactum/pactum/internal/netguard"
)

func TestRefusePrivate(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, kind string }{
		{"127.0.0.1:80", "loopback"},
		{"127.1.2.3:80", "loopback"},
		{"[::1]:80", "loopback"},
		{"[::ffff:127.0.0.1]:80", "loopback"},
		{"10.0.0.1:80", "private"},
		{"172.16.5.4:443", "private"},
		{"192.168.1.1:443", "private"},
		{"[fd00::1]:443", "private"},
		{"169.254.169.254:80", "link-local"},
		{"[fe80::1]:80", "link-local"},
		{"0.0.0.0:80", "unspecified"},
		{"0.1.2.3:80", "unspecified"},
		{"[::]:80", "unspecified"},
		{"93.184.216.34:443", ""},
		{"[2606:4700::1111]:443", ""},
		{"100.64.0.1:443", "shared"},         // carrier-grade NAT
		{"100.100.100.200:80", "shared"},     // a cloud metadata address inside it
		{"[64:ff9b::7f00:1]:80", "loopback"}, // NAT64 form of 127.0.0.1
		{"[2002:a00:1::1]:80", "private"},    // 6to4 form of 10.0.0.1
		{"[::127.0.0.1]:80", "ipv4-compatible"},
		{"198.18.0.1:80", "benchmarking"},
		{"240.0.0.1:80", "reserved"},
		{"[fec0::1]:80", "site-local"},
		{"8.8.8.8:53", ""},
	}
	for _, tt := range tests {
		err := netguard.Control("tcp", tt.addr, nil)
		var b *netguard.BlockedError
		switch {
		case tt.kind == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.addr, err)
		case tt.kind != "" && (!errors.As(err, &b) || b.Kind != tt.kind):
			t.Errorf("%s: err = %v, want refusal as %s", tt.addr, err, tt.kind)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	r := &Runtime{s: Settings{Retry: Retry{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}}}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 80: time.Second} {
		for range 50 {
			if d := r.backoff(n, 0); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", n, d, want/2, want)
			}
		}
	}
	if d := r.backoff(1, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Errorf("Retry-After 700ms: backoff = %s", d)
	}
	if d := r.backoff(1, time.Hour); d != time.Second {
		t.Errorf("Retry-After 1h: backoff = %s, want max_backoff", d)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, "-1": 0, "soon": 0, "Mon, 02 Jan 2006 15:04:05 GMT": 0} {
		if got := retryAfter(v); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}
