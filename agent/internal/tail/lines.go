package tail

import (
	"bytes"
	"strings"
	"sync"
)

// Lines is the standard error of a long-lived program (an MCP server over
// stdio, a python worker): it keeps the last Max bytes written to it, for
// errors, and hands each complete non-blank line to Log (a line longer
// than Max is cut to Max bytes). os/exec writes from one goroutine; String
// may be called from others.
type Lines struct {
	// Max is how many bytes the tail keeps, and the longest line logged.
	Max int
	// Log receives each line, valid UTF-8 without its line end; nil logs
	// nothing.
	Log func(line string)

	mu      sync.Mutex
	tail    Buffer
	partial []byte
}

// Write logs the lines p completes and keeps the end of p. It never fails.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.partial = l.appendBounded(rest)
			break
		}
		l.partial = l.appendBounded(rest[:i])
		if line := bytes.TrimRight(l.partial, "\r"); l.Log != nil && len(bytes.TrimSpace(line)) > 0 {
			l.Log(strings.ToValidUTF8(string(line), "\uFFFD"))
		}
		l.partial = l.partial[:0]
		rest = rest[i+1:]
	}
	l.tail.Max = l.Max
	return l.tail.Write(p)
}

// appendBounded appends p to the current line, up to Max bytes.
func (l *Lines) appendBounded(p []byte) []byte {
	if room := l.Max - len(l.partial); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(l.partial, p...)
}

// String returns the tail (Buffer.String).
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tail.String()
}
