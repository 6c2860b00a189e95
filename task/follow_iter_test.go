package task_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// collect ranges over Follow and returns its items and its error, failing
// the test if anything follows a settled item or an error.
func collect(t *testing.T, seq func(func(task.FollowItem, error) bool), onItem func(task.FollowItem)) ([]task.FollowItem, error) {
	t.Helper()
	var items []task.FollowItem
	var ferr error
	for it, err := range seq {
		if ferr != nil || (len(items) > 0 && items[len(items)-1].Settled()) {
			t.Fatalf("item %+v, %v after the end", it, err)
		}
		if err != nil {
			ferr = err
			continue
		}
		items = append(items, it)
		if onItem != nil {
			onItem(it)
		}
	}
	return items, ferr
}

func TestFollowYieldsSnapshotThenEventsAndStopsSettled(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		<-release
		for i, w := range []string{"a", "b", "c"} {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(w)}}, Append: i > 0, LastChunk: i == 2}); err != nil {
				return nil, err
			}
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: streamer}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	items, err := collect(t, b.coord.Follow(ctx, res.Task.ID), func(it task.FollowItem) {
		if it.Kind == task.FollowSnapshot {
			close(release)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Kind != task.FollowSnapshot || items[0].Task.ID != res.Task.ID || len(items[0].Task.History) != 1 {
		t.Fatalf("first item %+v", items[0])
	}
	last := items[len(items)-1]
	if !last.Settled() || last.Kind != task.FollowEvent || last.Event.State != task.StateSucceeded {
		t.Fatalf("last item %+v", last)
	}
	if w := last.Whole(); w == nil || len(w.Artifacts) != 1 || w.Artifacts[0].Parts[0].Text != "abc" {
		t.Fatalf("last item's whole task %+v", w)
	}
	seq, text := items[0].Task.Seq, ""
	for _, it := range items[1:] {
		if it.Kind != task.FollowEvent {
			t.Fatalf("unexpected %+v", it)
		}
		switch it.Event.Kind {
		case task.EventStatus:
			if it.Event.Seq <= seq {
				t.Fatalf("status %d after %d", it.Event.Seq, seq)
			}
			seq = it.Event.Seq
		case task.EventArtifact:
			text += it.Event.Chunk.Artifact.Parts[0].Text
		}
	}
	// The agent streamed only after the snapshot: every chunk is seen.
	if text != "abc" {
		t.Fatalf("streamed %q", text)
	}

	// Following a settled task yields its snapshot alone.
	items, err = collect(t, b.coord.Follow(ctx, res.Task.ID), nil)
	if err != nil || len(items) != 1 || !items[0].Settled() || items[0].Whole() == nil || items[0].Task.State != task.StateSucceeded {
		t.Fatalf("settled task: %+v, %v", items, err)
	}
}

// A consumer too slow for the broker is dropped; Follow then re-reads the
// store and yields what it missed as a resync item.
func TestFollowResyncsAfterTheBrokerDropsIt(t *testing.T) {
	t.Parallel()
	const chunks = 1000 // far more than a subscriber's buffer
	release := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		<-release
		for i := range chunks {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("x")}}, Append: i > 0, LastChunk: i == chunks-1}); err != nil {
				return nil, err
			}
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: streamer}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	items, err := collect(t, b.coord.Follow(ctx, res.Task.ID), func(it task.FollowItem) {
		if it.Kind == task.FollowSnapshot {
			// Stall until the task is done: the events meanwhile
			// overflow this subscriber's buffer.
			close(release)
			wait(t, b, res.Task.ID)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	last := items[len(items)-1]
	if last.Kind != task.FollowResync || !last.Settled() || last.Task.State != task.StateSucceeded {
		t.Fatalf("last item %+v (of %d)", last, len(items))
	}
	w := last.Whole()
	if w == nil || len(w.History) != 1 || len(w.Artifacts) != 1 || len(w.Artifacts[0].Parts) == 0 {
		t.Fatalf("resync task %+v", w)
	}
	var got strings.Builder
	for _, p := range w.Artifacts[0].Parts {
		got.WriteString(p.Text)
	}
	if got.Len() != chunks {
		t.Fatalf("stored %d chunks, want %d", got.Len(), chunks)
	}
}

// Broker.Reset drops every subscription; Follow re-subscribes and, when
// nothing changed meanwhile, yields nothing for it and follows on.
func TestFollowResubscribesAfterResetWithoutChange(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{})
	blocker := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		close(started)
		<-release
		return &task.Result{Artifacts: []task.Artifact{{Name: "r", Parts: []task.Part{task.TextPart("done")}}}}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: blocker}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	<-started // in_progress is stored: nothing changes until release
	items, err := collect(t, b.coord.Follow(ctx, res.Task.ID), func(it task.FollowItem) {
		if it.Kind == task.FollowSnapshot {
			b.coord.Broker().Reset()
			close(release)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	last := items[len(items)-1]
	if !last.Settled() || last.Whole() == nil || last.Whole().State != task.StateSucceeded {
		t.Fatalf("last item %+v", last)
	}
	seq := items[0].Task.Seq
	for _, it := range items[1:] {
		s := it.Event.Seq
		if it.Kind != task.FollowEvent {
			s = it.Task.Seq
		}
		if s <= seq && (it.Kind != task.FollowEvent || it.Event.Kind == task.EventStatus) {
			t.Fatalf("item %+v repeats seq %d", it, seq)
		}
	}
}

func TestFollowEndsWithCtxError(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	blocker := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		<-release
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: blocker}}})
	t.Cleanup(func() { close(release) }) // before setup's cleanup stops the coordinator
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	items, err := collect(t, b.coord.Follow(ctx, res.Task.ID), func(it task.FollowItem) {
		if it.Kind == task.FollowSnapshot {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || len(items) == 0 || items[0].Kind != task.FollowSnapshot {
		t.Fatalf("items %+v, err %v", items, err)
	}

	// A task that does not exist: one error.
	items, err = collect(t, b.coord.Follow(context.Background(), "no-such-task"), nil)
	if task.ErrorCode(err) != task.CodeNotFound || len(items) != 0 {
		t.Fatalf("unknown task: %+v, %v", items, err)
	}
}
