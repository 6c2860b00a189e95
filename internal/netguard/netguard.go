// Package netguard decides which destinations outbound requests (webhook
// agents, push notifications) may reach by default: public unicast
// addresses only. Both check the address actually dialed, so a name that
// resolves to a private address (DNS rebinding) is refused too.
package netguard

import "net/netip"

// Classify returns why a is not a public unicast destination — "loopback",
// "private", "link-local", "multicast" or "unspecified" — or "" when it is
// one. IPv4-mapped IPv6 addresses are judged as IPv4.
func Classify(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a.IsUnspecified(), a.Is4() && a.As4()[0] == 0:
		return "unspecified"
	}
	return ""
}
