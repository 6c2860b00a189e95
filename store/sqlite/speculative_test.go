package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// specStore opens a store whose writer holds a transaction open for hold
// after a speculative creation.
func specStore(t *testing.T, hold time.Duration) *Store {
	t.Helper()
	s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "pactum.db"), SpeculativeHold: hold})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// specCreate creates task id speculatively, claimed by "w1", as a blocking
// submission on a node with a free worker does.
func specCreate(t *testing.T, s *Store, id string, calls *storetest.CommittedCalls) *task.Task {
	t.Helper()
	got, err := s.CreateTask(t.Context(), storetest.SpeculativeParams(id, calls.Fn))
	if err != nil {
		t.Fatalf("speculative create of %s: %v", id, err)
	}
	if got.State != task.StateInProgress {
		t.Fatalf("speculative create of %s: state %s, want in_progress (claimed)", id, got.State)
	}
	return got
}

// heldCreation returns a store whose hold outlasts the test, in which
// task "t1" was created speculatively: its transaction is open until the
// task's next write (or the test ends the hold itself).
func heldCreation(t *testing.T) (*Store, *storetest.CommittedCalls) {
	t.Helper()
	s := specStore(t, time.Hour)
	calls := new(storetest.CommittedCalls)
	specCreate(t, s, "t1", calls)
	return s, calls
}

func succeed(ctx context.Context, s *Store, id string) error {
	_, err := s.Transition(ctx, task.TransitionParams{
		TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w1", Node: "n1",
		Now:      driver.Norm(time.Now()),
		Messages: []task.Message{{ID: "a-" + id, Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hi")}}},
	})
	return err
}

// TestSpeculativeCreateCommitsWithItsEnd: a task created speculatively is
// invisible to readers until its next write, which commits the creation
// and itself in ONE transaction; the record and the audit chain are whole.
func TestSpeculativeCreateCommitsWithItsEnd(t *testing.T) {
	t.Parallel()
	// A hold far longer than the test: only the task's next write can end it.
	s := specStore(t, time.Hour)
	before := s.commits.Load()
	var calls storetest.CommittedCalls
	specCreate(t, s, "t1", &calls)
	if _, err := s.GetTask(t.Context(), "t1", -1); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("GetTask before the creation committed: %v, want ErrNotFound (readers must not see it yet)", err)
	}
	if n := calls.Calls(); n != 0 {
		t.Fatalf("Committed called %d times before the commit", n)
	}
	if err := succeed(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
	if got := s.commits.Load() - before; got != 1 {
		t.Errorf("creation and end took %d commits, want 1", got)
	}
	calls.Check(t, false)
	got, err := s.GetTask(t.Context(), "t1", -1)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateSucceeded || len(got.History) != 2 {
		t.Fatalf("after its end: state %s with %d messages, want succeeded with 2", got.State, len(got.History))
	}
	recs, err := s.Records(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	var path []task.State
	for _, r := range recs {
		path = append(path, r.To)
	}
	if want := []task.State{task.StateValidated, task.StateQueued, task.StateInProgress, task.StateSucceeded}; fmt.Sprint(path) != fmt.Sprint(want) {
		t.Errorf("records lead through %v, want %v", path, want)
	}
	rep, err := audit.Verify(t.Context(), s)
	if err != nil || !rep.OK {
		t.Fatalf("audit verify: %v %+v", err, rep)
	}
}

// TestSpeculativeCreateCommitsAfterHold: with no next write the creation
// commits once the hold has passed, and Committed says so.
func TestSpeculativeCreateCommitsAfterHold(t *testing.T) {
	t.Parallel()
	s := specStore(t, 20*time.Millisecond)
	var calls storetest.CommittedCalls
	specCreate(t, s, "t1", &calls)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.GetTask(t.Context(), "t1", -1)
		if err == nil {
			if got.State != task.StateInProgress {
				t.Fatalf("state %s, want in_progress", got.State)
			}
			break
		}
		if !errors.Is(err, task.ErrNotFound) || time.Now().After(deadline) {
			t.Fatalf("the creation never committed: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Committed is called right after the commit, before the writer
	// takes the next write: one more write through the writer orders it.
	if err := s.AppendAudit(t.Context(), []task.AuditInput{{Kind: task.AuditKind("test")}}); err != nil {
		t.Fatal(err)
	}
	calls.Check(t, false)
	if err := succeed(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
}

// TestWriteJoiningAHeldTransactionWaitsForItsCommit: a write that arrives
// while the writer holds a speculative creation open joins its
// transaction and is answered only after the commit, so nothing written
// after a speculative creation is acknowledged before it is durable.
func TestWriteJoiningAHeldTransactionWaitsForItsCommit(t *testing.T) {
	t.Parallel()
	s, _ := heldCreation(t)
	done := make(chan error, 1)
	go func() {
		done <- s.AppendAudit(context.Background(), []task.AuditInput{{Kind: task.AuditKind("joined"), TaskID: "x"}})
	}()
	select {
	case err := <-done:
		t.Fatalf("a write joining the held transaction returned (%v) before the transaction committed", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := succeed(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	entries, err := s.AuditEntries(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		found = found || e.Kind == "joined"
	}
	if !found {
		t.Error("the joined write's audit entry is not stored")
	}
	rep, err := audit.Verify(t.Context(), s)
	if err != nil || !rep.OK {
		t.Fatalf("audit verify: %v %+v", err, rep)
	}
}

// TestSpeculativeCreateSurvivesAFailingNeighbour: a speculative creation
// answered before the commit is kept when a write run after it in the same
// transaction fails (that one alone is undone), and a duplicate
// speculative creation is refused as any other.
func TestSpeculativeCreateSurvivesAFailingNeighbour(t *testing.T) {
	t.Parallel()
	s, calls := heldCreation(t)
	// A transition from the wrong state fails inside the held transaction.
	_, err := s.Transition(t.Context(), task.TransitionParams{
		TaskID: "t1", From: task.StateQueued, To: task.StateCanceled, Node: "n1", Now: driver.Norm(time.Now()),
	})
	if !errors.Is(err, task.ErrStateConflict) {
		t.Fatalf("transition from the wrong state: %v, want ErrStateConflict", err)
	}
	// That failed write of t1 ended the hold: the creation is committed.
	got, err := s.GetTask(t.Context(), "t1", -1)
	if err != nil || got.State != task.StateInProgress {
		t.Fatalf("after a failing neighbour: %v, %v; want t1 stored in_progress", got, err)
	}
	// The same (actor, key) again: a duplicate, nothing new written.
	now := driver.Norm(time.Now())
	_, err = s.CreateTask(t.Context(), task.CreateParams{
		Task: &task.Task{ID: "t2", ContextID: "c", Agent: "echo", MaxAttempts: 3, Envelope: task.Envelope{
			TaskID: "t2", Actor: "alice", Action: "echo", IdempotencyKey: "m-t1",
			Input: task.Message{ID: "m-t1", Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
		}},
		Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}}, Now: now,
		IdempotencyTTL: time.Hour, Speculative: true, Committed: calls.Fn,
	})
	if !errors.Is(err, task.ErrDuplicate) {
		t.Fatalf("duplicate speculative create: %v, want ErrDuplicate", err)
	}
	if _, err := s.GetTask(t.Context(), "t2", 0); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("the duplicate was stored: %v", err)
	}
	if err := succeed(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
	if n := calls.Calls(); n != 1 {
		t.Errorf("Committed called %d times, want once (the duplicate is refused, not committed)", n)
	}
}

// TestHoldEndingWhileAnotherLeadsIsCommitted: a held transaction whose hold
// ends while a write leads (the timer then leaves the commit to that lead)
// is committed when the lead is given up, not left open until the task's
// next write. Before, a lead that had checked the hold before it ended and
// then found nothing queued gave the lead up with the transaction open: a
// stream's first event waited for the end of its agent.
func TestHoldEndingWhileAnotherLeadsIsCommitted(t *testing.T) {
	t.Parallel()
	// A hold far longer than the test: the test ends it itself, as the
	// timer would, at the moment it chooses. A real 5 ms timer raced the
	// test on a loaded machine (it could fire before the test led, or
	// while the creation's own lead was still running).
	s, calls := heldCreation(t)
	// Lead as a write would; the creation's transaction is then held open.
	s.takeLead(false)
	b := s.wr.open
	if b == nil {
		s.passLead()
		t.Fatal("no transaction held open after a speculative creation")
	}
	// The hold ends meanwhile: the timer finds the lead taken and leaves
	// the commit to it.
	s.holdEnded(b.id)
	committedEarly := calls.Calls() != 0
	s.passLead()
	if committedEarly {
		t.Fatal("the creation committed while the lead was held")
	}
	calls.Check(t, false)
	if _, err := s.GetTask(t.Context(), "t1", 0); err != nil {
		t.Fatalf("after the lead was given up: %v; want t1 stored", err)
	}
}

// succeedWith is succeed with the envelope in the parameters, as the
// coordinator's transitions carry it: the Transition that may start from
// the row the task's speculative creation left (held.rows).
func succeedWith(ctx context.Context, s *Store, id string) (*task.Task, error) {
	env := storetest.SpeculativeParams(id, nil).Task.Envelope
	return s.Transition(ctx, task.TransitionParams{
		TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w1", Node: "n1",
		Now:      driver.Norm(time.Now()),
		Envelope: &env,
		Messages: []task.Message{{ID: "a-" + id, Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hi")}}},
	})
}

// heldRow returns the row the held transaction keeps for task id (nil
// when it keeps none) and, read in that transaction, the row as stored.
func heldRow(t *testing.T, s *Store, id string) (kept, stored *task.Task) {
	t.Helper()
	s.takeLead(false)
	defer s.passLead()
	b := s.wr.open
	if b == nil {
		t.Fatal("no transaction held open")
	}
	kept = b.rows[id]
	var err error
	if ran, cerr := s.onConn(func() {
		x := s.batchTxn(t.Context(), &b.head)
		stored, _, err = scanForUpdate(x.queryRow(x.st.taskForTransition, id, false), id)
	}); !ran {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kept, stored
}

// TestHeldRowIsTheStoredRow: the row a speculative creation keeps for its
// task's next write is the row a read in the transaction returns, field
// for field; a transition starting from it stores what one starting from
// a read stores.
func TestHeldRowIsTheStoredRow(t *testing.T) {
	t.Parallel()
	s, calls := heldCreation(t)
	kept, stored := heldRow(t, s, "t1")
	if kept == nil {
		t.Fatal("the speculative creation kept no row for its task's next write")
	}
	if !reflect.DeepEqual(kept, stored) {
		t.Fatalf("kept row\n%+v\nstored row\n%+v", kept, stored)
	}
	got, err := succeedWith(t.Context(), s, "t1")
	if err != nil {
		t.Fatal(err)
	}
	calls.Check(t, false)
	read, err := s.GetTask(t.Context(), "t1", -1)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateSucceeded || read.State != task.StateSucceeded || read.Seq != got.Seq || read.LeaseOwner != "" {
		t.Fatalf("after the transition: returned %s seq %d, stored %s seq %d owner %q", got.State, got.Seq, read.State, read.Seq, read.LeaseOwner)
	}
}

// TestHeldRowStaleFallsBackToARead: should the kept row not be the stored
// one after all, the transition's conditional update matches nothing and
// the transition starts over from a read, and succeeds.
func TestHeldRowStaleFallsBackToARead(t *testing.T) {
	t.Parallel()
	s, _ := heldCreation(t)
	s.takeLead(false)
	s.wr.open.rows["t1"].Seq += 7 // as if the row had changed since
	s.passLead()
	got, err := succeedWith(t.Context(), s, "t1")
	if err != nil {
		t.Fatalf("transition from a stale kept row: %v", err)
	}
	read, err := s.GetTask(t.Context(), "t1", -1)
	if err != nil {
		t.Fatal(err)
	}
	if read.State != task.StateSucceeded || read.Seq != got.Seq {
		t.Fatalf("stored %s seq %d, returned seq %d", read.State, read.Seq, got.Seq)
	}
	recs, err := s.Records(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Seq != read.Seq || last.To != task.StateSucceeded {
		t.Fatalf("last record %+v, want seq %d to succeeded", last, read.Seq)
	}
}

// TestHeldRowDroppedByOtherWrites: a write that is neither a speculative
// creation nor a transition could change any row, so the kept rows are
// dropped before it runs.
func TestHeldRowDroppedByOtherWrites(t *testing.T) {
	t.Parallel()
	s, calls := heldCreation(t)
	if kept, _ := heldRow(t, s, "t1"); kept == nil {
		t.Fatal("no row kept")
	}
	// Joins the held transaction: answered once it commits, so it runs
	// on its own goroutine while the test looks at the writer.
	done := make(chan error, 1)
	go func() { done <- s.AppendAudit(context.Background(), []task.AuditInput{{Kind: task.AuditKind("test")}}) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.takeLead(false)
		b := s.wr.open
		ran := b != nil && len(b.reqs) > 1
		rows := b != nil && b.rows != nil
		s.passLead()
		if ran {
			if rows {
				t.Fatal("the rows kept for speculative creations survived another write")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the audit append never joined the held transaction")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := succeedWith(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	calls.Check(t, false)
}

// TestHeldRowNotKeptBesideOtherWrites: a speculative creation that runs in
// one group with a write of another kind keeps no row, since that write
// may have changed the new row after the creation wrote it.
func TestHeldRowNotKeptBesideOtherWrites(t *testing.T) {
	t.Parallel()
	s := specStore(t, time.Hour)
	// Hold the lead so that both writes queue, then hand it over: the
	// first queued leads and runs the whole queue as one group.
	s.takeLead(false)
	var calls storetest.CommittedCalls
	created := make(chan error, 1)
	go func() {
		_, err := s.CreateTask(context.Background(), storetest.SpeculativeParams("t1", calls.Fn))
		created <- err
	}()
	waitQueued(t, s, 1)
	appended := make(chan error, 1)
	go func() {
		appended <- s.AppendAudit(context.Background(), []task.AuditInput{{Kind: task.AuditKind("test")}})
	}()
	waitQueued(t, s, 2)
	s.passLead()
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if kept, _ := heldRow(t, s, "t1"); kept != nil {
		t.Fatal("a creation grouped with another kind of write kept its row")
	}
	if _, err := succeedWith(t.Context(), s, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	calls.Check(t, false)
}

// waitQueued waits until n writes are queued for the writer's lead.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.wr.mu.Lock()
		q := len(s.wr.queue)
		s.wr.mu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}
