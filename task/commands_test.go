package task_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/clocktest"
)

func TestCancel(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	stopped := make(chan error, 1)
	blocking := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- req.TaskID
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "block", Runner: blocking}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	<-started
	got, err := b.coord.Cancel(ctx, res.Task.ID, "user changed their mind")
	if err != nil || got.State != task.StateCanceled {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("runner saw %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("running attempt was not stopped")
	}
	if _, err := b.coord.Cancel(ctx, res.Task.ID, ""); task.ErrorCode(err) != task.CodeNotCancelable {
		t.Fatalf("second cancel: %v", err)
	}
	// The stopped attempt's late result must not move the task again.
	b.coord.Stop(ctx)
	final, _ := b.coord.Get(ctx, res.Task.ID, 0)
	if final.State != task.StateCanceled {
		t.Fatalf("state after attempt ended: %s", final.State)
	}
	if _, err := b.coord.Cancel(ctx, "nope", ""); task.ErrorCode(err) != task.CodeNotFound {
		t.Fatalf("cancel missing: %v", err)
	}
}

func TestInputRequiredThenContinue(t *testing.T) {
	t.Parallel()
	asker := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if len(req.History) == 1 {
			q := task.Message{Parts: []task.Part{task.TextPart("which city?")}}
			return &task.Result{InputRequired: true, Message: &q}, nil
		}
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("weather in " + req.Message.Text())}}}}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "ask", Runner: asker}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("ask", "a", "weather")})
	got := wait(t, b, res.Task.ID)
	if got.State != task.StateInputRequired || got.StatusMessage.Text() != "which city?" {
		t.Fatalf("%+v", got)
	}
	if _, err := b.coord.Continue(ctx, got.ID, task.Message{ID: "m2"}); task.ErrorCode(err) != task.CodeInvalidArgument {
		t.Fatalf("empty answer: %v", err)
	}
	if _, err := b.coord.Continue(ctx, got.ID, text("Lyon")); err != nil {
		t.Fatal(err)
	}
	got = wait(t, b, got.ID)
	if got.State != task.StateSucceeded || got.Artifacts[0].Parts[0].Text != "weather in Lyon" || len(got.History) != 3 {
		t.Fatalf("%+v", got)
	}
	if _, err := b.coord.Continue(ctx, got.ID, text("more")); task.ErrorCode(err) != task.CodeUnsupported {
		t.Fatalf("continue terminal: %v", err)
	}
}

// A task canceled by another process (pactum tasks cancel) is noticed by
// the worker's lease renewal, and this node's subscribers hear of it. The
// renewal is due a third of a lease into the attempt, on the
// Coordinator's clock.
func TestCancelFromAnotherProcessReachesSubscribers(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	const leaseFor = 30 * time.Second
	started := make(chan struct{}, 1)
	block := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b := setup(t, task.Options{Clock: clock, Agents: []task.AgentSpec{{Name: "block", Runner: block}}, LeaseFor: leaseFor, PollInterval: 24 * time.Hour})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("block", "a", "x")})
	<-started
	_, ch, cancel, err := b.coord.Subscribe(ctx, res.Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	other, err := task.NewCoordinator(task.Options{Store: b.store, Node: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Cancel(ctx, res.Task.ID, "from the command line"); err != nil {
		t.Fatal(err)
	}
	// The attempt set its renewal's timer before it started.
	clock.Advance(leaseFor / 3)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.Final {
				if ev.State != task.StateCanceled {
					t.Fatalf("final event %s", ev.State)
				}
				return
			}
		case <-timeout:
			t.Fatal("the subscriber never heard of the cancel")
		}
	}
}
