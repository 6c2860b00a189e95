package push

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pactum/pactum/internal/netguard"
)

// maxPushURLLen bounds a webhook URL.
const maxPushURLLen = 2048

// errPrivateDestination marks a push URL refused because it points at an
// address that is not globally routable.
var errPrivateDestination = errors.New("push destination is not public")

// ValidateURL checks a webhook URL: absolute http or https, a host, and
// (unless allowPrivate) no localhost name and no IP address, in any
// spelling a browser or resolver reads as one ("127.1", "2130706433",
// "0x7f000001", "[::ffff:127.0.0.1]"), that is not globally routable (see
// package netguard). A host that is neither a name nor an address
// ("1.2.3.256", an IPv6 zone) is refused whatever allowPrivate says. Names
// that resolve to non-public addresses are refused when the Pusher dials
// them.
//
// It is the one rule for push destinations: transports call it when a push
// configuration is created, and the Pusher again before each delivery.
func ValidateURL(raw string, allowPrivate bool) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("push notification url is required")
	}
	if len(raw) > maxPushURLLen {
		return nil, fmt.Errorf("push notification url is longer than %d bytes", maxPushURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("push notification url %q does not parse: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("push notification url %q must use http or https", raw)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("push notification url %q names no host", raw)
	}
	addr, err := netguard.ParseHost(host, strings.HasPrefix(u.Host, "["))
	if err != nil {
		return nil, fmt.Errorf("push notification url %q: %w", raw, err)
	}
	if allowPrivate {
		return u, nil
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return nil, fmt.Errorf("push notification url %q points at localhost: %w; pactum refuses push destinations that are not public unless private push is allowed (AllowPrivatePush, push.allow_private)", raw, errPrivateDestination)
	}
	if addr.IsValid() {
		if err := netguard.Check(addr); err != nil {
			return nil, fmt.Errorf("push notification url %q: %w: %w; pactum refuses push destinations that are not public unless private push is allowed (AllowPrivatePush, push.allow_private)", raw, errPrivateDestination, err)
		}
	}
	return u, nil
}
