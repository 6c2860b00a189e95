package wire

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Stream writes the Server-Sent Events of one streaming call (A2A
// specification §3.3.1): each event as
//
//	id: <a new UUID>\n
//	data: <payload>\n\n
//
// in one write, where the payload is the event's result wrapped in a
// JSON-RPC response for the request's id (JSON-RPC bindings) or the result
// alone (HTTP+JSON); keep-alive comments between events from a timer; and
// nothing after Close. Events are not flushed one by one: Flush sends what
// was written (the caller flushes when it has nothing more to write at
// once, and net/http when the handler returns).
type Stream struct {
	w http.ResponseWriter
	f http.Flusher
	// rpc says events are JSON-RPC responses for id.
	rpc    bool
	id     json.RawMessage
	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer
	closed bool
	// failed is set when a keep-alive could not be written: the caller
	// is gone, and the next event ends the stream.
	failed bool
}

// ErrNoFlush is the error of OpenStream on a response writer that cannot
// flush (the stream could not reach the caller while it runs).
var ErrNoFlush = errors.New("streaming is not supported by this connection")

var (
	keepAliveComment = []byte(": keep-alive\n\n")
	errStreamGone    = errors.New("the stream's caller is gone")
)

// OpenStream writes the headers of an event stream (200, text/event-stream,
// no caching, no proxy buffering) and returns the Stream. rpc says events
// are JSON-RPC responses for the request id. keepAlive is the interval of
// keep-alive comments (≤ 0: none). It fails, writing nothing, when w cannot
// flush.
func OpenStream(w http.ResponseWriter, rpc bool, id json.RawMessage, keepAlive time.Duration) (*Stream, error) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, ErrNoFlush
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &Stream{w: w, f: f, rpc: rpc, id: id}
	if keepAlive > 0 {
		s.timer = time.AfterFunc(keepAlive, func() { s.keepAlive(keepAlive) })
	}
	return s, nil
}

// keepAlive writes a keep-alive comment and sets the timer for the next.
func (s *Stream) keepAlive(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.failed {
		return
	}
	if _, err := s.w.Write(keepAliveComment); err != nil {
		s.failed = true
		return
	}
	s.f.Flush()
	s.timer.Reset(d)
}

// Event writes one event whose result is body (its JSON; nil on JSON-RPC:
// a response without a result member). An error means the caller is gone.
func (s *Stream) Event(body []byte) error {
	if s.rpc {
		return s.write(func(b []byte) []byte { return AppendRPCResult(b, s.id, body) })
	}
	return s.write(func(b []byte) []byte { return append(b, body...) })
}

// Error writes err as the stream's event in the binding's error form (a
// JSON-RPC error response, or an HTTP+JSON google.rpc.Status body).
func (s *Stream) Error(err error) error {
	if s.rpc {
		return s.write(func(b []byte) []byte { return AppendRPCError(b, s.id, err) })
	}
	return s.write(func(b []byte) []byte {
		b, _ = AppendRESTError(b, err, "")
		return b
	})
}

// write writes one event whose payload payload appends.
func (s *Stream) write(payload func([]byte) []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed || s.closed {
		return errStreamGone
	}
	b := append(s.buf[:0], "id: "...)
	b = append(b, uuid.NewString()...)
	b = append(b, "\ndata: "...)
	b = payload(b)
	b = append(b, "\n\n"...)
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

// Flush sends what was written.
func (s *Stream) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && !s.failed {
		s.f.Flush()
	}
}

// Close stops the keep-alive comments; nothing is written after it.
func (s *Stream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
