package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// testClaimOrder pins "oldest first" as CreatedAt, then ID.
func testClaimOrder(t *testing.T, b *bundle) {
	b.queued("c", at(3*time.Second))
	b.queued("b", at(2*time.Second))
	b.queued("a2", at(time.Second))
	b.queued("a1", at(time.Second))
	b.reach("v", task.StateValidated) // not queued: never claimed
	now := at(time.Minute)
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Node: "node-9", Now: now, LeaseFor: 30 * time.Second, Limit: 3})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if want := []string{"a1", "a2", "b"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Claim = %v, want %v", ids(got), want)
	}
	for _, tk := range got {
		if tk.State != task.StateInProgress || tk.Attempt != 1 || tk.LeaseOwner != "w" ||
			!tk.LeaseExpires.Equal(now.Add(30*time.Second)) || !tk.UpdatedAt.Equal(now) || tk.Seq != 3 {
			t.Errorf("claimed %s", dump(tk))
		}
		if len(tk.History) != 1 || tk.History[0].ID != "m-"+tk.ID {
			t.Errorf("claimed %s: History %s, want the input message", tk.ID, dump(tk.History))
		}
		if stored := b.get(tk.ID); stored.State != task.StateInProgress || stored.LeaseOwner != "w" || stored.Attempt != 1 {
			t.Errorf("stored %s", dump(stored))
		}
		recs := b.records(tk.ID)
		want := task.Record{TaskID: tk.ID, Seq: 3, From: task.StateQueued, To: task.StateInProgress, At: now, Attempt: 1, Node: "node-9"}
		if last := recs[len(recs)-1]; !reflect.DeepEqual(last, want) {
			t.Errorf("record %s, want %s", dump(last), dump(want))
		}
	}
	log := b.audit()
	checkChain(t, log)
	for i, tk := range got {
		recs := b.records(tk.ID)
		transitionEntry(t, log[len(log)-3+i], recs[len(recs)-1])
	}

	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Second, Limit: 3})
	if err != nil || !slices.Equal(ids(got), []string{"c"}) {
		t.Fatalf("second Claim = %v, %v; want [c]", ids(got), err)
	}
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Second, Limit: 3})
	if err != nil || len(got) != 0 {
		t.Fatalf("Claim with nothing queued = %v, %v; want none", ids(got), err)
	}
}

// testClaimAgents: ClaimParams.Agents takes only those agents' tasks,
// Except every task but theirs, an empty Agents none; both filters apply
// together; neither changes the order.
func testClaimAgents(t *testing.T, b *bundle) {
	for i, a := range []string{"exec", "echo", "exec", "fn", "echo", "other"} {
		id := fmt.Sprintf("%s-%d", a, i)
		b.create(spec{id: id, agent: a, now: at(time.Duration(i) * time.Second), steps: []task.State{task.StateValidated, task.StateQueued}, history: true})
	}
	now := at(time.Minute)
	claim := func(agents, except []string, limit int) []string {
		t.Helper()
		got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Node: "node-1", Now: now, LeaseFor: time.Minute, Limit: limit, Agents: agents, Except: except})
		if err != nil {
			t.Fatalf("Claim(agents %q, except %q): %v", agents, except, err)
		}
		for _, tk := range got {
			if tk.State != task.StateInProgress || b.get(tk.ID).State != task.StateInProgress {
				t.Errorf("claimed %s: %s", tk.ID, dump(tk))
			}
		}
		return ids(got)
	}
	if got := claim([]string{}, nil, 10); len(got) != 0 {
		t.Errorf("Claim with no agents = %v, want none", got)
	}
	if got, want := claim([]string{"exec"}, nil, 1), []string{"exec-0"}; !slices.Equal(got, want) {
		t.Errorf("Claim(exec, limit 1) = %v, want %v", got, want)
	}
	if got, want := claim(nil, []string{"exec", "fn"}, 2), []string{"echo-1", "echo-4"}; !slices.Equal(got, want) {
		t.Errorf("Claim(except exec, fn) = %v, want %v", got, want)
	}
	if got, want := claim([]string{"exec", "fn", "other"}, []string{"other"}, 10), []string{"exec-2", "fn-3"}; !slices.Equal(got, want) {
		t.Errorf("Claim(exec, fn, other except other) = %v, want %v", got, want)
	}
	if got, want := claim(nil, nil, 10), []string{"other-5"}; !slices.Equal(got, want) {
		t.Errorf("Claim() = %v, want %v", got, want)
	}
}

func testClaimRunAfter(t *testing.T, b *bundle) {
	in := newTask(spec{id: "later"})
	in.RunAfter = at(time.Minute)
	if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: t0}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	for _, now := range []time.Time{t0, at(time.Minute - time.Microsecond)} {
		got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 10})
		if err != nil || len(got) != 0 {
			t.Fatalf("Claim at %v before RunAfter %v = %v, %v; want none", now, in.RunAfter, ids(got), err)
		}
	}
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 10})
	if err != nil || !slices.Equal(ids(got), []string{"later"}) {
		t.Fatalf("Claim at RunAfter = %v, %v; want [later]", ids(got), err)
	}

	// A retry's RunAfter holds it back the same way.
	b.transition(task.TransitionParams{TaskID: "later", From: task.StateInProgress, To: task.StateQueued, RunAfter: at(2 * time.Minute), Now: at(time.Minute)})
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(90 * time.Second), LeaseFor: time.Minute, Limit: 10})
	if err != nil || len(got) != 0 {
		t.Fatalf("Claim before the retry's RunAfter = %v, %v; want none", ids(got), err)
	}
	got, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(2 * time.Minute), LeaseFor: time.Minute, Limit: 10, TaskID: "later"})
	if err != nil || !slices.Equal(ids(got), []string{"later"}) {
		t.Fatalf("Claim at the retry's RunAfter = %v, %v; want [later]", ids(got), err)
	}
}

func testClaimTaskID(t *testing.T, b *bundle) {
	b.queued("old", t0)
	b.queued("new", at(time.Second))
	b.reach("val", task.StateValidated)
	got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 5, TaskID: "new"})
	if err != nil || !slices.Equal(ids(got), []string{"new"}) {
		t.Fatalf("Claim(TaskID new) = %v, %v; want [new]", ids(got), err)
	}
	for _, id := range []string{"new", "val", "missing"} {
		got, err := b.s.Claim(b.ctx, task.ClaimParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute, Limit: 5, TaskID: id})
		if err != nil || len(got) != 0 {
			t.Errorf("Claim(TaskID %s), not queued = %v, %v; want none", id, ids(got), err)
		}
	}
	if tk := b.get("old"); tk.State != task.StateQueued {
		t.Errorf("old is %s, want still queued", tk.State)
	}
}

func testClaimAttempts(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	for attempt := 1; attempt <= 3; attempt++ {
		now := at(time.Duration(attempt) * time.Minute)
		tk := b.claim("t1", "w", now, time.Minute)
		if tk.Attempt != attempt {
			t.Fatalf("claim %d: Attempt %d", attempt, tk.Attempt)
		}
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, LeaseOwner: "w", Now: now, Reason: "retry"})
	}
	var attempts []int
	for _, r := range b.records("t1") {
		if r.To == task.StateInProgress || r.From == task.StateInProgress {
			attempts = append(attempts, r.Attempt)
		}
	}
	if want := []int{1, 1, 2, 2, 3, 3}; !slices.Equal(attempts, want) {
		t.Errorf("attempts on records into and out of in_progress = %v, want %v", attempts, want)
	}
	if tk := b.get("t1"); tk.Attempt != 3 {
		t.Errorf("Attempt = %d, want 3", tk.Attempt)
	}
}

// testClaimConcurrent: 8 claimers drain 200 queued tasks; each task is
// claimed exactly once.
func testClaimConcurrent(t *testing.T, b *bundle) {
	const tasks, workers = 200, 8
	for i := range tasks {
		b.queued(fmt.Sprintf("t%03d", i), at(time.Duration(i)*time.Microsecond))
	}
	claimed := ClaimAll(t, []task.Store{b.s}, workers, tasks, func(_, w, i int) task.ClaimParams {
		return task.ClaimParams{Owner: fmt.Sprintf("worker-%d", w), Now: at(time.Hour), LeaseFor: time.Minute, Limit: 1 + (w+i)%4}
	})
	for id, owner := range claimed {
		if tk := b.get(id); tk.Attempt != 1 || tk.LeaseOwner != owner || tk.State != task.StateInProgress {
			t.Errorf("%s: attempt %d, owner %q, state %s; want 1, %q, in_progress", id, tk.Attempt, tk.LeaseOwner, tk.State, owner)
		}
	}
	checkChain(t, b.audit())
}

func testRenewLease(t *testing.T, b *bundle) {
	b.queued("t1", t0)
	b.claim("t1", "w1", t0, time.Minute)
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w1", Now: at(30 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	if tk := b.get("t1"); !tk.LeaseExpires.Equal(at(90*time.Second)) || tk.LeaseOwner != "w1" {
		t.Errorf("after renew: lease %q until %v, want w1 until %v", tk.LeaseOwner, tk.LeaseExpires, at(90*time.Second))
	}
	err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w2", Now: at(40 * time.Second), LeaseFor: time.Hour})
	wantErr(t, "RenewLease by another owner", err, task.ErrStateConflict)
	if tk := b.get("t1"); !tk.LeaseExpires.Equal(at(90 * time.Second)) {
		t.Errorf("refused renew changed the lease to %v", tk.LeaseExpires)
	}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(time.Minute)})
	err = b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "t1", Owner: "w1", Now: at(time.Minute), LeaseFor: time.Minute})
	wantErr(t, "RenewLease after the task finished", err, task.ErrStateConflict)
	err = b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "missing", Owner: "w1", Now: at(time.Minute), LeaseFor: time.Minute})
	wantErr(t, "RenewLease of a missing task", err, task.ErrNotFound)
}

func testExpiredLeases(t *testing.T, b *bundle) {
	for i, id := range []string{"a", "b", "c", "d"} {
		b.queued(id, t0)
		b.claim(id, "w", t0, time.Duration(i+1)*10*time.Second) // a 10s, b 20s, c 30s, d 40s
	}
	b.transition(task.TransitionParams{TaskID: "b", From: task.StateInProgress, To: task.StateSucceeded, Now: at(time.Second)})
	if err := b.s.RenewLease(b.ctx, task.RenewParams{TaskID: "c", Owner: "w", Now: at(25 * time.Second), LeaseFor: time.Minute}); err != nil {
		t.Fatal(err)
	}
	b.queued("q", t0)

	got, err := b.s.ExpiredLeases(b.ctx, at(45*time.Second), 10)
	if err != nil {
		t.Fatalf("ExpiredLeases: %v", err)
	}
	gotIDs := ids(got)
	slices.Sort(gotIDs)
	if want := []string{"a", "d"}; !slices.Equal(gotIDs, want) {
		t.Errorf("ExpiredLeases(+45s) = %v, want %v", gotIDs, want)
	}
	for _, tk := range got {
		if tk.State != task.StateInProgress || tk.LeaseOwner != "w" || !tk.LeaseExpires.Before(at(45*time.Second)) {
			t.Errorf("expired task %s", dump(tk))
		}
	}
	if got, err := b.s.ExpiredLeases(b.ctx, at(45*time.Second), 1); err != nil || len(got) != 1 {
		t.Errorf("ExpiredLeases(limit 1) = %v, %v; want one task", ids(got), err)
	}
	if got, err := b.s.ExpiredLeases(b.ctx, at(5*time.Second), 10); err != nil || len(got) != 0 {
		t.Errorf("ExpiredLeases(+5s) = %v, %v; want none", ids(got), err)
	}
}

// testNextRunAfter: the earliest RunAfter among queued tasks only. A queued
// task without RunAfter is due already: the answer is then non-zero and no
// later than when it was queued.
func testNextRunAfter(t *testing.T, b *bundle) {
	next := func() time.Time {
		t.Helper()
		got, err := b.s.NextRunAfter(b.ctx)
		if err != nil {
			t.Fatalf("NextRunAfter: %v", err)
		}
		return got
	}
	if got := next(); !got.IsZero() {
		t.Fatalf("NextRunAfter on an empty store = %v, want zero", got)
	}
	mk := func(id string, runAfter time.Time, path ...task.State) {
		in := newTask(spec{id: id})
		in.RunAfter = runAfter
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(path...), Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	mk("validated", at(time.Second), task.StateValidated)
	if got := next(); !got.IsZero() {
		t.Fatalf("NextRunAfter with nothing queued = %v, want zero", got)
	}
	mk("x", at(2*time.Minute), task.StateValidated, task.StateQueued)
	mk("y", at(time.Minute), task.StateValidated, task.StateQueued)
	if got := next(); !got.Equal(at(time.Minute)) {
		t.Fatalf("NextRunAfter = %v, want %v", got, at(time.Minute))
	}
	b.claim("y", "w", at(time.Minute), time.Minute)
	if got := next(); !got.Equal(at(2 * time.Minute)) {
		t.Fatalf("NextRunAfter after y was claimed = %v, want %v", got, at(2*time.Minute))
	}
	mk("now", time.Time{}, task.StateValidated, task.StateQueued)
	if got := next(); got.IsZero() || got.After(t0) {
		t.Fatalf("NextRunAfter with a task queued at %v without RunAfter = %v", t0, got)
	}
}
