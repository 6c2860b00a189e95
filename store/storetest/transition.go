package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// testTransitionTable walks every pair of states: legal pairs are applied
// with one record and one audit entry, illegal ones refused with nothing
// written.
func testTransitionTable(t *testing.T, b *bundle) {
	for _, from := range task.States() {
		for _, to := range task.States() {
			id := fmt.Sprintf("%s-%s", from, to)
			b.reach(id, from)
			before := b.snap(id)
			now := at(time.Hour)
			got, err := b.s.Transition(b.ctx, task.TransitionParams{
				TaskID: id, From: from, To: to, Reason: "r", Node: "node-2", Now: now,
			})
			if !task.CanTransition(from, to) {
				if !errors.Is(err, task.ErrIllegalTransition) {
					t.Errorf("%s → %s: error %v, want ErrIllegalTransition", from, to, err)
				}
				b.unchanged(id, before)
				continue
			}
			if err != nil {
				t.Errorf("%s → %s: %v", from, to, err)
				continue
			}
			// A task without children that moves to waiting goes on to
			// queued at once (testWaitNoChild); a waiting task has one
			// child (reach), which its cancel cancels too.
			final, records, entries := to, 1, 1
			if to == task.StateWaiting {
				final, records, entries = task.StateQueued, 2, 2
			}
			if from == task.StateWaiting && to == task.StateCanceled {
				entries++
			}
			if got.State != final || got.Seq != before.task.Seq+records || !got.UpdatedAt.Equal(now) || (got.Reason != "r") != (records == 2) || got.Reason == "" {
				t.Errorf("%s → %s returned %s", from, to, dump(got))
			}
			after := b.snap(id)
			if after.task.State != final || after.task.Seq != got.Seq {
				t.Errorf("%s → %s: stored task %s", from, to, dump(after.task))
			}
			if len(after.records) != len(before.records)+records {
				t.Fatalf("%s → %s: %d records, want %d", from, to, len(after.records), len(before.records)+records)
			}
			rec := after.records[len(before.records)]
			// Only a claim starts an attempt; whether a bare Transition to
			// in_progress counts one is left to the driver.
			want := task.Record{TaskID: id, Seq: before.task.Seq + 1, From: from, To: to, At: now, Attempt: before.task.Attempt, Node: "node-2", Reason: "r"}
			if to == task.StateInProgress {
				want.Attempt = rec.Attempt
			}
			if !reflect.DeepEqual(rec, want) {
				t.Errorf("%s → %s: record %s, want %s", from, to, dump(rec), dump(want))
			}
			if len(after.audit) != len(before.audit)+entries {
				t.Fatalf("%s → %s: audit grew by %d, want %d", from, to, len(after.audit)-len(before.audit), entries)
			}
			transitionEntry(t, after.audit[len(before.audit)], rec)
			if records == 2 {
				transitionEntry(t, after.audit[len(before.audit)+1], after.records[len(before.records)+1])
			}
		}
	}
	checkChain(t, b.audit())
}

func testTransitionConflict(t *testing.T, b *bundle) {
	b.reach("q", task.StateQueued)
	before := b.snap("q")
	_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: "q", From: task.StateValidated, To: task.StateQueued, Now: at(time.Second)})
	wantErr(t, "Transition from a state the task is not in", err, task.ErrStateConflict)
	b.unchanged("q", before)

	b.reach("p", task.StateInProgress) // leased to worker-1
	before = b.snap("p")
	_, err = b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-2", Now: at(time.Second),
	})
	wantErr(t, "Transition by a worker not holding the lease", err, task.ErrStateConflict)
	b.unchanged("p", before)

	b.transition(task.TransitionParams{TaskID: "p", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-1", Now: at(time.Second)})
	before = b.snap("p")
	_, err = b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateFailed, LeaseOwner: "worker-1", Now: at(2 * time.Second),
	})
	wantErr(t, "second Transition from in_progress", err, task.ErrStateConflict)
	b.unchanged("p", before)
}

func testTransitionLeaseExpiredBefore(t *testing.T, b *bundle) {
	b.queued("p", t0)
	claimed := b.claim("p", "worker-1", t0, time.Minute)
	if want := at(time.Minute); !claimed.LeaseExpires.Equal(want) {
		t.Fatalf("LeaseExpires = %v, want %v", claimed.LeaseExpires, want)
	}
	for _, before := range []time.Time{at(30 * time.Second), at(time.Minute)} {
		snap := b.snap("p")
		_, err := b.s.Transition(b.ctx, task.TransitionParams{
			TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: before, Now: before,
		})
		wantErr(t, fmt.Sprintf("reap with LeaseExpiredBefore %v, lease until %v", before, claimed.LeaseExpires), err, task.ErrStateConflict)
		b.unchanged("p", snap)
	}
	// A renewed lease is left alone.
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "p", Owner: "worker-1", Now: at(50 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	_, err := b.s.Transition(b.ctx, task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: at(61 * time.Second), Now: at(61 * time.Second),
	})
	wantErr(t, "reap a renewed lease", err, task.ErrStateConflict)

	got := b.transition(task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateQueued, LeaseExpiredBefore: at(111 * time.Second),
		Now: at(111 * time.Second), ErrorCode: task.CodeLeaseExpired, Reason: "lease expired",
	})
	if got.State != task.StateQueued || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.ErrorCode != task.CodeLeaseExpired {
		t.Errorf("reaped task = %s, want queued without lease", dump(got))
	}
}

func testTransitionNotFound(t *testing.T, b *bundle) {
	_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: "nope", From: task.StateQueued, To: task.StateInProgress, Now: t0})
	wantErr(t, "Transition of a missing task", err, task.ErrNotFound)
}

func testTransitionEffects(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	b.claim("t1", "worker-1", t0, time.Minute)
	question := &task.Message{ID: "q1", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("which file?")}}
	a1 := task.Artifact{ID: "a1", Name: "first", Parts: []task.Part{task.TextPart("one")}}
	a2 := task.Artifact{ID: "a2", Parts: []task.Part{task.DataPart(json.RawMessage(`{"x":2}`))}, Metadata: map[string]any{"m": "x"}}
	got := b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInProgress, To: task.StateInputRequired, LeaseOwner: "worker-1",
		StatusMessage: question, Messages: []task.Message{*question}, Artifacts: []task.Artifact{a1, a2},
		Now: at(time.Second),
	})
	if got.State != task.StateInputRequired || !reflect.DeepEqual(got.StatusMessage, question) ||
		got.LeaseOwner != "" || !got.LeaseExpires.IsZero() || got.Attempt != 1 {
		t.Errorf("after in_progress → input_required: %s", dump(got))
	}
	stored := b.get("t1")
	if !reflect.DeepEqual(stored.StatusMessage, question) {
		t.Errorf("stored StatusMessage = %s", dump(stored.StatusMessage))
	}
	if len(stored.History) != 2 || !reflect.DeepEqual(stored.History[1], *question) {
		t.Errorf("History = %s, want input then question", dump(stored.History))
	}
	if !reflect.DeepEqual(stored.Artifacts, []task.Artifact{a1, a2}) {
		t.Errorf("Artifacts = %s", dump(stored.Artifacts))
	}

	answer := task.Message{ID: "u2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("main.go")}}
	got = b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInputRequired, To: task.StateQueued, Messages: []task.Message{answer},
		RunAfter: at(5 * time.Second), Now: at(2 * time.Second),
	})
	if got.StatusMessage != nil || !got.RunAfter.Equal(at(5*time.Second)) {
		t.Errorf("after input_required → queued: StatusMessage %s, RunAfter %v", dump(got.StatusMessage), got.RunAfter)
	}

	b.claim("t1", "worker-2", at(5*time.Second), time.Minute)
	a1b := task.Artifact{ID: "a1", Name: "first, again", Parts: []task.Part{task.TextPart("uno")}}
	a3 := task.Artifact{ID: "a3", Parts: []task.Part{task.TextPart("three")}}
	got = b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInProgress, To: task.StateFailed, LeaseOwner: "worker-2",
		Artifacts: []task.Artifact{a1b, a3}, ErrorCode: task.CodeAgentFailed, Reason: "boom", Now: at(6 * time.Second),
	})
	if got.ErrorCode != task.CodeAgentFailed || got.Reason != "boom" || got.Attempt != 2 || !got.UpdatedAt.Equal(at(6*time.Second)) {
		t.Errorf("after in_progress → failed: %s", dump(got))
	}
	stored = b.get("t1")
	// An artifact stored again under its ID replaces the old one in place.
	if want := []task.Artifact{a1b, a2, a3}; !reflect.DeepEqual(stored.Artifacts, want) {
		t.Errorf("Artifacts = %s\nwant %s", dump(stored.Artifacts), dump(want))
	}
	if len(stored.History) != 3 || !reflect.DeepEqual(stored.History[2], answer) {
		t.Errorf("History = %s, want input, question, answer", dump(stored.History))
	}
	if stored.ErrorCode != task.CodeAgentFailed || stored.Reason != "boom" || stored.Seq != got.Seq {
		t.Errorf("stored task = %s", dump(stored))
	}
}

// bulk returns n bytes of text that differ from one call to the next.
func bulk(tag string, n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "%s %d: the quick brown fox jumps over the lazy dog. ", tag, i)
	}
	return sb.String()[:n]
}

// testTransitionLargeRows stores messages and artifacts from a few bytes
// to 200 KB, around the sizes where a driver may keep a row's content
// apart from its key (SQLite's overflow pages, PostgreSQL's TOAST), and
// replaces an artifact with a larger and then a smaller one: each comes
// back whole, in order.
func testTransitionLargeRows(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	b.claim("t1", "w", t0, time.Minute)
	input := b.get("t1").History
	var msgs []task.Message
	var arts []task.Artifact
	for i, n := range []int{10, 900, 1_100, 4_000, 50_000, 200_000} {
		msgs = append(msgs, task.Message{ID: fmt.Sprintf("r%d", i), Role: task.RoleAgent, Parts: []task.Part{task.TextPart(bulk("m", n))}})
		arts = append(arts, task.Artifact{ID: fmt.Sprintf("a%d", i), Parts: []task.Part{task.TextPart(bulk("a", n))}})
	}
	b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInProgress, To: task.StateInputRequired, LeaseOwner: "w",
		Messages: msgs, Artifacts: arts, Now: at(time.Second),
	})
	want := append(input, msgs...)
	got := b.get("t1")
	if !reflect.DeepEqual(got.History, want) || !reflect.DeepEqual(got.Artifacts, arts) {
		t.Fatalf("large rows did not come back whole: %d messages, %d artifacts", len(got.History), len(got.Artifacts))
	}

	// a0 grows to 60 KB, a4 shrinks to 10 bytes: both keep their place.
	arts[0] = task.Artifact{ID: "a0", Name: "grown", Parts: []task.Part{task.TextPart(bulk("g", 60_000))}}
	arts[4] = task.Artifact{ID: "a4", Name: "shrunk", Parts: []task.Part{task.TextPart("small")}}
	answer := task.Message{ID: "u2", Role: task.RoleUser, Parts: []task.Part{task.TextPart(bulk("u", 50_000))}}
	b.transition(task.TransitionParams{
		TaskID: "t1", From: task.StateInputRequired, To: task.StateQueued, Messages: []task.Message{answer},
		Artifacts: []task.Artifact{arts[0], arts[4]}, Now: at(2 * time.Second),
	})
	want = append(want, answer)
	got = b.get("t1")
	if !reflect.DeepEqual(got.History, want) || !reflect.DeepEqual(got.Artifacts, arts) {
		t.Fatalf("after replacing artifacts: %d messages, %d artifacts; not as stored", len(got.History), len(got.Artifacts))
	}
	last, err := b.s.GetTask(b.ctx, "t1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(last.History, want[len(want)-2:]) {
		t.Errorf("GetTask with HistoryLength 2: %d messages, not the last two", len(last.History))
	}
}

func testTransitionExtraAudit(t *testing.T, b *bundle) {
	b.reach("t1", task.StateQueued)
	n := len(b.audit())
	extra := []task.AuditInput{
		{Kind: task.AuditPolicy, TaskID: "t1", Actor: "bob", Data: json.RawMessage(`{"cancel":"ok"}`)},
		{Kind: "custom.kind", Actor: "bob"},
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateQueued, To: task.StateCanceled, Audit: extra, Now: at(time.Minute)})
	log := b.audit()
	checkChain(t, log)
	if len(log) != n+3 {
		t.Fatalf("audit grew by %d entries, want 3", len(log)-n)
	}
	for i, in := range extra {
		e := log[n+i]
		if e.Kind != in.Kind || e.TaskID != in.TaskID || e.Actor != in.Actor || string(e.Data) != string(in.Data) || !e.At.Equal(at(time.Minute)) {
			t.Errorf("audit entry %d = %s, want %s", e.Seq, dump(e), dump(in))
		}
	}
	recs := b.records("t1")
	transitionEntry(t, log[n+2], recs[len(recs)-1])
}

// testTransitionNewTurn: a transition with NewTurn sets TurnStart to the
// task's Attempt and stores it; other transitions and claims leave it.
func testTransitionNewTurn(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	for attempt := 1; attempt <= 2; attempt++ {
		b.claim("t1", "w", at(time.Duration(attempt)*time.Minute), time.Minute)
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Reason: "retry"})
	}
	b.claim("t1", "w", at(3*time.Minute), time.Minute)
	tk := b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateDeadLetter, LeaseOwner: "w"})
	if tk.Attempt != 3 || tk.TurnStart != 0 {
		t.Fatalf("dead-lettered: Attempt %d, TurnStart %d; want 3, 0", tk.Attempt, tk.TurnStart)
	}
	tk = b.transition(task.TransitionParams{TaskID: "t1", From: task.StateDeadLetter, To: task.StateQueued, Reason: "manual retry", NewTurn: true})
	if tk.Attempt != 3 || tk.TurnStart != 3 || tk.TurnAttempt() != 0 {
		t.Fatalf("Transition with NewTurn returned Attempt %d, TurnStart %d; want 3, 3", tk.Attempt, tk.TurnStart)
	}
	if got := b.get("t1"); got.TurnStart != 3 {
		t.Fatalf("stored TurnStart %d after NewTurn, want 3", got.TurnStart)
	}
	tk = b.claim("t1", "w", at(4*time.Minute), time.Minute)
	if tk.Attempt != 4 || tk.TurnStart != 3 || tk.TurnAttempt() != 1 {
		t.Fatalf("claim after the new turn: Attempt %d, TurnStart %d; want 4, 3 (attempt 1 of the turn)", tk.Attempt, tk.TurnStart)
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Reason: "retry"})
	if got := b.get("t1"); got.Attempt != 4 || got.TurnStart != 3 {
		t.Fatalf("after a retry within the turn: Attempt %d, TurnStart %d; want 4, 3", got.Attempt, got.TurnStart)
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].TurnStart != 3 {
		t.Fatalf("ListTasks: %s, %v; want t1 with TurnStart 3", dump(page), err)
	}
}

// testTransitionEvidence: a transition's evidence is stored on its record
// and sealed in its audit entry (the record's JSON); a record without
// evidence has none in its entry.
func testTransitionEvidence(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	ev := []task.Evidence{
		{Step: "policy", Kind: task.EvidenceDecision, Outcome: "allow", Message: "rule r1 allows echo"},
		{Step: "gate", Kind: task.EvidenceVerdict, Outcome: "pass", Duration: 1500 * time.Millisecond, Data: json.RawMessage(`{"checks":["a","b"],"n":2}`)},
	}
	n := len(b.audit())
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-1", Evidence: ev, Now: at(time.Second)})
	rec := b.lastRecord("t1")
	if !reflect.DeepEqual(rec.Evidence, ev) {
		t.Errorf("record evidence %s, want %s", dump(rec.Evidence), dump(ev))
	}
	log := b.audit()
	checkChain(t, log)
	if len(log) != n+1 {
		t.Fatalf("audit grew by %d entries, want 1", len(log)-n)
	}
	transitionEntry(t, log[n], rec)
	if !strings.Contains(string(log[n].Data), `"evidence":[{"step":"policy"`) || !strings.Contains(string(log[n].Data), `{"checks":["a","b"],"n":2}`) {
		t.Errorf("audit data %s does not carry the evidence", log[n].Data)
	}
	for _, r := range b.records("t1")[:len(b.records("t1"))-1] {
		if r.Evidence != nil {
			t.Errorf("record %d without evidence read back %s", r.Seq, dump(r.Evidence))
		}
	}
	for _, e := range log[:n] {
		if strings.Contains(string(e.Data), "evidence") {
			t.Errorf("audit entry %d of a record without evidence: %s", e.Seq, e.Data)
		}
	}
}
