package driver

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// The encoders write every field of these types; a field added to one
// must be added to its encoder (json.go) and here.
func TestTaskJSONCoversEveryField(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[task.Envelope](): 17, reflect.TypeFor[task.Message](): 8,
		reflect.TypeFor[task.Part](): 8, reflect.TypeFor[task.Artifact](): 5, reflect.TypeFor[task.Record](): 11,
	} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, the encoder writes %d: update store/internal/driver/json.go", typ, typ.NumField(), n)
		}
	}
}

// sameAsMarshal checks marshalJSON(v) against json.Marshal(v).
func sameAsMarshal(t *testing.T, v any) {
	t.Helper()
	got, err := marshalJSON(v)
	want, werr := json.Marshal(v)
	if (err != nil) != (werr != nil) || string(got) != string(want) || (err != nil && err.Error() != werr.Error()) {
		t.Fatalf("%T:\n got %s, %v\nwant %s, %v", v, got, err, want, werr)
	}
}

// taskValues builds messages, artifacts and envelopes from s, meta and at,
// with every field set and with none.
func taskValues(s string, meta map[string]any, at time.Time) []any {
	parts := []task.Part{
		task.TextPart(s), {}, {Kind: task.PartText, Text: s, Filename: "f<", MediaType: "text/plain", Metadata: meta},
		task.DataPart(json.RawMessage(`{"a": "<b>", "n": [1, 2.5]}`)), {Kind: task.PartRaw, Raw: []byte(s + "\x00")},
		{Kind: task.PartURL, URL: "https://example.com/?q=" + s + "&x=1"},
	}
	msg := task.Message{ID: s, Role: task.RoleAgent, Parts: parts, ContextID: "c" + s, TaskID: "t",
		ReferenceTasks: []string{s, "r"}, Extensions: []string{"e&"}, Metadata: meta}
	env := task.Envelope{TaskID: s, IdempotencyKey: "k", Actor: "a<", Matter: s, Resource: "r", Action: "act",
		Input: msg, ContextID: "c", PolicyRef: "p", ApprovalRef: "ap", CorrelationID: "co", ParentTaskID: "pa",
		Step: "st", ReplayOf: "re", Metadata: meta, TraceParent: "00-" + s, CreatedAt: at}
	return []any{
		&msg, &task.Message{}, &task.Message{ID: "m", Role: task.RoleUser, Parts: []task.Part{}, ReferenceTasks: []string{}},
		&task.Artifact{ID: s, Name: s, Description: "d", Parts: parts, Metadata: meta}, &task.Artifact{},
		&env, &task.Envelope{}, &task.Envelope{TaskID: "t", Input: task.Message{ID: "m", Parts: []task.Part{task.TextPart(s)}}, CreatedAt: at},
	}
}

func TestTaskJSONIsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC)
	metas := []map[string]any{nil, {}, {"pactum": map[string]any{"actor": "alice", "n": 1.5, "list": []any{1.0, "x", nil, true}}},
		{"<": "a&b\u2028", "é": "\xff", "f": 1e21, "g": 1e-7, "h": -0.0, "raw": json.RawMessage(`{"b": 1}`), "m": map[string]string{"z": "1"}}}
	for _, meta := range metas {
		for _, s := range []string{"hello", "", "<b>\"q\" & \\ \n", "日本語 \u2029", "\xff"} {
			for _, ts := range []time.Time{at, at.In(time.FixedZone("e", 3600)), {}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
				for _, v := range taskValues(s, meta, ts) {
					sameAsMarshal(t, v)
				}
			}
		}
	}
	for _, bad := range []any{math.NaN(), func() {}} {
		for _, v := range taskValues("x", map[string]any{"bad": bad}, at) {
			sameAsMarshal(t, v)
		}
	}
	bad := task.Message{ID: "m", Parts: []task.Part{task.DataPart(json.RawMessage(`{not json`))}}
	sameAsMarshal(t, &bad)
}

func FuzzTaskJSON(f *testing.F) {
	f.Add("hello", `{"pactum":{"actor":"a","attempt":1}}`, int64(1795000000123456789), 0)
	f.Add("<&>\u2028", `{"a":[1.5,-0,1e-7,1e21,"x",null,true,{"z":{}}],"é":"\ud800"}`, int64(-1), 3600)
	f.Fuzz(func(t *testing.T, s, metaJSON string, nanos int64, offset int) {
		var meta map[string]any
		if json.Unmarshal([]byte(metaJSON), &meta) != nil {
			meta = map[string]any{"raw": metaJSON}
		}
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset))
		for _, v := range taskValues(s, meta, at) {
			sameAsMarshal(t, v)
		}
	})
}

// BenchmarkTaskJSON encodes a submission's envelope and an agent's
// answer as the store writes them, with encoding/json and with
// marshalJSON. Run: go test -run '^$' -bench TaskJSON -benchmem ./store/internal/driver
func BenchmarkTaskJSON(b *testing.B) {
	in := task.Message{ID: "bench-1795000000000000000-17", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hello")},
		ContextID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2c", TaskID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2b"}
	env := &task.Envelope{TaskID: in.TaskID, IdempotencyKey: in.ID, Actor: "anonymous", Action: "echo", Input: in,
		ContextID: in.ContextID, CorrelationID: in.TaskID, CreatedAt: time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC)}
	out := &task.Message{ID: "m-2", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("echo: hello")}, ContextID: in.ContextID, TaskID: in.TaskID}
	for _, v := range []struct {
		name string
		v    any
	}{{"envelope", env}, {"message", out}} {
		b.Run(v.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = json.Marshal(v.v)
			}
		})
		b.Run(v.name+"/pactum", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = marshalJSON(v.v)
			}
		})
	}
}
