package task

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// PartKind names what a Part carries.
type PartKind string

// Part kinds, mirroring the A2A 1.0 part union.
const (
	PartText PartKind = "text"
	PartData PartKind = "data"
	PartRaw  PartKind = "raw" // inline file bytes
	PartURL  PartKind = "url" // file by reference
)

// Part is one piece of a message or artifact: text, structured data, or a
// file (inline bytes or a URL).
type Part struct {
	Kind      PartKind        `json:"kind"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Kind: PartText, Text: s} }

// DataPart returns a structured-data part holding raw JSON.
func DataPart(v json.RawMessage) Part { return Part{Kind: PartData, Data: v} }

// Role says who wrote a message.
type Role string

// Message roles.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// Message is one turn of a conversation (the A2A message, in domain terms).
type Message struct {
	ID             string         `json:"id"`
	Role           Role           `json:"role"`
	Parts          []Part         `json:"parts"`
	ContextID      string         `json:"contextId,omitempty"`
	TaskID         string         `json:"taskId,omitempty"`
	ReferenceTasks []string       `json:"referenceTaskIds,omitempty"`
	Extensions     []string       `json:"extensions,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// Text returns the message's text parts joined by newlines.
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	var out []byte
	for _, p := range m.Parts {
		if p.Kind != PartText {
			continue
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = append(out, p.Text...)
	}
	return string(out)
}

// Artifact is something an agent produced.
type Artifact struct {
	ID          string         `json:"id"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// ArtifactChunk is a streamed piece of an artifact. Append says the parts
// extend an artifact already sent with the same ID; LastChunk closes it.
type ArtifactChunk struct {
	Artifact  Artifact `json:"artifact"`
	Append    bool     `json:"append,omitempty"`
	LastChunk bool     `json:"lastChunk,omitempty"`
}

// Envelope is what a caller delegates: who asks (actor), on whose behalf
// (matter), on what (resource), to do what (action), under which policy and
// approval, and the input message. It is immutable once submitted.
type Envelope struct {
	TaskID         string  `json:"taskId"`
	IdempotencyKey string  `json:"idempotencyKey"`
	Actor          string  `json:"actor"`
	Matter         string  `json:"matter,omitempty"`
	Resource       string  `json:"resource,omitempty"`
	Action         string  `json:"action"`
	Input          Message `json:"input"`
	ContextID      string  `json:"contextId"`
	PolicyRef      string  `json:"policyRef,omitempty"`
	ApprovalRef    string  `json:"approvalRef,omitempty"`
	CorrelationID  string  `json:"correlationId,omitempty"`
	// ParentTaskID names the parent task that spawned this one (a step of
	// a multi-step run); empty for a task a caller submitted. Only a
	// parent's transition sets it (Result.Spawn): Submit refuses it.
	ParentTaskID string `json:"parentTaskId,omitempty"`
	// Step is the parent's name for the step this child performs, unique
	// among the parent's children; empty without a parent.
	Step string `json:"step,omitempty"`
	// ReplayOf names the task this one replays (`pactum tasks replay`,
	// `pactum replay`): its request submitted again, to compare the two
	// answers. Submit checks that the caller may see that task; empty for
	// a task that replays nothing.
	ReplayOf string         `json:"replayOf,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// TraceParent is the W3C traceparent of the span the task's attempts
	// continue: the submission's span, or the attempt of the parent task
	// that spawned it. Only pactum sets it (a submitted value is replaced);
	// empty when the task was submitted with tracing off and no incoming
	// trace context (docs/design.md, "Trace context").
	TraceParent string    `json:"traceparent,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// PayloadHash is the idempotency fingerprint of the envelope: everything the
// caller chose that changes what would run (action, matter, resource, refs
// and the input parts), but not generated ids or times. Two submits under one
// key with the same hash are the same request.
func (e *Envelope) PayloadHash() string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(struct {
		Action, Matter, Resource, PolicyRef, ApprovalRef string
		Parts                                            []Part
	}{e.Action, e.Matter, e.Resource, e.PolicyRef, e.ApprovalRef, e.Input.Parts})
	return hex.EncodeToString(h.Sum(nil))
}

// Task is the stored state of one delegated task. The current state is an
// index over the append-only execution record, kept in the same transaction.
type Task struct {
	ID          string   `json:"id"`
	ContextID   string   `json:"contextId"`
	Agent       string   `json:"agent"`
	Envelope    Envelope `json:"envelope"`
	PayloadHash string   `json:"payloadHash"`
	State       State    `json:"state"`
	// Attempt counts claims over the task's whole life: 0 until a worker
	// first takes the task.
	Attempt int `json:"attempt"`
	// TurnStart is the value Attempt had when the current turn began: 0 for
	// the turn that starts at submit; set again when the caller answers
	// input_required and when the task is retried by hand. MaxAttempts
	// bounds the attempts of each turn (TurnAttempt).
	TurnStart   int `json:"turnStart,omitempty"`
	MaxAttempts int `json:"maxAttempts"`
	// RunAfter is when a queued task may be claimed (retry backoff).
	RunAfter     time.Time `json:"runAfter,omitzero"`
	LeaseOwner   string    `json:"leaseOwner,omitempty"`
	LeaseExpires time.Time `json:"leaseExpires,omitzero"`
	// ErrorCode and Reason explain the last failure or refusal.
	ErrorCode Code   `json:"errorCode,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Rejected is set when the task failed before it ever ran because
	// validation or policy refused it (A2A: TASK_STATE_REJECTED).
	Rejected      bool       `json:"rejected,omitempty"`
	StatusMessage *Message   `json:"statusMessage,omitempty"`
	History       []Message  `json:"history,omitempty"`
	Artifacts     []Artifact `json:"artifacts,omitempty"`
	// Children counts the child tasks this task has spawned (Result.Spawn).
	Children int `json:"children,omitempty"`
	// Seq is the sequence number of the last execution record.
	Seq       int       `json:"seq"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`

	// LastEvidence is the evidence of the transition that made this value
	// of the task, when the Coordinator had it in hand: the task it
	// publishes after an attempt ends carries what the pipeline's steps
	// recorded, so a transport answering with it need not read the record
	// back. It is not stored on the task (Record.Evidence is) nor encoded;
	// a task read from the store has none.
	LastEvidence []Evidence `json:"-"`

	// complete marks a task value that holds its whole history and all its
	// artifacts as stored (CreateTask's and Claim's results).
	complete bool
}

// TurnAttempt returns the attempt within the current turn: 0 until the
// turn's first claim, then 1, 2, … up to MaxAttempts. This is what "attempt
// n of MaxAttempts" means; Attempt is the total over all turns.
func (t *Task) TurnAttempt() int { return t.Attempt - t.TurnStart }

// AttemptSummary says how far t is through its attempts, the way every
// pactum surface shows it: "attempt 2 of 3" within the current turn, and
// once an earlier turn has run, the total too: "attempt 1 of 3, 4 in all".
func (t *Task) AttemptSummary() string {
	s := "attempt " + strconv.Itoa(t.TurnAttempt()) + " of " + strconv.Itoa(t.MaxAttempts)
	if t.TurnStart > 0 {
		s += ", " + strconv.Itoa(t.Attempt) + " in all"
	}
	return s
}

// MarkComplete records that t holds its whole history and every stored
// artifact. Store drivers call it on what CreateTask and Claim return.
func (t *Task) MarkComplete() { t.complete = true }

// Record is one entry of a task's append-only execution record: one
// transition. Records are never updated or deleted.
type Record struct {
	TaskID        string    `json:"taskId"`
	Seq           int       `json:"seq"`
	From          State     `json:"from"`
	To            State     `json:"to"`
	At            time.Time `json:"at"`
	Attempt       int       `json:"attempt"`
	Node          string    `json:"node,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	ErrorCode     Code      `json:"errorCode,omitempty"`
	PolicyVersion string    `json:"policyVersion,omitempty"`
	// Evidence is what the execution pipeline's steps recorded about the
	// attempt this transition ends (a decision, a verdict, timings),
	// committed with the record and covered by its audit entry.
	Evidence []Evidence `json:"evidence,omitempty"`
}

// StartsTurn reports whether r began a new turn of its task: the caller
// queued it again by answering input_required or by retrying a failed or
// dead-lettered task, or a child's end woke a waiting parent. The submit
// starts the first turn.
func (r *Record) StartsTurn() bool {
	return r.To == StateQueued && (r.From == StateInputRequired || r.From == StateFailed || r.From == StateDeadLetter || r.From == StateWaiting)
}

// AuditKind classifies audit entries.
type AuditKind string

// Audit entry kinds.
const (
	AuditSubmitted  AuditKind = "task.submitted"
	AuditPolicy     AuditKind = "policy.decision"
	AuditTransition AuditKind = "task.transition"
	AuditPushConfig AuditKind = "push.config"
)

// AuditInput is an audit entry before the store seals it into the chain.
type AuditInput struct {
	Kind   AuditKind       `json:"kind"`
	TaskID string          `json:"taskId,omitempty"`
	Actor  string          `json:"actor,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// AuditEntry is a sealed entry of the hash-chained audit log.
type AuditEntry struct {
	Seq      int64           `json:"seq"`
	At       time.Time       `json:"at"`
	Kind     AuditKind       `json:"kind"`
	TaskID   string          `json:"taskId,omitempty"`
	Actor    string          `json:"actor,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	PrevHash string          `json:"prevHash"`
	Hash     string          `json:"hash"`
}

// ComputeHash returns the entry's chain hash: SHA-256 over the previous hash
// and the entry's content fields, each length-prefixed so that no two
// different entries share an encoding.
func (e *AuditEntry) ComputeHash() string {
	// The fields are encoded into one buffer (on the stack for the usual
	// entry) and hashed in one call: this runs in the store's single writer
	// for every entry sealed.
	var stack [512]byte
	b := stack[:0]
	field := func(s []byte) {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	var num [20]byte
	var at [40]byte
	field([]byte(e.PrevHash))
	field(strconv.AppendInt(num[:0], e.Seq, 10))
	field(e.At.UTC().AppendFormat(at[:0], time.RFC3339Nano))
	field([]byte(e.Kind))
	field([]byte(e.TaskID))
	field([]byte(e.Actor))
	var sum [sha256.Size]byte
	if len(b)+8+len(e.Data) <= cap(b) {
		field(e.Data)
		sum = sha256.Sum256(b)
	} else {
		// Large data (an attempt's evidence, a submitted envelope) is
		// hashed where it is rather than copied into a buffer on the
		// heap: the same bytes, in two writes.
		b = binary.LittleEndian.AppendUint64(b, uint64(len(e.Data)))
		h := sha256.New()
		h.Write(b)
		h.Write(e.Data)
		h.Sum(sum[:0])
	}
	return hex.EncodeToString(sum[:])
}

// PushConfig is a caller's request to receive a task's events by webhook.
type PushConfig struct {
	TaskID    string          `json:"taskId"`
	ID        string          `json:"id"`
	URL       string          `json:"url"`
	Token     string          `json:"token,omitempty"`
	Auth      json.RawMessage `json:"auth,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	// Owed, when Store.PutPushConfig stores the config, makes it owed its
	// task's latest state until a delivery is recorded (delivered seq 0),
	// as a config sent with the message that creates or continues the task
	// is: the task may have changed, even finished, before the config was
	// stored. Without it a config is owed only the changes after it is
	// stored. It is not stored itself (false when read back).
	Owed bool `json:"-"`
}
