package wire_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pactum/pactum/a2aserver/internal/wire"
)

// A result is answered with its Content-Length, short or long: a long
// one (a checked agent's answer with its verified result) is not sent
// chunked, and arrives whole.
func TestWriteResultContentLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{10, 2000, 2100, 70000} {
		for _, b := range []wire.Binding{wire.JSONRPC, wire.JSONRPC03, wire.REST, wire.REST03} {
			body := []byte(`{"text":"` + strings.Repeat("x", n) + `"}`)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				wire.WriteResult(w, b, json.RawMessage(`7`), body)
			}))
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.ContentLength != int64(len(got)) || len(resp.TransferEncoding) > 0 {
				t.Errorf("binding %d, %d bytes: Content-Length %d, Transfer-Encoding %v, body %d bytes",
					b, len(body), resp.ContentLength, resp.TransferEncoding, len(got))
			}
			if !strings.Contains(string(got), string(body)) {
				t.Errorf("binding %d, %d bytes: body %.80s… does not hold the result", b, len(body), got)
			}
		}
	}
}
