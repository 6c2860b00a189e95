// Package header checks HTTP headers that an agent's configuration adds to
// the requests its runtime sends (the a2a and mcp runtimes).
package header

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/pactum/pactum/agent/internal/tmpl"
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

// Redacted is a header map (name → value) that formats as its names only,
// so printing or logging settings never reveals a value.
type Redacted map[string]string

// String implements fmt.Stringer without the values.
func (h Redacted) String() string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k+":<redacted>")
	}
	slices.Sort(names)
	return "map[" + strings.Join(names, " ") + "]"
}

// GoString implements fmt.GoStringer without the values.
func (h Redacted) GoString() string { return "Headers" + h.String() }

// LogValue implements slog.LogValuer without the values.
func (h Redacted) LogValue() slog.Value { return slog.StringValue(h.String()) }

// CheckAll runs Check on every header, in name order; an error names the
// header as the setting "headers.NAME".
func CheckAll(h map[string]string, transport string, reserved []string) error {
	for _, name := range sortedKeys(h) {
		if err := Check(name, h[name], transport, reserved); err != nil {
			return fmt.Errorf("headers.%s: %w", name, err)
		}
	}
	return nil
}

// Expand returns h as an http.Header with ${VAR} references replaced from
// lookup (tmpl.ExpandEnv) and checks the results. Errors name the header
// and the variable, never the value.
func Expand(h map[string]string, lookup func(string) (string, bool), transport string, reserved []string) (http.Header, error) {
	out := make(http.Header, len(h))
	for _, name := range sortedKeys(h) {
		v, err := tmpl.ExpandEnv(h[name], lookup)
		if err != nil {
			return nil, fmt.Errorf("headers.%s: %w", name, err)
		}
		if err := Check(name, v, transport, reserved); err != nil {
			return nil, fmt.Errorf("headers.%s (after expansion): %w", name, err)
		}
		out.Set(name, v)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
