package echo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/echo"
	"github.com/pactum/pactum/task"
)

func TestInvoke(t *testing.T) {
	t.Parallel()
	r := echo.New(echo.Settings{})
	res, err := r.Invoke(context.Background(), agenttest.Request("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "hello world" {
		t.Errorf("artifact text = %q", got)
	}
	a := res.Artifacts[0]
	if a.Name != "echo" || a.ID == "" {
		t.Errorf("artifact name/id = %q/%q", a.Name, a.ID)
	}
	if res.Message == nil || res.Message.Role != task.RoleAgent || res.Message.Text() != "hello world" || res.Message.ID == "" {
		t.Errorf("message = %+v", res.Message)
	}
}

func TestInvokePrefixKeepsParts(t *testing.T) {
	t.Parallel()
	req := agenttest.Request("")
	data := task.DataPart(json.RawMessage(`{"n":1}`))
	req.Message.Parts = []task.Part{data, task.TextPart("first"), task.TextPart("second")}
	res, err := echo.New(echo.Settings{Prefix: "you said: "}).Invoke(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []task.Part{data, task.TextPart("you said: first"), task.TextPart("second")}
	if got := res.Artifacts[0].Parts; !reflect.DeepEqual(got, want) {
		t.Errorf("parts = %+v, want %+v", got, want)
	}
	if req.Message.Parts[1].Text != "first" {
		t.Errorf("Invoke changed the request's parts: %+v", req.Message.Parts)
	}
	if got := res.Message.Text(); got != "you said: first\nsecond" {
		t.Errorf("message text = %q", got)
	}

	// No text part: the prefix becomes one.
	req.Message.Parts = []task.Part{data}
	res, err = echo.New(echo.Settings{Prefix: "p"}).Invoke(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := []task.Part{task.TextPart("p"), data}; !reflect.DeepEqual(res.Artifacts[0].Parts, want) {
		t.Errorf("parts = %+v, want %+v", res.Artifacts[0].Parts, want)
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		prefix string
		words  []string
	}{
		{in: "hello brave  new world", words: []string{"hello ", "brave  ", "new ", "world"}},
		{in: "  lead and trail \n", words: []string{"  lead ", "and ", "trail \n"}},
		{in: "one", prefix: "echo: ", words: []string{"echo: ", "one"}},
		{in: "héllo wörld", words: []string{"héllo ", "wörld"}},
	}
	for _, tt := range tests {
		var rec agenttest.Recorder
		res, err := echo.New(echo.Settings{Prefix: tt.prefix}).Stream(context.Background(), agenttest.Request(tt.in), rec.Emit)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Texts(); !reflect.DeepEqual(got, tt.words) {
			t.Errorf("Stream(%q) chunks = %q, want %q", tt.in, got, tt.words)
		}
		agenttest.CheckChunks(t, rec.Chunks(), res)
		if got := agenttest.ResultText(t, res); got != tt.prefix+tt.in {
			t.Errorf("Stream(%q) result = %q", tt.in, got)
		}
	}
}

func TestStreamEmptyMessage(t *testing.T) {
	t.Parallel()
	var rec agenttest.Recorder
	res, err := echo.New(echo.Settings{}).Stream(context.Background(), agenttest.Request(""), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Chunks()); n != 0 {
		t.Errorf("empty message streamed %d chunks", n)
	}
	if len(res.Artifacts) != 1 {
		t.Errorf("result = %+v", res)
	}
}

func TestStreamEmitError(t *testing.T) {
	t.Parallel()
	boom := errors.New("client went away")
	_, err := echo.New(echo.Settings{}).Stream(context.Background(), agenttest.Request("a b"), func(task.ArtifactChunk) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

func TestDelayHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := echo.New(echo.Settings{Delay: time.Hour})
	if _, err := r.Invoke(ctx, agenttest.Request("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Invoke err = %v, want context.Canceled", err)
	}
	if _, err := r.Stream(ctx, agenttest.Request("x"), (&agenttest.Recorder{}).Emit); !errors.Is(err, context.Canceled) {
		t.Errorf("Stream err = %v, want context.Canceled", err)
	}
}

func TestDelayWaits(t *testing.T) {
	t.Parallel()
	res, err := echo.New(echo.Settings{Delay: time.Millisecond}).Invoke(context.Background(), agenttest.Request("x"))
	if err != nil || agenttest.ResultText(t, res) != "x" {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	a, err := agent.New(context.Background(), agenttest.Spec(t, "echo", "prefix: '> '\ndelay: 1ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agenttest.Request("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "> hi" {
		t.Errorf("text = %q", got)
	}
	if m := agent.MetadataOf(a); m.Type != "echo" || !m.Streaming {
		t.Errorf("metadata = %+v", m)
	}
	if _, err := agent.New(context.Background(), agenttest.Spec(t, "echo", "")); err != nil {
		t.Errorf("no settings: %v", err)
	}
}

func TestSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"delay: -1s", "delay"},
		{"delay: 5", "time.Duration"}, // a bare number has no unit
		{"prefx: x", "prefx"},
	}
	for _, tt := range tests {
		_, err := agent.New(context.Background(), agenttest.Spec(t, "echo", tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("settings %q: err = %v, want it to name %q", tt.yaml, err, tt.want)
		}
	}
}

func Example() {
	r := echo.New(echo.Settings{Prefix: "echo: "})
	res, _ := r.Invoke(context.Background(), &task.Request{
		Message: task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("hello")}},
	})
	fmt.Println(res.Artifacts[0].Name, res.Message.Text())
	// Output: echo echo: hello
}

func BenchmarkInvoke(b *testing.B) {
	r := echo.New(echo.Settings{})
	req := agenttest.Request("the quick brown fox jumps over the lazy dog")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Invoke(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	r := echo.New(echo.Settings{})
	req := agenttest.Request("the quick brown fox jumps over the lazy dog")
	ctx := context.Background()
	emit := func(task.ArtifactChunk) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Stream(ctx, req, emit); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInvokeAfterFeedback: an attempt after feedback echoes the whole
// task (task.Request.Text) and keeps the request's data part, in the
// artifact and the message alike.
func TestInvokeAfterFeedback(t *testing.T) {
	t.Parallel()
	in := task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("count these words"), task.DataPart([]byte(`{"n":3}`))}}
	req := &task.Request{Envelope: task.Envelope{Input: in}, History: []task.Message{in,
		{Role: task.RoleAgent, Parts: []task.Part{task.TextPart("no")}, Metadata: map[string]any{task.RetryKey: task.RetryAnswer}},
		{Role: task.RoleUser, Parts: []task.Part{task.TextPart("say a number")}, Metadata: map[string]any{task.RetryKey: task.RetryFeedback}},
	}}
	req.Message = req.History[2]
	want := "count these words\n\n# Your previous answer (rejected)\nno\n\n# What to fix\nsay a number\n"
	res, err := echo.New(echo.Settings{}).Invoke(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	parts := res.Artifacts[0].Parts
	if len(parts) != 2 || parts[0].Text != want || string(parts[1].Data) != `{"n":3}` {
		t.Errorf("artifact parts %+v, want the whole task and the data part", parts)
	}
	if got := res.Message.Text(); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
