package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// TestTasksGetShowsTraceID: a task submitted in a trace (an incoming
// traceparent) shows its trace id in `tasks get` and `tasks get --json`;
// one submitted without shows none.
func TestTasksGetShowsTraceID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pactum.db")
	st, err := store.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := task.NewCoordinator(task.Options{Store: st, Agents: []task.AgentSpec{{Name: "echo", Runner: task.RunnerFunc(
		func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			return &task.Result{}, nil
		})}}})
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	in := task.ContextWithTraceParent(ctx, "00-"+traceID+"-00f067aa0ba902b7-01")
	traced, err := c.Submit(in, task.SubmitRequest{Agent: "echo", Envelope: task.Envelope{Actor: "alice", Input: task.Message{ID: "m1", Parts: []task.Part{task.TextPart("hi")}}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Submit(ctx, task.SubmitRequest{Agent: "echo", Envelope: task.Envelope{Actor: "alice", Input: task.Message{ID: "m2", Parts: []task.Part{task.TextPart("hi")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite://" + path

	out := mustRun(t, "tasks", "get", traced.Task.ID, "--store", dsn)
	if !strings.Contains(out, "\ntrace    "+traceID+"\n") {
		t.Errorf("tasks get printed:\n%s\nwant a trace line with %s", out, traceID)
	}
	var got struct {
		TraceID  string `json:"traceId"`
		Envelope struct {
			TraceParent string `json:"traceparent"`
		} `json:"envelope"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "tasks", "get", traced.Task.ID, "--json", "--store", dsn)), &got); err != nil {
		t.Fatal(err)
	}
	if got.TraceID != traceID || !strings.Contains(got.Envelope.TraceParent, traceID) {
		t.Errorf("tasks get --json: traceId %q, envelope.traceparent %q", got.TraceID, got.Envelope.TraceParent)
	}
	out = mustRun(t, "tasks", "get", plain.Task.ID, "--store", dsn)
	if strings.Contains(out, "trace ") {
		t.Errorf("tasks get of an untraced task printed a trace line:\n%s", out)
	}
	if raw := mustRun(t, "tasks", "get", plain.Task.ID, "--json", "--store", dsn); strings.Contains(raw, "traceId") {
		t.Errorf("tasks get --json of an untraced task has traceId:\n%s", raw)
	}
}
