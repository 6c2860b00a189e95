package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

var sendSeeds = []string{
	`{"message":{"messageId":"bench-1795000000000000000-17","role":"ROLE_USER","parts":[{"text":"hello"}]}}`,
	` { "message" : { "messageId" : "m" , "role" : "ROLE_AGENT" , "contextId" : "c" , "taskId" : "t" , "parts" : [ { "text" : "" } , { "text" : "b" } ] } } `,
	`{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[]}}`,
	`{"message":{"messageId":"m","parts":[{"text":"x"}]}}`,
	`{"message":{}}`,
	`{"message":null}`,
	`{}`,
	`{"message":{"messageId":"m","messageId":"n"}}`,
	`{"message":{"messageid":"m"}}`,
	`{"message":{"MessageId":"m"}}`,
	`{"message":{"messageId":"m\n"}}`,
	`{"message":{"messageId":"é"}}`,
	`{"message":{"messageId":"\u0041"}}`,
	`{"message":{"messageId":7}}`,
	`{"message":{"messageId":"m","parts":[{"text":"x","mediaType":"text/plain"}]}}`,
	`{"message":{"messageId":"m","parts":[{"data":{}}]}}`,
	`{"message":{"messageId":"m","parts":[{}]}}`,
	`{"message":{"messageId":"m","parts":[null]}}`,
	`{"message":{"messageId":"m","parts":null}}`,
	`{"message":{"messageId":"m","metadata":{"pactum":{"actor":"a"}}}}`,
	`{"message":{"messageId":"m"},"metadata":{}}`,
	`{"message":{"messageId":"m"},"configuration":{"blocking":true}}`,
	`{"message":{"messageId":"m"},"message":{"messageId":"n"}}`,
	`{"message":{"messageId":"m"}} x`,
	`{"message":{"messageId":"m"}`,
	`{"message":{"messageId":"m",}}`,
	`{"message":{"messageId":"m","parts":[{"text":"a"},]}}`,
	`[]`,
	``,
}

// TestDecodeSendMessage checks that every input DecodeSendMessage takes
// decodes as json.Unmarshal decodes it, and that it takes the usual one.
func TestDecodeSendMessage(t *testing.T) {
	t.Parallel()
	for _, s := range sendSeeds {
		sameAsUnmarshal(t, []byte(s))
	}
	var p a2a.SendMessageRequest
	if !DecodeSendMessage([]byte(sendSeeds[0]), &p) || !DecodeSendMessage([]byte(sendSeeds[1]), &p) {
		t.Fatal("the usual params were declined")
	}
}

// FuzzDecodeSendMessage: whatever DecodeSendMessage accepts, json.Unmarshal
// accepts and decodes to the same request.
func FuzzDecodeSendMessage(f *testing.F) {
	for _, s := range sendSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) { sameAsUnmarshal(t, params) })
}

func sameAsUnmarshal(t *testing.T, params []byte) {
	t.Helper()
	var got a2a.SendMessageRequest
	if !DecodeSendMessage(params, &got) {
		if !reflect.DeepEqual(got, a2a.SendMessageRequest{}) {
			t.Fatalf("declined %q but changed the request: %+v", params, got)
		}
		return
	}
	var want a2a.SendMessageRequest
	if err := json.Unmarshal(params, &want); err != nil {
		t.Fatalf("took %q, which json.Unmarshal refuses: %v", params, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("params %q:\n got %s\nwant %s", params, g, w)
	}
}

// BenchmarkDecodeSendMessage decodes the benchmark's params with
// encoding/json and with DecodeSendMessage. Run:
// go test -run '^$' -bench DecodeSendMessage -benchmem ./a2aserver/internal/wire
func BenchmarkDecodeSendMessage(b *testing.B) {
	params := []byte(sendSeeds[0])
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p a2a.SendMessageRequest
			if err := json.Unmarshal(params, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pactum", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p a2a.SendMessageRequest
			if !DecodeSendMessage(params, &p) {
				b.Fatal("declined")
			}
		}
	})
}
