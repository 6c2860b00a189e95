package answer

import (
	"errors"
	"regexp"
	"testing"

	"github.com/pactum/pactum/task"
)

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc      string
		kind     string
		wantText string
	}{
		{`"hello <b>"`, "text", "hello <b>"},
		{`{"a":"<b>","n":12345678901234567890}`, "data", `{"a":"<b>","n":12345678901234567890}`},
		{`[1,2]`, "data", `[1,2]`},
		{`42.50`, "text", `42.50`},
		{`true`, "text", `true`},
		{`null`, "text", `null`},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Value("id1", "output", v)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Artifacts) != 1 || len(res.Artifacts[0].Parts) != 1 {
			t.Fatalf("Value(%s) = %+v, want one artifact with one part", tt.doc, res)
		}
		a := res.Artifacts[0]
		if a.ID != "id1" || a.Name != "output" {
			t.Errorf("artifact id/name = %q/%q", a.ID, a.Name)
		}
		p := a.Parts[0]
		if string(p.Kind) != tt.kind {
			t.Errorf("Value(%s) part kind = %s, want %s", tt.doc, p.Kind, tt.kind)
		}
		if tt.kind == "data" && string(p.Data) != tt.wantText {
			t.Errorf("Value(%s) data = %s, want %s", tt.doc, p.Data, tt.wantText)
		}
		if got := res.Message.Text(); got != tt.wantText {
			t.Errorf("Value(%s) message = %q, want %q", tt.doc, got, tt.wantText)
		}
		if res.Message.Role != "agent" || res.Message.ID == "" {
			t.Errorf("message role/id = %q/%q", res.Message.Role, res.Message.ID)
		}
	}
}

func TestDecodeRejectsTrailingValues(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"a":1}{"b":2}`, `1 2`, `{`, ``} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("Decode(%q): want error", doc)
		}
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !uuid.MatchString(id) {
			t.Fatalf("NewID() = %q, want a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	var got []task.ArtifactChunk
	s := NewStream(func(c task.ArtifactChunk) error { got = append(got, c); return nil }, "a1", "output")
	if err := s.Close(); err != nil || len(got) != 0 {
		t.Fatalf("Close before any write emitted %d chunks, err %v", len(got), err)
	}
	for _, w := range []string{"one ", "", "two"} {
		if err := s.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text         string
		append, last bool
	}{{"one ", false, false}, {"two", true, false}, {"", true, true}}
	if len(got) != len(want) {
		t.Fatalf("got %d chunks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		c := got[i]
		if c.Artifact.ID != "a1" || c.Artifact.Name != "output" || c.Artifact.Parts[0].Text != w.text || c.Append != w.append || c.LastChunk != w.last {
			t.Errorf("chunk %d = %+v, want text %q append %v last %v", i, c, w.text, w.append, w.last)
		}
	}
}

func TestStreamEmitError(t *testing.T) {
	t.Parallel()
	boom := errors.New("subscriber gone")
	s := NewStream(func(task.ArtifactChunk) error { return boom }, "a1", "output")
	if err := s.Write("x"); !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want %v", err, boom)
	}
	if err := NewStream(nil, "a1", "output").Write("x"); err != nil {
		t.Fatalf("nil emit: %v", err)
	}
}
