package task_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pactum/pactum/task"
)

// countingStore counts GetTask calls.
type countingStore struct {
	task.Store
	gets atomic.Int64
}

func (s *countingStore) GetTask(ctx context.Context, id string, historyLength int) (*task.Task, error) {
	s.gets.Add(1)
	return s.Store.GetTask(ctx, id, historyLength)
}

// streamWords is an agent that streams words as the chunks of one
// artifact, "out", and returns no artifact of its own.
func streamWords(words []string) task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		for i, w := range words {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(w)}}, Append: i > 0, LastChunk: i == len(words)-1}); err != nil {
				return nil, err
			}
		}
		return &task.Result{}, nil
	})
}

// setupCounting is setup with agent "s" running r, the Coordinator's
// GetTask calls counted.
func setupCounting(t *testing.T, r task.Runner) (*bundle, *countingStore) {
	t.Helper()
	var cs *countingStore
	b := setupWrapped(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: r}}}, func(s task.Store) task.Store {
		cs = &countingStore{Store: s}
		return cs
	})
	return b, cs
}

// SubmitAndFollow listens before the task exists: a task that streamed and
// finished before its sequence is ranged over is followed in full, from
// the task the submission stored, without reading the task back.
func TestSubmitAndFollowStartsFromTheSubmittedTask(t *testing.T) {
	t.Parallel()
	b, cs := setupCounting(t, streamWords([]string{"a", "b", "c"}))
	ctx := context.Background()
	// The task is done before the sequence starts. It may be created
	// speculatively (stored only once committed, perhaps with its end),
	// and its final event is published once its end is stored: listen
	// for that on the broker.
	env := envelope("s", "a", "x")
	env.TaskID = task.NewID()
	events, unsubscribe := b.coord.Broker().Subscribe(env.TaskID)
	defer unsubscribe()
	res, f, err := b.coord.SubmitAndFollow(ctx, task.SubmitRequest{Envelope: env})
	if err != nil {
		t.Fatal(err)
	}
	for ev := recv(t, events, "an event of the task"); !ev.Final; ev = recv(t, events, "the task's final event") {
	}
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded {
		t.Fatalf("task %s, want succeeded", got.State)
	}
	gets := cs.gets.Load()
	items, err := collect(t, f.Follow(ctx), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.gets.Load() - gets; n != 0 {
		t.Fatalf("following read the task %d times", n)
	}
	if items[0].Kind != task.FollowSnapshot || items[0].Task.Seq != res.Task.Seq || len(items[0].Task.History) != 1 {
		t.Fatalf("first item %+v, submitted seq %d", items[0], res.Task.Seq)
	}
	text := ""
	for _, it := range items[1:] {
		if it.Kind != task.FollowEvent {
			t.Fatalf("unexpected %+v", it)
		}
		if it.Event.Kind == task.EventArtifact {
			text += it.Event.Chunk.Artifact.Parts[0].Text
		}
	}
	last := items[len(items)-1]
	if text != "abc" || !last.Settled() || last.Event.State != task.StateSucceeded {
		t.Fatalf("streamed %q, last item %+v", text, last)
	}
	// The sequence is used up: ranging again yields nothing.
	if again, err := collect(t, f.Follow(ctx), nil); err != nil || len(again) != 0 {
		t.Fatalf("second range: %+v, %v", again, err)
	}
	// Stop before ranging: nothing is yielded, and Stop twice is safe.
	_, f2, err := b.coord.SubmitAndFollow(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "y")})
	if err != nil {
		t.Fatal(err)
	}
	f2.Stop()
	f2.Stop()
	if items, err := collect(t, f2.Follow(ctx), nil); err != nil || len(items) != 0 {
		t.Fatalf("after Stop: %+v, %v", items, err)
	}
}

// A consumer that falls behind while an agent streams, its status
// unchanged, is told that chunks were lost (FollowGap) with the task as
// stored, and goes on following: it sees the chunks that come after and the
// final status, whose task holds every chunk.
func TestFollowSaysWhenChunksWereLost(t *testing.T) {
	t.Parallel()
	const chunks = 1000 // far more than a subscriber's backlog
	release, streamed, finish := make(chan struct{}), make(chan struct{}), make(chan struct{})
	running := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		close(running)
		<-release
		for i := range chunks {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("x")}}, Append: i > 0}); err != nil {
				return nil, err
			}
		}
		close(streamed)
		<-finish
		if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("!")}}, Append: true, LastChunk: true}); err != nil {
			return nil, err
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: streamer}}})
	ctx := context.Background()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	// Follow from in_progress: a task the dispatcher claims (its poll may
	// hold every worker when Submit runs) would otherwise be read queued,
	// and the overflow would then be a resync, not a gap.
	<-running
	var gap *task.FollowItem
	items, err := collect(t, b.coord.Follow(ctx, res.Task.ID), func(it task.FollowItem) {
		switch it.Kind {
		case task.FollowSnapshot:
			// Stall while the agent streams: the chunks overflow the
			// backlog; the status does not change.
			close(release)
			<-streamed
		case task.FollowGap:
			gap = &it
			close(finish)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if gap == nil || !gap.ChunksLost || gap.Settled() || gap.Task.Seq != items[0].Task.Seq || gap.Task.State != task.StateInProgress {
		t.Fatalf("gap item %+v (of %d items)", gap, len(items))
	}
	last := items[len(items)-1]
	if !last.Settled() || last.Kind != task.FollowEvent || last.Event.State != task.StateSucceeded {
		t.Fatalf("last item %+v", last)
	}
	if items[len(items)-2].Kind != task.FollowEvent || items[len(items)-2].Event.Chunk.Artifact.Parts[0].Text != "!" {
		t.Fatalf("the chunk after the gap is missing: %+v", items[len(items)-2])
	}
	w := last.Whole()
	if w == nil {
		w = wait(t, b, res.Task.ID)
	}
	var got strings.Builder
	for _, p := range w.Artifacts[0].Parts {
		got.WriteString(p.Text)
	}
	if got.String() != strings.Repeat("x", chunks)+"!" {
		t.Fatalf("stored %d bytes", got.Len())
	}
}

// A blocking request whose agent streams its answer in many more chunks
// than a waiter's buffer holds (a model, a token a chunk) is answered from
// the task's final event, whole, without reading the task back: its
// waiter is sent only final events, so the chunks cannot overflow it
// while the request's own goroutine runs the attempt.
func TestSubmitAndWaitManyChunksNoReadBack(t *testing.T) {
	t.Parallel()
	const chunks = 500
	words := make([]string, chunks)
	for i := range words {
		words[i] = "tok "
	}
	b, cs := setupCounting(t, streamWords(words))
	res, err := b.coord.SubmitAndWait(context.Background(), task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Task
	if got.State != task.StateSucceeded || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != strings.Repeat("tok ", chunks) {
		t.Fatalf("SubmitAndWait returned state %s, artifacts %+v", got.State, got.Artifacts)
	}
	if n := cs.gets.Load(); n != 0 {
		t.Fatalf("the task was read back %d times; want it from its final event", n)
	}
}
