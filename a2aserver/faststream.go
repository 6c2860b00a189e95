package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"

	"github.com/pactum/pactum/task"
)

// An A2A 1.0 SendStreamingMessage or SubscribeToTask, over JSON-RPC or
// HTTP+JSON, is answered here too, for the reasons SendMessage is
// (fastrpc.go) and one more: a2a-go runs the handler's event sequence on a
// goroutine of its own and hands each event's JSON to the writing
// goroutine over a channel, so every event of a stream crossed goroutines
// (a thread wake-up when the other is asleep), was encoded by json.Marshal
// around the result's MarshalJSON (validated and copied once more), and,
// on JSON-RPC, was copied again by rpcWriter to put the caller's id back;
// and each stream kept that goroutine, its stack and its channel for as
// long as it was open. Here the sequence runs on the request's goroutine
// and each event is written in one piece:
//
//	id: <a new UUID>\n
//	data: {"jsonrpc":"2.0","id":<the caller's id>,"result":<event>}\n\n
//
// (on HTTP+JSON, data: <event>), the bytes a2a-go writes (in two writes),
// headers included. Events are flushed when the task's follow has nothing
// more to yield and waits (task.WithFollowIdle), not one by one: the
// events of a blocking stream, which all become visible at its one commit,
// leave in one write. Keep-alive comments are written between events as
// the SDK writes them (Options.KeepAlive), from a timer. An error the
// sequence yields, or a panic, is handed to the SDK's handler (replayRPC)
// and written in its form, as the stream's last event.

// streamMessageFast answers a checked A2A 1.0 JSON-RPC
// SendStreamingMessage request q (not a notification) to ep and reports
// whether it did; when it did not, nothing was called or written.
func (s *Server) streamMessageFast(w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest) bool {
	return streamDecoded(s, w, r, ep, q, (*Handler).SendStreamingMessage)
}

// subscribeFast answers a checked A2A 1.0 JSON-RPC SubscribeToTask request
// q (not a notification) to ep as streamMessageFast answers
// SendStreamingMessage.
func (s *Server) subscribeFast(w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest) bool {
	return streamDecoded(s, w, r, ep, q, (*Handler).SubscribeToTask)
}

// streamDecoded decodes q's params as a2a-go does for the method whose
// Handler method is call, and streams what call returns; params that do
// not decode (or none) are left to the SDK, which refuses them in its own
// words.
func streamDecoded[P any](s *Server, w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest,
	call func(*Handler, context.Context, *P) iter.Seq2[a2a.Event, error]) bool {
	var params P
	if q.params == nil || json.Unmarshal(q.params, &params) != nil {
		return false
	}
	return s.streamFast(w, r, ep, q, func(ctx context.Context) iter.Seq2[a2a.Event, error] {
		return call(ep.handler, ctx, &params)
	})
}

// streamFast writes the stream of events open returns for q as a2a-go's
// JSON-RPC handler would, and reports whether it did (not when the
// response cannot be flushed: the SDK refuses that in its words).
func (s *Server) streamFast(w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest, open func(context.Context) iter.Seq2[a2a.Event, error]) bool {
	return s.streamSSE(w, r, open, sseStream{
		id:     q.id,
		params: a2asrv.NewServiceParams(r.Header),
		encode: encodeEvent,
		replay: rpcReplay(r, q, ep.v1Replay, false),
	})
}

// streamREST is streamFast for an A2A 1.0 HTTP+JSON stream
// (SendStreamingMessage, SubscribeToTask): each event is the result's JSON
// alone, and an error is written as a2a-go's HTTP+JSON handler writes it
// into a stream, by that handler (over replayRPC).
func (s *Server) streamREST(w http.ResponseWriter, r *http.Request, ep *endpoint, open func(context.Context) iter.Seq2[a2a.Event, error]) bool {
	return s.streamSSE(w, r, open, sseStream{
		params: a2asrv.NewServiceParams(r.Header),
		encode: encodeEvent,
		replay: func(hs http.ResponseWriter, err error) {
			// The replaying handler yields err for either streaming
			// method; the route and body are what it needs to get there.
			rr := r.Clone(context.WithValue(r.Context(), replayKey{}, err))
			rr.Method, rr.URL.Path, rr.URL.RawPath = http.MethodPost, "/message:stream", ""
			rr.Body, rr.ContentLength = io.NopCloser(strings.NewReader("{}")), 2
			ep.v1ReplayREST.ServeHTTP(hs, rr)
		},
	})
}

// legacyStreamFast answers a checked A2A 0.3 JSON-RPC message/stream or
// tasks/resubscribe request q (not a notification) to ep as a2a-go's 0.3
// JSON-RPC handler would: the params decoded and converted as it does
// them, each event converted to its 0.3 form and wrapped as the result
// for q's id, an error written by that handler (over replayRPC). It
// reports whether it answered; params that do not decode or convert (or
// none) are left to the SDK, which refuses them in its own words.
func (s *Server) legacyStreamFast(w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest) bool {
	if q.params == nil {
		return false
	}
	var open func(context.Context) iter.Seq2[a2a.Event, error]
	switch q.method {
	case "message/stream":
		var p a2alegacy.MessageSendParams
		if json.Unmarshal(q.params, &p) != nil {
			return false
		}
		req, err := a2av0.ToV1SendMessageRequest(&p)
		if err != nil {
			return false
		}
		open = func(ctx context.Context) iter.Seq2[a2a.Event, error] {
			return ep.handler.SendStreamingMessage(ctx, req)
		}
	case "tasks/resubscribe":
		var p a2alegacy.TaskIDParams
		if json.Unmarshal(q.params, &p) != nil {
			return false
		}
		req := a2av0.ToV1SubscribeToTaskRequest(&p)
		open = func(ctx context.Context) iter.Seq2[a2a.Event, error] { return ep.handler.SubscribeToTask(ctx, req) }
	default:
		return false
	}
	return s.streamSSE(w, r, open, sseStream{
		id:     q.id,
		params: a2av0.ToServiceParams(r.Header),
		encode: encodeLegacyEvent,
		replay: rpcReplay(r, q, ep.v0Replay, true),
	})
}

// rpcReplay returns the replay of an error for the JSON-RPC request q
// (r): h, an SDK JSON-RPC transport over replayRPC (legacy: 0.3's), writes
// it in its form.
func rpcReplay(r *http.Request, q *rpcRequest, h http.Handler, legacy bool) func(http.ResponseWriter, error) {
	return func(w http.ResponseWriter, err error) {
		serveRPC(w, r.WithContext(context.WithValue(r.Context(), replayKey{}, err)), h, q, legacy)
	}
}

// encodeEvent returns an A2A 1.0 event's JSON as a2a-go's transports
// write it (MarshalJSON called directly: json.Marshal would validate and
// copy its output once more).
func encodeEvent(ev a2a.Event) ([]byte, error) { return a2a.StreamResponse{Event: ev}.MarshalJSON() }

// encodeLegacyEvent returns the JSON of an event's A2A 0.3 form, nil for
// none, as a2a-go's 0.3 JSON-RPC handler converts and encodes it.
func encodeLegacyEvent(ev a2a.Event) ([]byte, error) {
	compat, err := a2av0.FromV1Event(ev)
	if err != nil || compat == nil {
		return nil, err
	}
	return json.Marshal(compat)
}

// sseStream is what differs between the streams streamSSE writes.
type sseStream struct {
	// id is the JSON-RPC request's id each event's result is wrapped
	// for; nil on HTTP+JSON, where an event is the result alone.
	id []byte
	// params are the call's service parameters, read from the headers as
	// the SDK's transport for the stream's protocol reads them.
	params *a2asrv.ServiceParams
	// encode returns an event's result JSON; nil when it has none.
	encode func(a2a.Event) ([]byte, error)
	// replay writes the error the stream ends with, in the SDK's form,
	// once the events before it were written (to a writer whose headers
	// go nowhere: the stream's were sent).
	replay func(http.ResponseWriter, error)
}

// streamSSE writes the SSE stream of the events open returns, as st
// says, and reports whether it answered (not when the response cannot be
// flushed: the SDK refuses that in its words).
func (s *Server) streamSSE(w http.ResponseWriter, r *http.Request, open func(context.Context) iter.Seq2[a2a.Event, error], st sseStream) bool {
	f, ok := w.(http.Flusher)
	if !ok {
		return false
	}
	callCtx, _ := a2asrv.NewCallContext(r.Context(), st.params)
	// As the SDK's: the sequence's context ends when the stream does.
	ctx, cancel := context.WithCancel(callCtx)
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, f: f, id: st.id}
	sw.keepAlive(s.opts.KeepAlive)
	// Events are flushed when the task's follow waits for more (or when
	// the stream ends), not one by one.
	ctx = task.WithFollowIdle(ctx, sw.flush)
	err := s.writeEvents(func() iter.Seq2[a2a.Event, error] { return open(ctx) }, st.encode, sw)
	sw.close()
	if err != nil {
		st.replay(headersSent{w: w, f: f}, err)
	}
	return true
}

// writeEvents writes the events of the sequence open returns, each as
// encode makes it, to sw until it ends, and returns the error it ends with
// (a panic's, in open too, as the SDK's panic handler makes it); nil also
// when the caller went away.
func (s *Server) writeEvents(open func() iter.Seq2[a2a.Event, error], encode func(a2a.Event) ([]byte, error), sw *sseWriter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = s.recovered(p)
		}
	}()
	for ev, err := range open() {
		if err != nil {
			return err
		}
		body, err := encode(ev)
		if err != nil {
			return err
		}
		if sw.event(body) != nil {
			return nil
		}
	}
	return nil
}

// sseWriter writes a stream's events and keep-alive comments, one at a
// time.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
	// id is the JSON-RPC request's id, each event's result is wrapped
	// in; nil on HTTP+JSON, where an event is the result alone.
	id     []byte
	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer
	closed bool
	// failed is set when a keep-alive could not be written: the caller
	// is gone, and the next event ends the stream.
	failed bool
}

var (
	keepAliveComment = []byte(": keep-alive\n\n")
	errStreamGone    = errors.New("a2aserver: the stream's caller is gone")
)

// keepAlive writes a keep-alive comment every d (none when d ≤ 0) until
// close, as the SDK's ticker does.
func (sw *sseWriter) keepAlive(d time.Duration) {
	if d <= 0 {
		return
	}
	sw.timer = time.AfterFunc(d, func() {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		if sw.closed || sw.failed {
			return
		}
		if _, err := sw.w.Write(keepAliveComment); err != nil {
			sw.failed = true
			return
		}
		sw.f.Flush()
		sw.timer.Reset(d)
	})
}

// event writes one event, body the result's JSON (nil: a JSON-RPC
// response without a result), without flushing it:
// flush does, when the follow waits, and net/http when the handler
// returns.
func (sw *sseWriter) event(body []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.failed {
		return errStreamGone
	}
	b := append(sw.buf[:0], "id: "...)
	b = append(b, uuid.NewString()...)
	b = append(b, "\ndata: "...)
	if sw.id != nil {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, sw.id...)
		if body != nil {
			b = append(b, `,"result":`...)
			b = append(b, body...)
		}
		b = append(b, '}')
	} else {
		b = append(b, body...)
	}
	b = append(b, "\n\n"...)
	sw.buf = b
	_, err := sw.w.Write(b)
	return err
}

// flush sends what was written (the follow's idle hook).
func (sw *sseWriter) flush() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if !sw.closed && !sw.failed {
		sw.f.Flush()
	}
}

// close stops the keep-alive comments; nothing is written after it.
func (sw *sseWriter) close() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.closed = true
	if sw.timer != nil {
		sw.timer.Stop()
	}
}

// headersSent is the response writer of an error the SDK writes into a
// stream whose headers were sent: its headers go nowhere, its writes and
// flushes to the stream.
type headersSent struct {
	w http.ResponseWriter
	f http.Flusher
}

func (h headersSent) Header() http.Header         { return http.Header{} }
func (h headersSent) WriteHeader(int)             {}
func (h headersSent) Write(p []byte) (int, error) { return h.w.Write(p) }
func (h headersSent) Flush()                      { h.f.Flush() }
