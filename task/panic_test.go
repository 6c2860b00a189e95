package task_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// An agent that panics fails its attempt, which is recorded and retried
// like any other failure, and the process goes on: on a worker's
// goroutine (Submit) as on the caller's (SubmitAndWait, which runs the
// attempt it claimed itself). Without the recovery the first case ends
// the test binary.
func TestPanickingAgentFailsItsAttempt(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		calls.Add(1)
		if strings.HasPrefix(req.Message.Parts[0].Text, "panic") {
			var m map[string]int
			m["agent bug"]++ // assignment to a nil map
		}
		if req.Attempt == 1 {
			panic("agent bug on the first attempt")
		}
		return &task.Result{Message: &task.Message{Parts: []task.Part{task.TextPart("ok")}}}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "p", Runner: runner,
		Retry: task.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}})

	// A worker's goroutine: the first attempt panics, the second succeeds.
	res, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("p", "a", "retried")})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("task after a panicking first attempt: state %s, attempt %d; want succeeded at attempt 2", got.State, got.Attempt)
	}
	recs, err := b.coord.Timeline(context.Background(), got.ID)
	if err != nil {
		t.Fatal(err)
	}
	var failed *task.Record
	for i := range recs {
		if recs[i].From == task.StateInProgress && recs[i].To == task.StateQueued {
			failed = &recs[i]
		}
	}
	if failed == nil || failed.ErrorCode != task.CodeAgentFailed || failed.Reason != "the agent panicked: agent bug on the first attempt" {
		t.Fatalf("the panicking attempt's record: %+v; want in_progress → queued, agent_failed, the panic's value", failed)
	}

	// The caller's goroutine, every attempt panicking (a runtime error):
	// the caller is answered the dead-lettered task, the worker slot is
	// given back.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Envelope: envelope("p", "a", "panic always")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Task.State != task.StateQueued && out.Task.State != task.StateDeadLetter {
		t.Fatalf("SubmitAndWait answered %s; want the failed attempt's end", out.Task.State)
	}
	got = wait(t, b, out.Task.ID)
	if got.State != task.StateDeadLetter || got.ErrorCode != task.CodeAgentFailed ||
		!strings.Contains(got.Reason, "the agent panicked: assignment to entry in nil map") {
		t.Fatalf("always-panicking task: state %s, code %s, reason %q; want dead_letter, agent_failed, the runtime error", got.State, got.ErrorCode, got.Reason)
	}
	res, err = b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: envelope("p", "a", "after")})
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, b, res.Task.ID); got.State != task.StateSucceeded {
		t.Fatalf("a task after the panics: %s; want succeeded", got.State)
	}
}
