package mcpserver

import (
	"encoding/base64"
	"strings"

	"github.com/pactum/pactum/task"
)

// AuditRef returns the reference of a task's audit entries, as answers
// carry it in audit.ref (task.AuditRef: A2A answers carry the same one).
func AuditRef(taskID string) string { return task.AuditRef(taskID) }

// taskInfo converts a stored task. historyLength < 0 keeps the whole
// history, 0 drops it, n > 0 keeps the newest n messages.
func taskInfo(t *task.Task, historyLength int) TaskInfo {
	out := TaskInfo{
		TaskID:         t.ID,
		ContextID:      t.ContextID,
		State:          string(t.State),
		Rejected:       t.Rejected,
		Final:          t.State.Settled(),
		Attempt:        t.TurnAttempt(),
		MaxAttempts:    t.MaxAttempts,
		AttemptsTotal:  t.Attempt,
		Agent:          t.Agent,
		Action:         t.Envelope.Action,
		Actor:          t.Envelope.Actor,
		Matter:         t.Envelope.Matter,
		Resource:       t.Envelope.Resource,
		ParentTaskID:   t.Envelope.ParentTaskID,
		Step:           t.Envelope.Step,
		Children:       t.Children,
		CorrelationID:  t.Envelope.CorrelationID,
		IdempotencyKey: t.Envelope.IdempotencyKey,
		CreatedAt:      t.CreatedAt,
		UpdatedAt:      t.UpdatedAt,
		ErrorCode:      string(t.ErrorCode),
		Reason:         t.Reason,
		Artifacts:      make([]ArtifactInfo, 0, len(t.Artifacts)),
		Audit:          AuditInfo{RecordSeq: t.Seq, Ref: AuditRef(t.ID)},
	}
	if t.State == task.StateQueued {
		out.RunAfter = t.RunAfter
	}
	if t.StatusMessage != nil {
		out.StatusMessage = t.StatusMessage.Text()
	}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, artifactInfo(a))
	}
	hist := t.History
	if historyLength >= 0 && len(hist) > historyLength {
		hist = hist[len(hist)-historyLength:]
	}
	for _, m := range hist {
		out.History = append(out.History, MessageInfo{
			MessageID: m.ID, Role: string(m.Role), Text: m.Text(), Parts: partInfos(m.Parts),
		})
	}
	return out
}

func artifactInfo(a task.Artifact) ArtifactInfo {
	return ArtifactInfo{
		ArtifactID:  a.ID,
		Name:        a.Name,
		Description: a.Description,
		Text:        textOf(a.Parts),
		Parts:       partInfos(a.Parts),
		Metadata:    a.Metadata,
	}
}

func textOf(parts []task.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Kind != task.PartText {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

func partInfos(parts []task.Part) []PartInfo {
	out := make([]PartInfo, 0, len(parts))
	for _, p := range parts {
		pi := PartInfo{Kind: string(p.Kind), Filename: p.Filename, MediaType: p.MediaType}
		switch p.Kind {
		case task.PartData:
			pi.Data = task.DecodeData(p.Data)
		case task.PartRaw:
			pi.RawBase64 = base64.StdEncoding.EncodeToString(p.Raw)
		case task.PartURL:
			pi.URL = p.URL
		default:
			pi.Text = p.Text
		}
		out = append(out, pi)
	}
	return out
}
