package audit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/audit"
)

func TestParseHead(t *testing.T) {
	t.Parallel()
	h := strings.Repeat("0a", 32)
	for _, tc := range []struct {
		in   string
		want audit.Head
		ok   bool
	}{
		{"18:" + h, audit.Head{Seq: 18, Hash: h}, true},
		{" 1:" + strings.ToUpper(h) + "\n", audit.Head{Seq: 1, Hash: h}, true},
		{"9223372036854775807:" + h, audit.Head{Seq: 9223372036854775807, Hash: h}, true},
		{"", audit.Head{}, false},
		{"18", audit.Head{}, false},
		{":" + h, audit.Head{}, false},
		{"0:" + h, audit.Head{}, false},
		{"-3:" + h, audit.Head{}, false},
		{"+3:" + h, audit.Head{}, false},
		{"9223372036854775808:" + h, audit.Head{}, false},
		{"3:" + h[:63], audit.Head{}, false},
		{"3:" + h + "00", audit.Head{}, false},
		{"3:" + strings.Repeat("zz", 32), audit.Head{}, false},
		{"3:" + h + ":4", audit.Head{}, false},
		{"3 :" + h, audit.Head{}, false},
	} {
		got, err := audit.ParseHead(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseHead(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, audit.ErrBadHead) {
			t.Errorf("ParseHead(%q): %v does not wrap ErrBadHead", tc.in, err)
		}
	}
}

// FuzzParseHead: whatever the input, ParseHead either refuses it with
// ErrBadHead or returns a head that formats back to an equivalent input.
func FuzzParseHead(f *testing.F) {
	h := strings.Repeat("0a", 32)
	for _, s := range []string{"18:" + h, "1:" + strings.ToUpper(h), "0:" + h, "18", ":", "-1:" + h, "+1:" + h, "1:" + h + "\n", "１:" + h} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := audit.ParseHead(s)
		if err != nil {
			if !errors.Is(err, audit.ErrBadHead) {
				t.Fatalf("ParseHead(%q): %v does not wrap ErrBadHead", s, err)
			}
			return
		}
		if got.Seq < 1 || len(got.Hash) != 64 || strings.ToLower(got.Hash) != got.Hash {
			t.Fatalf("ParseHead(%q) = %+v", s, got)
		}
		again, err := audit.ParseHead(got.String())
		if err != nil || again != got {
			t.Fatalf("ParseHead(%q) = %+v, but its String %q parses to %+v, %v", s, got, got.String(), again, err)
		}
	})
}
