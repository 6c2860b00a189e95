package tail

import (
	"slices"
	"strings"
	"testing"
)

// Lines logs each complete non-blank line once, across writes, cut to
// Max bytes, and keeps the tail for errors.
func TestLines(t *testing.T) {
	var got []string
	l := &Lines{Max: 8, Log: func(line string) { got = append(got, line) }}
	for _, w := range []string{"first li", "ne\r\n\n  \nsec", "ond\nthird-without-end"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if want := []string{"first li", "second"}; !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	if s := l.String(); !strings.HasSuffix(s, "out-end") || len(s) > 8+len("…") {
		t.Errorf("tail = %q, want the last 8 bytes marked as cut", s)
	}
	(&Lines{Max: 4}).Write([]byte("no log func\n")) // must not panic
}
