package task_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

func TestSubscribeStreamsChunksAndLateSubscriberSeesState(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	streamer := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		for i, w := range []string{"a", "b", "c"} {
			if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(w)}}, Append: i > 0, LastChunk: i == 2}); err != nil {
				return nil, err
			}
			if i == 0 {
				<-release
			}
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: streamer}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	snap, ch, cancel, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	close(release)
	var text string
	var last task.Event
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("subscription closed early")
			}
			if ev.Kind == task.EventStatus && ev.Seq <= snap.Seq {
				t.Fatalf("event %d already in snapshot %d", ev.Seq, snap.Seq)
			}
			if ev.Kind == task.EventArtifact {
				text += ev.Chunk.Artifact.Parts[0].Text
			}
			last, done = ev, ev.Final
		case <-timeout:
			t.Fatal("no final event")
		}
	}
	if last.State != task.StateSucceeded {
		t.Fatalf("final %s", last.State)
	}
	// Chunks before the subscription may be missed; those after must not be.
	if text != "abc" && text != "bc" {
		t.Fatalf("streamed %q", text)
	}
	got, _ := b.coord.Get(ctx, res.Task.ID, -1)
	if len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "abc" {
		t.Fatalf("stored artifacts %+v", got.Artifacts)
	}
	// A late subscriber starts from the stored, final state.
	snap2, _, cancel2, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	if snap2.State != task.StateSucceeded {
		t.Fatalf("late snapshot %s", snap2.State)
	}
}

func TestSubmitAndWait(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	b := setup(t, task.Options{
		Agents:      []task.AgentSpec{{Name: "echo", Runner: echoRunner(&calls)}, {Name: "deploy", Runner: echoRunner(&calls), Sensitive: true}},
		Permissions: task.Permissions{"alice": {"*"}},
	})
	ctx := context.Background()
	env := envelope("echo", "alice", "hi")
	res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: env})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Task
	if got.State != task.StateSucceeded || len(got.Artifacts) != 1 || got.Artifacts[0].Parts[0].Text != "hi" || len(got.History) != 1 {
		t.Fatalf("SubmitAndWait returned %+v", got)
	}
	// What it returned is what is stored.
	stored, _ := b.coord.Get(ctx, got.ID, -1)
	if stored.State != got.State || stored.Seq != got.Seq || len(stored.Artifacts) != len(got.Artifacts) || stored.Artifacts[0].ID != got.Artifacts[0].ID {
		t.Fatalf("returned %+v, stored %+v", got, stored)
	}
	// A duplicate returns the stored task without running again.
	again, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: env})
	if err != nil || !again.Duplicate || again.Task.ID != got.ID || len(again.Task.Artifacts) != 1 || calls.Load() != 1 {
		t.Fatalf("duplicate: %+v, %v, calls %d", again, err, calls.Load())
	}
	// A rejection comes back at once.
	rej, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("deploy", "bob", "x")})
	if err != nil || !rej.Task.Rejected || rej.Task.ErrorCode != task.CodeForbidden {
		t.Fatalf("rejected: %+v, %v", rej, err)
	}
}

func TestFinalEventCarriesWholeTask(t *testing.T) {
	t.Parallel()
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echoRunner(nil)}}})
	ctx := context.Background()
	env := envelope("echo", "a", "whole")
	env.TaskID = task.NewID()
	ch, cancel := b.coord.Broker().Subscribe(env.TaskID)
	defer cancel()
	if _, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: env}); err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if !ev.Final {
			continue
		}
		if !ev.Complete || len(ev.Task.Artifacts) != 1 || len(ev.Task.History) != 1 || ev.Task.Artifacts[0].Parts[0].Text != "whole" {
			t.Fatalf("final event %+v task %+v", ev, ev.Task)
		}
		return
	}
	t.Fatal("no final event")
}

// WithFollowIdle's function runs when Follow has yielded all it holds and
// is about to wait: here while the agent waits to be released (which only
// the idle function does, so without it the follow would wait until its
// deadline), and never after the item that settles the task.
func TestFollowCallsIdleBeforeItWaits(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	agent := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if err := emit(task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart("a")}}}); err != nil {
			return nil, err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "s", Runner: agent}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("s", "a", "x")})
	if err != nil {
		t.Fatal(err)
	}
	var yielded int
	var idleAt []int // yielded at each idle call
	fctx := task.WithFollowIdle(ctx, func() {
		idleAt = append(idleAt, yielded)
		if len(idleAt) == 1 {
			close(release)
		}
	})
	settled := false
	for it, err := range b.coord.Follow(fctx, res.Task.ID) {
		if err != nil {
			t.Fatalf("follow: %v (idle called at %v)", err, idleAt)
		}
		yielded++
		if it.Settled() {
			settled = true
			break
		}
	}
	if !settled || len(idleAt) == 0 {
		t.Fatalf("settled %v, idle called at %v", settled, idleAt)
	}
	for _, n := range idleAt {
		if n < 1 || n >= yielded {
			t.Errorf("idle called after %d of %d items, want after the snapshot and before the last: %v", n, yielded, idleAt)
		}
	}
}
