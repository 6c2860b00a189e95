// Package netguard decides which destinations outbound requests (webhook
// agents, push notifications) may reach by default: public unicast
// addresses only. Both check the address actually dialed, so a name that
// resolves to a private address (DNS rebinding) is refused too.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

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

// ErrBlocked is what every refusal of Control wraps.
var ErrBlocked = errors.New("destination is not a public address")

// BlockedError names the refused address and why it is not public.
type BlockedError struct {
	Addr netip.Addr
	Kind string // as Classify returns it
}

// Error implements error.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("refusing to connect to %s, a %s address", e.Addr, e.Kind)
}

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Control is a net.Dialer Control function that refuses every connection
// to a non-public address. It sees the address actually dialed (each
// resolved address, each redirect hop), so DNS cannot smuggle a private one
// in; use it with a transport that has no proxy.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected dial address %q: %w", address, err)
	}
	a := ap.Addr().Unmap()
	if kind := Classify(a); kind != "" {
		return &BlockedError{Addr: a, Kind: kind}
	}
	return nil
}
