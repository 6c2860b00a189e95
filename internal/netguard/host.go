package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// ErrInvalidHost is what every HostError wraps.
var ErrInvalidHost = errors.New("invalid host")

// HostError says why a URL host was refused by ParseHost.
type HostError struct {
	Host   string
	Reason string
}

// Error implements error.
func (e *HostError) Error() string { return fmt.Sprintf("host %q: %s", e.Host, e.Reason) }

// Unwrap makes errors.Is(err, ErrInvalidHost) hold.
func (e *HostError) Unwrap() error { return ErrInvalidHost }

// maxHostLen bounds the hosts ParseHost reads (DNS names are at most 253).
const maxHostLen = 1024

// ParseHost reads the host of an http or https URL the way browsers (the
// WHATWG URL host parser) and the BSD inet_aton resolvers do, so that a
// host that any of them would dial as an IP address is returned as that
// address, whatever its spelling:
//
//   - "[v6]" is an IPv6 address; a zone ("[fe80::1%eth0]") is refused.
//   - A host whose last label is a number (decimal, octal with a leading
//     0, or hex with 0x) is an IPv4 address of one to four parts: "127.1",
//     "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", with an optional
//     trailing dot. One that does not parse as such ("1.2.3.256",
//     "example.0x") is refused, as browsers refuse it.
//   - Fullwidth digits and letters and the ideographic full stops, which
//     IDNA maps to ASCII before that test, are mapped first.
//
// Any other host is a name: ParseHost returns the zero Addr and a nil
// error. host is as url.URL.Hostname returns it (brackets removed) when
// bracketed is false, or the text between the brackets when it is true.
func ParseHost(host string, bracketed bool) (netip.Addr, error) {
	if len(host) > maxHostLen {
		return netip.Addr{}, &HostError{Host: host[:64] + "…", Reason: fmt.Sprintf("longer than %d bytes", maxHostLen)}
	}
	if host == "" {
		return netip.Addr{}, &HostError{Host: host, Reason: "empty"}
	}
	if bracketed || strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return netip.Addr{}, &HostError{Host: host, Reason: "not an IPv6 address"}
		}
		if a.Zone() != "" {
			return netip.Addr{}, &HostError{Host: host, Reason: "an IPv6 address with a zone"}
		}
		return a, nil
	}
	if !utf8.ValidString(host) {
		return netip.Addr{}, &HostError{Host: host, Reason: "not valid UTF-8"}
	}
	h := foldHost(host)
	labels := strings.Split(h, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	if !isNumberLabel(labels[len(labels)-1]) {
		return netip.Addr{}, nil
	}
	a, ok := parseIPv4(labels)
	if !ok {
		return netip.Addr{}, &HostError{Host: host, Reason: "ends in a number but is not an IPv4 address"}
	}
	return a, nil
}

// foldHost lowercases ASCII and maps the fullwidth ASCII forms (U+FF01 …
// U+FF5E) and the ideographic full stops (U+3002, U+FF0E, U+FF61) to
// ASCII, as UTS #46 mapping does; other characters are kept.
func foldHost(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFF01 - 0x21
		case r == 0x3002 || r == 0xFF61:
			r = '.'
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isNumberLabel implements the WHATWG "ends in a number" test for one
// label: all ASCII digits, or 0x followed by hex digits (or nothing).
func isNumberLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		return strings.Trim(l[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// parseIPv4 implements the WHATWG IPv4 parser on labels (a trailing empty
// label already removed).
func parseIPv4(labels []string) (netip.Addr, bool) {
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(labels))
	for i, l := range labels {
		n, ok := parseIPv4Number(l)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number reads one part: 0x… hex, 0… octal, else decimal. Values
// that cannot fit in 32 bits report !ok.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case strings.HasPrefix(s, "0x"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}

// CheckHost tells before any connection whether host, the host of an http
// or https URL (as ParseHost takes it), can only reach addresses Control
// refuses: it returns the *BlockedError of a literal address that is not
// public, or of the first address of a name that resolves (with r, nil for
// the default resolver) to no public address at all. A name that does not
// resolve now, or that resolves to a public address among others, is
// left to Control, which judges each address actually dialed; CheckHost
// is an early warning (at configuration time), not the guard.
func CheckHost(ctx context.Context, r *net.Resolver, host string, bracketed bool) error {
	addr, err := ParseHost(host, bracketed)
	if err != nil {
		return err
	}
	if addr.IsValid() {
		return Check(addr)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	var first error
	for _, a := range addrs {
		err := Check(a)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}
