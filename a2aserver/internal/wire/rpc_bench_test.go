package wire

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// benchBody is the request internal/node's BenchmarkSendMessage sends.
var benchBody = []byte(`{"jsonrpc":"2.0","id":17,"method":"SendMessage","params":{"message":{"messageId":"bench-1795000000000000000-17","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)

// BenchmarkRPCDecode compares, on one SendMessage body, our JSON-RPC 2.0
// envelope check (ParseRequest) with a plain decode of the same body (the
// envelope, then params into a2a.SendMessageRequest, as a2a-go's
// transport decodes it): what the strict check costs.
// Run: go test -run x -bench RPCDecode -benchmem ./a2aserver/internal/wire
func BenchmarkRPCDecode(b *testing.B) {
	b.Run("envelope-check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q, refusal := ParseRequest(benchBody)
			if refusal != nil || q.Method != "SendMessage" {
				b.Fatalf("refused %v", refusal)
			}
		}
	})
	b.Run("a2a-go-decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var env struct {
				JSONRPC string          `json:"jsonrpc"`
				Method  string          `json:"method"`
				Params  json.RawMessage `json:"params"`
				ID      any             `json:"id"`
			}
			if err := json.Unmarshal(benchBody, &env); err != nil {
				b.Fatal(err)
			}
			var req a2a.SendMessageRequest
			if err := json.Unmarshal(env.Params, &req); err != nil {
				b.Fatal(err)
			}
			if req.Message == nil || len(req.Message.Parts) != 1 {
				b.Fatalf("decoded %+v", req)
			}
		}
	})
}
