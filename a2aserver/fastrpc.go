package a2aserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// An A2A 1.0 JSON-RPC SendMessage, the hot call, is answered here rather
// than by a2a-go's JSON-RPC handler: the same Handler is called with the
// same decoded request and call context, and the answer is the same bytes,
// but encoded once. The SDK encodes its response object with an Encoder
// that calls the result's MarshalJSON, which marshals the task, and then
// validates and copies that output again, and rpcWriter copies it once
// more to put the caller's id back; for a task that carries a verified
// result that was some 8 % of a request's CPU (docs/benchmarks.md).
//
// Everything else still goes through the SDK: a request whose params do
// not decode, and every error (or panic) the call ends with, which is
// handed to the SDK's handler (replayRPC) so that its form stays exactly
// the SDK's.

// sendMessageFast answers a checked A2A 1.0 JSON-RPC SendMessage request q
// (not a notification) to ep and reports whether it did; when it did not,
// nothing was called or written.
func (s *Server) sendMessageFast(w http.ResponseWriter, r *http.Request, ep *endpoint, q *rpcRequest) bool {
	var req a2a.SendMessageRequest
	if q.params == nil || json.Unmarshal(q.params, &req) != nil {
		// The SDK refuses it in its own words (rpcWriter then names
		// the member that did not decode).
		return false
	}
	ctx, _ := a2asrv.NewCallContext(r.Context(), a2asrv.NewServiceParams(r.Header))
	body, held, err := s.callSendMessage(ctx, ep, &req)
	if err != nil {
		rpcReplay(r, q, ep.v1Replay, false)(w, err)
		return true
	}
	// The answer is assembled in one buffer: the envelope, the result
	// with the held verified results in place of their marks, the end.
	size := len(body) + len(q.id) + 40
	for _, c := range held {
		size += len(c)
	}
	out := make([]byte, 0, size)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, q.id...)
	out = append(out, `,"result":`...)
	out = appendCompact(out, body, held)
	out = append(out, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
	return true
}

// callSendMessage calls ep's handler and returns the result as the SDK
// encodes it ({"task": …} or {"message": …}), except that the verified
// results in held stand as marks in it (holdCompact; appendCompact puts
// them back); a panic is an internal error with a reference, as the SDK's
// panic handler makes it.
func (s *Server) callSendMessage(ctx context.Context, ep *endpoint, req *a2a.SendMessageRequest) (body []byte, held []CompactJSON, err error) {
	defer func() {
		if p := recover(); p != nil {
			body, held, err = nil, nil, s.recovered(p)
		}
	}()
	res, err := ep.handler.SendMessage(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if t, ok := res.(*a2a.Task); ok {
		held = holdCompact(t)
	}
	// MarshalJSON is called directly: json.Marshal would call it too and
	// then validate and copy its output once more, bytes that
	// encoding/json has just written (for a task with a verified result,
	// a quarter of the answer's encoding).
	body, err = a2a.StreamResponse{Event: res}.MarshalJSON()
	if err != nil {
		return nil, nil, a2a.NewError(a2a.ErrInternalError, fmt.Sprintf("encode the result: %v", err))
	}
	return body, held, nil
}

// compactMark is what a verified result held out of an answer's encoding
// stands in for, followed by its index; the random part keeps a caller's
// text from ever being taken for one. compactMarkJSON is its JSON string
// as encoding/json writes it, without the closing quote.
var compactMark, compactMarkJSON = func() (string, []byte) {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	m := "\x00pactum:" + hex.EncodeToString(b) + ":"
	j, _ := json.Marshal(m)
	return m, j[:len(j)-1]
}()

// holdCompact replaces the CompactJSON verified results in t's metadata
// and its last artifact's (where taskWithVerified puts them) with marks,
// and returns them in mark order: encoding/json would validate and copy
// them as it writes them, and appendCompact writes them as they are.
func holdCompact(t *a2a.Task) []CompactJSON {
	var held []CompactJSON
	hold := func(meta map[string]any) {
		p, _ := meta[MetadataKey].(map[string]any)
		if c, ok := p[VerifiedKey].(CompactJSON); ok && len(c) > 0 {
			p[VerifiedKey] = compactMark + strconv.Itoa(len(held))
			held = append(held, c)
		}
	}
	hold(t.Metadata)
	if n := len(t.Artifacts); n > 0 && t.Artifacts[n-1] != nil {
		hold(t.Artifacts[n-1].Metadata)
	}
	return held
}

// appendCompact appends body, the answer's JSON, to dst with the values
// holdCompact held written as they are in place of their marks.
func appendCompact(dst, body []byte, held []CompactJSON) []byte {
	type spot struct {
		at, end int
		c       CompactJSON
	}
	var spots [2]spot
	found := spots[:0]
	var mark [64]byte
	for i, c := range held {
		m := append(append(append(mark[:0], compactMarkJSON...), strconv.Itoa(i)...), '"')
		at := bytes.Index(body, m)
		if at < 0 {
			continue // not written (cannot happen: the mark was in the task)
		}
		found = append(found, spot{at, at + len(m), c})
	}
	// The marks are not in index order (a task's artifacts are encoded
	// before its metadata).
	slices.SortFunc(found, func(a, b spot) int { return a.at - b.at })
	last := 0
	for _, f := range found {
		dst = append(append(dst, body[last:f.at]...), f.c...)
		last = f.end
	}
	return append(dst, body[last:]...)
}

// replayKey holds, in a request's context, the error replayRPC answers.
type replayKey struct{}

// replayRPC is the RequestHandler of the SDK JSON-RPC handler that writes
// the fast paths' errors: its SendMessage returns, and its
// SendStreamingMessage and SubscribeToTask yield, the error the request's
// context holds. No other method is ever called on it.
type replayRPC struct{ a2asrv.RequestHandler }

// SendMessage returns the error in ctx.
func (replayRPC) SendMessage(ctx context.Context, _ *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	return nil, replayed(ctx)
}

// SendStreamingMessage yields the error in ctx.
func (replayRPC) SendStreamingMessage(ctx context.Context, _ *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, replayed(ctx)) }
}

// SubscribeToTask yields the error in ctx.
func (replayRPC) SubscribeToTask(ctx context.Context, _ *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, replayed(ctx)) }
}

// replayed returns the error ctx holds for replayRPC.
func replayed(ctx context.Context) error {
	if err, ok := ctx.Value(replayKey{}).(error); ok && err != nil {
		return err
	}
	return a2a.ErrInternalError
}
