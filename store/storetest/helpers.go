package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// Helpers that drivers' own tests and benchmarks share: they work through
// task.Store only, like the suite.

// EchoTask returns a new task id for alice's echo agent, at most 3
// attempts, with the envelope's input ("hello") as its History.
func EchoTask(id string) *task.Task {
	in := &task.Task{ID: id, ContextID: "c", Agent: "echo", MaxAttempts: 3, Envelope: task.Envelope{
		TaskID: id, Actor: "alice", Action: "echo",
		Input: task.Message{ID: "m-" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart("hello")}},
	}}
	in.History = []task.Message{in.Envelope.Input}
	return in
}

// MustCreate creates EchoTask(id) in s, queued (requested → validated →
// queued) at now, or fails t.
func MustCreate(t testing.TB, s task.Store, id string, now time.Time) {
	t.Helper()
	_, err := s.CreateTask(context.Background(), task.CreateParams{
		Task:  EchoTask(id),
		Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
		Now:   now.UTC().Truncate(time.Microsecond),
	})
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", id, err)
	}
}

// BenchLifecycle measures one task's whole path through s: CreateTask
// (requested → validated → queued, with an idempotency key), Claim,
// Transition to succeeded: 3 transactions, 4 records and 5 audit entries
// per task. With parallel, the loop runs under b.RunParallel.
func BenchLifecycle(b *testing.B, s task.Store, parallel bool) {
	var n atomic.Int64
	one := func() error {
		ctx := context.Background()
		id := fmt.Sprintf("t%d", n.Add(1))
		now := time.Now().UTC().Truncate(time.Microsecond)
		in := EchoTask(id)
		in.Envelope.IdempotencyKey = id
		if _, err := s.CreateTask(ctx, task.CreateParams{
			Task: in, Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   now, IdempotencyTTL: time.Hour,
		}); err != nil {
			return err
		}
		got, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id})
		if err != nil {
			return err
		}
		if len(got) != 1 {
			return fmt.Errorf("claimed %d tasks", len(got))
		}
		_, err = s.Transition(ctx, task.TransitionParams{
			TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w", Now: now,
			Messages:  []task.Message{{ID: "r-" + id, Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hello")}}},
			Artifacts: []task.Artifact{{ID: "a", Parts: []task.Part{task.TextPart("hello")}}},
		})
		return err
	}
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			if err := one(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := one(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// ClaimAll runs workers claimers on each of stores until each Claim
// returns no task, and returns which owner claimed each task. params(s,
// w, i) is the i-th ClaimParams of worker w on stores[s] (Owner included).
// It fails t on a Claim error, on a task claimed twice, and unless want
// tasks were claimed.
func ClaimAll(t *testing.T, stores []task.Store, workers, want int, params func(s, w, i int) task.ClaimParams) map[string]string {
	t.Helper()
	var (
		mu      sync.Mutex
		claimed = map[string]string{}
		dups    []string
		wg      sync.WaitGroup
	)
	errs := make(chan error, len(stores)*workers)
	for n, s := range stores {
		for w := range workers {
			wg.Go(func() {
				for i := 0; ; i++ {
					p := params(n, w, i)
					got, err := s.Claim(t.Context(), p)
					if err != nil {
						errs <- fmt.Errorf("%s: Claim: %w", p.Owner, err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, tk := range got {
						if prev, ok := claimed[tk.ID]; ok {
							dups = append(dups, fmt.Sprintf("%s by %s and %s", tk.ID, prev, p.Owner))
						}
						claimed[tk.ID] = p.Owner
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(dups) > 0 {
		t.Fatalf("tasks claimed twice: %v", dups)
	}
	if len(claimed) != want {
		t.Fatalf("%d tasks claimed, want %d", len(claimed), want)
	}
	return claimed
}

// UseAfterClose closes s and fails t unless reading, and appending to the
// audit log, are errors afterwards.
func UseAfterClose(t *testing.T, s task.Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NextRunAfter(ctx); err == nil {
		t.Fatal("NextRunAfter after Close: no error")
	}
	if _, err := s.GetTask(ctx, "x", 0); err == nil {
		t.Fatal("GetTask after Close: no error")
	}
	if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: task.AuditPolicy}}); err == nil {
		t.Fatal("AppendAudit after Close: no error")
	}
}

// InvalidArguments fails t unless s refuses malformed calls (no task, zero
// Now, Rejected on a step that is not failed, Claim without owner or
// lease, audit Data that is not JSON) with task.CodeInvalidArgument and
// writes nothing for them. s must be new and empty.
func InvalidArguments(t *testing.T, s task.Store) {
	t.Helper()
	ctx := t.Context()
	for name, err := range map[string]error{
		"create nil task": func() error { _, err := s.CreateTask(ctx, task.CreateParams{Now: time.Now()}); return err }(),
		"create zero now": func() error {
			_, err := s.CreateTask(ctx, task.CreateParams{Task: &task.Task{ID: "x"}})
			return err
		}(),
		"rejected not failed": func() error {
			_, err := s.CreateTask(ctx, task.CreateParams{Task: &task.Task{ID: "x"}, Now: time.Now(), Steps: []task.Step{{To: task.StateValidated, Rejected: true}}})
			return err
		}(),
		"claim no owner": func() error {
			_, err := s.Claim(ctx, task.ClaimParams{Now: time.Now(), LeaseFor: time.Second})
			return err
		}(),
		"claim no lease": func() error {
			_, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: time.Now()})
			return err
		}(),
		"audit bad json": s.AppendAudit(ctx, []task.AuditInput{{Kind: "k", Data: []byte("{")}}),
		"create bad audit json": func() error {
			_, err := s.CreateTask(ctx, task.CreateParams{Task: EchoTask("y"), Now: time.Now(), Audit: []task.AuditInput{{Kind: "k", Data: []byte("{")}}})
			return err
		}(),
	} {
		if task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s: error %v (code %q), want invalid_argument", name, err, task.ErrorCode(err))
		}
	}
	if log, err := s.AuditEntries(ctx, 0, 10); err != nil || len(log) != 0 {
		t.Errorf("audit after refused calls: %d entries, %v", len(log), err)
	}
	if _, err := s.GetTask(ctx, "y", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("task of a refused create: %v, want ErrNotFound", err)
	}
}

// CommittedCalls records the calls of a CreateParams.Committed: pass its
// Fn.
type CommittedCalls struct {
	n   atomic.Int32
	err atomic.Value
}

// Fn is the Committed function to pass.
func (c *CommittedCalls) Fn(err error) {
	c.n.Add(1)
	if err != nil {
		c.err.Store(err)
	}
}

// Calls returns how many times Fn was called.
func (c *CommittedCalls) Calls() int { return int(c.n.Load()) }

// Check fails t unless Fn was called exactly once, with an error if and
// only if wantErr.
func (c *CommittedCalls) Check(t testing.TB, wantErr bool) {
	t.Helper()
	if n := c.Calls(); n != 1 {
		t.Fatalf("Committed called %d times, want once", n)
	}
	err, _ := c.err.Load().(error)
	if (err != nil) != wantErr {
		t.Fatalf("Committed(%v), want an error: %v", err, wantErr)
	}
}

// SpeculativeParams are the CreateParams of a blocking submission of task
// id on a node with a free worker: alice's echo task under the key "m-"+id,
// with its input as History and a task.submitted audit entry, created
// through validated and queued, claimed by "w1" on "n1" for a minute, and
// speculative, reporting to committed.
func SpeculativeParams(id string, committed func(error)) task.CreateParams {
	msg := task.Message{ID: "m-" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}}
	return task.CreateParams{
		Task: &task.Task{ID: id, ContextID: "c-" + id, Agent: "echo", MaxAttempts: 3, Envelope: task.Envelope{
			TaskID: id, Actor: "alice", Action: "echo", IdempotencyKey: "m-" + id, Input: msg,
		}, History: []task.Message{msg}},
		Steps:          []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
		Audit:          []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
		Now:            time.Now().UTC().Truncate(time.Microsecond),
		IdempotencyTTL: time.Hour,
		Claim:          &task.ClaimParams{Owner: "w1", Node: "n1", LeaseFor: time.Minute},
		Speculative:    true,
		Committed:      committed,
	}
}
