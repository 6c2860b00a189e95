package function_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/function"
	"github.com/pactum/pactum/task"
)

func TestNew(t *testing.T) {
	t.Parallel()
	want := &task.Result{InputRequired: true, Message: &task.Message{ID: "m", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("which city?")}}}
	var got *task.Request
	r := function.New("asker", func(_ context.Context, req *task.Request) (*task.Result, error) {
		got = req
		return want, nil
	})
	req := agenttest.Request("weather")
	res, err := agent.Runner(r).Run(context.Background(), req, (&agenttest.Recorder{}).Emit)
	if err != nil {
		t.Fatal(err)
	}
	if res != want || got != req {
		t.Errorf("Run = %+v with request %p, want %+v with %p", res, got, want, req)
	}
	if m := agent.MetadataOf(r); m.Type != "function" || m.Streaming || !strings.Contains(m.Description, "asker") {
		t.Errorf("metadata = %+v", m)
	}
	if r.Name() != "asker" {
		t.Errorf("Name = %q", r.Name())
	}
}

func TestNilResultIsEmpty(t *testing.T) {
	t.Parallel()
	r := function.New("nothing", func(context.Context, *task.Request) (*task.Result, error) { return nil, nil })
	res, err := r.Invoke(context.Background(), agenttest.Request("x"))
	if err != nil || res == nil {
		t.Fatalf("Invoke = %v, %v; want an empty result", res, err)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	r := function.Text("upper", func(_ context.Context, in string) (string, error) {
		return strings.ToUpper(in), nil
	})
	res, err := r.Invoke(context.Background(), agenttest.Request("shout"))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "SHOUT" {
		t.Errorf("artifact = %q", got)
	}
	if res.Artifacts[0].Name != "output" || res.Artifacts[0].ID == "" {
		t.Errorf("artifact = %+v", res.Artifacts[0])
	}
	if res.Message == nil || res.Message.Text() != "SHOUT" || res.Message.Role != task.RoleAgent {
		t.Errorf("message = %+v", res.Message)
	}
}

func TestErrorsPassThrough(t *testing.T) {
	t.Parallel()
	bad := task.Permanent(errors.New("no such city"))
	r := function.Text("f", func(context.Context, string) (string, error) { return "", bad })
	_, err := r.Invoke(context.Background(), agenttest.Request("x"))
	if !errors.Is(err, bad) || !task.IsPermanent(err) {
		t.Errorf("err = %v, want the function's permanent error", err)
	}
}

func TestPanicBecomesError(t *testing.T) {
	t.Parallel()
	r := function.New("crashy", func(context.Context, *task.Request) (*task.Result, error) { panic("index out of range") })
	res, err := r.Invoke(context.Background(), agenttest.Request("x"))
	if err == nil || res != nil || !strings.Contains(err.Error(), "crashy panicked: index out of range") {
		t.Errorf("Invoke = %v, %v; want the panic as an error", res, err)
	}
}

func TestStreaming(t *testing.T) {
	t.Parallel()
	r := function.Streaming("counter", func(_ context.Context, _ *task.Request, emit task.Emit) (*task.Result, error) {
		for i, w := range []string{"one ", "two ", "three"} {
			if err := emit(task.ArtifactChunk{
				Artifact:  task.Artifact{ID: "count", Name: "count", Parts: []task.Part{task.TextPart(w)}},
				Append:    i > 0,
				LastChunk: i == 2,
			}); err != nil {
				return nil, err
			}
		}
		return &task.Result{Message: &task.Message{ID: "m", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("done")}}}, nil
	})
	if m := agent.MetadataOf(r); !m.Streaming {
		t.Errorf("metadata = %+v, want streaming", m)
	}

	var rec agenttest.Recorder
	res, err := agent.Runner(r).Run(context.Background(), agenttest.Request("x"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Texts(); !reflect.DeepEqual(got, []string{"one ", "two ", "three"}) {
		t.Errorf("chunks = %q", got)
	}
	agenttest.CheckChunks(t, rec.Chunks(), nil)
	if len(res.Artifacts) != 0 {
		t.Errorf("streamed result artifacts = %+v, want none (they were emitted)", res.Artifacts)
	}

	// Invoked without streaming, the chunks become the artifact.
	res, err = r.Invoke(context.Background(), agenttest.Request("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := agenttest.ResultText(t, res); got != "one two three" {
		t.Errorf("gathered artifact = %q", got)
	}
	if res.Artifacts[0].ID != "count" || res.Message.Text() != "done" {
		t.Errorf("result = %+v", res)
	}
}

func TestStreamingInvokeKeepsResultArtifact(t *testing.T) {
	t.Parallel()
	final := task.Artifact{ID: "a", Parts: []task.Part{task.TextPart("final")}}
	r := function.Streaming("s", func(_ context.Context, _ *task.Request, emit task.Emit) (*task.Result, error) {
		if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "a", Parts: []task.Part{task.TextPart("draft")}}}); err != nil {
			return nil, err
		}
		if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "b", Parts: []task.Part{task.TextPart("side")}}, LastChunk: true}); err != nil {
			return nil, err
		}
		return &task.Result{Artifacts: []task.Artifact{final}}, nil
	})
	res, err := r.Invoke(context.Background(), agenttest.Request("x"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Artifacts) != 2 || !reflect.DeepEqual(res.Artifacts[0], final) || agenttest.PartsText(res.Artifacts[1].Parts) != "side" {
		t.Errorf("artifacts = %+v, want the function's own then the gathered one", res.Artifacts)
	}
}

func ExampleText() {
	greeter := function.Text("greeter", func(_ context.Context, name string) (string, error) {
		return "Hello, " + name + "!", nil
	})
	res, err := greeter.Invoke(context.Background(), &task.Request{
		Message: task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart("Ada")}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Message.Text())
	// Output: Hello, Ada!
}
