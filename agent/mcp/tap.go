package mcpagent

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTapLine bounds the line a progressTap buffers; longer lines (large
// results) are passed on without a look: a progress notification is short.
const maxTapLine = 64 << 10

// progressTap reads through to r and hands every progress notification it
// sees to on, in the reading goroutine, before the bytes that follow it are
// read. It understands newline-delimited JSON (stdio) and server-sent
// events (streamable HTTP).
//
// The SDK delivers notifications to its handler on another goroutine than
// results, so a notification sent just before a tool's result would often
// reach the handler after the call had returned. Seen here, on the wire,
// the notifications of a call are handled before its result is even read.
// The SDK's handler still gets them too; the sink drops the repeats.
type progressTap struct {
	r    io.Reader
	on   func(*sdk.ProgressNotificationParams)
	line []byte
	skip bool // the current line is over maxTapLine
}

// Read implements io.Reader.
func (t *progressTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *progressTap) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !t.skip {
			if len(t.line)+len(chunk) > maxTapLine {
				t.skip, t.line = true, t.line[:0]
			} else {
				t.line = append(t.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !t.skip {
			t.inspect(t.line)
		}
		t.line, t.skip = t.line[:0], false
		b = b[i+1:]
	}
}

var (
	progressMethod = []byte(`"notifications/progress"`)
	sseData        = []byte("data:")
)

func (t *progressTap) inspect(line []byte) {
	line = bytes.TrimSpace(line)
	if rest, ok := bytes.CutPrefix(line, sseData); ok {
		line = bytes.TrimSpace(rest)
	}
	if !bytes.Contains(line, progressMethod) {
		return
	}
	var msg struct {
		Method string                          `json:"method"`
		Params *sdk.ProgressNotificationParams `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "notifications/progress" || msg.Params == nil {
		return
	}
	t.on(msg.Params)
}

// tapReader is the stdout of a stdio server as the SDK reads it. Close
// does nothing: pactum closes the pipe itself once the program is gone,
// so that the program is not killed by SIGPIPE while it shuts down.
type tapReader struct{ progressTap }

// Close implements io.Closer.
func (*tapReader) Close() error { return nil }

// tapBody is an HTTP response body of server-sent events, tapped.
type tapBody struct {
	progressTap
	body io.Closer
}

// Close implements io.Closer.
func (b *tapBody) Close() error { return b.body.Close() }

// isEventStream reports whether a Content-Type is server-sent events.
func isEventStream(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream")
}
