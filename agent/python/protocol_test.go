package python

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line    string
		want    reply
		wantErr string
	}{
		{`{"op":"ready","framework":"langgraph","streaming":true,"python":"3.11.7","pid":42}`,
			reply{Op: opReady, Framework: "langgraph", Streaming: true, Python: "3.11.7", PID: 42}, ""},
		{`{"op":"chunk","id":"a","text":"hé"}`, reply{Op: opChunk, ID: "a", Text: "hé"}, ""},
		{`{"op":"result","id":"a","output":{"x":[1,2]}}`, reply{Op: opResult, ID: "a", Output: json.RawMessage(`{"x":[1,2]}`)}, ""},
		{`{"op":"result","id":"a"}`, reply{Op: opResult, ID: "a", Output: json.RawMessage(`null`)}, ""},
		{`{"op":"error","id":"a","error":"ValueError: x","type":"ValueError"}`, reply{Op: opError, ID: "a", Error: "ValueError: x", Type: "ValueError"}, ""},
		{`{"op":"error","id":"a"}`, reply{Op: opError, ID: "a", Error: "the Python code raised an exception"}, ""},
		{`{"op":"canceled","id":"a"}`, reply{Op: opCanceled, ID: "a"}, ""},
		{`{"op":"pong","id":"p"}`, reply{Op: opPong, ID: "p"}, ""},
		{`{"op":"fatal","error":"ModuleNotFoundError: No module named 'x'"}`, reply{Op: opFatal, Error: "ModuleNotFoundError: No module named 'x'"}, ""},
		{`{"op":"fatal"}`, reply{}, "fatal without an error"},
		{`{"op":"chunk","text":"x"}`, reply{}, "chunk without an id"},
		{`{"op":"launch","id":"a"}`, reply{}, `unknown op "launch"`},
		{`{"op":"chunk","id":"a"} {}`, reply{}, "more than one value"},
		{`not json`, reply{}, "invalid character"},
		{`{"op":"chunk","id":7}`, reply{}, "cannot unmarshal number"},
		{`[]`, reply{}, "cannot unmarshal array"},
	}
	for _, tt := range tests {
		got, err := decodeReply([]byte(tt.line))
		if tt.wantErr != "" {
			if err == nil || !errors.Is(err, errBadReply) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("decodeReply(%s) = %+v, %v; want an error containing %q", tt.line, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeReply(%s) = %+v, %v\nwant %+v", tt.line, got, err, tt.want)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	t.Parallel()
	b, err := encodeRequest(&request{Op: opInvoke, ID: "a", Stream: true, Input: &input{
		Text: "<b>&", Data: json.RawMessage(`{"k":1}`), History: []turn{{Role: "user", Text: "hi"}}, ContextID: "c", TaskID: "t",
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"op":"invoke","id":"a","stream":true,"input":{"text":"<b>&","data":{"k":1},"history":[{"role":"user","text":"hi"}],"context_id":"c","task_id":"t"}}` + "\n"
	if string(b) != want {
		t.Errorf("encodeRequest =\n%s\nwant\n%s", b, want)
	}
	if b, _ := encodeRequest(&request{Op: opCancel, ID: "a"}); string(b) != `{"op":"cancel","id":"a"}`+"\n" {
		t.Errorf("cancel = %s", b)
	}
}

// FuzzReplyLines feeds what a worker might write (anything) through the
// line reader and the reply decoder: neither panics, a decoded reply is
// one the runtime can act on, and it survives re-encoding.
func FuzzReplyLines(f *testing.F) {
	for _, s := range []string{
		`{"op":"ready","framework":"callable","streaming":false,"python":"3.9.0","pid":1}` + "\n",
		`{"op":"chunk","id":"a","text":"x"}` + "\n" + `{"op":"result","id":"a","output":"x"}` + "\n",
		`{"op":"result","id":"a","output":{"n":1e400}}` + "\r\n",
		`{"op":"error","id":"a","error":"E","traceback":"T"}`,
		`{"op":"fatal","error":"x"}` + "\n\n\n",
		"\xff\xfe{\"op\"",
		`{"op":"chunk","id":"a","text":"\ud800"}`,
		`{"op":"result","id":"a","output":null,"op":"chunk"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		for {
			line, err := readLine(br)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("readLine: %v", err)
				}
				return
			}
			if bytes.ContainsRune(line, '\n') {
				t.Fatalf("line %q holds a newline", line)
			}
			r, err := decodeReply(line)
			if err != nil {
				if !errors.Is(err, errBadReply) {
					t.Fatalf("error %v does not wrap errBadReply", err)
				}
				continue
			}
			switch r.Op {
			case opReady:
			case opFatal:
				if r.Error == "" {
					t.Fatalf("fatal without an error: %q", line)
				}
			case opChunk, opCanceled, opError, opResult, opPong:
				if r.ID == "" {
					t.Fatalf("%s without an id: %q", r.Op, line)
				}
				if r.Op == opResult && !json.Valid(r.Output) {
					t.Fatalf("result output %q is not JSON", r.Output)
				}
				if r.Op == opError && r.Error == "" {
					t.Fatalf("error without a message: %q", line)
				}
			default:
				t.Fatalf("decoded an unknown op %q", r.Op)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", r, err)
			}
			again, err := decodeReply(b)
			if err != nil {
				t.Fatalf("decode of re-encoded %s: %v", b, err)
			}
			if again.Op != r.Op || again.ID != r.ID || again.Error != r.Error {
				t.Fatalf("round trip changed %+v into %+v", r, again)
			}
		}
	})
}
