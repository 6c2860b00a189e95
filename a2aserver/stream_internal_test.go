package a2aserver

import (
	"context"
	"iter"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// A stream told that artifact chunks were lost (FollowGap, or a resync
// with ChunksLost) sends every stored artifact whole before the final
// status, even one that had partly streamed; otherwise a streamed artifact
// is not sent again.
func TestStreamSendsStoredArtifactsWholeAfterLostChunks(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	running := &task.Task{ID: "t1", ContextID: "c1", Agent: "a", State: task.StateInProgress, Seq: 3, UpdatedAt: now}
	done := *running
	done.State, done.Seq = task.StateSucceeded, 4
	done.Artifacts = []task.Artifact{{ID: "out", Parts: []task.Part{task.TextPart("a-lost-!")}}}
	chunk := func(text string, appendTo bool) task.FollowItem {
		return task.FollowItem{Kind: task.FollowEvent, Event: task.Event{Kind: task.EventArtifact, TaskID: "t1", ContextID: "c1", Seq: 3,
			Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(text)}}, Append: appendTo}}}
	}
	final := task.FollowItem{Kind: task.FollowEvent, Event: task.Event{Kind: task.EventStatus, TaskID: "t1", ContextID: "c1", Seq: 4,
		State: task.StateSucceeded, Task: &done, Complete: true, Final: true, At: now}}
	for _, tc := range []struct {
		name  string
		lost  []task.FollowItem
		whole bool
	}{
		{"nothing lost", nil, false},
		{"gap", []task.FollowItem{{Kind: task.FollowGap, Task: running, ChunksLost: true}}, true},
		{"resync with lost chunks", []task.FollowItem{{Kind: task.FollowResync, Task: &task.Task{ID: "t1", ContextID: "c1", Agent: "a", State: task.StateInProgress, Seq: 3, UpdatedAt: now}, ChunksLost: true}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items := []task.FollowItem{{Kind: task.FollowSnapshot, Task: running}, chunk("a", false)}
			items = append(items, tc.lost...)
			items = append(items, chunk("!", true), final)
			seq := func(yield func(task.FollowItem, error) bool) {
				for _, it := range items {
					if !yield(it, nil) {
						return
					}
				}
			}
			h := &Handler{agent: "a", log: slog.New(slog.DiscardHandler)}
			var got []a2a.Event
			h.stream(context.Background(), iter.Seq2[task.FollowItem, error](seq), "t1", -1, func(err error) error { return err }, nil,
				func(ev a2a.Event, err error) bool {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev)
					return true
				})
			var wholes int
			for _, ev := range got {
				if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && !a.Append && a.LastChunk {
					wholes++
					if p := a.Artifact.Parts; len(p) != 1 || p[0].Text() != "a-lost-!" {
						t.Fatalf("whole artifact %+v", a.Artifact)
					}
				}
			}
			if want := map[bool]int{false: 0, true: 1}[tc.whole]; wholes != want {
				for _, ev := range got {
					t.Logf("%T %+v", ev, ev)
				}
				t.Fatalf("%d whole artifacts sent, want %d", wholes, want)
			}
			if st, ok := got[len(got)-1].(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("last event %+v", got[len(got)-1])
			}
		})
	}
}
