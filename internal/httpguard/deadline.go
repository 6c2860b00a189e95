package httpguard

import (
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"
)

// serveWithDeadlines serves r with the guard's read and write deadlines.
//
// net/http's own Server.WriteTimeout bounds a request and its whole
// response, so it would cut every SSE stream after the timeout. Here the
// write deadline covers an ordinary response from its first write (a
// blocking call may wait long before it writes), or each write of a stream.
// The read deadline covers only the body, and only of a request that has
// one: once the body is read, net/http watches the connection for the
// client going away, and a read deadline expiring there would cancel the
// request's context, ending a stream.
func (g *Guard) serveWithDeadlines(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if g.opts.ReadTimeout == 0 && g.opts.WriteTimeout == 0 {
		next.ServeHTTP(w, r)
		return
	}
	rc := http.NewResponseController(w)
	var body *deadlineBody
	if g.opts.ReadTimeout > 0 && r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		if rc.SetReadDeadline(time.Now().Add(g.opts.ReadTimeout)) == nil {
			body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			r.Body = body
		}
	}
	if g.opts.WriteTimeout == 0 {
		next.ServeHTTP(w, r)
		return
	}
	// A deadline a previous response on this connection left would cut
	// this one.
	if rc.SetWriteDeadline(time.Time{}) != nil {
		next.ServeHTTP(w, r)
		return
	}
	dw := &deadlineWriter{ResponseWriter: w, rc: rc, timeout: g.opts.WriteTimeout, body: body}
	next.ServeHTTP(dw, r)
	// What the handler left in the buffer is written after it returns.
	_ = rc.SetWriteDeadline(time.Now().Add(g.opts.WriteTimeout))
}

// deadlineBody lifts the read deadline once the body has been read to its
// end, and remembers whether a read timed out.
type deadlineBody struct {
	io.ReadCloser
	rc *http.ResponseController

	mu       sync.Mutex
	done     bool
	timedOut bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.mu.Lock()
		switch {
		case errors.Is(err, io.EOF) && !b.done:
			b.done = true
			// The server now watches the connection for the client going
			// away; a deadline expiring there would cancel the request.
			// (net/http lifts it too when it starts watching; this does
			// not depend on that.)
			_ = b.rc.SetReadDeadline(time.Time{})
		case isTimeout(err):
			b.timedOut = true
		}
		b.mu.Unlock()
	}
	return n, err
}

// timedOutReading reports whether reading the body ran into the deadline.
func (b *deadlineBody) timedOutReading() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.timedOut
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// deadlineWriter sets the write deadline as a response is written: once, at
// the first write, for an ordinary response; before every write and flush
// for an event stream, so that a stream lives as long as its client reads
// it while a client that stops reading is still cut off.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	body    *deadlineBody

	started bool
	stream  bool
}

var (
	_ http.Flusher                              = (*deadlineWriter)(nil)
	_ interface{ Unwrap() http.ResponseWriter } = (*deadlineWriter)(nil)
)

func (d *deadlineWriter) start() {
	if d.started {
		return
	}
	d.started = true
	mt, _, _ := mime.ParseMediaType(d.Header().Get("Content-Type"))
	d.stream = mt == "text/event-stream"
	if !d.stream {
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

func (d *deadlineWriter) extend() {
	if d.stream {
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	}
}

// WriteHeader answers 408 Request Timeout, and closes the connection, in
// place of the 400 a handler writes when its body did not arrive in time.
func (d *deadlineWriter) WriteHeader(code int) {
	if code >= 200 && !d.started {
		if d.body.timedOutReading() {
			d.Header().Set("Connection", "close")
			if code == http.StatusBadRequest {
				code = http.StatusRequestTimeout
			}
		}
		d.start()
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if !d.started {
		d.WriteHeader(http.StatusOK)
	}
	d.extend()
	return d.ResponseWriter.Write(p)
}

// Flush implements http.Flusher, which SSE writers look for.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	if !d.started {
		d.WriteHeader(http.StatusOK)
	}
	d.extend()
	return d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
