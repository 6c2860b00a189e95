package langgraph

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Transcripts in testdata/streams were recorded from the pinned JS Agent
// Server (the test graphs, curl); pythonStream is the compact form the
// Python server writes.
const pythonStream = "event: metadata\r\ndata: {\"run_id\":\"1ef\",\"attempt\":1}\r\n\r\n" +
	"event: messages\r\ndata: [{\"content\":[{\"type\":\"text\",\"text\":\"Hel\"}],\"type\":\"AIMessageChunk\",\"id\":\"m1\"},{\"langgraph_node\":\"agent\"}]\r\n\r\n" +
	": heartbeat\r\n\r\n" +
	"event: messages\r\ndata: [{\"content\":\"lo\",\"type\":\"AIMessageChunk\",\"id\":\"m1\"},{}]\r\n\r\n" +
	"event: values\r\ndata: {\"messages\":[{\"content\":\"hi\",\"type\":\"human\"},{\"content\":\"Hello\",\"type\":\"ai\"}]}\r\n\r\n" +
	"event: end\r\ndata: null\r\n\r\n"

// decodeStream reads a whole run stream.
func decodeStream(data string) (*run, string, error) {
	rn := &run{}
	var chunks strings.Builder
	err := readSSE(strings.NewReader(data), func(ev event) error {
		return rn.handle(ev, func(s string) error { chunks.WriteString(s); return nil })
	})
	return rn, chunks.String(), err
}

func TestDecodeRecordedStreams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, chunks, answer, question, err string
	}{
		{file: "echo.sse", chunks: "You said: hi", answer: "You said: hi"},
		{file: "echo-messages-mode.sse", chunks: "You said: hi", answer: "You said: hi"},
		{file: "ask-interrupt.sse", question: `"What is your name?"`},
		{file: "ask-resume.sse", chunks: "Hello, Ada!", answer: "Hello, Ada!"},
		{file: "form-interrupt.sse", question: `{"question":"Approve?","options":["yes","no"]}`},
		{file: "fail.sse", err: "Error: the graph failed on purpose"},
		{file: "", chunks: "Hello", answer: "Hello"}, // pythonStream
	} {
		data := pythonStream
		if tc.file != "" {
			b, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			data = string(b)
		}
		rn, chunks, err := decodeStream(data)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if rn.ID == "" {
			t.Errorf("%s: no run id", tc.file)
		}
		if chunks != tc.chunks {
			t.Errorf("%s: chunks = %q, want %q", tc.file, chunks, tc.chunks)
		}
		if got, _ := lastAIText(rn.Values); got != tc.answer {
			t.Errorf("%s: answer = %q, want %q", tc.file, got, tc.answer)
		}
		var q string
		if len(rn.Interrupts) > 0 {
			q = string(rn.Interrupts[0].Value)
			if rn.Interrupts[0].ID == "" {
				t.Errorf("%s: interrupt without id", tc.file)
			}
		}
		if compactJSON(q) != compactJSON(tc.question) {
			t.Errorf("%s: question = %s, want %s", tc.file, q, tc.question)
		}
		var e string
		if rn.Err != nil {
			e = rn.Err.String()
		}
		if e != tc.err {
			t.Errorf("%s: error = %q, want %q", tc.file, e, tc.err)
		}
	}
}

func compactJSON(s string) string {
	if s == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestReadSSE(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []event
	}{
		{"event: values\ndata: {\ndata: }\n\n", []event{{"values", "{\n}"}}},
		{"data:x\r\n\r\ndata: y", []event{{"", "x"}, {"", "y"}}},
		{": comment\nevent: e\n\n", nil},
		{"event: a\nid: 3\nretry: 10\ndata: 1\n\nevent: b\ndata: 2\n\n", []event{{"a", "1"}, {"b", "2"}}},
	} {
		var got []event
		err := readSSE(strings.NewReader(tc.in), func(ev event) error { got = append(got, ev); return nil })
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: events = %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: event %d = %q, want %q", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

func TestReadSSETooLarge(t *testing.T) {
	t.Parallel()
	big := "data: " + strings.Repeat("x", maxEventBytes+1) + "\n\n"
	err := readSSE(strings.NewReader(big), func(event) error { return nil })
	if !errors.Is(err, errEventTooLarge) {
		t.Errorf("error = %v, want errEventTooLarge", err)
	}
}

// FuzzRunStream feeds arbitrary bytes to the decoder of run streams: it
// must not panic, and what it accepts must be usable.
func FuzzRunStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(pythonStream))
	f.Add([]byte("event: values\ndata: {\"__interrupt__\":{\"value\":1}}\n\n"))
	f.Add([]byte("event: messages/partial\ndata: [{\"type\":\"ai\",\"id\":\"a\",\"content\":\"ab\"}]\n\nevent: messages/partial\ndata: [{\"type\":\"ai\",\"id\":\"a\",\"content\":\"x\"}]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rn, chunks, err := decodeStream(string(data))
		if err != nil {
			return
		}
		_ = chunks
		r := &Runtime{s: Settings{Output: OutputText}, host: "fuzz"}
		if rn.Values != nil {
			if _, err := r.answer(rn.Values, "id"); err != nil {
				t.Errorf("answer of accepted values: %v", err)
			}
		}
		r.s.Output = OutputState
		if rn.Values != nil {
			if _, err := r.answer(rn.Values, "id"); err != nil {
				t.Errorf("state answer of accepted values: %v", err)
			}
		}
		if len(rn.Interrupts) > 0 {
			// An interrupt value that is not JSON is an agent error, not
			// a panic.
			_, _ = r.question(request("t", "c", "x"), "thread", rn)
		}
	})
}

// FuzzThreadState feeds arbitrary bytes to the reading of a thread's
// history (what an attempt reads after joining a run or finding it
// finished): it must not panic.
func FuzzThreadState(f *testing.F) {
	f.Add([]byte(`[{"values":{"messages":[{"content":"hi","type":"human"},{"content":[{"type":"text","text":"Hello"}],"type":"ai"}]},"metadata":{"pactum_turn":"t/m","run_id":"r"},"tasks":[]}]`))
	f.Add([]byte(`[{"values":{"messages":[]},"metadata":{"pactum_turn":"t/m"},"tasks":[{"interrupts":[{"id":"a","value":{"q":1}}]}]}]`))
	f.Add([]byte(`[{"values":[],"metadata":null,"tasks":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var states []threadState
		if json.Unmarshal(data, &states) != nil || len(states) == 0 {
			return
		}
		st := states[0]
		rn := &run{ID: "r"}
		if json.Unmarshal(st.Values, &rn.Values) != nil {
			return
		}
		for _, tk := range st.Tasks {
			rn.addInterrupts(tk.Interrupts)
		}
		r := &Runtime{s: Settings{Output: OutputText}, host: "fuzz"}
		if len(rn.Interrupts) > 0 {
			_, _ = r.question(request("t", "c", "x"), "thread", rn)
			return
		}
		if _, err := r.answer(rn.Values, "id"); err != nil {
			t.Errorf("answer: %v", err)
		}
	})
}
