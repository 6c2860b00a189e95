package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// sealAs returns write functions that seal one audit entry at now by an
// actor, then return after.
func sealAs(now time.Time) func(actor string, after error) func(*txn) error {
	return func(actor string, after error) func(*txn) error {
		return func(x *txn) error {
			if err := x.seal(now, []task.AuditInput{{Kind: task.AuditKind("test"), Actor: actor}}); err != nil {
				return err
			}
			return after
		}
	}
}

// TestBatchIsolatesFailures runs batches straight through runBatch (what the
// lead does with requests that queued up together) and checks that a
// function that fails, or undoes itself, leaves nothing behind while the
// others in its transaction commit, with the audit chain intact. Each batch
// first runs without savepoints; these cases exercise the fallback that
// runs it again with them.
func TestBatchIsolatesFailures(t *testing.T) {
	t.Parallel()
	s := specStore(t, 0) // the default hold
	boom := errors.New("boom")
	seal := sealAs(driver.Norm(time.Now()))
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	for _, tc := range []struct {
		name  string
		fns   []func(*txn) error
		ctxs  []context.Context // nil: background
		want  []error           // per function; nil means it committed
		actor []string          // actors whose entries must be stored, in order
	}{
		{
			name:  "all succeed",
			fns:   []func(*txn) error{seal("a", nil), seal("b", nil), seal("c", nil)},
			want:  []error{nil, nil, nil},
			actor: []string{"a", "b", "c"},
		},
		{
			name:  "one fails after writing",
			fns:   []func(*txn) error{seal("d", nil), seal("e", boom), seal("f", nil)},
			want:  []error{nil, boom, nil},
			actor: []string{"d", "f"},
		},
		{
			name:  "one undoes itself",
			fns:   []func(*txn) error{seal("g", errRollback), seal("h", nil)},
			want:  []error{nil, nil},
			actor: []string{"h"},
		},
		{
			name:  "a canceled caller is skipped",
			fns:   []func(*txn) error{seal("i", nil), seal("j", nil)},
			ctxs:  []context.Context{canceled, nil},
			want:  []error{context.Canceled, nil},
			actor: []string{"j"},
		},
	} {
		before, err := s.AuditEntries(t.Context(), 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		batch := make([]*writeReq, len(tc.fns))
		for i, fn := range tc.fns {
			ctx := context.Background()
			if tc.ctxs != nil && tc.ctxs[i] != nil {
				ctx = tc.ctxs[i]
			}
			batch[i] = &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
		}
		s.takeLead(false)
		s.runBatch(batch)
		s.passLead()
		for i, r := range batch {
			got := <-r.done
			if !errors.Is(got, tc.want[i]) || (got == nil) != (tc.want[i] == nil) {
				t.Errorf("%s: function %d answered %v, want %v", tc.name, i, got, tc.want[i])
			}
		}
		after, err := s.AuditEntries(t.Context(), 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		var actors []string
		for _, e := range after[len(before):] {
			actors = append(actors, e.Actor)
		}
		if fmt.Sprint(actors) != fmt.Sprint(tc.actor) {
			t.Errorf("%s: stored entries by %v, want %v", tc.name, actors, tc.actor)
		}
	}
	res, err := audit.Verify(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Entries != 7 {
		t.Fatalf("audit chain broken after the batches: %+v", res)
	}
}

// A write function that panics (a bug) fails its caller with an error and
// is undone; the writer's turn is given back, so the writes after it, and
// those of the same group commit, go on.
func TestPanickingWriteFailsAloneAndFreesTheWriter(t *testing.T) {
	t.Parallel()
	s := specStore(t, 0) // the default hold
	seal := sealAs(driver.Norm(time.Now()))
	panicking := func(x *txn) error {
		if err := seal("boom", nil)(x); err != nil {
			return err
		}
		panic("write function bug")
	}
	// Alone, then in a group with others (straight through a turn).
	if err := s.inWriteTx(t.Context(), panicking); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panicking write answered %v, want an error saying it panicked", err)
	}
	batch := []*writeReq{
		{ctx: context.Background(), fn: seal("a", nil), done: make(chan error, 1)},
		{ctx: context.Background(), fn: panicking, done: make(chan error, 1)},
		{ctx: context.Background(), fn: seal("b", nil), done: make(chan error, 1)},
	}
	s.takeLead(false)
	s.runBatch(batch)
	s.passLead()
	for i, want := range []bool{true, false, true} {
		if err := <-batch[i].done; (err == nil) != want {
			t.Errorf("function %d of the group answered %v", i, err)
		}
	}
	if err := s.inWriteTx(t.Context(), seal("c", nil)); err != nil {
		t.Fatalf("a write after the panics: %v", err)
	}
	entries, err := s.AuditEntries(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actors []string
	for _, e := range entries {
		actors = append(actors, e.Actor)
	}
	if fmt.Sprint(actors) != "[a b c]" {
		t.Fatalf("stored entries by %v, want [a b c] (the panicking writes undone)", actors)
	}
	if res, err := audit.Verify(t.Context(), s); err != nil || !res.OK {
		t.Fatalf("audit chain after the panics: %+v, %v", res, err)
	}
}
