package a2amap

import (
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// MetadataKey is the metadata key under which pactum writes its canonical
// task fields on tasks and status events (and reads the envelope from
// requests and messages, in the A2A server).
const MetadataKey = "pactum"

// pactumMetadata returns the canonical fields of t that A2A has no place
// for, published under metadata.pactum. audit points at the task's
// execution record and audit entries, as MCP's audit does: recordSeq is
// the sequence number of its newest record, ref names its entries in the
// audit log. A child task (a step of a multi-step run) names its parent
// (parentTaskId) and its step; a parent counts the children it has spawned
// (children).
func pactumMetadata(t *task.Task) map[string]any {
	m := map[string]any{
		"state":         string(t.State),
		"attempt":       t.TurnAttempt(),
		"maxAttempts":   t.MaxAttempts,
		"attemptsTotal": t.Attempt,
		"agent":         t.Agent,
		"action":        t.Envelope.Action,
		"actor":         t.Envelope.Actor,
		"audit":         map[string]any{"recordSeq": t.Seq, "ref": task.AuditRef(t.ID)},
	}
	if t.ErrorCode != "" {
		m["errorCode"] = string(t.ErrorCode)
	}
	if t.Reason != "" {
		m["reason"] = t.Reason
	}
	if t.Envelope.CorrelationID != "" {
		m["correlationId"] = t.Envelope.CorrelationID
	}
	if t.Envelope.ParentTaskID != "" {
		m["parentTaskId"] = t.Envelope.ParentTaskID
		m["step"] = t.Envelope.Step
	}
	if t.Children > 0 {
		m["children"] = t.Children
	}
	return m
}

// statusMessage returns the message of t's A2A status: the agent's own
// status message, or, for a failure or a refusal, an agent message carrying
// the reason. Its id is derived from the task and its record sequence, so
// the same status always carries the same message id.
func statusMessage(t *task.Task) *a2a.Message {
	if t.StatusMessage != nil {
		return MessageToA2A(*t.StatusMessage)
	}
	if t.State != task.StateFailed && t.State != task.StateDeadLetter {
		return nil
	}
	var text string
	switch {
	case t.Rejected:
		text = "rejected"
	case t.State == task.StateDeadLetter:
		text = "failed after " + t.AttemptSummary()
	default:
		text = "failed"
	}
	if t.ErrorCode != "" {
		text += " (" + string(t.ErrorCode) + ")"
	}
	if t.Reason != "" {
		text += ": " + t.Reason
	}
	return &a2a.Message{
		ID:        fmt.Sprintf("%s-status-%d", t.ID, t.Seq),
		ContextID: t.ContextID,
		TaskID:    a2a.TaskID(t.ID),
		Role:      a2a.MessageRoleAgent,
		Parts:     a2a.ContentParts{a2a.NewTextPart(text)},
	}
}

// wireStatus returns the A2A status of t.
func wireStatus(t *task.Task) a2a.TaskStatus {
	ts := t.UpdatedAt
	st := a2a.TaskStatus{State: StateToA2A(t), Message: statusMessage(t)}
	if !ts.IsZero() {
		st.Timestamp = &ts
	}
	return st
}

// TaskToA2A converts a stored task. historyLength < 0 keeps the whole
// history, 0 drops it, n > 0 keeps the newest n messages. Artifacts are
// dropped unless withArtifacts is set.
func TaskToA2A(t *task.Task, historyLength int, withArtifacts bool) *a2a.Task {
	out := &a2a.Task{
		ID:        a2a.TaskID(t.ID),
		ContextID: t.ContextID,
		Status:    wireStatus(t),
		Metadata:  map[string]any{MetadataKey: pactumMetadata(t)},
	}
	hist := t.History
	if historyLength >= 0 && len(hist) > historyLength {
		hist = hist[len(hist)-historyLength:]
	}
	if len(hist) > 0 {
		out.History = make([]*a2a.Message, len(hist))
		for i, m := range hist {
			out.History[i] = MessageToA2A(m)
		}
	}
	if withArtifacts && t.Artifacts != nil {
		out.Artifacts = make([]*a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			out.Artifacts[i] = ArtifactToA2A(a)
		}
	}
	return out
}

// StatusEvent converts a task snapshot into a status-update event.
func StatusEvent(t *task.Task, at time.Time) *a2a.TaskStatusUpdateEvent {
	st := wireStatus(t)
	if !at.IsZero() {
		st.Timestamp = &at
	}
	return &a2a.TaskStatusUpdateEvent{
		TaskID:    a2a.TaskID(t.ID),
		ContextID: t.ContextID,
		Status:    st,
		Metadata:  map[string]any{MetadataKey: pactumMetadata(t)},
	}
}

// EventToA2A converts a core event into the A2A event streams and webhooks
// carry. It returns nil for an event it cannot express.
func EventToA2A(ev task.Event) a2a.Event {
	switch ev.Kind {
	case task.EventStatus:
		if ev.Task == nil {
			return nil
		}
		return StatusEvent(ev.Task, ev.At)
	case task.EventArtifact:
		if ev.Chunk == nil {
			return nil
		}
		return ChunkToA2A(ev.TaskID, ev.ContextID, *ev.Chunk)
	}
	return nil
}

// ArtifactEvents returns artifact updates that carry t's stored artifacts
// whole (append false, lastChunk true), leaving out the ids in skip.
func ArtifactEvents(t *task.Task, skip map[string]bool) []*a2a.TaskArtifactUpdateEvent {
	var out []*a2a.TaskArtifactUpdateEvent
	for _, a := range t.Artifacts {
		if skip[a.ID] {
			continue
		}
		out = append(out, &a2a.TaskArtifactUpdateEvent{
			TaskID: a2a.TaskID(t.ID), ContextID: t.ContextID, Artifact: ArtifactToA2A(a), LastChunk: true,
		})
	}
	return out
}
