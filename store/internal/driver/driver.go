// Package driver holds the logic the task.Store drivers (store/sqlite,
// store/postgres) share because it does not depend on the database: how a
// transition changes a task in memory and which record and audit entry it
// makes, what a new task writes (PlanCreate), the normal form of stored
// times, the checks on input that must hold before anything is written,
// and the listing of embedded migrations. What differs between databases
// (SQL, scanning, error translation) stays in each driver.
package driver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/pactum/pactum/internal/jsonenc"
	"github.com/pactum/pactum/task"
)

// DefaultPageSize is ListTasks' page size when the caller gives none.
const DefaultPageSize = task.DefaultPageSize

// DefaultAuditLimit is AuditEntries' page size when the caller gives none.
const DefaultAuditLimit = 100

// Change is one transition, as Advance applies it to a task in memory.
type Change struct {
	To            task.State
	Reason        string
	ErrorCode     task.Code
	PolicyVersion string
	Node          string
	Now           time.Time
	StatusMessage *task.Message
	// SetRunAfter stores RunAfter (Transition to queued).
	SetRunAfter bool
	RunAfter    time.Time
	// NewTurn starts a new turn: TurnStart = Attempt.
	NewTurn bool
	// Claim starts an attempt: Attempt+1, leased to Owner until LeaseUntil.
	Claim      bool
	Owner      string
	LeaseUntil time.Time
	// Evidence is stored on the record.
	Evidence []task.Evidence
}

// TransitionChange is the Change a Transition makes, p at now (its
// Transition.Now).
func TransitionChange(p task.TransitionParams, now time.Time) Change {
	return Change{
		To: p.To, Reason: p.Reason, ErrorCode: p.ErrorCode, PolicyVersion: p.PolicyVersion,
		Node: p.Node, Now: now, StatusMessage: p.StatusMessage,
		SetRunAfter: p.To == task.StateQueued, RunAfter: p.RunAfter, NewTurn: p.NewTurn,
		Evidence: p.Evidence,
	}
}

// Advance applies c to t in memory and returns the record it makes. It is
// the one place where the transition table is enforced on stored tasks.
func Advance(t *task.Task, c Change) (task.Record, error) {
	if err := task.CheckTransition(t.State, c.To); err != nil {
		return task.Record{}, err
	}
	if c.Claim {
		t.Attempt++
		t.LeaseOwner, t.LeaseExpires = c.Owner, c.LeaseUntil
	} else if c.To != task.StateInProgress {
		t.LeaseOwner, t.LeaseExpires = "", time.Time{}
	}
	if c.SetRunAfter {
		t.RunAfter = Norm(c.RunAfter)
	}
	if c.NewTurn {
		t.TurnStart = t.Attempt
	}
	t.Seq++
	rec := task.Record{
		TaskID: t.ID, Seq: t.Seq, From: t.State, To: c.To, At: c.Now, Attempt: t.Attempt,
		Node: c.Node, Reason: c.Reason, ErrorCode: c.ErrorCode, PolicyVersion: c.PolicyVersion,
		Evidence: c.Evidence,
	}
	t.State, t.UpdatedAt = c.To, c.Now
	t.Reason, t.ErrorCode, t.Rejected = c.Reason, c.ErrorCode, false
	t.StatusMessage = CloneMessage(c.StatusMessage)
	return rec, nil
}

// CheckPreconditions says why t, as stored, does not meet the
// preconditions of transition p (state, lease owner, lease expiry), or
// returns nil when it does. A task whose lease never started
// (LeaseExpires zero) does not satisfy LeaseExpiredBefore.
func CheckPreconditions(t *task.Task, p task.TransitionParams) error {
	before := Norm(p.LeaseExpiredBefore)
	switch {
	case t.State != p.From:
		return Conflict("task is %s, not %s", t.State, p.From)
	case p.LeaseOwner != "" && t.LeaseOwner != p.LeaseOwner:
		return Conflict("task is leased by %q, not %q", t.LeaseOwner, p.LeaseOwner)
	case !before.IsZero() && (t.LeaseExpires.IsZero() || !t.LeaseExpires.Before(before)):
		return Conflict("lease expires %s, not before %s", FmtTime(t.LeaseExpires), FmtTime(before))
	}
	return nil
}

// Writes collects what one operation appends: records, and the audit
// entries to seal in order. Err is the first error Add met; a driver
// reports it before it writes anything.
type Writes struct {
	Records []task.Record
	// Evidence holds each record's Evidence as JSON, "" for none (the
	// column's NULL).
	Evidence []string
	Audit    []task.AuditInput
	Err      error
}

// Add queues rec and its transition audit entry. The entry's data is the
// record's JSON, evidence included, so the hash chain covers the evidence;
// a record without evidence encodes as it always did (omitempty).
func (w *Writes) Add(t *task.Task, rec task.Record) {
	data, ev, err := EncodeRecord(rec)
	if err != nil && w.Err == nil {
		w.Err = err
	}
	w.Records = append(w.Records, rec)
	w.Evidence = append(w.Evidence, ev)
	w.Audit = append(w.Audit, task.AuditInput{
		Kind: task.AuditTransition, TaskID: t.ID, Actor: t.Envelope.Actor, Data: data,
	})
}

// EncodeRecord returns rec's JSON (json.Marshal(rec), the data of its
// audit entry) and its evidence's JSON ("" for none, the record row's
// evidence column). The evidence, the record's last member, is encoded
// once and spliced into the record's JSON: encoded again, its data (a
// verified result, say) would be validated and copied once more.
func EncodeRecord(rec task.Record) (data []byte, evidence string, err error) {
	if len(rec.Evidence) == 0 {
		if data, err = appendRecord(make([]byte, 0, 160), &rec); err != nil {
			_, err = json.Marshal(rec) // its error
			return nil, "", fmt.Errorf("encode record: %w", err)
		}
		return data, "", nil
	}
	// The evidence is written into the record's JSON and its column's
	// text copied out of it.
	data, err = appendRecord(make([]byte, 0, 256+evidenceSize(rec.Evidence)), &rec)
	if err == nil {
		data = append(data[:len(data)-1], `,"evidence":`...)
		start := len(data)
		var ok bool
		if data, ok = appendEvidence(data, rec.Evidence); ok {
			evidence = string(data[start:])
			return append(data, '}'), evidence, nil
		}
	}
	if _, err := json.Marshal(rec.Evidence); err != nil {
		return nil, "", fmt.Errorf("encode evidence: %w", err)
	}
	bare := rec
	bare.Evidence = nil
	_, err = json.Marshal(bare) // its error
	return nil, "", fmt.Errorf("encode record: %w", err)
}

// appendEvidence appends evs as json.Marshal encodes them, byte for byte
// (the evidence column, and part of the audit entry's data): written out,
// and each Data appended as it is when jsonenc vouches that encoding/json
// would write it so (a verdict's data, which json.Marshal wrote), instead
// of encoding/json's validating, compacting copy. false: data that is not
// JSON, for which the caller runs json.Marshal for its error.
func appendEvidence(b []byte, evs []task.Evidence) ([]byte, bool) {
	b = append(b, '[')
	for i := range evs {
		e := &evs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"step":`...)
		b = jsonenc.String(b, e.Step)
		b = append(b, `,"kind":`...)
		b = jsonenc.String(b, string(e.Kind))
		if e.Outcome != "" {
			b = append(b, `,"outcome":`...)
			b = jsonenc.String(b, e.Outcome)
		}
		if e.Message != "" {
			b = append(b, `,"message":`...)
			b = jsonenc.String(b, e.Message)
		}
		if e.Duration != 0 {
			b = append(b, `,"durationNs":`...)
			b = strconv.AppendInt(b, int64(e.Duration), 10)
		}
		if len(e.Data) > 0 {
			b = append(b, `,"data":`...)
			var err error
			if b, err = jsonenc.RawMessage(b, e.Data); err != nil {
				return nil, false
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// evidenceSize is about the length of evs' JSON.
func evidenceSize(evs []task.Evidence) int {
	n := 2
	for i := range evs {
		e := &evs[i]
		n += 72 + len(e.Step) + len(e.Kind) + len(e.Outcome) + len(e.Message) + len(e.Data)
	}
	return n
}

// appendRecord appends rec without its evidence as json.Marshal encodes
// it, byte for byte (the audit entry's data, which the hash chain covers):
// written out, not by reflection, as every transition encodes one.
func appendRecord(b []byte, rec *task.Record) ([]byte, error) {
	b = append(b, `{"taskId":`...)
	b = jsonenc.String(b, rec.TaskID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, int64(rec.Seq), 10)
	b = append(b, `,"from":`...)
	b = jsonenc.String(b, string(rec.From))
	b = append(b, `,"to":`...)
	b = jsonenc.String(b, string(rec.To))
	b = append(b, `,"at":`...)
	b, err := jsonenc.Time(b, rec.At)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(rec.Attempt), 10)
	for _, f := range [...]struct{ key, v string }{
		{`,"node":`, rec.Node}, {`,"reason":`, rec.Reason},
		{`,"errorCode":`, string(rec.ErrorCode)}, {`,"policyVersion":`, rec.PolicyVersion},
	} {
		if f.v != "" {
			b = append(b, f.key...)
			b = jsonenc.String(b, f.v)
		}
	}
	return append(b, '}'), nil
}

// Check reports an encoding error or an audit entry that cannot be sealed.
func (w *Writes) Check() error {
	if w.Err != nil {
		return w.Err
	}
	return CheckAudit(w.Audit)
}

// CheckAudit refuses entries that cannot be sealed: Data must be valid
// JSON when set (json.Valid's rule, checked by jsonenc.Valid in one pass). Drivers run it before they write, so that sealing (inside
// the transaction) does not parse JSON and trusts its input.
func CheckAudit(entries []task.AuditInput) error {
	for _, in := range entries {
		if len(in.Data) > 0 && !jsonenc.Valid(in.Data) {
			return task.Errorf(task.CodeInvalidArgument, "audit entry %q: Data is not valid JSON", in.Kind)
		}
	}
	return nil
}

// Conflict returns a domain error wrapping task.ErrStateConflict.
func Conflict(format string, args ...any) error {
	return task.Errorf(task.CodeConflict, "%s: %w", fmt.Sprintf(format, args...), task.ErrStateConflict)
}

// StatusJSON encodes a task's status message for its column (nil, NULL,
// for none).
func StatusJSON(t *task.Task) (any, error) {
	if t.StatusMessage == nil {
		return nil, nil
	}
	b, err := marshalJSON(t.StatusMessage)
	if err != nil {
		return nil, fmt.Errorf("encode status message of task %q: %w", t.ID, err)
	}
	return string(b), nil
}

// EncodeAll encodes each of vs as JSON, for one row each.
func EncodeAll[T any](vs []T) ([]string, error) {
	out := make([]string, len(vs))
	for i := range vs {
		b, err := marshalJSON(&vs[i])
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// CloneMessage returns a shallow copy of m, or nil.
func CloneMessage(m *task.Message) *task.Message {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// CloneMessages returns a copy of ms' slice, nil when it is empty.
func CloneMessages(ms []task.Message) []task.Message {
	if len(ms) == 0 {
		return nil
	}
	return append([]task.Message(nil), ms...)
}

// EncodeToken returns ListTasks' page token for the position after the
// task created at createdMicros (unix microseconds) with ID id: base64url
// of "created_micros/id", opaque to callers. Each driver decodes it.
func EncodeToken(createdMicros int64, id string) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d/%s", createdMicros, id))
}

// Norm returns t as stored: in UTC, truncated to the microsecond, which
// both databases hold. The zero time stays zero (NULL).
func Norm(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return FromMicros(t.UnixMicro())
}

// FromMicros returns the UTC time v unix microseconds stand for.
func FromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// FmtTime formats t for error messages: RFC 3339 with its fraction, or
// "never" for the zero time.
func FmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format(time.RFC3339Nano)
}

// Transition is what a driver needs of TransitionParams before it opens a
// transaction: the checks passed and the JSON encoded outside the writer.
type Transition struct {
	Now       time.Time
	Messages  []string // p.Messages as JSON
	Artifacts []string // p.Artifacts as JSON
	Status    any      // the status message's JSON, or nil (StatusJSON)
	// Spawn holds the children of p.Spawn, planned as CreateTask plans a
	// task (without idempotency or claim).
	Spawn []*NewTask
}

// PrepareTransition checks p (a legal From → To, a Now, audit data that is
// JSON) and encodes what the transition stores. The driver wraps the error
// with its name and the task.
func PrepareTransition(p task.TransitionParams) (Transition, error) {
	if err := task.CheckTransition(p.From, p.To); err != nil {
		return Transition{}, err
	}
	if p.Now.IsZero() {
		return Transition{}, task.Errorf(task.CodeInvalidArgument, "TransitionParams.Now is zero")
	}
	if err := CheckAudit(p.Audit); err != nil {
		return Transition{}, err
	}
	out := Transition{Now: Norm(p.Now)}
	var err error
	if out.Messages, err = EncodeAll(p.Messages); err != nil {
		return Transition{}, fmt.Errorf("encode messages: %w", err)
	}
	if out.Artifacts, err = EncodeAll(p.Artifacts); err != nil {
		return Transition{}, fmt.Errorf("encode artifacts: %w", err)
	}
	if out.Status, err = StatusJSON(&task.Task{ID: p.TaskID, StatusMessage: p.StatusMessage}); err != nil {
		return Transition{}, err
	}
	if out.Spawn, err = planSpawn(p); err != nil {
		return Transition{}, err
	}
	return out, nil
}

// planSpawn plans p.Spawn's children: each as CreateTask would create it,
// without idempotency key or claim and at p.Now, naming p.TaskID as its parent and a
// step of its own. A step given twice is refused here (wrapping
// task.ErrDuplicate); a step an earlier spawn used is the driver's unique
// index's to refuse.
func planSpawn(p task.TransitionParams) ([]*NewTask, error) {
	if len(p.Spawn) == 0 {
		return nil, nil
	}
	if p.From != task.StateInProgress {
		return nil, task.Errorf(task.CodeInvalidArgument, "Spawn is only valid from %s, not %s", task.StateInProgress, p.From)
	}
	out := make([]*NewTask, len(p.Spawn))
	steps := make(map[string]bool, len(p.Spawn))
	for i, cp := range p.Spawn {
		// Created in the parent's transaction, at its time: the children's
		// records are sealed with the transition's audit entries, at Now.
		cp.Claim, cp.IdempotencyTTL, cp.Now = nil, 0, p.Now
		plan, err := PlanCreate(cp)
		if err != nil {
			return nil, fmt.Errorf("spawn[%d]: %w", i, err)
		}
		env := &plan.Task.Envelope
		switch {
		case env.ParentTaskID != p.TaskID:
			return nil, task.Errorf(task.CodeInvalidArgument, "spawn[%d]: child %q names parent %q, not %q", i, plan.Task.ID, env.ParentTaskID, p.TaskID)
		case env.Step == "":
			return nil, task.Errorf(task.CodeInvalidArgument, "spawn[%d]: child %q has no step", i, plan.Task.ID)
		case steps[env.Step]:
			return nil, DuplicateStep(p.TaskID, env.Step)
		}
		steps[env.Step] = true
		out[i] = plan
	}
	return out, nil
}

// DuplicateStep is the error of a spawn whose step the parent's children
// already use: it wraps task.ErrDuplicate.
func DuplicateStep(parent, step string) error {
	return task.Errorf(task.CodeConflict, "task %q already has a child for step %q: %w", parent, step, task.ErrDuplicate)
}
