// Package header checks HTTP headers that an agent's configuration adds to
// the requests its runtime sends (the a2a and mcp runtimes).
package header

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Check refuses a header name that is not an RFC 9110 token, one of
// reserved (names the transport sets itself; matched canonically), and a
// value with a line break or NUL. transport names the transport in the
// error. The value is never quoted: it may be a secret.
func Check(name, value, transport string, reserved []string) error {
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return errors.New("not a valid header name")
	}
	if slices.ContainsFunc(reserved, func(h string) bool { return http.CanonicalHeaderKey(h) == http.CanonicalHeaderKey(name) }) {
		return fmt.Errorf("set by the %s transport; cannot be configured", transport)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return errors.New("value contains a line break or NUL")
	}
	return nil
}

// isTokenChar reports whether r may appear in a header name (RFC 9110 tchar).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
