package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// Parent and child tasks (task.Store.Transition's doc): a parent spawns
// children in one of its transitions, waits while one of them is
// unsettled, is queued again when one settles, and cancels the unsettled
// ones when it ends.

// child returns the CreateParams of a child id of parent for step,
// created at now, validated and queued, with its input as history and a
// submission audit entry of its own.
func (b *bundle) child(parent, id, step string, now time.Time) task.CreateParams {
	tk := newTask(spec{id: id, history: true})
	tk.Envelope.ParentTaskID, tk.Envelope.Step = parent, step
	return task.CreateParams{
		Task: tk, Steps: steps(task.StateValidated, task.StateQueued), Node: "node-1", Now: now,
		Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice", Data: json.RawMessage(`{"child":true}`)}},
	}
}

// spawn moves parent from in_progress to waiting at now, spawning kids.
func (b *bundle) spawn(parent string, now time.Time, kids ...task.CreateParams) *task.Task {
	b.t.Helper()
	return b.transition(task.TransitionParams{
		TaskID: parent, From: task.StateInProgress, To: task.StateWaiting, Reason: "waiting for children", Now: now, Spawn: kids,
	})
}

// settle ends the queued task id in state to at now with reason: canceled
// from queued, any other state through a claim.
func (b *bundle) settle(id string, to task.State, reason string, now time.Time) *task.Task {
	b.t.Helper()
	if to == task.StateCanceled {
		return b.transition(task.TransitionParams{TaskID: id, From: task.StateQueued, To: to, Reason: reason, Now: now})
	}
	b.claim(id, "worker-"+id, now, time.Minute)
	return b.transition(task.TransitionParams{TaskID: id, From: task.StateInProgress, To: to, LeaseOwner: "worker-" + id, Reason: reason, Now: now})
}

// audited fails the test unless the audit log is one valid chain in which
// every record of the tasks ids has its transition entry.
func (b *bundle) audited(ids ...string) {
	b.t.Helper()
	log := b.audit()
	checkChain(b.t, log)
	type key struct {
		id  string
		seq int
	}
	entries := map[key]task.AuditEntry{}
	for _, e := range log {
		if e.Kind != task.AuditTransition {
			continue
		}
		var r task.Record
		if err := json.Unmarshal(e.Data, &r); err != nil {
			b.t.Fatalf("audit entry %d: %v", e.Seq, err)
		}
		entries[key{r.TaskID, r.Seq}] = e
	}
	for _, id := range ids {
		for _, r := range b.records(id) {
			e, ok := entries[key{id, r.Seq}]
			if !ok {
				b.t.Errorf("record %d of %s has no audit entry", r.Seq, id)
				continue
			}
			transitionEntry(b.t, e, r)
		}
	}
}

// lastRecord returns the newest record of id.
func (b *bundle) lastRecord(id string) task.Record {
	b.t.Helper()
	recs := b.records(id)
	if len(recs) == 0 {
		b.t.Fatalf("%s has no records", id)
	}
	return recs[len(recs)-1]
}

func (b *bundle) children(p task.ListParams) *task.TaskPage {
	b.t.Helper()
	page, err := b.s.ListTasks(b.ctx, p)
	if err != nil {
		b.t.Fatalf("ListTasks(%+v): %v", p, err)
	}
	return page
}

// testChildrenSpawn: a spawn creates each child as CreateTask would (state,
// envelope, history, records, audit), counts them on the parent, and the
// children are listed oldest first with the usual paging.
func testChildrenSpawn(t *testing.T, b *bundle) {
	b.reach("p", task.StateInProgress)
	// A first spawn, then a second one: children are created at the time
	// of the transition that spawns them (whatever Now their CreateParams
	// say), and listed in that order, then by ID.
	b.spawn("p", at(time.Second), b.child("p", "p/k3", "ship", t0))
	b.transition(task.TransitionParams{TaskID: "p", From: task.StateWaiting, To: task.StateQueued, NewTurn: true, Now: at(2 * time.Second)})
	b.claim("p", "worker-1", at(2*time.Second), time.Minute)
	kids := []task.CreateParams{
		b.child("p", "p/k2", "test", at(3*time.Second)),
		b.child("p", "p/k1", "build", t0),
	}
	before := b.get("p")
	got := b.transition(task.TransitionParams{
		TaskID: "p", From: task.StateInProgress, To: task.StateWaiting, LeaseOwner: "worker-1",
		Reason: "waiting for children", Now: at(4 * time.Second), Spawn: kids,
	})
	if got.State != task.StateWaiting || got.Children != 3 || got.Seq != before.Seq+1 || got.LeaseOwner != "" || !got.LeaseExpires.IsZero() {
		t.Errorf("spawning transition returned %s, want waiting with 3 children and no lease", dump(got))
	}
	if stored := b.get("p"); stored.State != task.StateWaiting || stored.Children != 3 || stored.Seq != got.Seq {
		t.Errorf("stored parent %s", dump(stored))
	}
	for i, k := range kids {
		id := k.Task.ID
		g := b.get(id)
		if g.State != task.StateQueued || g.Envelope.ParentTaskID != "p" || g.Envelope.Step != k.Task.Envelope.Step ||
			!g.CreatedAt.Equal(at(4*time.Second)) || g.Children != 0 || g.Seq != 2 || g.Agent != "echo" || g.MaxAttempts != 3 {
			t.Errorf("child %d: %s", i, dump(g))
		}
		if !reflect.DeepEqual(g.Envelope, k.Task.Envelope) || !reflect.DeepEqual(g.History, k.Task.History) {
			t.Errorf("child %d: envelope %s and history %s, want %s and %s", i, dump(g.Envelope), dump(g.History), dump(k.Task.Envelope), dump(k.Task.History))
		}
		recs := b.records(id)
		if len(recs) != 2 || recs[0].To != task.StateValidated || recs[1].To != task.StateQueued || !recs[1].At.Equal(at(4*time.Second)) {
			t.Errorf("child %d records %s", i, dump(recs))
		}
	}
	submitted := 0
	for _, e := range b.audit() {
		if e.Kind == task.AuditSubmitted && string(e.Data) == `{"child":true}` {
			submitted++
		}
	}
	if submitted != 3 {
		t.Errorf("%d children's submission entries sealed, want 3", submitted)
	}

	// Oldest first, two per page; the token goes on with the children.
	page := b.children(task.ListParams{ParentTaskID: "p", PageSize: 2, HistoryLength: -1})
	if !slices.Equal(ids(page.Tasks), []string{"p/k3", "p/k1"}) || page.TotalSize != 3 || page.NextPageToken == "" {
		t.Fatalf("children page 1 = %v (total %d, token %q), want [p/k3 p/k1] of 3", ids(page.Tasks), page.TotalSize, page.NextPageToken)
	}
	if len(page.Tasks[0].History) != 1 {
		t.Errorf("listed child history %s", dump(page.Tasks[0].History))
	}
	page = b.children(task.ListParams{ParentTaskID: "p", PageSize: 2, PageToken: page.NextPageToken})
	if !slices.Equal(ids(page.Tasks), []string{"p/k2"}) || page.TotalSize != 3 || page.NextPageToken != "" {
		t.Fatalf("children page 2 = %v (total %d, token %q), want [p/k2], no token", ids(page.Tasks), page.TotalSize, page.NextPageToken)
	}
	// Other filters combine.
	b.claim("p/k2", "w", at(5*time.Second), time.Minute)
	page = b.children(task.ListParams{ParentTaskID: "p", States: []task.State{task.StateQueued}})
	if !slices.Equal(ids(page.Tasks), []string{"p/k3", "p/k1"}) || page.TotalSize != 2 {
		t.Errorf("queued children = %v (total %d), want [p/k3 p/k1]", ids(page.Tasks), page.TotalSize)
	}
	page = b.children(task.ListParams{ParentTaskID: "p", ContextID: "ctx-p/k1"})
	if !slices.Equal(ids(page.Tasks), []string{"p/k1"}) || page.TotalSize != 1 {
		t.Errorf("children in context ctx-p/k1 = %v (total %d)", ids(page.Tasks), page.TotalSize)
	}
	if page := b.children(task.ListParams{ParentTaskID: "p/k1"}); len(page.Tasks) != 0 || page.TotalSize != 0 {
		t.Errorf("children of a childless task = %v", ids(page.Tasks))
	}
	// Without ParentTaskID: newest first, as always, the parent's count
	// scanned.
	page = b.children(task.ListParams{})
	if !slices.Equal(ids(page.Tasks), []string{"p/k2", "p/k1", "p/k3", "p"}) || page.Tasks[3].Children != 3 {
		t.Errorf("all tasks = %v, parent %s", ids(page.Tasks), dump(page.Tasks[len(page.Tasks)-1]))
	}
	b.audited("p", "p/k1", "p/k2", "p/k3")
}

// testChildrenDuplicateStep: a step the parent's children already use, or
// one given twice, fails the whole transition with ErrDuplicate and
// writes nothing.
func testChildrenDuplicateStep(t *testing.T, b *bundle) {
	b.reach("p", task.StateInProgress)
	b.spawn("p", at(time.Second), b.child("p", "p/a", "a", at(time.Second)))
	b.transition(task.TransitionParams{TaskID: "p", From: task.StateWaiting, To: task.StateQueued, NewTurn: true, Now: at(2 * time.Second)})
	b.claim("p", "worker-1", at(2*time.Second), time.Minute)
	for name, kids := range map[string][]task.CreateParams{
		"a step used before": {b.child("p", "p/b", "b", at(3*time.Second)), b.child("p", "p/a2", "a", at(3*time.Second))},
		"a step given twice": {b.child("p", "p/c", "c", at(3*time.Second)), b.child("p", "p/c2", "c", at(3*time.Second))},
	} {
		before := b.snap("p")
		_, err := b.s.Transition(b.ctx, task.TransitionParams{
			TaskID: "p", From: task.StateInProgress, To: task.StateWaiting, LeaseOwner: "worker-1", Now: at(3 * time.Second), Spawn: kids,
		})
		wantErr(t, "spawn with "+name, err, task.ErrDuplicate)
		b.unchanged("p", before)
		for _, k := range kids {
			if _, err := b.s.GetTask(b.ctx, k.Task.ID, 0); !errors.Is(err, task.ErrNotFound) {
				t.Errorf("%s: child %s of the refused spawn: %v, want ErrNotFound", name, k.Task.ID, err)
			}
		}
	}
	if got := b.get("p"); got.State != task.StateInProgress || got.Children != 1 {
		t.Errorf("parent after refused spawns: %s", dump(got))
	}
	if page := b.children(task.ListParams{ParentTaskID: "p"}); !slices.Equal(ids(page.Tasks), []string{"p/a"}) {
		t.Errorf("children after refused spawns = %v", ids(page.Tasks))
	}
}

// testChildrenSpawnRefused: a spawn from a state other than in_progress,
// or of a child that names another parent or no step, is invalid.
func testChildrenSpawnRefused(t *testing.T, b *bundle) {
	b.reach("q", task.StateQueued)
	b.reach("p", task.StateInProgress)
	noStep := b.child("p", "p/y", "", t0)
	for name, p := range map[string]task.TransitionParams{
		"from queued": {TaskID: "q", From: task.StateQueued, To: task.StateCanceled, Spawn: []task.CreateParams{b.child("q", "q/a", "a", t0)}},
		"other parent": {TaskID: "p", From: task.StateInProgress, To: task.StateWaiting,
			Spawn: []task.CreateParams{b.child("p", "p/a", "a", t0), b.child("other", "p/x", "x", t0)}},
		"no step": {TaskID: "p", From: task.StateInProgress, To: task.StateWaiting, Spawn: []task.CreateParams{noStep}},
	} {
		p.Now = at(time.Second)
		before := b.snap(p.TaskID)
		_, err := b.s.Transition(b.ctx, p)
		if task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s: error %v (code %q), want invalid_argument", name, err, task.ErrorCode(err))
		}
		b.unchanged(p.TaskID, before)
		for _, k := range p.Spawn {
			if _, err := b.s.GetTask(b.ctx, k.Task.ID, 0); !errors.Is(err, task.ErrNotFound) {
				t.Errorf("%s: child %s: %v, want ErrNotFound", name, k.Task.ID, err)
			}
		}
	}
}

// testChildrenWaitNoChild: a move to waiting when no child is unsettled
// goes on to queued at once, in a second record, as a new turn runnable
// now.
func testChildrenWaitNoChild(t *testing.T, b *bundle) {
	check := func(id string, got *task.Task, now time.Time, children int) {
		t.Helper()
		if got.State != task.StateQueued || got.TurnAttempt() != 0 || got.TurnStart != 1 || !got.RunAfter.Equal(now) ||
			got.Children != children || got.LeaseOwner != "" || got.Reason == "" {
			t.Errorf("%s: move to waiting returned %s, want queued, a new turn, run after %v", id, dump(got), now)
		}
		if stored := b.get(id); stored.State != task.StateQueued || stored.Seq != got.Seq || stored.TurnStart != 1 || !stored.RunAfter.Equal(now) {
			t.Errorf("%s: stored %s", id, dump(stored))
		}
		recs := b.records(id)
		n := len(recs)
		w, q := recs[n-2], recs[n-1]
		if w.From != task.StateInProgress || w.To != task.StateWaiting || w.Reason != "waiting for children" ||
			q.From != task.StateWaiting || q.To != task.StateQueued || q.Reason != got.Reason || !q.At.Equal(now) || q.Attempt != 1 || q.Seq != got.Seq {
			t.Errorf("%s: last records %s", id, dump(recs[n-2:]))
		}
	}
	// No child at all.
	b.reach("a", task.StateInProgress)
	check("a", b.spawn("a", at(time.Second)), at(time.Second), 0)

	// The one child spawned is refused at once (failed).
	b.reach("b", task.StateInProgress)
	k := b.child("b", "b/k", "k", at(time.Second))
	k.Steps = []task.Step{{To: task.StateValidated}, {To: task.StateFailed, Rejected: true, Reason: "denied"}}
	check("b", b.spawn("b", at(time.Second), k), at(time.Second), 1)
	if g := b.get("b/k"); g.State != task.StateFailed || !g.Rejected {
		t.Errorf("refused child %s", dump(g))
	}
	b.audited("a", "b", "b/k")
}

// testChildrenWake: a child entering each Terminal state queues its
// waiting parent again (a new turn, runnable now) with a reason naming
// the child, its step, its state and, unless it succeeded, its reason. A
// sibling settling while the parent is no longer waiting changes nothing.
func testChildrenWake(t *testing.T, b *bundle) {
	for i, st := range []task.State{task.StateSucceeded, task.StateFailed, task.StateDeadLetter, task.StateCanceled} {
		p := fmt.Sprintf("p%d", i)
		x, y := p+"/x", p+"/y"
		b.reach(p, task.StateInProgress)
		b.spawn(p, at(time.Second), b.child(p, x, "x", at(time.Second)), b.child(p, y, "y", at(time.Second)))
		now := at(2 * time.Second)
		b.settle(x, st, "boom", now)
		want := fmt.Sprintf(`child %s (step "x") %s`, x, st)
		if st != task.StateSucceeded {
			want += ": boom"
		}
		got := b.get(p)
		if got.State != task.StateQueued || got.Reason != want || got.TurnAttempt() != 0 || got.TurnStart != got.Attempt ||
			!got.RunAfter.Equal(now) || got.ErrorCode != "" || got.Children != 2 {
			t.Errorf("%s after its child %s: %s, want queued with reason %q", p, st, dump(got), want)
		}
		rec := b.lastRecord(p)
		if rec.From != task.StateWaiting || rec.To != task.StateQueued || rec.Reason != want || !rec.At.Equal(now) || rec.Seq != got.Seq || rec.Attempt != 1 {
			t.Errorf("%s: wake record %s", p, dump(rec))
		}
		b.settle(y, task.StateSucceeded, "", at(3*time.Second))
		if again := b.get(p); again.State != task.StateQueued || again.Seq != got.Seq || again.Reason != want {
			t.Errorf("%s after its second child settled: %s, want it unchanged", p, dump(again))
		}
		b.audited(p, x, y)
	}
}

// testChildrenParentBusy: a child settling while its parent runs leaves
// the parent alone; the parent's move to waiting then finds no child left.
func testChildrenParentBusy(t *testing.T, b *bundle) {
	b.reach("p", task.StateInProgress)
	b.spawn("p", at(time.Second), b.child("p", "p/x", "x", at(time.Second)), b.child("p", "p/y", "y", at(time.Second)))
	b.settle("p/x", task.StateSucceeded, "", at(2*time.Second))
	b.claim("p", "worker-1", at(3*time.Second), time.Minute)
	before := b.get("p")
	b.settle("p/y", task.StateFailed, "boom", at(4*time.Second))
	if got := b.get("p"); !reflect.DeepEqual(got, before) {
		t.Errorf("parent in progress changed when its child settled:\nbefore %s\nafter  %s", dump(before), dump(got))
	}
	got := b.transition(task.TransitionParams{TaskID: "p", From: task.StateInProgress, To: task.StateWaiting, LeaseOwner: "worker-1", Now: at(5 * time.Second)})
	if got.State != task.StateQueued || got.TurnAttempt() != 0 || got.Attempt != 2 || !got.RunAfter.Equal(at(5*time.Second)) {
		t.Errorf("move to waiting with every child settled returned %s, want queued", dump(got))
	}
	b.audited("p", "p/x", "p/y")
}

// testChildrenCascade: a parent entering a Terminal state cancels its
// unsettled descendants, each with a reason naming its parent, clears
// their leases and leaves settled children alone; nobody is woken.
func testChildrenCascade(t *testing.T, b *bundle) {
	b.reach("p", task.StateInProgress)
	b.spawn("p", at(time.Second), b.child("p", "p/a", "a", at(time.Second)), b.child("p", "p/b", "b", at(time.Second)),
		b.child("p", "p/c", "c", at(time.Second)))
	// p/a is a parent too: waiting for g1 (queued) and g2 (running).
	b.claim("p/a", "wa", at(2*time.Second), time.Minute)
	b.transition(task.TransitionParams{TaskID: "p/a", From: task.StateInProgress, To: task.StateWaiting, LeaseOwner: "wa", Now: at(2 * time.Second),
		Spawn: []task.CreateParams{b.child("p/a", "p/a/g1", "g1", at(2*time.Second)), b.child("p/a", "p/a/g2", "g2", at(2*time.Second))}})
	b.claim("p/a/g2", "wg", at(3*time.Second), time.Minute)
	b.settle("p/b", task.StateSucceeded, "", at(4*time.Second))
	b.claim("p", "worker-1", at(5*time.Second), time.Minute)
	settled := b.snap("p/b")

	now := at(6 * time.Second)
	got := b.transition(task.TransitionParams{TaskID: "p", From: task.StateInProgress, To: task.StateCanceled, LeaseOwner: "worker-1", Reason: "stop", Now: now})
	if got.State != task.StateCanceled || got.Reason != "stop" {
		t.Errorf("canceled parent returned %s", dump(got))
	}
	fromP, fromA := "parent p canceled: stop", "parent p/a canceled: parent p canceled: stop"
	for id, want := range map[string]struct {
		from   task.State
		reason string
	}{
		"p/a": {task.StateWaiting, fromP}, "p/c": {task.StateQueued, fromP},
		"p/a/g1": {task.StateQueued, fromA}, "p/a/g2": {task.StateInProgress, fromA},
	} {
		g := b.get(id)
		if g.State != task.StateCanceled || g.Reason != want.reason || g.LeaseOwner != "" || !g.LeaseExpires.IsZero() || !g.UpdatedAt.Equal(now) {
			t.Errorf("%s after its parent's cancel: %s, want canceled, reason %q, no lease", id, dump(g), want.reason)
		}
		rec := b.lastRecord(id)
		if rec.From != want.from || rec.To != task.StateCanceled || rec.Reason != want.reason || !rec.At.Equal(now) || rec.Seq != g.Seq {
			t.Errorf("%s: cancel record %s", id, dump(rec))
		}
	}
	if after := b.get("p/b"); !reflect.DeepEqual(after, settled.task) {
		t.Errorf("settled child changed:\nbefore %s\nafter  %s", dump(settled.task), dump(after))
	}
	// Canceling p/a did not wake p, nor canceling g1 and g2 p/a.
	if stored := b.get("p"); stored.State != task.StateCanceled || stored.Seq != got.Seq {
		t.Errorf("parent after the cancel of its children: %s", dump(stored))
	}

	// A parent that succeeds cancels what is left, naming its state.
	b.reach("q", task.StateInProgress)
	b.spawn("q", at(time.Second), b.child("q", "q/x", "x", at(time.Second)), b.child("q", "q/y", "y", at(time.Second)))
	b.settle("q/x", task.StateSucceeded, "", at(2*time.Second))
	b.claim("q", "worker-1", at(3*time.Second), time.Minute)
	b.transition(task.TransitionParams{TaskID: "q", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-1", Reason: "done", Now: at(4 * time.Second)})
	if g := b.get("q/y"); g.State != task.StateCanceled || g.Reason != "parent q succeeded" {
		t.Errorf("child of a succeeded parent: %s", dump(g))
	}
	if g := b.get("q"); g.State != task.StateSucceeded {
		t.Errorf("succeeded parent: %s", dump(g))
	}
	b.audited("p", "p/a", "p/b", "p/c", "p/a/g1", "p/a/g2", "q", "q/x", "q/y")
}

// raceFamilies sets up n parents for round r, each in_progress (leased to
// worker-1) with one child "c" running (leased to worker-c) and one child
// "x" already succeeded, then runs parent(p) and child(p) for every parent
// p at once and fails the test on the first error either returns. It
// returns the parents.
func (b *bundle) raceFamilies(t *testing.T, r, n int, now time.Time, parent, child func(p string) error) []string {
	var ps []string
	for f := range n {
		p := fmt.Sprintf("r%d/f%d", r, f)
		ps = append(ps, p)
		b.queued(p, now)
		b.claim(p, "worker-1", now, time.Hour)
		b.spawn(p, now, b.child(p, p+"/c", "c", now), b.child(p, p+"/x", "x", now))
		b.settle(p+"/x", task.StateSucceeded, "", now)
		b.claim(p, "worker-1", now, time.Hour)
		b.claim(p+"/c", "worker-c", now, time.Hour)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for _, p := range ps {
		for _, move := range []func(string) error{parent, child} {
			wg.Go(func() {
				if err := move(p); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return ps
}

// childSucceeds is the race's child move: its worker ends it succeeded.
// With tolerate, losing the race (the cascade canceled it) is no error.
func (b *bundle) childSucceeds(now time.Time, tolerateConflict bool) func(p string) error {
	return func(p string) error {
		_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: p + "/c", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "worker-c", Now: now})
		if err != nil && !(tolerateConflict && errors.Is(err, task.ErrStateConflict)) {
			return fmt.Errorf("%s/c to succeeded: %w", p, err)
		}
		return nil
	}
}

// testChildrenWaitRace: a parent's move to waiting races its last
// unsettled child's settling. Whichever commits first, the parent ends
// queued: woken by the child, or finding no child left to wait for.
func testChildrenWaitRace(t *testing.T, b *bundle) {
	const rounds, families = 50, 4
	for r := range rounds {
		now := at(time.Duration(r) * time.Minute)
		ps := b.raceFamilies(t, r, families, now, func(p string) error {
			_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: p, From: task.StateInProgress, To: task.StateWaiting, LeaseOwner: "worker-1", Now: now})
			if err != nil {
				return fmt.Errorf("%s to waiting: %w", p, err)
			}
			return nil
		}, b.childSucceeds(now, false))
		for _, p := range ps {
			if got := b.get(p); got.State != task.StateQueued || got.TurnAttempt() != 0 {
				t.Fatalf("round %d: %s ended %s (records %s), want queued: a wake-up was lost", r, p, got.State, dump(b.records(p)))
			}
		}
	}
	checkChain(t, b.audit())
}

// testChildrenCancelRace: a parent's cancel races its child's settle.
// Whichever commits first, the parent ends canceled and is not woken, and
// the child ends Terminal: settled by its worker, or canceled by the
// cascade (its worker's transition then conflicts). On PostgreSQL the two
// lock each other's rows in opposite orders; a deadlock that follows is
// retried, never reported.
func testChildrenCancelRace(t *testing.T, b *bundle) {
	const rounds, families = 5, 3
	for r := range rounds {
		now := at(time.Duration(r) * time.Minute)
		ps := b.raceFamilies(t, r, families, now, func(p string) error {
			_, err := b.s.Transition(b.ctx, task.TransitionParams{TaskID: p, From: task.StateInProgress, To: task.StateCanceled, LeaseOwner: "worker-1", Reason: "stop", Now: now})
			if err != nil {
				return fmt.Errorf("cancel %s: %w", p, err)
			}
			return nil
		}, b.childSucceeds(now, true))
		for _, p := range ps {
			if got := b.get(p); got.State != task.StateCanceled || got.Reason != "stop" {
				t.Fatalf("round %d: parent %s ended %s", r, p, dump(got))
			}
			if got := b.get(p + "/c"); got.State != task.StateSucceeded && (got.State != task.StateCanceled || got.Reason != "parent "+p+" canceled: stop") {
				t.Fatalf("round %d: child %s/c ended %s", r, p, dump(got))
			}
		}
	}
	checkChain(t, b.audit())
}
