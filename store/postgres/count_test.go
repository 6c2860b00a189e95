package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// CountByState counts every task once, under its current state, in one
// query (the metrics' task gauge).
func TestCountByState(t *testing.T) {
	t.Parallel()
	s := open(t, storeDSN(t), newSchema(t))
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for i := range 5 {
		steps := []task.Step{{To: task.StateValidated}, {To: task.StateQueued}}
		if i >= 3 {
			steps = []task.Step{{To: task.StateValidated}}
		}
		if _, err := s.CreateTask(ctx, task.CreateParams{Task: storetest.EchoTask(fmt.Sprintf("c%d", i)), Now: now, Steps: steps}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.CountByState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[task.StateQueued] != 3 || got[task.StateValidated] != 2 {
		t.Fatalf("CountByState = %v, want queued 3 and validated 2", got)
	}
}
