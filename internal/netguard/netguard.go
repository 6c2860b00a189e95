// Package netguard decides which destinations outbound requests (webhook
// agents, push notifications) may reach by default: globally routable
// unicast addresses only. Both check the address actually dialed, so a name
// that resolves to a non-public address (DNS rebinding) is refused too.
//
// The refused ranges follow the IANA IPv4 and IPv6 Special-Purpose Address
// Registries. IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64
// 64:ff9b::/96, 6to4 2002::/16) are judged by the address they carry;
// forms that are deprecated or cannot be decoded reliably (IPv4-compatible
// ::/96, Teredo 2001::/32, local-use NAT64 64:ff9b:1::/48) are refused
// outright, and so is every IPv6 address outside 2000::/3, the only block
// IANA allocates global unicast addresses from.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// Kinds of refused addresses, as Classify returns them and BlockedError.Kind
// holds.
const (
	KindInvalid        = "invalid"         // not an address (the zero netip.Addr)
	KindUnspecified    = "unspecified"     // 0.0.0.0/8 ("this network"), ::/128
	KindLoopback       = "loopback"        // 127.0.0.0/8, ::1
	KindPrivate        = "private"         // 10/8, 172.16/12, 192.168/16 (RFC 1918), fc00::/7 (unique local)
	KindShared         = "shared"          // 100.64.0.0/10, carrier-grade NAT (RFC 6598); holds cloud metadata addresses such as 100.100.100.200
	KindLinkLocal      = "link-local"      // 169.254/16 (cloud metadata 169.254.169.254), fe80::/10, link-local multicast
	KindIETFProtocol   = "ietf-protocol"   // 192.0.0.0/24, 2001::/23 protocol assignments (anycast services, AMT, ORCHID …)
	KindDocumentation  = "documentation"   // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
	KindRelayAnycast   = "6to4-relay"      // 192.88.99.0/24, the deprecated 6to4 relay anycast (RFC 7526)
	KindBenchmarking   = "benchmarking"    // 198.18.0.0/15, 2001:2::/48
	KindMulticast      = "multicast"       // 224/4, ff00::/8
	KindReserved       = "reserved"        // 240/4; IPv6 outside 2000::/3 not named otherwise
	KindBroadcast      = "broadcast"       // 255.255.255.255
	KindIPv4Compatible = "ipv4-compatible" // ::a.b.c.d, deprecated (RFC 4291)
	KindNAT64Local     = "nat64-local"     // 64:ff9b:1::/48, local-use translation (RFC 8215)
	KindTeredo         = "teredo"          // 2001::/32
	KindSiteLocal      = "site-local"      // fec0::/10, deprecated (RFC 3879)
	KindDiscard        = "discard"         // 100::/64, discard-only (RFC 6666)
	KindSRv6           = "srv6"            // 5f00::/16, SRv6 segment identifiers (RFC 9602)
	KindScoped         = "scoped"          // an IPv6 address with a zone (fe80::1%eth0)
)

type special struct {
	p    netip.Prefix
	kind string
}

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// v4Special lists the IPv4 ranges that are not globally routable, most
// specific first where they nest.
var v4Special = []special{
	{mp("0.0.0.0/8"), KindUnspecified},
	{mp("10.0.0.0/8"), KindPrivate},
	{mp("100.64.0.0/10"), KindShared},
	{mp("127.0.0.0/8"), KindLoopback},
	{mp("169.254.0.0/16"), KindLinkLocal},
	{mp("172.16.0.0/12"), KindPrivate},
	{mp("192.0.0.0/24"), KindIETFProtocol},
	{mp("192.0.2.0/24"), KindDocumentation},
	{mp("192.88.99.0/24"), KindRelayAnycast},
	{mp("192.168.0.0/16"), KindPrivate},
	{mp("198.18.0.0/15"), KindBenchmarking},
	{mp("198.51.100.0/24"), KindDocumentation},
	{mp("203.0.113.0/24"), KindDocumentation},
	{mp("224.0.0.0/24"), KindLinkLocal}, // link-local multicast
	{mp("224.0.0.0/4"), KindMulticast},
	{mp("255.255.255.255/32"), KindBroadcast},
	{mp("240.0.0.0/4"), KindReserved},
}

// v6Special lists the IPv6 ranges inside 2000::/3 that are not globally
// routable, and the ranges outside it that get a more telling name than
// "reserved". Embedded-IPv4 forms are handled before this list.
var v6Special = []special{
	{mp("::/128"), KindUnspecified},
	{mp("::1/128"), KindLoopback},
	{mp("64:ff9b:1::/48"), KindNAT64Local},
	{mp("::/96"), KindIPv4Compatible},
	{mp("100::/64"), KindDiscard},
	{mp("2001::/32"), KindTeredo},
	{mp("2001:2::/48"), KindBenchmarking},
	{mp("2001::/23"), KindIETFProtocol},
	{mp("2001:db8::/32"), KindDocumentation},
	{mp("3fff::/20"), KindDocumentation},
	{mp("5f00::/16"), KindSRv6},
	{mp("fc00::/7"), KindPrivate},
	{mp("fe80::/10"), KindLinkLocal},
	{mp("fec0::/10"), KindSiteLocal},
	{mp("ff02::/16"), KindLinkLocal}, // link-local multicast
	{mp("ff01::/16"), KindLinkLocal}, // interface-local multicast
	{mp("ff00::/8"), KindMulticast},
}

var (
	globalUnicast6 = mp("2000::/3")
	nat64          = mp("64:ff9b::/96")
	sixToFour      = mp("2002::/16")
)

// Classify returns why a is not a globally routable unicast destination
// (one of the Kind constants) or "" when it is one. An IPv6 address that
// carries an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64
// 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::) is judged by that IPv4 address;
// Embedded says which.
func Classify(a netip.Addr) string {
	kind, _ := classify(a)
	return kind
}

// Embedded returns the IPv4 address an IPv6 address carries in a form
// Classify decodes (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) and
// the name of that form; ok is false for any other address.
func Embedded(a netip.Addr) (v4 netip.Addr, form string, ok bool) {
	if !a.Is6() {
		return netip.Addr{}, "", false
	}
	a = a.WithZone("")
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), "IPv4-mapped", true
	case nat64.Contains(a):
		// RFC 6052 §2.2: with a /96 prefix the IPv4 address is the last
		// 32 bits.
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64", true
	case sixToFour.Contains(a):
		// RFC 3056 §2: 2002:V4ADDR::/48.
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	}
	return netip.Addr{}, "", false
}

func classify(a netip.Addr) (kind string, via string) {
	if !a.IsValid() {
		return KindInvalid, ""
	}
	zoned := a.Zone() != ""
	a = a.WithZone("") // netip.Prefix.Contains never matches a zoned address
	if v4, form, ok := Embedded(a); ok {
		a, via = v4, form
	}
	if a.Is4() {
		for _, s := range v4Special {
			if s.p.Contains(a) {
				return s.kind, via
			}
		}
		return "", via
	}
	for _, s := range v6Special {
		if s.p.Contains(a) {
			return s.kind, ""
		}
	}
	if !globalUnicast6.Contains(a) {
		return KindReserved, ""
	}
	if zoned {
		return KindScoped, ""
	}
	return "", ""
}

// ErrBlocked is what every refusal of Control wraps.
var ErrBlocked = errors.New("destination is not a public address")

// BlockedError names the refused address and why it is not public.
type BlockedError struct {
	Addr netip.Addr
	// Kind is one of the Kind constants, as Classify returns it.
	Kind string
	// Via names the IPv6 form that carried the IPv4 address Kind judges
	// ("IPv4-mapped", "NAT64", "6to4"), or is empty.
	Via string
}

// Error implements error.
func (e *BlockedError) Error() string {
	if e.Via != "" {
		v4, _, _ := Embedded(e.Addr)
		return fmt.Sprintf("refusing to connect to %s, a %s form of %s, a %s address", e.Addr, e.Via, v4, e.Kind)
	}
	return fmt.Sprintf("refusing to connect to %s, a %s address", e.Addr, e.Kind)
}

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Check returns a *BlockedError when a is not a globally routable unicast
// address, and nil when it is one.
func Check(a netip.Addr) error {
	if kind, via := classify(a); kind != "" {
		if via == "IPv4-mapped" {
			// Reported as the IPv4 address it is, as the dialer would.
			return &BlockedError{Addr: a.Unmap(), Kind: kind}
		}
		return &BlockedError{Addr: a, Kind: kind, Via: via}
	}
	return nil
}

// Control is a net.Dialer Control function that refuses every connection
// to a non-public address. It sees the address actually dialed (each
// resolved address, each redirect hop), so DNS cannot smuggle a private one
// in; use it with a transport that has no proxy.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected dial address %q: %w", address, err)
	}
	return Check(ap.Addr())
}
