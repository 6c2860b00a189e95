package a2amap_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/task"
)

// fullMessage exercises every field and part kind of a domain message.
func fullMessage() task.Message {
	return task.Message{
		ID:             "m1",
		Role:           task.RoleUser,
		ContextID:      "c1",
		TaskID:         "t1",
		ReferenceTasks: []string{"t0"},
		Extensions:     []string{"https://example.com/ext"},
		Metadata:       map[string]any{"k": "v", "nested": map[string]any{"n": []any{1.0, "x"}}},
		Parts: []task.Part{
			{Kind: task.PartText, Text: "hello", MediaType: "text/plain", Metadata: map[string]any{"lang": "en"}},
			{Kind: task.PartData, Data: json.RawMessage(`{"a":1,"big":12345678901234567890,"s":"<&>"}`), MediaType: "application/json"},
			{Kind: task.PartRaw, Raw: []byte{0, 1, 2}, Filename: "b.bin", MediaType: "application/octet-stream"},
			{Kind: task.PartURL, URL: "https://example.com/f.pdf", Filename: "f.pdf", MediaType: "application/pdf"},
		},
	}
}

func TestMessageToA2A(t *testing.T) {
	t.Parallel()
	got := a2amap.MessageToA2A(fullMessage())
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	const want = `{"messageId":"m1","contextId":"c1","extensions":["https://example.com/ext"],` +
		`"metadata":{"k":"v","nested":{"n":[1,"x"]}},"parts":[` +
		`{"text":"hello","mediaType":"text/plain","metadata":{"lang":"en"}},` +
		`{"data":{"a":1,"big":12345678901234567890,"s":"\u003c\u0026\u003e"},"mediaType":"application/json"},` +
		`{"raw":"AAEC","filename":"b.bin","mediaType":"application/octet-stream"},` +
		`{"url":"https://example.com/f.pdf","filename":"f.pdf","mediaType":"application/pdf"}],` +
		`"referenceTaskIds":["t0"],"role":"ROLE_USER","taskId":"t1"}`
	if string(b) != want {
		t.Errorf("wire form\n got %s\nwant %s", b, want)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	t.Parallel()
	for _, role := range []task.Role{task.RoleUser, task.RoleAgent} {
		in := fullMessage()
		in.Role = role
		back, err := a2amap.MessageFromA2A(a2amap.MessageToA2A(in))
		if err != nil {
			t.Fatalf("%s: MessageFromA2A: %v", role, err)
		}
		// The data part comes back re-encoded compactly without HTML
		// escaping; everything else is identical.
		if !reflect.DeepEqual(back, in) {
			t.Errorf("%s: round trip\n got %#v\nwant %#v", role, back, in)
		}
	}
}

func TestMessageToA2ARoles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   task.Role
		want a2a.MessageRole
	}{
		{task.RoleUser, a2a.MessageRoleUser},
		{task.RoleAgent, a2a.MessageRoleAgent},
		{"", a2a.MessageRoleUnspecified},
		{"system", a2a.MessageRoleUnspecified},
	}
	for _, tt := range tests {
		if got := a2amap.MessageToA2A(task.Message{Role: tt.in}).Role; got != tt.want {
			t.Errorf("role %q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPartsToA2ADegrades(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   task.Part
		want string // wire JSON of the part
	}{
		{"text", task.TextPart("hi"), `{"text":"hi"}`},
		{"empty text", task.TextPart(""), `{"text":""}`},
		{"data number kept exactly", task.DataPart(json.RawMessage(`1.50`)), `{"data":1.50}`},
		{"data list", task.DataPart(json.RawMessage(` [1, {"a":null}] `)), `{"data":[1,{"a":null}]}`},
		{"data invalid JSON", task.DataPart(json.RawMessage(`{"a":`)), `{"data":"{\"a\":"}`},
		{"data trailing garbage", task.DataPart(json.RawMessage(`1 2`)), `{"data":"1 2"}`},
		{"data null", task.DataPart(json.RawMessage(`null`)), `{"data":"null"}`},
		{"data empty", task.DataPart(nil), `{"data":""}`},
		{"raw nil", task.Part{Kind: task.PartRaw}, `{"raw":""}`},
		{"unknown kind", task.Part{Kind: "video", Text: "t", Filename: "f"}, `{"text":"t","filename":"f"}`},
		{"no kind", task.Part{}, `{"text":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parts := a2amap.PartsToA2A([]task.Part{tt.in})
			b, err := json.Marshal(parts[0])
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
			// Whatever was produced must be readable by a peer.
			var p a2a.Part
			if err := json.Unmarshal(b, &p); err != nil {
				t.Errorf("peer cannot read %s: %v", b, err)
			}
		})
	}
}

func TestPartsNeverNil(t *testing.T) {
	t.Parallel()
	if got := a2amap.PartsToA2A(nil); got == nil {
		t.Error("PartsToA2A(nil) = nil, want empty")
	}
	got, err := a2amap.PartsFromA2A(nil)
	if err != nil || got == nil {
		t.Errorf("PartsFromA2A(nil) = %v, %v; want empty, nil", got, err)
	}
}

func TestMessageFromA2AErrors(t *testing.T) {
	t.Parallel()
	ok := func() *a2a.Message {
		return &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("x")}}
	}
	tests := []struct {
		name      string
		msg       func() *a2a.Message
		wantErr   string
		noContent bool
	}{
		{"nil message", func() *a2a.Message { return nil }, "message is missing", false},
		{"unspecified role", func() *a2a.Message { m := ok(); m.Role = ""; return m }, "unknown role", false},
		{"unknown role", func() *a2a.Message { m := ok(); m.Role = "ROLE_TOOL"; return m }, `unknown role "ROLE_TOOL"`, false},
		{"nil part", func() *a2a.Message { m := ok(); m.Parts = append(m.Parts, nil); return m }, "part 1", true},
		{"part without content", func() *a2a.Message { m := ok(); m.Parts = a2a.ContentParts{{Filename: "f"}}; return m }, "part 0", true},
		{"null data", func() *a2a.Message { m := ok(); m.Parts = a2a.ContentParts{{Content: a2a.Data{}}}; return m }, "data is null", true},
		{"nil raw", func() *a2a.Message { m := ok(); m.Parts = a2a.ContentParts{{Content: a2a.Raw(nil)}}; return m }, "raw is null", true},
		{"empty url", func() *a2a.Message { m := ok(); m.Parts = a2a.ContentParts{{Content: a2a.URL("")}}; return m }, "url is empty", true},
		{"unencodable data", func() *a2a.Message {
			m := ok()
			m.Parts = a2a.ContentParts{{Content: a2a.Data{Value: map[string]any{"c": make(chan int)}}}}
			return m
		}, "part 0: data", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := a2amap.MessageFromA2A(tt.msg())
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
			if got := errors.Is(err, a2amap.ErrNoContent); got != tt.noContent {
				t.Errorf("errors.Is(err, ErrNoContent) = %v, want %v", got, tt.noContent)
			}
		})
	}
}

func TestMessageFromA2AWire(t *testing.T) {
	t.Parallel()
	const wire = `{"messageId":"m","role":"ROLE_AGENT","contextId":"c","taskId":"t",
		"metadata":{},"extensions":[],
		"parts":[
			{"text":"a <b>","metadata":{"x":1}},
			{"data":{"z":1,"a":[true,null,"<"],"n":12345678901234567890}},
			{"raw":"aGk=","filename":"hi.txt","mediaType":"text/plain"},
			{"url":"https://e.com/x"}]}`
	var m a2a.Message
	if err := json.Unmarshal([]byte(wire), &m); err != nil {
		t.Fatal(err)
	}
	got, err := a2amap.MessageFromA2A(&m)
	if err != nil {
		t.Fatal(err)
	}
	want := task.Message{
		ID: "m", Role: task.RoleAgent, ContextID: "c", TaskID: "t",
		Parts: []task.Part{
			{Kind: task.PartText, Text: "a <b>", Metadata: map[string]any{"x": 1.0}},
			// Keys sorted, no HTML escaping; the big integer went through
			// float64 in the SDK's decoder, which is where precision is lost.
			{Kind: task.PartData, Data: json.RawMessage(`{"a":[true,null,"<"],"n":12345678901234567000,"z":1}`)},
			{Kind: task.PartRaw, Raw: []byte("hi"), Filename: "hi.txt", MediaType: "text/plain"},
			{Kind: task.PartURL, URL: "https://e.com/x"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

func TestNoSharedState(t *testing.T) {
	t.Parallel()
	in := fullMessage()
	out := a2amap.MessageToA2A(in)
	in.Metadata["k"] = "changed"
	in.Metadata["nested"].(map[string]any)["n"].([]any)[0] = "changed"
	in.Parts[2].Raw[0] = 9
	in.Extensions[0] = "changed"
	if out.Metadata["k"] != "v" || out.Metadata["nested"].(map[string]any)["n"].([]any)[0] != 1.0 {
		t.Errorf("metadata shared with source: %v", out.Metadata)
	}
	if out.Parts[2].Raw()[0] != 0 {
		t.Error("raw bytes shared with source")
	}
	if out.Extensions[0] != "https://example.com/ext" {
		t.Error("extensions shared with source")
	}

	src := a2amap.MessageToA2A(fullMessage())
	back, err := a2amap.MessageFromA2A(src)
	if err != nil {
		t.Fatal(err)
	}
	src.Parts[0].Metadata["lang"] = "changed"
	if back.Parts[0].Metadata["lang"] != "en" {
		t.Error("part metadata shared with source")
	}
}

func TestArtifactRoundTrip(t *testing.T) {
	t.Parallel()
	in := task.Artifact{
		ID: "a1", Name: "report", Description: "the report",
		Parts:    []task.Part{task.TextPart("x"), task.DataPart(json.RawMessage(`{"k":[1,2]}`))},
		Metadata: map[string]any{"m": true},
	}
	out := a2amap.ArtifactToA2A(in)
	if out.ID != "a1" || out.Name != "report" || out.Description != "the report" || len(out.Parts) != 2 {
		t.Errorf("ArtifactToA2A = %+v", out)
	}
	out.Extensions = []string{"dropped"}
	back, err := a2amap.ArtifactFromA2A(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("round trip\n got %#v\nwant %#v", back, in)
	}
}

func TestArtifactFromA2AErrors(t *testing.T) {
	t.Parallel()
	if _, err := a2amap.ArtifactFromA2A(nil); err == nil {
		t.Error("nil artifact: no error")
	}
	_, err := a2amap.ArtifactFromA2A(&a2a.Artifact{ID: "a", Parts: a2a.ContentParts{{}}})
	if !errors.Is(err, a2amap.ErrNoContent) {
		t.Errorf("empty part: err = %v, want ErrNoContent", err)
	}
}

func TestChunk(t *testing.T) {
	t.Parallel()
	c := task.ArtifactChunk{
		Artifact: task.Artifact{ID: "a1", Parts: []task.Part{task.TextPart("chunk")}},
		Append:   true, LastChunk: true,
	}
	ev := a2amap.ChunkToA2A("t1", "c1", c)
	if ev.TaskID != "t1" || ev.ContextID != "c1" || !ev.Append || !ev.LastChunk || ev.Artifact.ID != "a1" {
		t.Errorf("ChunkToA2A = %+v", ev)
	}
	back, err := a2amap.ChunkFromA2A(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip\n got %#v\nwant %#v", back, c)
	}
	if _, err := a2amap.ChunkFromA2A(nil); err == nil {
		t.Error("nil event: no error")
	}
	if _, err := a2amap.ChunkFromA2A(&a2a.TaskArtifactUpdateEvent{}); err == nil {
		t.Error("event without artifact: no error")
	}
}

func FuzzMessageFromA2A(f *testing.F) {
	for _, seed := range []string{
		`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}`,
		`{"messageId":"m","role":"ROLE_AGENT","contextId":"c","taskId":"t","referenceTaskIds":["a"],"extensions":["e"],"metadata":{"k":{"n":[1,2.5,null]}},"parts":[{"data":{"a":[1e3,-0,"<&>"]},"metadata":{}},{"raw":"AAE=","filename":"f"},{"url":"u","mediaType":"m"}]}`,
		`{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":"s"},{"data":0},{"data":false},{"raw":""},{"text":""}]}`,
		`{"role":"ROLE_USER","parts":[]}`,
		`{"role":"ROLE_UNSPECIFIED","parts":null}`,
		`{"role":"ROLE_USER","parts":[null]}`,
		`{"role":"ROLE_USER","metadata":{},"extensions":[],"parts":[{"text":"\u00ff\ud800"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m a2a.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		first, err := a2amap.MessageFromA2A(&m)
		if err != nil {
			return
		}
		// Domain → A2A → domain is the identity on anything accepted.
		out := a2amap.MessageToA2A(first)
		second, err := a2amap.MessageFromA2A(out)
		if err != nil {
			t.Fatalf("converted message refused: %v", err)
		}
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("unstable round trip\nfirst  %#v\nsecond %#v", first, second)
		}
		// And so is a trip over the wire.
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("converted message does not encode: %v", err)
		}
		var m2 a2a.Message
		if err := json.Unmarshal(b, &m2); err != nil {
			t.Fatalf("peer cannot decode %s: %v", b, err)
		}
		third, err := a2amap.MessageFromA2A(&m2)
		if err != nil {
			t.Fatalf("wire message refused: %v", err)
		}
		if !reflect.DeepEqual(first, third) {
			t.Fatalf("unstable wire round trip\nfirst %#v\nthird %#v", first, third)
		}
	})
}

func ExampleMessageFromA2A() {
	wire := `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"summarize"},{"data":{"pages":[1,2]}}]}`
	var m a2a.Message
	if err := json.Unmarshal([]byte(wire), &m); err != nil {
		panic(err)
	}
	msg, err := a2amap.MessageFromA2A(&m)
	if err != nil {
		panic(err)
	}
	fmt.Println(msg.Role, msg.Text(), string(msg.Parts[1].Data))
	// Output: user summarize {"pages":[1,2]}
}

func ExampleChunkToA2A() {
	chunk := task.ArtifactChunk{
		Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("partial ")}},
		Append:   true,
	}
	b, _ := json.Marshal(a2a.StreamResponse{Event: a2amap.ChunkToA2A("task-1", "ctx-1", chunk)})
	fmt.Println(string(b))
	// Output: {"artifactUpdate":{"append":true,"artifact":{"artifactId":"out","parts":[{"text":"partial "}]},"contextId":"ctx-1","taskId":"task-1"}}
}
