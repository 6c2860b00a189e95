package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

func specCreate(t *testing.T, s task.Store, id string, calls *storetest.CommittedCalls) {
	t.Helper()
	got, err := s.CreateTask(t.Context(), storetest.SpeculativeParams(id, calls.Fn))
	if err != nil {
		t.Fatalf("speculative create of %s: %v", id, err)
	}
	if got.State != task.StateInProgress || len(got.History) != 1 {
		t.Fatalf("speculative create of %s: state %s with %d messages, want in_progress (claimed) with 1", id, got.State, len(got.History))
	}
}

func succeed(ctx context.Context, s task.Store, id, owner string) (*task.Task, error) {
	return s.Transition(ctx, task.TransitionParams{
		TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: owner, Node: "n1",
		Now:       driver.Norm(time.Now()),
		Messages:  []task.Message{{ID: "a-" + id, Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hi")}}},
		Artifacts: []task.Artifact{{ID: "art-" + id, Parts: []task.Part{task.TextPart("hi")}}},
		Audit:     []task.AuditInput{{Kind: task.AuditKind("test.note"), TaskID: id, Actor: "alice"}},
	})
}

// visible reports whether another session sees task id's row.
func visible(t *testing.T, schema, id string) bool {
	t.Helper()
	var n int
	if err := conn(t, schema).QueryRow(t.Context(), `SELECT count(*) FROM tasks WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// committedAlone checks that after (what ended the hold) the creation of
// task id was committed: Committed called once, without error, and the
// task visible to other sessions.
func committedAlone(t *testing.T, schema, id string, calls *storetest.CommittedCalls, after string) {
	t.Helper()
	calls.Check(t, false)
	if !visible(t, schema, id) {
		t.Fatalf("after %s, Committed(nil) was called but other sessions do not see task %s", after, id)
	}
}

// commits returns how many transactions wrote task id's execution
// records: the distinct xmin of its task_records rows.
func commits(t *testing.T, schema, id string) int {
	t.Helper()
	var n int
	if err := conn(t, schema).QueryRow(t.Context(),
		`SELECT count(DISTINCT xmin::text) FROM task_records WHERE task_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSpeculativeCreateCommitsWithItsEnd: a speculative creation is
// invisible to other sessions until the task's next write, which commits
// itself and the creation in one transaction; the records, the messages,
// the artifact and the audit chain are whole, and the creation's audit
// entries keep its time and come first. With the hold off, the same
// writes take two transactions.
func TestSpeculativeCreateCommitsWithItsEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		hold    time.Duration
		commits int
	}{{"held", time.Minute, 1}, {"not held", -1, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			schema := newSchema(t)
			s := openWith(t, schema, postgres.Options{SpeculativeHold: tc.hold})
			var calls storetest.CommittedCalls
			p := storetest.SpeculativeParams("t1", calls.Fn)
			if _, err := s.CreateTask(ctx, p); err != nil {
				t.Fatal(err)
			}
			if tc.hold > 0 {
				if visible(t, schema, "t1") {
					t.Fatal("another session sees the speculative creation before its next write")
				}
				if calls.Calls() != 0 {
					t.Fatal("Committed called before the creation committed")
				}
			}
			got, err := succeed(ctx, s, "t1", "w1")
			if err != nil {
				t.Fatalf("succeed: %v", err)
			}
			if got.State != task.StateSucceeded || got.LeaseOwner != "" {
				t.Fatalf("after succeed: state %s, lease owner %q", got.State, got.LeaseOwner)
			}
			calls.Check(t, false)
			if n := commits(t, schema, "t1"); n != tc.commits {
				t.Errorf("the records were written by %d transactions, want %d", n, tc.commits)
			}
			full, err := s.GetTask(ctx, "t1", -1)
			if err != nil {
				t.Fatal(err)
			}
			if full.State != task.StateSucceeded || len(full.History) != 2 || len(full.Artifacts) != 1 {
				t.Fatalf("stored task: state %s, %d messages, %d artifacts", full.State, len(full.History), len(full.Artifacts))
			}
			recs, err := s.Records(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			var moves []string
			for _, r := range recs {
				moves = append(moves, fmt.Sprintf("%s→%s", r.From, r.To))
			}
			if want := "[requested→validated validated→queued queued→in_progress in_progress→succeeded]"; fmt.Sprint(moves) != want {
				t.Errorf("records %v, want %s", moves, want)
			}
			verifyChain(t, s, 6)
			entries, err := s.AuditEntries(ctx, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if entries[0].Kind != task.AuditSubmitted || !entries[0].At.Equal(p.Now) {
				t.Errorf("first audit entry %s at %s, want %s at the creation's time %s", entries[0].Kind, entries[0].At, task.AuditSubmitted, p.Now)
			}
			if last := entries[len(entries)-1]; last.Kind != task.AuditTransition {
				t.Errorf("last audit entry %s, want the transition's %s", last.Kind, task.AuditTransition)
			}
		})
	}
}

// TestSpeculativeCreateCommitsAfterHold: a creation nothing writes within
// the hold is committed alone, and Committed says so; the task's later
// write is an ordinary transaction.
func TestSpeculativeCreateCommitsAfterHold(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: 20 * time.Millisecond})
	var calls storetest.CommittedCalls
	specCreate(t, s, "t1", &calls)
	// Committed is called once the commit returned, a moment after other
	// sessions can see it.
	deadline := time.Now().Add(10 * time.Second)
	for calls.Calls() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the creation was not committed after its hold")
		}
		time.Sleep(5 * time.Millisecond)
	}
	committedAlone(t, schema, "t1", &calls, "the end of the hold")
	if _, err := succeed(t.Context(), s, "t1", "w1"); err != nil {
		t.Fatal(err)
	}
	if n := commits(t, schema, "t1"); n != 2 {
		t.Errorf("the records were written by %d transactions, want 2", n)
	}
	verifyChain(t, s, 6)
}

// TestSpeculativeCreateOtherWrites: a refused transition commits the
// creation alone and writes nothing of its own; a lease renewal and
// Close commit a held creation before anything else.
func TestSpeculativeCreateOtherWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute})

	var refused storetest.CommittedCalls
	specCreate(t, s, "refused", &refused)
	if _, err := succeed(ctx, s, "refused", "someone-else"); !errors.Is(err, task.ErrStateConflict) {
		t.Fatalf("succeed with another lease owner: %v, want a conflict", err)
	}
	committedAlone(t, schema, "refused", &refused, "a refused transition")
	if got, err := s.GetTask(ctx, "refused", -1); err != nil || got.State != task.StateInProgress || len(got.History) != 1 || len(got.Artifacts) != 0 {
		t.Fatalf("after the refused transition: %+v, %v; want in_progress, its message, no artifact", got, err)
	}
	if _, err := succeed(ctx, s, "refused", "w1"); err != nil {
		t.Fatalf("then the right owner: %v", err)
	}

	var renewed storetest.CommittedCalls
	specCreate(t, s, "renewed", &renewed)
	if err := s.RenewLease(ctx, task.RenewParams{TaskID: "renewed", Owner: "w1", Now: time.Now(), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("renew a held creation's lease: %v", err)
	}
	committedAlone(t, schema, "renewed", &renewed, "renewing the lease")

	var closed storetest.CommittedCalls
	specCreate(t, s, "closed", &closed)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	committedAlone(t, schema, "closed", &closed, "Close")
	verifyChain(t, open(t, storeDSN(t), schema), -1)
}

// TestSpeculativeCreateDuplicateKey: a speculative creation under a key
// another task holds is refused before it returns, as an ordinary one is,
// leaves nothing behind and never calls Committed.
func TestSpeculativeCreateDuplicateKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute})
	var first storetest.CommittedCalls
	specCreate(t, s, "first", &first)
	if _, err := succeed(ctx, s, "first", "w1"); err != nil {
		t.Fatal(err)
	}
	var again storetest.CommittedCalls
	p := storetest.SpeculativeParams("again", again.Fn)
	p.Task.Envelope.IdempotencyKey = "m-first"
	dup, err := s.CreateTask(ctx, p)
	refusedDuplicate(t, schema, "again", dup, err, &again)
	verifyChain(t, s, 6)
}

// refusedDuplicate checks the answer of a creation of task id under the
// key of task "first", settled: that task and ErrDuplicate; Committed
// never called; nothing of id stored.
func refusedDuplicate(t *testing.T, schema, id string, got *task.Task, err error, calls *storetest.CommittedCalls) {
	t.Helper()
	if !errors.Is(err, task.ErrDuplicate) || got == nil || got.ID != "first" || got.State != task.StateSucceeded {
		t.Fatalf("creation of %s under the key of first: %+v, %v; want task first, succeeded, and ErrDuplicate", id, got, err)
	}
	if n := calls.Calls(); n != 0 {
		t.Errorf("Committed called %d times for the refused creation", n)
	}
	if visible(t, schema, id) {
		t.Errorf("the refused creation's task %s exists", id)
	}
}

// TestSpeculativeCreateLost: when the held transaction's connection is
// cut, the joining transition fails, Committed reports the error, and the
// task does not exist.
func TestSpeculativeCreateLost(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute, Retries: -1})
	var calls storetest.CommittedCalls
	specCreate(t, s, "t1", &calls)
	// The held transaction is the only session of this store idle in a
	// transaction that took a key (sqlHoldKey) and read this schema's tasks.
	var killed int
	if err := conn(t, schema).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE state = 'idle in transaction' AND query LIKE '%INSERT INTO idempotency_keys%'
		AND pid <> pg_backend_pid() AND pid IN (SELECT pid FROM pg_locks WHERE relation = 'tasks'::regclass)`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d sessions, want the held one", killed)
	}
	if _, err := succeed(ctx, s, "t1", "w1"); err == nil {
		t.Fatal("the transition succeeded on a cut connection")
	}
	calls.Check(t, true)
	if visible(t, schema, "t1") {
		t.Fatal("the lost creation's task exists")
	}
	// The store goes on.
	var next storetest.CommittedCalls
	specCreate(t, s, "t2", &next)
	if _, err := succeed(ctx, s, "t2", "w1"); err != nil {
		t.Fatalf("a creation after the lost one: %v", err)
	}
	next.Check(t, false)
	verifyChain(t, s, 6)
}

// TestSpeculativeCreateConcurrent: many blocking submissions at once,
// some ending within the hold and some after it, on a pool smaller than
// their number; every task is stored once, settled, and the chain
// verifies.
func TestSpeculativeCreateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: 2 * time.Millisecond})
	const n = 40
	calls := make([]storetest.CommittedCalls, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("t%02d", i)
			if _, err := s.CreateTask(ctx, storetest.SpeculativeParams(id, calls[i].Fn)); err != nil {
				errs <- err
				return
			}
			if i%4 == 0 {
				time.Sleep(10 * time.Millisecond) // past the hold
			}
			if _, err := succeed(ctx, s, id, "w1"); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range calls {
		calls[i].Check(t, false)
	}
	counts, err := s.CountByState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[task.StateSucceeded] != n {
		t.Fatalf("tasks by state %v, want %d succeeded", counts, n)
	}
	verifyChain(t, s, 6*n)
}

// TestSpeculativeCreateRacingKeys: a second node's speculative creation
// under a key that a held creation is taking waits for that transaction
// and gets its task, settled, as the duplicate; one task exists.
func TestSpeculativeCreateRacingKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	a := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute})
	b := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute})
	var first storetest.CommittedCalls
	specCreate(t, a, "first", &first)
	type result struct {
		t   *task.Task
		err error
	}
	second := make(chan result, 1)
	var calls storetest.CommittedCalls
	go func() {
		p := storetest.SpeculativeParams("second", calls.Fn)
		p.Task.Envelope.IdempotencyKey = "m-first"
		got, err := b.CreateTask(ctx, p)
		second <- result{got, err}
	}()
	if _, err := succeed(ctx, a, "first", "w1"); err != nil {
		t.Fatal(err)
	}
	r := <-second
	refusedDuplicate(t, schema, "second", r.t, r.err, &calls)
	verifyChain(t, a, 6)
}

// TestPendBatches: a transaction's audit entries wait in
// audit_pending_batches as one row under one batch number, in order; a
// creation joined by its task's next write shares the transition's batch
// (one transaction, one commit), its entries first. (Until issue 31 the creation kept a batch of its own,
// before the transition's: the same order in the chain.)
func TestPendBatches(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openWith(t, schema, postgres.Options{SpeculativeHold: time.Minute, SealEvery: -1})
	var calls storetest.CommittedCalls
	specCreate(t, s, "t1", &calls)
	if _, err := succeed(ctx, s, "t1", "w1"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn(t, schema).Query(ctx, `SELECT b.batch, u.kind FROM audit_pending_batches AS b,
		unnest(b.kind) WITH ORDINALITY AS u (kind, ord) ORDER BY b.batch, u.ord`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	batches := map[int64]bool{}
	var first int64
	for rows.Next() {
		var b int64
		var kind string
		if err := rows.Scan(&b, &kind); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			first = b
		}
		batches[b] = true
		got = append(got, fmt.Sprintf("%d:%s", b-first, kind))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := "[0:task.submitted 0:task.transition 0:task.transition 0:task.transition 0:test.note 0:task.transition]"
	if fmt.Sprint(got) != want || len(batches) != 1 {
		t.Fatalf("pending entries (batch - first batch: kind) %v, want %s", got, want)
	}
	if n, old := count(t, schema, "audit_pending_batches"), count(t, schema, "audit_pending"); n != 1 || old != 0 {
		t.Fatalf("%d rows in audit_pending_batches, %d in audit_pending; want 1 and 0", n, old)
	}
	verifyChain(t, s, 6)
}

// TestSpeculativeCreateArtifactTwice: a held creation joined by a write
// that stores one artifact twice (the second replaces the first in place)
// and another after it stores them as separate writes would, on both
// paths (held and not), and the chain verifies.
func TestSpeculativeCreateArtifactTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hold time.Duration
	}{{"held", time.Minute}, {"not held", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			schema := newSchema(t)
			s := openWith(t, schema, postgres.Options{SpeculativeHold: tc.hold})
			var calls storetest.CommittedCalls
			specCreate(t, s, "t1", &calls)
			art := func(id, text string) task.Artifact {
				return task.Artifact{ID: id, Parts: []task.Part{task.TextPart(text)}}
			}
			if _, err := s.Transition(ctx, task.TransitionParams{
				TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w1", Node: "n1",
				Now:       driver.Norm(time.Now()),
				Artifacts: []task.Artifact{art("a", "first"), art("b", "other"), art("a", "second")},
			}); err != nil {
				t.Fatal(err)
			}
			calls.Check(t, false)
			full, err := s.GetTask(ctx, "t1", -1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range full.Artifacts {
				got = append(got, a.ID+"="+a.Parts[0].Text)
			}
			if fmt.Sprint(got) != "[a=second b=other]" {
				t.Fatalf("artifacts %v, want [a=second b=other]", got)
			}
			if full.State != task.StateSucceeded || len(full.History) != 1 {
				t.Fatalf("state %s with %d messages, want succeeded with 1", full.State, len(full.History))
			}
			verifyChain(t, s, -1)
		})
	}
}
