package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// testIdempotencyConcurrent: 100 concurrent submits under one (actor, key)
// create exactly one task; the 99 others get it back with ErrDuplicate.
func testIdempotencyConcurrent(t *testing.T, b *bundle) {
	const n = 100
	type result struct {
		id  string
		got *task.Task
		err error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("t%03d", i)
			in := newTask(spec{id: id, key: "same-key", context: "ctx"})
			in.History = []task.Message{in.Envelope.Input}
			got, err := b.s.CreateTask(b.ctx, task.CreateParams{
				Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: t0, IdempotencyTTL: time.Hour,
			})
			results[i] = result{id, got, err}
		})
	}
	wg.Wait()
	var winner string
	for _, r := range results {
		if r.err == nil {
			if winner != "" {
				t.Fatalf("both %s and %s were created under one key", winner, r.id)
			}
			winner = r.id
		}
	}
	if winner == "" {
		t.Fatal("no submit created a task")
	}
	for _, r := range results {
		if r.id == winner {
			continue
		}
		if !errors.Is(r.err, task.ErrDuplicate) {
			t.Errorf("%s: error %v, want ErrDuplicate", r.id, r.err)
			continue
		}
		if r.got == nil || r.got.ID != winner || r.got.State != task.StateQueued || len(r.got.History) != 1 {
			t.Errorf("%s: duplicate returned %s, want task %s with its history", r.id, dump(r.got), winner)
		}
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: n})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if page.TotalSize != 1 || len(page.Tasks) != 1 || page.Tasks[0].ID != winner {
		t.Errorf("ListTasks = %v (total %d), want only %s", ids(page.Tasks), page.TotalSize, winner)
	}
	log := b.audit()
	checkChain(t, log)
	for _, e := range log {
		if e.TaskID != winner {
			t.Errorf("audit entry %d names task %q, want only %q", e.Seq, e.TaskID, winner)
		}
	}
}

// testIdempotencyExpiry pins the key's life: it names its task while
// Now < creation + TTL; afterwards a submit replaces it.
func testIdempotencyExpiry(t *testing.T, b *bundle) {
	submit := func(id string, now time.Time) (*task.Task, error) {
		t.Helper()
		return b.s.CreateTask(b.ctx, task.CreateParams{
			Task: newTask(spec{id: id, key: "k"}), Steps: steps(task.StateValidated), Now: now, IdempotencyTTL: time.Minute,
		})
	}
	if _, err := submit("a", t0); err != nil {
		t.Fatalf("first submit: %v", err)
	}
	b.transition(task.TransitionParams{
		TaskID: "a", From: task.StateValidated, To: task.StateQueued, Now: at(time.Second),
		Artifacts: []task.Artifact{{ID: "x", Parts: []task.Part{task.TextPart("x")}}},
	})
	before := b.audit()
	got, err := submit("b", at(time.Minute-time.Microsecond))
	wantErr(t, "submit before the key expired", err, task.ErrDuplicate)
	// The duplicate returns the task in full: state, history, artifacts.
	if want := b.get("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("duplicate returned %s\nwant %s", dump(got), dump(want))
	}
	if _, err := b.s.GetTask(b.ctx, "b", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask(b) after a duplicate submit: %v, want ErrNotFound", err)
	}
	if after := b.audit(); len(after) != len(before) {
		t.Errorf("duplicate submit wrote %d audit entries", len(after)-len(before))
	}

	if got, err := submit("c", at(time.Minute)); err != nil || got.ID != "c" {
		t.Fatalf("submit once the key expired = %v, %v; want task c", got, err)
	}
	got, err = submit("d", at(time.Minute+time.Second))
	wantErr(t, "submit under the replaced key", err, task.ErrDuplicate)
	if got == nil || got.ID != "c" {
		t.Errorf("replaced key names %v, want c", got)
	}
}

func testIdempotencyScope(t *testing.T, b *bundle) {
	create := func(id, actor, key string, ttl time.Duration) error {
		_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: id, actor: actor, key: key}), Now: t0, IdempotencyTTL: ttl})
		return err
	}
	if err := create("a1", "alice", "k", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := create("b1", "bob", "k", time.Hour); err != nil {
		t.Errorf("same key, other actor: %v", err)
	}
	if err := create("a2", "alice", "k", 0); err != nil {
		t.Errorf("same key without IdempotencyTTL: %v", err)
	}
	if err := create("e1", "alice", "", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := create("e2", "alice", "", time.Hour); err != nil {
		t.Errorf("second submit with an empty key: %v", err)
	}
	if err := create("a3", "alice", "k", time.Hour); !errors.Is(err, task.ErrDuplicate) {
		t.Errorf("same actor and key: %v, want ErrDuplicate", err)
	}
}

// testIdempotencyPurge: purging forgets expired keys only; the tasks stay,
// and a key that is still live keeps deduplicating.
func testIdempotencyPurge(t *testing.T, b *bundle) {
	for i, id := range []string{"p1", "p2"} {
		in := newTask(spec{id: id, key: "k-" + id})
		ttl := time.Minute * time.Duration(i+1) // p1 expires at t0+1m, p2 at t0+2m
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated), Now: t0, IdempotencyTTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.s.PurgeIdempotencyKeys(b.ctx, at(90*time.Second))
	if err != nil || n != 1 {
		t.Fatalf("PurgeIdempotencyKeys = %d, %v; want 1", n, err)
	}
	if got := b.get("p1"); got.ID != "p1" {
		t.Fatalf("purging a key removed its task")
	}
	// p2's key is live: a duplicate is still refused.
	_, err = b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "p3", key: "k-p2"}), Steps: steps(task.StateValidated), Now: at(100 * time.Second), IdempotencyTTL: time.Minute})
	wantErr(t, "duplicate of a live key after a purge", err, task.ErrDuplicate)
	if n, err := b.s.PurgeIdempotencyKeys(b.ctx, at(90*time.Second)); err != nil || n != 0 {
		t.Fatalf("second purge = %d, %v; want 0", n, err)
	}
}
