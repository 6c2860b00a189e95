// Package agenttest holds helpers for testing agent runtimes: a Spec built
// from YAML settings the way configuration builds it, a ready Request, a
// Recorder for streamed chunks and a check of the chunk protocol.
package agenttest

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite" // the store Coordinator opens
	"github.com/pactum/pactum/task"
)

// Spec returns the spec of an agent named "test" of type typ whose runtime
// settings are the YAML mapping settings ("" for none). Decoding is strict,
// as in configuration: unknown keys are errors.
func Spec(tb testing.TB, typ, settings string) agent.Spec {
	tb.Helper()
	s := agent.Spec{Name: "test", Type: typ}
	if strings.TrimSpace(settings) == "" {
		return s
	}
	s.Decode = func(v any) error {
		d := yaml.NewDecoder(strings.NewReader(settings))
		d.KnownFields(true)
		if err := d.Decode(v); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	return s
}

// Request returns a first-attempt request whose message holds text.
func Request(text string) *task.Request {
	msg := task.Message{ID: "msg-1", Role: task.RoleUser, ContextID: "ctx-1", TaskID: "task-1", Parts: []task.Part{task.TextPart(text)}}
	return &task.Request{
		TaskID:    "task-1",
		ContextID: "ctx-1",
		Agent:     "test",
		Attempt:   1,
		Envelope: task.Envelope{
			TaskID:    "task-1",
			Actor:     "alice",
			Action:    "ask",
			ContextID: "ctx-1",
			Input:     msg,
			Metadata:  map[string]any{"source": "agenttest"},
		},
		Message: msg,
		History: []task.Message{msg},
	}
}

// Recorder records streamed chunks. Its Emit method is a task.Emit; it is
// safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	chunks []task.ArtifactChunk
}

// Emit records c.
func (r *Recorder) Emit(c task.ArtifactChunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks = append(r.chunks, c)
	return nil
}

// Chunks returns the chunks recorded so far.
func (r *Recorder) Chunks() []task.ArtifactChunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]task.ArtifactChunk(nil), r.chunks...)
}

// Texts returns the text of each recorded chunk.
func (r *Recorder) Texts() []string {
	var out []string
	for _, c := range r.Chunks() {
		out = append(out, PartsText(c.Artifact.Parts))
	}
	return out
}

// PartsText returns the concatenated text of the text parts in parts.
func PartsText(parts []task.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Kind == task.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ResultText returns the text of res's only artifact, failing the test if
// res does not hold exactly one.
func ResultText(tb testing.TB, res *task.Result) string {
	tb.Helper()
	if res == nil || len(res.Artifacts) != 1 {
		tb.Fatalf("result = %+v, want exactly one artifact", res)
	}
	return PartsText(res.Artifacts[0].Parts)
}

// CheckChunks reports an error unless chunks follow the streaming protocol
// for one artifact: all share one ID, the first opens the artifact, the
// others append to it, and only the last closes it. When res is not nil,
// its artifacts must include the streamed one (same ID), so that the stored
// task holds the full artifact.
func CheckChunks(tb testing.TB, chunks []task.ArtifactChunk, res *task.Result) {
	tb.Helper()
	if len(chunks) == 0 {
		tb.Error("no chunks were streamed")
		return
	}
	id := chunks[0].Artifact.ID
	if id == "" {
		tb.Error("chunk 0 has no artifact ID")
	}
	for i, c := range chunks {
		if c.Artifact.ID != id {
			tb.Errorf("chunk %d artifact ID = %q, want %q", i, c.Artifact.ID, id)
		}
		if c.Append != (i > 0) {
			tb.Errorf("chunk %d Append = %v, want %v", i, c.Append, i > 0)
		}
		if c.LastChunk != (i == len(chunks)-1) {
			tb.Errorf("chunk %d LastChunk = %v, want %v", i, c.LastChunk, i == len(chunks)-1)
		}
	}
	if res == nil {
		return
	}
	for _, a := range res.Artifacts {
		if a.ID == id {
			return
		}
	}
	tb.Errorf("result artifacts %+v do not include the streamed artifact %q", res.Artifacts, id)
}

// Coordinator starts a task.Coordinator named node over a SQLite file in a
// temporary directory, with the given agents and a 10 ms poll, and stops it
// (then closes the store) when the test ends: for runtime tests that go
// through the whole lifecycle.
func Coordinator(tb testing.TB, node string, agents ...task.AgentSpec) *task.Coordinator {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(tb.TempDir(), "pactum.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	coord, err := task.NewCoordinator(task.Options{Store: st, Agents: agents, PollInterval: 10 * time.Millisecond, Node: node})
	if err != nil {
		_ = st.Close()
		tb.Fatal(err)
	}
	if err := coord.Start(ctx); err != nil {
		_ = st.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := coord.Stop(sctx); err != nil {
			tb.Errorf("stop coordinator: %v", err)
		}
		_ = st.Close()
	})
	return coord
}

// Run submits a task with a user message of parts to the agent named name
// (actor "tester") and waits until it is final (terminal or waiting for
// input). Any error fails the test.
func Run(tb testing.TB, ctx context.Context, coord *task.Coordinator, name string, parts ...task.Part) *task.Task {
	tb.Helper()
	res, err := coord.Submit(ctx, task.SubmitRequest{Agent: name, Envelope: task.Envelope{
		Actor: "tester", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: parts},
	}})
	if err != nil {
		tb.Fatalf("submit to %s: %v", name, err)
	}
	tk, err := coord.Wait(ctx, res.Task.ID)
	if err != nil {
		tb.Fatalf("wait for %s: %v", res.Task.ID, err)
	}
	return tk
}

// Answer answers task id, waiting in input_required, with text and waits
// until it is final again. Any error fails the test.
func Answer(tb testing.TB, ctx context.Context, coord *task.Coordinator, id, text string) *task.Task {
	tb.Helper()
	if _, err := coord.Continue(ctx, id, task.Message{ID: task.NewID(), Parts: []task.Part{task.TextPart(text)}}); err != nil {
		tb.Fatalf("answer %s: %v", id, err)
	}
	tk, err := coord.Wait(ctx, id)
	if err != nil {
		tb.Fatalf("wait for %s: %v", id, err)
	}
	return tk
}
