package mcpagent

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/task"
)

func schemaTool(schema string) *sdk.Tool {
	var v any
	if err := json.Unmarshal([]byte(schema), &v); err != nil {
		panic(err)
	}
	return &sdk.Tool{Name: "t", InputSchema: v}
}

func TestArguments(t *testing.T) {
	t.Parallel()
	const (
		oneString  = `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"number"}},"required":["q"]}`
		nullable   = `{"type":"object","properties":{"q":{"type":["string","null"]}},"required":["q"]}`
		oneNumber  = `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
		twoStrings = `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`
		noArgs     = `{"type":"object","properties":{}}`
		optional   = `{"type":"object","properties":{"q":{"type":"string"}}}`
	)
	tests := []struct {
		name     string
		schema   string
		settings Settings
		msg      *task.Message
		want     string // the JSON arguments, or the error text
		err      bool
	}{
		{"text to the only required string", oneString, Settings{}, text("hi"), `{"q":"hi"}`, false},
		{"nullable string", nullable, Settings{}, text("hi"), `{"q":"hi"}`, false},
		{"configured argument", twoStrings, Settings{Argument: "b", Arguments: map[string]any{"a": "x"}}, text("hi"), `{"a":"x","b":"hi"}`, false},
		{"defaults leave one string", twoStrings, Settings{Arguments: map[string]any{"a": "x"}}, text("hi"), `{"a":"x","b":"hi"}`, false},
		{"text joins parts", oneString, Settings{}, text("one", "two"), `{"q":"one\ntwo"}`, false},
		{"data part", oneNumber, Settings{}, data(`{"n": 12345678901234567890}`), `{"n":12345678901234567890}`, false},
		{"data over defaults", oneNumber, Settings{Arguments: map[string]any{"n": 1, "m": "k"}}, data(`{"n": 2}`), `{"m":"k","n":2}`, false},
		{"data wins over text", oneString, Settings{}, &task.Message{Parts: []task.Part{task.TextPart("ignored"), task.DataPart([]byte(`{"q":"d"}`))}}, `{"q":"d"}`, false},
		{"no arguments: text ignored", noArgs, Settings{}, text("a picture"), `{}`, false},
		{"empty text, nothing required", optional, Settings{}, text(""), `{}`, false},
		{"text with nowhere to go", optional, Settings{}, text("hi"), `no required argument left to take it (it takes "q")`, true},
		{"required number", oneNumber, Settings{}, text("12"), `the required argument "n" is not a string`, true},
		{"two required", twoStrings, Settings{}, text("hi"), `the tool requires "a", "b"`, true},
		{"data array", oneString, Settings{}, data(`[1]`), "got an array", true},
		{"data not JSON", oneString, Settings{}, data(`{`), "invalid JSON", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.settings
			s.Tool = "t"
			got, err := arguments(tt.msg, s, schemaTool(tt.schema))
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeInvalidArgument {
					t.Errorf("err = %v, want a permanent invalid_argument error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("arguments = %s, want %s", got, tt.want)
			}
		})
	}
}

func text(texts ...string) *task.Message {
	m := &task.Message{Role: task.RoleUser}
	for _, s := range texts {
		m.Parts = append(m.Parts, task.TextPart(s))
	}
	return m
}

func data(s string) *task.Message {
	return &task.Message{Role: task.RoleUser, Parts: []task.Part{task.DataPart([]byte(s))}}
}

func TestMapResult(t *testing.T) {
	t.Parallel()
	size := int64(42)
	res := &sdk.CallToolResult{
		Content: []sdk.Content{
			&sdk.TextContent{Text: "first"},
			&sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///docs/a.txt", Text: "inline"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", Blob: []byte{1, 2}, MIMEType: "application/x-b"}},
			&sdk.ResourceLink{URI: "https://example.com/r.pdf", Name: "r.pdf", Title: "Report", MIMEType: "application/pdf", Size: &size},
			&sdk.TextContent{Text: "second"},
		},
		StructuredContent: map[string]any{"ok": true},
	}
	out, err := mapResult(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Artifacts) != 1 || out.Artifacts[0].Name != "output" {
		t.Fatalf("artifacts = %+v", out.Artifacts)
	}
	p := out.Artifacts[0].Parts
	if len(p) != 8 {
		t.Fatalf("parts = %+v, want 8", p)
	}
	checks := []struct {
		got, want any
	}{
		{p[0].Text, "first"},
		{p[1].Kind, task.PartRaw}, {string(p[1].Raw), "\x89PNG"}, {p[1].MediaType, "image/png"},
		{p[2].Kind, task.PartRaw}, {p[2].MediaType, "audio/wav"},
		{p[3].Kind, task.PartRaw}, {string(p[3].Raw), "inline"}, {p[3].MediaType, "text/plain"}, {p[3].Filename, "a.txt"}, {p[3].Metadata["mcp.uri"], "file:///docs/a.txt"},
		{p[4].Raw[1], byte(2)}, {p[4].MediaType, "application/x-b"}, {p[4].Filename, ""},
		{p[5].Kind, task.PartURL}, {p[5].URL, "https://example.com/r.pdf"}, {p[5].Filename, "r.pdf"}, {p[5].Metadata["mcp.title"], "Report"}, {p[5].Metadata["mcp.size"], int64(42)},
		{p[6].Text, "second"},
		{p[7].Kind, task.PartData}, {string(p[7].Data), `{"ok":true}`},
		{out.Message.Text(), "first\nsecond"},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %#v, want %#v", i, c.got, c.want)
		}
	}

	// Structured content alone: the message carries its JSON.
	out, err = mapResult(&sdk.CallToolResult{StructuredContent: []any{1, 2}})
	if err != nil || out.Message.Text() != "[1,2]" {
		t.Errorf("structured only: message %v, err %v", out.Message, err)
	}
	// Nothing at all: no artifact, no message.
	out, err = mapResult(&sdk.CallToolResult{})
	if err != nil || len(out.Artifacts) != 0 || out.Message != nil {
		t.Errorf("empty result: %+v, %v", out, err)
	}
}

func TestToolErrorText(t *testing.T) {
	t.Parallel()
	err := toolError("t", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("é", 1000)}}})
	if !task.IsPermanent(err) || task.ErrorCode(err) != task.CodeAgentFailed {
		t.Errorf("err = %v, want permanent agent_failed", err)
	}
	if msg := err.Error(); len(msg) > maxReasonLen+100 || !strings.HasSuffix(msg, "…") || !strings.Contains(msg, `tool "t" reported an error: éé`) {
		t.Errorf("message = %q, want the clipped tool text", msg)
	}
	if err := toolError("t", &sdk.CallToolResult{IsError: true}); !strings.Contains(err.Error(), "(no error text)") {
		t.Errorf("no text: %v", err)
	}
}

func TestProgressSink(t *testing.T) {
	t.Parallel()
	var rec agenttest.Recorder
	s := newProgressSink(rec.Emit)
	for _, n := range []*sdk.ProgressNotificationParams{
		{Progress: 1, Total: 3, Message: "one"},
		{Progress: 1, Total: 3, Message: "one"}, // a repeat
		{Progress: 2.5},
		{Progress: 2}, // not an increase
	} {
		s.add(n)
	}
	a, err := s.finish()
	if err != nil {
		t.Fatal(err)
	}
	s.add(&sdk.ProgressNotificationParams{Progress: 9}) // after the call
	want := "1/3: one\n2.5\n"
	if a == nil || a.Name != "progress" || agenttest.PartsText(a.Parts) != want {
		t.Errorf("artifact = %+v, want %q", a, want)
	}
	agenttest.CheckChunks(t, rec.Chunks(), &task.Result{Artifacts: []task.Artifact{*a}})
	if got := len(rec.Chunks()); got != 3 {
		t.Errorf("chunks = %d, want 2 lines and the closing chunk", got)
	}
	if a, err := newProgressSink(rec.Emit).finish(); a != nil || err != nil {
		t.Errorf("no notification: %v, %v", a, err)
	}
}

func TestProgressTap(t *testing.T) {
	t.Parallel()
	stream := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"notifications/progress"}}`,
		`{"method":"notifications/progress","params":{"progress":1,"total":2,"progressToken":"tok"},"jsonrpc":"2.0"}`,
		`event: message`,
		`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"message":"sse"}}`,
		"\r",
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"method":"notifications/progress","params":{"progress":3,"progressToken":"cut`, // no newline: incomplete
	}, "\n")
	var got []string
	tap := &progressTap{r: strings.NewReader(stream), on: func(p *sdk.ProgressNotificationParams) {
		got = append(got, progressLine(p))
	}}
	out, err := io.ReadAll(iotest(tap))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != stream {
		t.Error("the tap changed the stream")
	}
	if want := []string{"1/2\n", "2: sse\n"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("notifications = %q, want %q", got, want)
	}
}

// iotest reads r a few bytes at a time, as pipes and bodies deliver.
func iotest(r io.Reader) io.Reader { return &smallReader{r} }

type smallReader struct{ r io.Reader }

func (s *smallReader) Read(p []byte) (int, error) {
	if len(p) > 7 {
		p = p[:7]
	}
	return s.r.Read(p)
}

func FuzzArguments(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "hello")
	f.Add([]byte(`[1,2]`), "")
	f.Add([]byte(`{"n":1e400}`), "x")
	f.Add([]byte(`"str"`), "x")
	tool := schemaTool(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	f.Fuzz(func(t *testing.T, raw []byte, txt string) {
		for _, msg := range []*task.Message{data(string(raw)), text(txt)} {
			args, err := arguments(msg, Settings{Tool: "t"}, tool)
			if err != nil {
				if !task.IsPermanent(err) {
					t.Fatalf("non-permanent error %v", err)
				}
				continue
			}
			var obj map[string]any
			d := json.NewDecoder(bytes.NewReader(args))
			d.UseNumber()
			if err := d.Decode(&obj); err != nil || obj == nil {
				t.Fatalf("arguments %s are not a JSON object: %v", args, err)
			}
		}
	})
}

func FuzzProgressTap(f *testing.F) {
	f.Add([]byte(`{"method":"notifications/progress","params":{"progress":1,"progressToken":"t"}}` + "\n"))
	f.Add([]byte("data: {\"method\":\"notifications/progress\",\"params\":null}\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		tap := &progressTap{r: bytes.NewReader(stream), on: func(p *sdk.ProgressNotificationParams) {
			if p == nil {
				t.Fatal("nil notification")
			}
		}}
		out, err := io.ReadAll(iotest(tap))
		if err != nil || !bytes.Equal(out, stream) {
			t.Fatalf("the tap changed the stream (err %v)", err)
		}
	})
}
