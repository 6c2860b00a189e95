// Package tail keeps the end of a program's standard error for the
// errors of the runtimes that start programs (exec, mcp over stdio,
// python), and logs the lines of long-lived ones (Lines).
package tail

import (
	"strings"
	"unicode/utf8"
)

// Buffer keeps the last Max bytes written to it. The zero value keeps
// nothing; it is not safe for concurrent use.
type Buffer struct {
	// Max is how many bytes the buffer keeps.
	Max int

	buf []byte
	cut bool
}

// Write keeps the end of p and drops what no longer fits. It never fails.
func (t *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > t.Max {
		p = p[len(p)-t.Max:]
		t.cut = true
	}
	if over := len(t.buf) + len(p) - t.Max; over > 0 {
		t.buf = t.buf[:copy(t.buf, t.buf[over:])]
		t.cut = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the tail as valid UTF-8 without surrounding space,
// starting at a whole character and marked with "…" when earlier output
// was dropped.
func (t *Buffer) String() string {
	b := t.buf
	if t.cut {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if t.cut && s != "" {
		s = "…" + s
	}
	return s
}
