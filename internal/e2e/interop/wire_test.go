package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

const (
	// maxRecorded bounds how much of each body a recorder keeps.
	maxRecorded = 4 << 10
	// maxBuffered bounds a non-streaming response body.
	maxBuffered = 16 << 20
)

// recorder is an http.RoundTripper that keeps each exchange the a2a-go
// client makes, so a failing step can show the raw request and response it
// was judged on.
type recorder struct {
	next http.RoundTripper

	mu sync.Mutex
	ex []*exchange
}

type exchange struct {
	Method, URL string
	Version     string // the A2A-Version request header
	ReqBody     string
	Status      string
	StatusCode  int
	ContentType string
	RespBody    bytes.Buffer
	Err         error

	mu *sync.Mutex // the recorder's
}

func newRecorder() *recorder { return &recorder{next: http.DefaultTransport} }

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	e := &exchange{Method: req.Method, URL: req.URL.String(), Version: req.Header.Get("A2A-Version"), mu: &r.mu}
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		e.ReqBody = clip(string(body))
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.ex = append(r.ex, e)
	r.mu.Unlock()

	resp, err := r.next.RoundTrip(req)
	if err != nil {
		r.mu.Lock()
		e.Err = err
		r.mu.Unlock()
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	var body []byte
	if !strings.HasPrefix(ct, "text/event-stream") {
		// Keep whole non-streaming bodies, read or not by the client (it
		// skips the body of a status it does not expect).
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxBuffered))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Status, e.StatusCode, e.ContentType = resp.Status, resp.StatusCode, ct
	if err != nil {
		e.Err = err
		return nil, err
	}
	if body == nil && strings.HasPrefix(ct, "text/event-stream") {
		resp.Body = &teeBody{ReadCloser: resp.Body, e: e}
		return resp, nil
	}
	e.RespBody.Write(body[:min(len(body), maxRecorded)])
	return resp, nil
}

// teeBody copies what the client reads (SSE included, as it streams) into
// the exchange.
type teeBody struct {
	io.ReadCloser
	e *exchange
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.e.mu.Lock()
		if room := maxRecorded - b.e.RespBody.Len(); room > 0 {
			b.e.RespBody.Write(p[:min(n, room)])
		}
		b.e.mu.Unlock()
	}
	return n, err
}

// mark returns the number of exchanges so far, for since.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ex)
}

// dump logs the exchanges from mark on (at most the last few).
func (r *recorder) dump(t *testing.T, from int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	ex := r.ex[from:]
	if len(ex) > 6 {
		ex = ex[len(ex)-6:]
	}
	var b strings.Builder
	for _, e := range ex {
		fmt.Fprintf(&b, "> %s %s (A2A-Version: %q)\n", e.Method, e.URL, e.Version)
		if e.ReqBody != "" {
			fmt.Fprintf(&b, "> %s\n", e.ReqBody)
		}
		if e.Err != nil {
			fmt.Fprintf(&b, "< error: %v\n", e.Err)
			continue
		}
		fmt.Fprintf(&b, "< %s %s\n", e.Status, e.ContentType)
		if e.RespBody.Len() > 0 {
			fmt.Fprintf(&b, "< %s\n", strings.ReplaceAll(strings.TrimSpace(e.RespBody.String()), "\n", "\n< "))
		}
	}
	t.Logf("wire exchanges:\n%s", b.String())
}

// last returns the most recent exchange whose URL or request body contains s.
func (r *recorder) last(s string) *exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ex) - 1; i >= 0; i-- {
		if strings.Contains(r.ex[i].URL, s) || strings.Contains(r.ex[i].ReqBody, s) {
			return r.ex[i]
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > maxRecorded {
		return s[:maxRecorded] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// lastExchange returns the most recent exchange.
func (r *recorder) lastExchange() *exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ex) == 0 {
		return nil
	}
	return r.ex[len(r.ex)-1]
}

func (e *exchange) body() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.RespBody.String()
}

// decodeError decodes the error an exchange answered with: a JSON-RPC error
// object (in a JSON body or the first SSE event) or a REST google.rpc.Status.
func (e *exchange) decodeError() (a2aError, bool) {
	body := strings.TrimSpace(e.body())
	if strings.HasPrefix(e.ContentType, "text/event-stream") {
		for _, line := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				body = strings.TrimSpace(d)
				break
			}
		}
	}
	var env struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int               `json:"code"`
			Data    json.RawMessage   `json:"data"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &env) != nil || env.Error == nil {
		return a2aError{}, false
	}
	out := a2aError{httpStatus: e.StatusCode}
	details := env.Error.Details
	if env.JSONRPC != "" {
		out.rpcCode = env.Error.Code
		_ = json.Unmarshal(env.Error.Data, &details)
	}
	for _, d := range details {
		var info struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(d, &info) == nil && strings.HasSuffix(info.Type, "google.rpc.ErrorInfo") {
			out.reason = info.Reason
		}
	}
	return out, true
}

// unaryGRPC is a gRPC client interceptor that keeps each unary call as an
// exchange: URL is the full method, Version the a2a-version metadata,
// ReqBody the request as protojson, Status and StatusCode its gRPC code.
func (r *recorder) unaryGRPC(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	e := r.startGRPC(ctx, method)
	e.request(req)
	err := invoker(ctx, method, req, reply, cc, opts...)
	e.settle(err, reply)
	return err
}

// streamGRPC is unaryGRPC for streams: the code is the one the stream
// ends with; the response body the first message.
func (r *recorder) streamGRPC(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	e := r.startGRPC(ctx, method)
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		e.settle(err, nil)
		return nil, err
	}
	return &recordedStream{ClientStream: cs, e: e}, nil
}

func (r *recorder) startGRPC(ctx context.Context, method string) *exchange {
	md, _ := metadata.FromOutgoingContext(ctx)
	e := &exchange{Method: "gRPC", URL: method, mu: &r.mu}
	if v := md.Get("a2a-version"); len(v) > 0 {
		e.Version = v[0]
	}
	r.mu.Lock()
	r.ex = append(r.ex, e)
	r.mu.Unlock()
	return e
}

// request records a request message.
func (e *exchange) request(m any) {
	if pm, ok := m.(proto.Message); ok {
		b, _ := protojson.Marshal(pm)
		e.mu.Lock()
		e.ReqBody = clip(string(b))
		e.mu.Unlock()
	}
}

// settle records the end of a gRPC call (err nil or io.EOF: OK) and, if
// none is recorded yet, a response message.
func (e *exchange) settle(err error, m any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	st := status.Convert(err)
	e.Status, e.StatusCode = st.Code().String(), int(st.Code())
	if err != nil {
		e.Err = err
		return
	}
	if pm, ok := m.(proto.Message); ok && e.RespBody.Len() == 0 {
		b, _ := protojson.Marshal(pm)
		e.RespBody.WriteString(clip(string(b)))
	}
}

// recordedStream records what a client stream sends and how it ends.
type recordedStream struct {
	grpc.ClientStream
	e *exchange
}

func (s *recordedStream) SendMsg(m any) error {
	s.e.request(m)
	return s.ClientStream.SendMsg(m)
}

func (s *recordedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.e.settle(err, nil)
	} else {
		s.e.settle(nil, m)
	}
	return err
}
