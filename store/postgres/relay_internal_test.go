package postgres

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// TestWireRoundTrip: what Send encodes and frames decodes to the same
// event, as pure ASCII.
func TestWireRoundTrip(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	msg := &task.Message{ID: "m1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("done <ok> & é 😀")}}
	for _, ev := range []task.Event{
		{Kind: task.EventStatus, TaskID: "t1", ContextID: "c1", Seq: 4, State: task.StateSucceeded, Final: true, At: at, Node: "a",
			Message: msg, Task: &task.Task{ID: "t1", ContextID: "c1", State: task.StateSucceeded, Seq: 4, StatusMessage: msg, CreatedAt: at, UpdatedAt: at,
				Envelope: task.Envelope{Action: "echo", Actor: "alice", Input: task.Message{ID: "in", Role: task.RoleUser, Parts: []task.Part{task.DataPart(json.RawMessage(`{"k":"日本"}`))}}}}},
		{Kind: task.EventArtifact, TaskID: "t1", Seq: 3, At: at, Node: "b",
			Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("ü"), {Kind: task.PartRaw, Raw: []byte{0, 0xff}}}}, Append: true, LastChunk: true}},
	} {
		body, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		msg := frame("0123abcd", 7, body)
		for i, c := range msg {
			if c >= 0x80 || c == 0 {
				t.Fatalf("byte %d of %s is %#x, want ASCII", i, msg, c)
			}
		}
		w, err := parseWire(msg)
		if err != nil {
			t.Fatalf("parseWire(%s): %v", msg, err)
		}
		if w.Src != "0123abcd" || w.N != 7 || w.V != wireVersion {
			t.Errorf("header %q %d %d", w.Src, w.N, w.V)
		}
		got := w.event()
		// Raw JSON comes back equivalent, not byte for byte: encoding/json
		// compacts it, and the relay escapes non-ASCII characters.
		if ev.Task != nil {
			var in, out any
			_ = json.Unmarshal(ev.Task.Envelope.Input.Parts[0].Data, &in)
			if err := json.Unmarshal(got.Task.Envelope.Input.Parts[0].Data, &out); err != nil || !reflect.DeepEqual(in, out) {
				t.Errorf("data part %s, want %s", got.Task.Envelope.Input.Parts[0].Data, ev.Task.Envelope.Input.Parts[0].Data)
			}
			got.Task.Envelope.Input.Parts[0].Data = ev.Task.Envelope.Input.Parts[0].Data
		}
		if !reflect.DeepEqual(got, ev) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, ev)
		}
	}
}

func TestFrameEmptyBody(t *testing.T) {
	got := string(frame("s", 1, []byte("{}")))
	if want := `{"v":1,"src":"s","n":1}`; got != want {
		t.Errorf("frame = %s, want %s", got, want)
	}
}

// TestSendQueueOverflow: a full queue drops artifact chunks first, then
// the oldest status events; never the newest status event.
func TestSendQueueOverflow(t *testing.T) {
	// droppedT: no warning (which resets the counts) during the test.
	r := &relay{log: slog.New(slog.DiscardHandler), dropped: map[task.EventKind]int{}, droppedT: time.Now(), wake: make(chan struct{}, 1)}
	status := func(seq int) task.Event {
		return task.Event{Kind: task.EventStatus, TaskID: "t", Seq: seq, State: task.StateQueued}
	}
	chunk := func(seq int) task.Event {
		return task.Event{Kind: task.EventArtifact, TaskID: "t", Seq: seq, Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "a"}}}
	}
	r.Send(chunk(1))
	for i := 2; i <= queueMaxEvents; i++ {
		r.Send(status(i))
	}
	r.Send(status(queueMaxEvents + 1)) // drops the chunk
	if len(r.queue) != queueMaxEvents || r.chunks != 0 || r.dropped[task.EventArtifact] != 1 {
		t.Fatalf("queue %d, chunks %d, dropped %v", len(r.queue), r.chunks, r.dropped)
	}
	r.Send(chunk(queueMaxEvents + 2)) // no chunk to drop: the new one goes
	if r.chunks != 0 || r.dropped[task.EventArtifact] != 2 {
		t.Fatalf("chunks %d, dropped %v", r.chunks, r.dropped)
	}
	r.Send(status(queueMaxEvents + 3)) // drops the oldest status event
	w, err := parseWire(frame("s", 1, r.queue[0].body))
	if err != nil || w.Seq != 3 || r.dropped[task.EventStatus] != 1 {
		t.Fatalf("oldest queued seq %v (%v), dropped %v", w, err, r.dropped)
	}
	w, _ = parseWire(frame("s", 1, r.queue[len(r.queue)-1].body))
	if w.Seq != queueMaxEvents+3 {
		t.Fatalf("newest queued seq %d", w.Seq)
	}
	// An event larger than the whole queue is dropped alone.
	r.Send(task.Event{Kind: task.EventArtifact, TaskID: "t", Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "a",
		Parts: []task.Part{task.TextPart(strings.Repeat("x", queueMaxBytes))}}}})
	if len(r.queue) != queueMaxEvents || r.dropped[task.EventArtifact] != 3 {
		t.Fatalf("queue %d, dropped %v", len(r.queue), r.dropped)
	}
	// take hands the queue out in order, in bounded batches.
	var want []int
	for seq := 3; seq <= queueMaxEvents+1; seq++ {
		want = append(want, seq)
	}
	want = append(want, queueMaxEvents+3)
	total := 0
	for b := r.take(); b != nil; b = r.take() {
		if len(b) > batchMaxEvents {
			t.Fatalf("batch of %d", len(b))
		}
		for _, e := range b {
			w, _ := parseWire(frame("s", 1, e.body))
			if w.Seq != want[total] {
				t.Fatalf("event %d: seq %d, want %d", total, w.Seq, want[total])
			}
			total++
		}
	}
	if total != queueMaxEvents || r.bytes != 0 || r.queue != nil {
		t.Fatalf("took %d, bytes left %d", total, r.bytes)
	}
}

// FuzzParseWire: no payload makes the decoder panic, and what it accepts
// is a usable event.
func FuzzParseWire(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"src":"ab","n":1,"kind":"status","task":"t","state":"queued","snap":{"id":"t"}}`,
		`{"v":1,"kind":"artifact","task":"t","chunk":{"artifact":{"id":"a","parts":[{"kind":"text","text":"x"}]}}}`,
		`{"v":1,"ref":12}`,
		`{"v":1,"kind":"status","task":"t","state":"queued","at":"2026-01-01T00:00:00Z","msg":null}`,
		`junk`, `{}`, `null`, `[]`, `{"v":1,"ref":-1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := parseWire(b)
		if err != nil {
			return
		}
		if w.Ref > 0 {
			return
		}
		ev := w.event()
		if ev.TaskID == "" || (ev.Kind == task.EventArtifact && ev.Chunk == nil) || (ev.Kind == task.EventStatus && ev.State == "") {
			t.Fatalf("accepted an unusable event: %+v", ev)
		}
	})
}

// FuzzWireText: any text in an event survives encoding (ASCII escaping
// included) and decoding.
func FuzzWireText(f *testing.F) {
	for _, s := range []string{"", "plain", "é ü 日本 😀", "\x00\x1f\"\\<>&", "\xff\xfe bad utf-8", "\u2028\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev := task.Event{Kind: task.EventArtifact, TaskID: s + "t", Node: s,
			Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: s, Parts: []task.Part{task.TextPart(s)}}}}
		body, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		msg := frame("s", 1, body)
		for _, c := range msg {
			if c >= 0x80 {
				t.Fatalf("non-ASCII byte in %q", msg)
			}
		}
		w, err := parseWire(msg)
		if err != nil {
			t.Fatalf("parseWire(%s): %v", msg, err)
		}
		// encoding/json turns each invalid UTF-8 byte into U+FFFD.
		want := string([]rune(s))
		if got := w.event(); got.Node != want || got.Chunk.Artifact.Parts[0].Text != want || got.TaskID != want+"t" {
			t.Fatalf("round trip of %q: %+v", s, got)
		}
	})
}
