package a2aserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/pactum/pactum/a2aserver/internal/wire"
)

// BenchmarkWire measures the wire alone: the same requests answered, from
// the oracle's stub handler (canned task, four stream events; no store),
// by a2a-go's transports and by the dispatcher. What a2a-go costs more
// here is what docs/design.md ("What upstream a2a-go could change") asks
// upstream to change. Run:
//
//	go test -run x -bench Wire -benchmem ./a2aserver
func BenchmarkWire(b *testing.B) {
	send := oracleEnvelope("7", "SendMessage", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	stream := oracleEnvelope("7", "SendStreamingMessage", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	restBody := []byte(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	for _, tc := range []struct {
		name         string
		b            wire.Binding
		path         string
		body         []byte
		a2ago        func(a2asrv.RequestHandler) http.Handler
		wantStreamed bool
	}{
		{"jsonrpc-SendMessage", wire.JSONRPC, "/", send, func(h a2asrv.RequestHandler) http.Handler { return a2asrv.NewJSONRPCHandler(h) }, false},
		{"jsonrpc-SendStreamingMessage", wire.JSONRPC, "/", stream, func(h a2asrv.RequestHandler) http.Handler { return a2asrv.NewJSONRPCHandler(h) }, true},
		{"rest-message:send", wire.REST, "/message:send", restBody, func(h a2asrv.RequestHandler) http.Handler { return a2asrv.NewRESTHandler(h) }, false},
		{"rest-message:stream", wire.REST, "/message:stream", restBody, func(h a2asrv.RequestHandler) http.Handler { return a2asrv.NewRESTHandler(h) }, true},
	} {
		request := func() *http.Request {
			r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, tc.path, bytes.NewReader(tc.body))
			r.Header.Set("A2A-Version", "1.0")
			return r
		}
		check := func(b *testing.B, rec *httptest.ResponseRecorder) {
			if rec.Code != http.StatusOK || (rec.Header().Get("Content-Type") == "text/event-stream") != tc.wantStreamed {
				b.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
		}
		b.Run(tc.name+"/a2a-go", func(b *testing.B) {
			stub := &oracleStub{}
			h := tc.a2ago(stub)
			b.ReportAllocs()
			for b.Loop() {
				stub.calls = stub.calls[:0]
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, request())
				check(b, rec)
			}
		})
		b.Run(tc.name+"/pactum", func(b *testing.B) {
			stub := &oracleStub{}
			d := &dispatcher{h: stub, recovered: func(any) error { return oraclePanicError() }}
			b.ReportAllocs()
			for b.Loop() {
				stub.calls = stub.calls[:0]
				rec := httptest.NewRecorder()
				r := request()
				body, _ := io.ReadAll(r.Body)
				if tc.b.RPC() {
					q, refusal := wire.ParseRequest(body)
					if refusal != nil {
						b.Fatal(refusal.Err)
					}
					d.serveRPC(rec, r, tc.b, q)
				} else {
					d.serveREST(rec, r, tc.b, tc.path, body)
				}
				check(b, rec)
			}
		})
	}
}
