package a2aserver

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// sameAsA2AGo checks marshalEvent and marshalTask against a2a-go's
// encoding of ev: the same bytes, or both failing.
func sameAsA2AGo(t *testing.T, ev a2a.Event) {
	t.Helper()
	got, err := marshalEvent(ev)
	want, werr := a2a.StreamResponse{Event: ev}.MarshalJSON()
	if (err != nil) != (werr != nil) || string(got) != string(want) {
		t.Fatalf("marshalEvent(%T):\n got %s, %v\nwant %s, %v", ev, got, err, want, werr)
	}
	if task, ok := ev.(*a2a.Task); ok {
		got, err := marshalTask(task)
		want, werr := json.Marshal(task)
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Fatalf("marshalTask:\n got %s, %v\nwant %s, %v", got, err, want, werr)
		}
	}
}

// eventsFrom builds one event of each kind, and their edge cases, from
// the given text, metadata and time.
func eventsFrom(text string, meta map[string]any, at time.Time) []a2a.Event {
	msg := &a2a.Message{ID: "m-" + text, Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(text)},
		ContextID: "ctx", TaskID: "t1", Metadata: meta}
	bare := &a2a.Message{ID: text, Parts: a2a.ContentParts{}}
	mixed := &a2a.Message{ID: "m2", Role: a2a.MessageRoleUser, Extensions: []string{text, "ext<1>"},
		ReferenceTasks: []a2a.TaskID{"t0", a2a.TaskID(text)},
		Parts: a2a.ContentParts{
			nil,
			{Content: a2a.Text(text), Filename: "f<1>.txt", MediaType: "text/plain", Metadata: meta},
			a2a.NewRawPart([]byte(text)),
			a2a.NewDataPart(meta),
			a2a.NewFileURLPart("https://example.com/"+a2a.URL(text), "image/png"),
			{Content: a2a.URL("")},
			{Content: a2a.Text("")},
		}}
	art := &a2a.Artifact{ID: a2a.ArtifactID("a-" + text), Name: text, Description: "d&", Extensions: []string{"x"},
		Parts: a2a.ContentParts{a2a.NewTextPart(text)}, Metadata: meta}
	status := a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: msg, Timestamp: &at}
	task := &a2a.Task{ID: a2a.TaskID(text), ContextID: "c" + text, Status: status,
		History: []*a2a.Message{msg, nil, bare, mixed}, Artifacts: []*a2a.Artifact{art, nil, {ID: "empty"}}, Metadata: meta}
	return []a2a.Event{
		task,
		&a2a.Task{ID: "t", Status: a2a.TaskStatus{}},
		&a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, History: []*a2a.Message{}, Metadata: map[string]any{}},
		msg, bare, mixed,
		&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: text, Status: status, Metadata: meta},
		&a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateFailed}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: art, Append: true, LastChunk: true, Metadata: meta},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c"},
		(*a2a.Task)(nil), (*a2a.Message)(nil), (*a2a.TaskStatusUpdateEvent)(nil), (*a2a.TaskArtifactUpdateEvent)(nil),
	}
}

// TestEventEncodingIsA2AGo checks the result writer against a2a-go's
// encoding on every shape it writes, pactum's metadata (ints, nested
// maps, CompactJSON as a gate's verified result comes) and values it leaves
// to encoding/json, including ones that fail.
func TestEventEncodingIsA2AGo(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC)
	metas := []map[string]any{
		nil,
		{},
		{MetadataKey: map[string]any{"state": "succeeded", "attempt": 1, "attemptsTotal": int64(2), "agent": "echo",
			"audit": map[string]any{"recordSeq": 4, "ref": "audit:t1"}, VerifiedKey: CompactJSON(`{"contract":"c","note":"\u003cx\u003e"}`)}},
		{"f": 1.5, "g": 1e21, "h": 1e-7, "i": -0.0, "j": 123456789.0, "k": []any{1.0, "x", nil, true, map[string]any{}}, "l": []any(nil),
			"<": "a&b\u2028", "é": "\xff", "m": json.RawMessage(`{"b": 1, "a": "<x>"}`), "n": CompactJSON(`{"v":"\u003cy\u003e","w":[1,null]}`),
			"o": CompactJSON(nil), "p": map[string]string{"z": "1", "a": "2"}, "q": []int{3}, "r": uint8(7), "s": float32(0.1)},
	}
	texts := []string{"hello", "", "<b>\"q\" & \\ \n\t", "日本語 \u2029", "\xff\xfe"}
	for _, meta := range metas {
		for _, text := range texts {
			for _, ts := range []time.Time{at, at.In(time.FixedZone("e", 3600)), {}} {
				for _, ev := range eventsFrom(text, meta, ts) {
					sameAsA2AGo(t, ev)
				}
			}
		}
	}
	// Values encoding/json refuses: both fail.
	for _, bad := range []any{math.NaN(), math.Inf(1), func() {}, make(chan int)} {
		for _, ev := range eventsFrom("x", map[string]any{"bad": bad}, at) {
			sameAsA2AGo(t, ev)
		}
	}
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	sameAsA2AGo(t, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &far}})
}

// FuzzEventEncoding compares the result writer with a2a-go on text and
// on metadata decoded from JSON (every type encoding/json decodes into).
func FuzzEventEncoding(f *testing.F) {
	f.Add("hello", `{"pactum":{"attempt":1,"audit":{"recordSeq":4}}}`, int64(1795000000123456789), 0)
	f.Add("<&>\u2028", `{"a":[1.5,-0,1e-7,1e21,"x",null,true,{"z":{}}],"é":"\ud800"}`, int64(-1), 3600)
	f.Add("", `{"":0.000001,"b":123456789012345678901234}`, int64(0), -7200)
	f.Fuzz(func(t *testing.T, text, metaJSON string, nanos int64, offset int) {
		var meta map[string]any
		if json.Unmarshal([]byte(metaJSON), &meta) != nil {
			meta = map[string]any{"raw": metaJSON}
		}
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset))
		for _, ev := range eventsFrom(text, meta, at) {
			sameAsA2AGo(t, ev)
		}
	})
}

// BenchmarkEventEncoding encodes the echo agent's answer (a completed task
// with pactum's metadata) with a2a-go and with the result writer. Run:
// go test -run '^$' -bench EventEncoding -benchmem ./a2aserver
func BenchmarkEventEncoding(b *testing.B) {
	at := time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC)
	meta := map[string]any{MetadataKey: map[string]any{"state": "succeeded", "attempt": 1, "maxAttempts": 3,
		"attemptsTotal": 1, "agent": "echo", "action": "", "actor": "anonymous", "correlationId": "0196f1c2-7d3e",
		"audit": map[string]any{"recordSeq": 4, "ref": "audit:0196f1c2-7d3e"}}}
	text := func(id, role, s string) *a2a.Message {
		return &a2a.Message{ID: id, Role: a2a.MessageRole(role), ContextID: "c1", TaskID: "t1",
			Parts: a2a.ContentParts{a2a.NewTextPart(s)}}
	}
	ev := &a2a.Task{ID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2b", ContextID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2c",
		History:   []*a2a.Message{text("bench-1795000000000000000-17", "ROLE_USER", "hello"), text("m-2", "ROLE_AGENT", "echo: hello")},
		Artifacts: []*a2a.Artifact{{ID: "result", Name: "result", Parts: a2a.ContentParts{a2a.NewTextPart("echo: hello")}}},
		Metadata:  meta, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at}}
	b.Run("a2a-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (a2a.StreamResponse{Event: ev}).MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pactum", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalEvent(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEncodedTypesFields: the result writer writes every field of the
// a2a-go types it encodes by hand (a2aserver/encode.go). A field that a
// newer a2a-go adds to one of them would be left out of every answer
// without a word: this fails first, naming the type to update.
func TestEncodedTypesFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v       any
		written int
	}{
		{a2a.Task{}, 6}, {a2a.Message{}, 8}, {a2a.Part{}, 4}, {a2a.Artifact{}, 6},
		{a2a.TaskStatus{}, 3}, {a2a.TaskStatusUpdateEvent{}, 4}, {a2a.TaskArtifactUpdateEvent{}, 6},
	} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.written {
			t.Errorf("%T has %d fields, the result writer writes %d: update a2aserver/encode.go", c.v, n, c.written)
		}
	}
}
