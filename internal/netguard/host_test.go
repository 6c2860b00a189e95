package netguard

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

func TestParseHost(t *testing.T) {
	t.Parallel()
	addrs := []struct {
		host      string
		bracketed bool
		want      string
	}{
		{"127.0.0.1", false, "127.0.0.1"},
		{"127.0.0.1.", false, "127.0.0.1"},
		{"127.1", false, "127.0.0.1"},
		{"127.0.1", false, "127.0.0.1"},
		{"2130706433", false, "127.0.0.1"},
		{"0x7f000001", false, "127.0.0.1"},
		{"0X7F000001", false, "127.0.0.1"},
		{"0x7f.1", false, "127.0.0.1"},
		{"0177.0.0.1", false, "127.0.0.1"},
		{"0177.1", false, "127.0.0.1"},
		{"017700000001", false, "127.0.0.1"},
		{"0x7f.0x0.0x0.0x1", false, "127.0.0.1"},
		{"0x.0x.0x.0x", false, "0.0.0.0"},
		{"0", false, "0.0.0.0"},
		{"１２７.０.０.１", false, "127.0.0.1"},
		{"127。0。0。1", false, "127.0.0.1"},
		{"169.254.43518", false, "169.254.169.254"},
		{"0xa9fea9fe", false, "169.254.169.254"},
		{"1684301000", false, "100.100.100.200"},
		{"8.8.8.8", false, "8.8.8.8"},
		{"4294967295", false, "255.255.255.255"},
		{"::1", true, "::1"},
		{"::ffff:127.0.0.1", true, "::ffff:127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", true, "64:ff9b::a9fe:a9fe"},
	}
	for _, tt := range addrs {
		a, err := ParseHost(tt.host, tt.bracketed)
		if err != nil || a != netip.MustParseAddr(tt.want) {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", tt.host, a, err, tt.want)
		}
	}
	for _, name := range []string{"example.com", "localhost", "1password.com", "123.example", "0x7g.com", "a.0xg", "xn--nxasmq6b.com", "bücher.de"} {
		if a, err := ParseHost(name, false); err != nil || a.IsValid() {
			t.Errorf("ParseHost(%q) = %v, %v; want a name", name, a, err)
		}
	}
	for _, bad := range []struct {
		host      string
		bracketed bool
	}{
		{"", false}, {"1.2.3.256", false}, {"256.1.1.1", false}, {"1.2.3.4.5", false}, {"4294967296", false},
		{"0x100000000", false}, {"08", false}, {"example.0", false}, {"1..1", false}, {"fe80::1%eth0", true},
		{"1.2.3.4", true}, {"not-v6", true}, {"\xff.1", false},
	} {
		if a, err := ParseHost(bad.host, bad.bracketed); !errors.Is(err, ErrInvalidHost) {
			t.Errorf("ParseHost(%q, %v) = %v, %v; want ErrInvalidHost", bad.host, bad.bracketed, a, err)
		}
	}
}

// FuzzParseHost: ParseHost never panics; an address it returns reads back
// as itself in its canonical spelling; and a dotted-decimal IPv4 address
// that the standard library reads is read the same.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "example.com",
		"1.2.3.256", "::1", "fe80::1%eth0", "１２７.０.０.１", "0x", "0.", ".", "..", "0x.0x", "00000000000000000000000001"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, host string, bracketed bool) {
		a, err := ParseHost(host, bracketed)
		if err != nil {
			if a.IsValid() || !errors.Is(err, ErrInvalidHost) {
				t.Fatalf("ParseHost(%q) = %v, %v", host, a, err)
			}
			return
		}
		if a.IsValid() {
			b, err := ParseHost(a.String(), a.Is6())
			if err != nil || b != a {
				t.Fatalf("ParseHost(%q) = %v, but its canonical form reads as %v, %v", host, a, b, err)
			}
			_ = Classify(a)
		}
		if std, err := netip.ParseAddr(host); err == nil && std.Is4() && !bracketed && a != std {
			t.Fatalf("ParseHost(%q) = %v, netip reads %v", host, a, std)
		}
	})
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host      string
		bracketed bool
		kind      string // "" when allowed
	}{
		{"127.0.0.1", false, KindLoopback},
		{"0x7f.1", false, KindLoopback},
		{"::1", true, KindLoopback},
		{"10.1.2.3", false, KindPrivate},
		{"169.254.169.254", false, KindLinkLocal},
		{"localhost", false, KindLoopback}, // resolved from /etc/hosts
		{"93.184.216.34", false, ""},
		{"no-such-host.invalid", false, ""}, // does not resolve: left to the dialer's guard
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := CheckHost(ctx, nil, tt.host, tt.bracketed)
		cancel()
		var b *BlockedError
		switch {
		case tt.kind == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.host, err)
		case tt.kind != "" && (!errors.As(err, &b) || b.Kind != tt.kind):
			t.Errorf("%s: err = %v, want a refusal as %s", tt.host, err, tt.kind)
		}
	}
}
