package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"127.0.0.1": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fd00::1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local",
		"224.0.0.1": "link-local", "239.1.1.1": "multicast", "ff05::1": "multicast",
		"0.0.0.0": "unspecified", "0.1.2.3": "unspecified", "::": "unspecified",
		"93.184.216.34": "", "2606:4700::1111": "",
	}
	for in, want := range cases {
		if got := Classify(netip.MustParseAddr(in)); got != want {
			t.Errorf("Classify(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestControl(t *testing.T) {
	t.Parallel()
	for addr, kind := range map[string]string{
		"127.0.0.1:80": "loopback", "[::ffff:10.0.0.1]:443": "private", "[fe80::1]:80": "link-local",
		"0.0.0.0:80": "unspecified", "93.184.216.34:443": "",
	} {
		err := Control("tcp", addr, nil)
		var b *BlockedError
		switch {
		case kind == "" && err != nil:
			t.Errorf("%s refused: %v", addr, err)
		case kind != "" && (!errors.As(err, &b) || b.Kind != kind || !errors.Is(err, ErrBlocked)):
			t.Errorf("%s: err = %v, want a %s refusal wrapping ErrBlocked", addr, err, kind)
		}
	}
	if err := Control("tcp", "not an address", nil); err == nil || errors.Is(err, ErrBlocked) {
		t.Errorf("malformed address: %v", err)
	}
}
