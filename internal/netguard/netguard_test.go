package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestClassify walks every refused range with one or more addresses, the
// embedded-IPv4 forms of refused and public addresses, and public controls.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, kind string }{
		// IPv4 special-purpose registry.
		{"0.0.0.0", KindUnspecified}, {"0.1.2.3", KindUnspecified},
		{"10.0.0.1", KindPrivate}, {"10.255.255.255", KindPrivate},
		{"100.64.0.1", KindShared}, {"100.100.100.200", KindShared}, {"100.127.255.254", KindShared},
		{"127.0.0.1", KindLoopback}, {"127.1.2.3", KindLoopback},
		{"169.254.169.254", KindLinkLocal}, {"169.254.0.1", KindLinkLocal},
		{"172.16.0.1", KindPrivate}, {"172.31.255.1", KindPrivate},
		{"192.0.0.1", KindIETFProtocol}, {"192.0.0.170", KindIETFProtocol},
		{"192.0.2.1", KindDocumentation}, {"198.51.100.7", KindDocumentation}, {"203.0.113.9", KindDocumentation},
		{"192.88.99.1", KindRelayAnycast},
		{"192.168.1.1", KindPrivate},
		{"198.18.0.1", KindBenchmarking}, {"198.19.255.254", KindBenchmarking},
		{"224.0.0.1", KindLinkLocal}, {"239.1.1.1", KindMulticast}, {"233.252.0.1", KindMulticast},
		{"240.0.0.1", KindReserved}, {"254.1.2.3", KindReserved},
		{"255.255.255.255", KindBroadcast},
		// IPv6 special-purpose registry.
		{"::", KindUnspecified}, {"::1", KindLoopback},
		{"::ffff:127.0.0.1", KindLoopback}, {"::ffff:10.0.0.1", KindPrivate}, {"::ffff:169.254.169.254", KindLinkLocal},
		{"::127.0.0.1", KindIPv4Compatible}, {"::10.0.0.1", KindIPv4Compatible}, {"::8.8.8.8", KindIPv4Compatible},
		{"64:ff9b::127.0.0.1", KindLoopback}, {"64:ff9b::a9fe:a9fe", KindLinkLocal}, {"64:ff9b::10.1.2.3", KindPrivate},
		{"64:ff9b::100.100.100.200", KindShared}, {"64:ff9b::192.168.0.1", KindPrivate},
		{"64:ff9b:1::8.8.8.8", KindNAT64Local}, {"64:ff9b:1:ffff::1", KindNAT64Local},
		{"100::1", KindDiscard},
		{"2001::1", KindTeredo}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", KindTeredo},
		{"2001:2::1", KindBenchmarking}, {"2001:10::1", KindIETFProtocol}, {"2001:1::1", KindIETFProtocol},
		{"2001:db8::1", KindDocumentation}, {"3fff::1", KindDocumentation},
		{"2002:7f00:1::1", KindLoopback}, {"2002:a00:1::", KindPrivate}, {"2002:a9fe:a9fe::1", KindLinkLocal},
		{"2002:c0a8:101::1", KindPrivate},
		{"5f00::1", KindSRv6},
		{"fc00::1", KindPrivate}, {"fd00::1", KindPrivate},
		{"fe80::1", KindLinkLocal}, {"fe80::1%eth0", KindLinkLocal},
		{"fec0::1", KindSiteLocal}, {"feff::1", KindSiteLocal},
		{"ff02::1", KindLinkLocal}, {"ff01::1", KindLinkLocal}, {"ff05::1", KindMulticast}, {"ff0e::1", KindMulticast},
		{"::ffff:0:7f00:1", KindReserved}, {"1::1", KindReserved}, {"4000::1", KindReserved}, {"e000::1", KindReserved},
		{"2606:4700::1111%eth0", KindScoped},
		// Public controls, plain and embedded.
		{"8.8.8.8", ""}, {"1.1.1.1", ""}, {"93.184.216.34", ""}, {"100.63.255.255", ""}, {"100.128.0.0", ""},
		{"198.17.255.255", ""}, {"198.20.0.0", ""}, {"223.255.255.255", ""},
		{"2606:4700::1111", ""}, {"2a00:1450:4001:82a::200e", ""},
		{"::ffff:8.8.8.8", ""}, {"64:ff9b::8.8.8.8", ""}, {"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		if got := Classify(netip.MustParseAddr(tt.addr)); got != tt.kind {
			t.Errorf("Classify(%s) = %q, want %q", tt.addr, got, tt.kind)
		}
	}
	if got := Classify(netip.Addr{}); got != KindInvalid {
		t.Errorf("Classify(zero Addr) = %q, want %q", got, KindInvalid)
	}
}

func TestControl(t *testing.T) {
	t.Parallel()
	for addr, kind := range map[string]string{
		"127.0.0.1:80": KindLoopback, "[::ffff:10.0.0.1]:443": KindPrivate, "[fe80::1]:80": KindLinkLocal,
		"0.0.0.0:80": KindUnspecified, "100.100.100.200:80": KindShared, "[64:ff9b::a9fe:a9fe]:80": KindLinkLocal,
		"[2002:7f00:1::1]:80": KindLoopback, "[::127.0.0.1]:80": KindIPv4Compatible,
		"93.184.216.34:443": "", "[2606:4700::1111]:443": "",
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

// TestBlockedErrorNamesTheEmbeddedAddress: a refusal of an IPv6 form says
// which IPv4 address it carried.
func TestBlockedErrorNamesTheEmbeddedAddress(t *testing.T) {
	t.Parallel()
	err := Check(netip.MustParseAddr("64:ff9b::a9fe:a9fe"))
	if err == nil || !strings.Contains(err.Error(), "NAT64 form of 169.254.169.254") {
		t.Errorf("err = %v, want it to name the NAT64 form of 169.254.169.254", err)
	}
	var b *BlockedError
	if err := Check(netip.MustParseAddr("::ffff:127.0.0.1")); !errors.As(err, &b) || b.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("IPv4-mapped loopback: err = %v, want it reported as 127.0.0.1", err)
	}
}
