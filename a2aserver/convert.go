package a2aserver

import (
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/task"
)

// MetadataKey is the metadata key under which pactum reads the envelope from
// requests and messages, and writes its canonical task fields on tasks and
// status events.
const MetadataKey = a2amap.MetadataKey

// The conversion of tasks and events to A2A lives in internal/a2amap, shared
// with package push, which sends the same events to webhooks. The handlers
// call it under these names.

// taskToA2A is a2amap.TaskToA2A.
func taskToA2A(t *task.Task, historyLength int, withArtifacts bool) *a2a.Task {
	return a2amap.TaskToA2A(t, historyLength, withArtifacts)
}

// statusEvent is a2amap.StatusEvent.
func statusEvent(t *task.Task, at time.Time) *a2a.TaskStatusUpdateEvent {
	return a2amap.StatusEvent(t, at)
}

// eventToA2A is a2amap.EventToA2A.
func eventToA2A(ev task.Event) a2a.Event { return a2amap.EventToA2A(ev) }

// artifactEvents is a2amap.ArtifactEvents.
func artifactEvents(t *task.Task, skip map[string]bool) []*a2a.TaskArtifactUpdateEvent {
	return a2amap.ArtifactEvents(t, skip)
}

// historyLen turns an optional A2A historyLength into the store's
// convention (negative: everything).
func historyLen(p *int, dflt int) int {
	if p == nil {
		return dflt
	}
	if *p < 0 {
		return -1
	}
	return *p
}
