package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// parseRequestDecoder is ParseRequest as it was before scanMembers: every
// member read with json.Decoder. ParseRequest must answer every body as
// it does.
func parseRequestDecoder(body []byte) (*Request, *Refusal) {
	if !json.Valid(body) {
		return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] != '{' {
		return nil, refuse(nil, a2a.ErrInvalidRequest, "a JSON-RPC request must be a JSON object (batches are not supported)")
	}
	members := map[string]json.RawMessage{}
	var twice []string
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, refuse(nil, a2a.ErrParseError, "the request body is not valid JSON")
		}
		switch key {
		case "jsonrpc", "id", "method", "params":
			if _, dup := members[key]; dup {
				twice = append(twice, key)
			}
			members[key] = v
		}
	}
	q := &Request{}
	if raw, ok := members["id"]; ok {
		if slices.Contains(twice, "id") {
			return nil, refuse(nil, a2a.ErrInvalidRequest, "the request has more than one id member")
		}
		if !validID(raw) {
			return nil, refuse(nil, a2a.ErrInvalidRequest,
				"id must be a string, an integer (no fraction or exponent) or null, got %.40s", raw)
		}
		q.ID = raw
	}
	if len(twice) > 0 {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "the request has more than one %s member", twice[0])
	}
	var version string
	if raw, ok := members["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, `jsonrpc must be the string "2.0"`)
	}
	raw, ok := members["method"]
	switch {
	case !ok:
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method is required")
	case json.Unmarshal(raw, &q.Method) != nil:
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must be a string, got %.40s", raw)
	case q.Method == "":
		return nil, refuse(q.ID, a2a.ErrInvalidRequest, "method must not be empty")
	}
	if raw, ok := members["params"]; ok {
		switch raw[0] {
		case '{':
			q.Params = raw
		case 'n':
		case '[':
			return nil, refuse(q.ID, a2a.ErrInvalidParams, "params must be an object: A2A methods take named parameters")
		default:
			return nil, refuse(q.ID, a2a.ErrInvalidRequest, "params must be an object, got %.40s", raw)
		}
	}
	return q, nil
}

var requestSeeds = []string{
	string(benchBody),
	`{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"t"}}`,
	` { "jsonrpc" : "2.0" , "id" : -12 , "method" : "SendMessage" , "params" : { "a" : [ 1 , "}" , { "b" : "\"]" } ] } } `,
	"{\n\t\"jsonrpc\":\"2.0\",\r\n\"method\":\"x\"}",
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","method":"n","params":{},"params":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"caf\u00e9"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tab\there"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"é\"}",
	`{"jsonrpc":"2.0","id":1,"\u006dethod":"m"}`,
	`{"jsonrpc":"2.0","id":1,"meth\"od":"m","method":"n"}`,
	`{"jsonrpc":"2\u002e0","id":1,"method":"m"}`,
	`{"jsonrpc":2.0,"id":1,"method":"m"}`,
	`{"jsonrpc":null,"id":1,"method":"m"}`,
	`{"id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":true,"method":"m"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"m"}`,
	`{"jsonrpc":"2.0","id":007,"method":"m"}`,
	`{"jsonrpc":"2.0","x":[[[{"y":"\\"}]]],"id":1e3,"method":"m"}`,
	`{}`,
	`[]`,
	`[{"jsonrpc":"2.0","method":"m"}]`,
	`"x"`,
	`{"jsonrpc":"2.0",`,
	``,
	`   `,
	`{"jsonrpc":"2.0","method":"m"} x`,
}

// TestParseRequestAsDecoder checks ParseRequest against the decoder it
// replaced on bodies that exercise each rule and the scanner's edges.
func TestParseRequestAsDecoder(t *testing.T) {
	t.Parallel()
	for _, body := range requestSeeds {
		sameAsDecoder(t, []byte(body))
	}
}

// FuzzParseRequest checks that ParseRequest answers any body exactly as the
// json.Decoder version did.
func FuzzParseRequest(f *testing.F) {
	for _, body := range requestSeeds {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsDecoder(t, body) })
}

func sameAsDecoder(t *testing.T, body []byte) {
	t.Helper()
	q, r := ParseRequest(body)
	wq, wr := parseRequestDecoder(body)
	if !reflect.DeepEqual(q, wq) || fmt.Sprint(r) != fmt.Sprint(wr) || (r == nil) != (wr == nil) ||
		(r != nil && (!bytes.Equal(r.ID, wr.ID) || r.Err.Error() != wr.Err.Error())) {
		t.Fatalf("body %q:\n got %+v %+v\nwant %+v %+v", body, q, r, wq, wr)
	}
}
