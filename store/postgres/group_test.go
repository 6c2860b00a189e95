package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// openGrouped opens a store on schema with a pool of two connections, no
// background sealer and the given hold, and warms both connections up
// (two tasks held open at once, then settled), so that every statement is
// prepared on each and WireCounts counts one round trip per batch.
func openGrouped(t *testing.T, schema string, hold time.Duration) *postgres.Store {
	t.Helper()
	s, err := postgres.OpenWith(t.Context(), withParam(t, testDSN(t), "pool_max_conns", "2"),
		postgres.Options{Schema: schema, SpeculativeHold: hold, SealEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	var calls [2]storetest.CommittedCalls
	specCreate(t, s, "warm0", &calls[0])
	specCreate(t, s, "warm1", &calls[1])
	for i, err := range succeedAll(t, s, "warm0", "warm1") {
		if err != nil {
			t.Fatal(err)
		}
		calls[i].Check(t, false)
	}
	return s
}

// waitFor polls cond until it holds, failing t after ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// formGroup runs the speculative creations creates at once so that the
// ones that do not collide with each other share one group: with a
// creation ("carrier") held open, a second one ("gate") is held up in its
// key's round trip by another session's uncommitted key of the same
// (actor, key) while they queue up behind it (queued of them; collided
// wait for a creation with their key); then the carrier's task ends, and the round
// trip that commits it takes the group's keys. Last the other session
// rolls back and the gate's task ends. It returns the creations' errors,
// in order, once all returned, and the round trips and statements sent
// from the carrier's end to then: the carrier's task, COMMIT, BEGIN and
// the group's keys.
func formGroup(t *testing.T, s *postgres.Store, schema string, queued int, collided int64, creates ...func() error) (errs []error, roundTrips, statements uint64) {
	t.Helper()
	ctx := t.Context()
	var carrier, gate storetest.CommittedCalls
	specCreate(t, s, "carrier", &carrier)
	blocker := conn(t, schema)
	tx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (actor, key, task_id, expires_at)
		VALUES ('alice', 'm-gate', 'nobody', now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	gated := make(chan error, 1)
	go func() {
		_, err := s.CreateTask(ctx, storetest.SpeculativeParams("gate", gate.Fn))
		gated <- err
	}()
	watcher := conn(t, schema)
	waitFor(t, "the gate's key to wait for the other session", func() bool {
		var n int
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`,
			blocker.PgConn().PID()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	errs = make([]error, len(creates))
	var wg sync.WaitGroup
	for i, create := range creates {
		wg.Go(func() { errs[i] = create() })
	}
	waitFor(t, fmt.Sprintf("%d creations to queue behind the gate, %d to wait for a creation with their key", queued, collided), func() bool {
		return postgres.Forming(s) == queued && postgres.Collisions(s) == collided
	})
	rt0, st0 := s.WireCounts()
	if _, err := succeed(ctx, s, "carrier", "w1"); err != nil {
		t.Fatal(err)
	}
	carrier.Check(t, false)
	wg.Wait()
	rt1, st1 := s.WireCounts()
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-gated; err != nil {
		t.Fatalf("the gate's creation: %v", err)
	}
	if _, err := succeed(ctx, s, "gate", "w1"); err != nil {
		t.Fatal(err)
	}
	gate.Check(t, false)
	return errs, rt1 - rt0, st1 - st0
}

// create returns a speculative creation of task id on s, for formGroup.
func create(t *testing.T, s *postgres.Store, id string, calls *storetest.CommittedCalls) func() error {
	return func() error {
		_, err := s.CreateTask(t.Context(), storetest.SpeculativeParams(id, calls.Fn))
		return err
	}
}

// xmins returns the distinct transactions (xmin) that wrote task id's
// execution records, in the order of the records.
func xmins(t *testing.T, schema, id string) []string {
	t.Helper()
	rows, err := conn(t, schema).Query(t.Context(), `SELECT xmin::text FROM task_records WHERE task_id = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var x string
		if err := rows.Scan(&x); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// succeedAll ends the tasks ids at once and returns their errors, in
// order.
func succeedAll(t *testing.T, s task.Store, ids ...string) []error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { _, errs[i] = succeed(t.Context(), s, id, "w1") })
	}
	wg.Wait()
	return errs
}

// TestGroupCommitsOnce: creations that arrive while a key round trip is in
// flight take their keys together (BEGIN and a key each), here in the
// round trip that commits another group, are answered before anything of
// theirs commits, and
// their tasks' next writes go in one round trip with one COMMIT: one
// transaction wrote all three tasks, and Committed is called once each,
// after it.
func TestGroupCommitsOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	ids := []string{"a", "b", "c"}
	calls := make([]storetest.CommittedCalls, len(ids))
	var creates []func() error
	for i, id := range ids {
		creates = append(creates, create(t, s, id, &calls[i]))
	}
	errs, rt, st := formGroup(t, s, schema, len(ids), 0, creates...)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation of %s: %v", ids[i], err)
		}
	}
	// The carrier's end (its task and COMMIT), then BEGIN and three keys,
	// in one round trip on the carrier's connection.
	if rt != 1 || st != 2+1+3 {
		t.Errorf("the carrier's end and the group's keys: %d round trips, %d statements; want 1 and 6", rt, st)
	}
	// One connection for the open group, not one per member.
	if n := s.Pool().Stat().AcquiredConns(); n != 1 {
		t.Errorf("%d connections in use while the group of three is open, want 1", n)
	}
	for i, id := range ids {
		if n := calls[i].Calls(); n != 0 {
			t.Fatalf("Committed of %s called %d times before any of the group wrote", id, n)
		}
		if visible(t, schema, id) {
			t.Fatalf("another session sees task %s before the group committed", id)
		}
	}
	rt0, st0 := s.WireCounts()
	for i, err := range succeedAll(t, s, ids...) {
		if err != nil {
			t.Fatalf("succeed %s: %v", ids[i], err)
		}
	}
	rt1, st1 := s.WireCounts()
	if rt, st := rt1-rt0, st1-st0; rt != 1 || st != 3+1 {
		t.Errorf("the group's writes: %d round trips, %d statements; want 1 and 4 (three tasks and COMMIT)", rt, st)
	}
	var all []string
	for i, id := range ids {
		calls[i].Check(t, false)
		x := xmins(t, schema, id)
		if len(x) != 1 {
			t.Fatalf("task %s's records were written by transactions %v, want one", id, x)
		}
		all = append(all, x...)
	}
	if all[0] != all[1] || all[1] != all[2] {
		t.Errorf("the group's tasks were written by transactions %v, want one for all", all)
	}
	counts, err := s.CountByState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[task.StateSucceeded] != 7 {
		t.Errorf("tasks by state %v, want 7 succeeded", counts)
	}
	verifyChain(t, s, 7*6)
}

// TestGroupMemberFails: when one member's write fails in PostgreSQL (its
// task ID was taken by another node after its key was), which aborts the
// group's transaction, the others are committed all the same, each in a
// transaction of its own; the failing member's write and Committed report
// the error, and nothing of it is stored.
func TestGroupMemberFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	other := openWith(t, schema, postgres.Options{SpeculativeHold: -1})
	ids := []string{"a", "b", "c"}
	calls := make([]storetest.CommittedCalls, len(ids))
	var creates []func() error
	for i, id := range ids {
		creates = append(creates, create(t, s, id, &calls[i]))
	}
	errs, _, _ := formGroup(t, s, schema, len(ids), 0, creates...)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation of %s: %v", ids[i], err)
		}
	}
	// Another node creates a task with b's ID, under another key.
	p := storetest.SpeculativeParams("b", nil)
	p.Speculative, p.Committed = false, nil
	p.Task.ContextID, p.Task.Envelope.IdempotencyKey = "other", "other-key"
	if _, err := other.CreateTask(ctx, p); err != nil {
		t.Fatal(err)
	}
	errs = succeedAll(t, s, ids...)
	for i, id := range ids {
		if id == "b" {
			if errs[i] == nil {
				t.Fatal("b's write succeeded although its task ID was taken")
			}
			calls[i].Check(t, true)
			continue
		}
		if errs[i] != nil {
			t.Fatalf("succeed %s: %v, want success despite b's failure", id, errs[i])
		}
		calls[i].Check(t, false)
		got, err := s.GetTask(ctx, id, -1)
		if err != nil || got.State != task.StateSucceeded || len(got.History) != 2 || len(got.Artifacts) != 1 {
			t.Fatalf("task %s: %+v, %v; want succeeded with 2 messages and an artifact", id, got, err)
		}
		if x := xmins(t, schema, id); len(x) != 1 {
			t.Errorf("task %s's records were written by transactions %v, want one", id, x)
		}
	}
	got, err := s.GetTask(ctx, "b", -1)
	if err != nil || got.ContextID != "other" || got.State != task.StateInProgress {
		t.Fatalf("task b: %+v, %v; want the other node's, in progress", got, err)
	}
	// b's key was not committed: it names nothing.
	var n int
	if err := conn(t, schema).QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE key = 'm-b'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("b's key is stored %d times, want none", n)
	}
	// warm0, warm1, carrier, gate, a, c: 6 entries each; the other
	// node's b: 4.
	verifyChain(t, s, 6*6+4)
}

// TestGroupSameKey: a creation under the key of a creation queued for the
// next group does not join that group: it waits until the group
// committed, then finds the key taken and gets the first task, settled,
// as the duplicate; one task ran.
func TestGroupSameKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	var first, again storetest.CommittedCalls
	var dup *task.Task
	var dupErr error
	dupDone := make(chan struct{})
	errs, _, _ := formGroup(t, s, schema, 1, 1,
		create(t, s, "first", &first),
		func() error {
			waitFor(t, "first to queue", func() bool { return postgres.Forming(s) == 1 })
			p := storetest.SpeculativeParams("again", again.Fn)
			p.Task.Envelope.IdempotencyKey = "m-first"
			go func() {
				dup, dupErr = s.CreateTask(ctx, p)
				close(dupDone)
			}()
			return nil
		})
	if errs[0] != nil {
		t.Fatalf("creation of first: %v", errs[0])
	}
	select {
	case <-dupDone:
		t.Fatalf("the creation under first's key returned (%v) before first's group committed", dupErr)
	default:
	}
	if _, err := succeed(ctx, s, "first", "w1"); err != nil {
		t.Fatal(err)
	}
	first.Check(t, false)
	<-dupDone
	refusedDuplicate(t, schema, "again", dup, dupErr, &again)
	verifyChain(t, s, 5*6)
}

// TestGroupClose: Close commits an open group, the creations of members
// that have not written included, and answers each.
func TestGroupClose(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	ids := []string{"a", "b"}
	calls := make([]storetest.CommittedCalls, len(ids))
	errs, _, _ := formGroup(t, s, schema, len(ids), 0, create(t, s, "a", &calls[0]), create(t, s, "b", &calls[1]))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation of %s: %v", ids[i], err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var all []string
	for i, id := range ids {
		committedAlone(t, schema, id, &calls[i], "Close")
		all = append(all, xmins(t, schema, id)...)
	}
	if len(all) != 2 || all[0] != all[1] {
		t.Errorf("the group's creations were written by transactions %v, want one for both", all)
	}
	verifyChain(t, open(t, storeDSN(t), schema), 4*6+2*4)
}

// TestGroupHoldExpires: the members that wrote are answered when the hold
// ends although one member's agent is still running; that member's
// creation commits with the group (Committed), and its later write is a
// transaction of its own.
func TestGroupHoldExpires(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	const hold = 300 * time.Millisecond
	s := openGrouped(t, schema, hold)
	ids := []string{"a", "b", "slow"}
	calls := make([]storetest.CommittedCalls, len(ids))
	var creates []func() error
	for i, id := range ids {
		creates = append(creates, create(t, s, id, &calls[i]))
	}
	errs, _, _ := formGroup(t, s, schema, len(ids), 0, creates...)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation of %s: %v", ids[i], err)
		}
	}
	for i, err := range succeedAll(t, s, "a", "b") {
		if err != nil {
			t.Fatalf("succeed %s: %v", ids[i], err)
		}
	}
	// a and b were answered after the commit, which the end of the hold
	// made: slow's creation is stored by then.
	calls[0].Check(t, false)
	calls[1].Check(t, false)
	waitFor(t, "slow's Committed", func() bool { return calls[2].Calls() > 0 })
	committedAlone(t, schema, "slow", &calls[2], "the end of the group's hold")
	if got, err := s.GetTask(ctx, "slow", -1); err != nil || got.State != task.StateInProgress {
		t.Fatalf("slow's task after the hold: %+v, %v; want in progress", got, err)
	}
	if _, err := succeed(ctx, s, "slow", "w1"); err != nil {
		t.Fatal(err)
	}
	a, b, slow := xmins(t, schema, "a"), xmins(t, schema, "b"), xmins(t, schema, "slow")
	if len(a) != 1 || len(b) != 1 || len(slow) != 2 || a[0] != b[0] || slow[0] != a[0] {
		t.Errorf("transactions that wrote the records: a %v, b %v, slow %v; want a's = b's = slow's first, and slow's last a second", a, b, slow)
	}
	verifyChain(t, s, 7*6)
}

// TestGroupRenewLease: renewing the lease of a group member's task
// commits the group first; the other member's write then goes the usual
// way.
func TestGroupRenewLease(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	calls := make([]storetest.CommittedCalls, 2)
	errs, _, _ := formGroup(t, s, schema, 2, 0, create(t, s, "a", &calls[0]), create(t, s, "b", &calls[1]))
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := s.RenewLease(ctx, task.RenewParams{TaskID: "a", Owner: "w1", Now: time.Now(), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("renew a group member's lease: %v", err)
	}
	committedAlone(t, schema, "a", &calls[0], "renewing a's lease")
	committedAlone(t, schema, "b", &calls[1], "renewing a's lease")
	for i, err := range succeedAll(t, s, "a", "b") {
		if err != nil {
			t.Fatalf("succeed task %d: %v", i, err)
		}
	}
	if a, b := xmins(t, schema, "a"), xmins(t, schema, "b"); len(a) != 2 || len(b) != 2 || a[0] != b[0] {
		t.Errorf("transactions that wrote the records: a %v, b %v; want the group's, then one each", a, b)
	}
	verifyChain(t, s, 6*6)
}

// TestGroupOtherNodeSameKey: another node's creation under the key of an
// open group's member waits on the group's uncommitted key until the
// group commits, then gets that member's task, settled, as the duplicate;
// one task ran.
func TestGroupOtherNodeSameKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openGrouped(t, schema, time.Minute)
	// The other node's sessions carry the schema's name, to be found
	// waiting.
	other, err := postgres.OpenWith(ctx, withParam(t, storeDSN(t), "application_name", schema),
		postgres.Options{Schema: schema, SpeculativeHold: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	var first, second storetest.CommittedCalls
	errs, _, _ := formGroup(t, s, schema, 2, 0, create(t, s, "first", &first), create(t, s, "b", new(storetest.CommittedCalls)))
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	type result struct {
		t   *task.Task
		err error
	}
	done := make(chan result, 1)
	go func() {
		p := storetest.SpeculativeParams("second", second.Fn)
		p.Task.Envelope.IdempotencyKey = "m-first"
		got, err := other.CreateTask(ctx, p)
		done <- result{got, err}
	}()
	watcher := conn(t, schema)
	waitFor(t, "the other node's key to wait for the group", func() bool {
		var n int
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND application_name = $1`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	for i, err := range succeedAll(t, s, "first", "b") {
		if err != nil {
			t.Fatalf("succeed task %d: %v", i, err)
		}
	}
	first.Check(t, false)
	r := <-done
	refusedDuplicate(t, schema, "second", r.t, r.err, &second)
	verifyChain(t, s, 6*6)
}
