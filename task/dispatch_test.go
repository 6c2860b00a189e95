package task_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

func TestStopDrainsRunningAttempts(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		started <- struct{}{}
		select {
		case <-time.After(300 * time.Millisecond):
			return &task.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: slow}}})
	ctx := context.Background()
	res, _ := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", "x")})
	<-started
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.coord.Stop(sctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got, _ := b.coord.Get(ctx, res.Task.ID, 0)
	if got.State != task.StateSucceeded {
		t.Fatalf("after a drained stop the task is %s, want succeeded", got.State)
	}
}

// TestBacklogRunsWhenAWorkerFrees: tasks queued while every worker is busy
// start as soon as one frees, not at the dispatcher's next poll (an hour
// here).
func TestBacklogRunsWhenAWorkerFrees(t *testing.T) {
	t.Parallel()
	slow := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		time.Sleep(20 * time.Millisecond)
		return &task.Result{}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "slow", Runner: slow}}, Workers: 1, PollInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ids []string
	for i := range 5 {
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("slow", "a", fmt.Sprint(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Task.ID)
	}
	for _, id := range ids {
		got, err := b.coord.Wait(ctx, id)
		if err != nil {
			t.Fatalf("task %s still waiting for a worker: %v", id, err)
		}
		if got.State != task.StateSucceeded {
			t.Fatalf("task %s ended %s", id, got.State)
		}
	}
}
