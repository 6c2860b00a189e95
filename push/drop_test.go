package push

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/task"
)

// gatedStore answers push-config lookups once its gate opens: task "a"
// has a configuration, every other task none.
type gatedStore struct {
	task.Store
	gate <-chan struct{}
}

func (s gatedStore) HasPushConfigs(ctx context.Context) (bool, error) {
	<-s.gate
	return true, nil
}

func (s gatedStore) PushBacklog(context.Context, task.PushBacklogParams) ([]task.PushBacklogItem, error) {
	return nil, nil
}

func (s gatedStore) ListPushConfigs(ctx context.Context, taskID string) ([]task.PushConfig, error) {
	<-s.gate
	if taskID == "a" {
		return []task.PushConfig{{TaskID: "a", ID: "c1", URL: "https://hooks.example.com/a2a"}}, nil
	}
	return nil, nil
}

// TestPushWarnsOnlyForDroppedEventsOfConfiguredTasks fills the Pusher's
// only lane while its store lookup is held, so that further events are
// dropped: a WARN names the task with a push configuration ("a") and none
// is logged for the task without one ("b"). A resync of the broker (the
// relay listening again) drops nothing and logs nothing.
func TestPushWarnsOnlyForDroppedEventsOfConfiguredTasks(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	coord, err := task.NewCoordinator(task.Options{Store: gatedStore{gate: gate}})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	p := New(coord, Options{Workers: 1, QueueSize: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b := coord.Broker()
	b.Reset()
	// Events without a task snapshot: looked up, never delivered.
	for range 3 {
		b.Publish(task.Event{Kind: task.EventStatus, TaskID: "b"})
	}
	for range 3 {
		b.Publish(task.Event{Kind: task.EventStatus, TaskID: "a"})
	}
	b.Reset()
	close(gate)
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "task=a events=3") {
		t.Fatalf("got %d WARN lines, want exactly one naming task a and its 3 dropped events:\n%s", n, out)
	}
}

func TestDroppedWithConfigs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	configs := func(_ context.Context, id string) ([]task.PushConfig, error) {
		switch id {
		case "configured":
			return []task.PushConfig{{TaskID: id, ID: "c"}}, nil
		case "gone":
			return nil, task.ErrNotFound
		case "broken":
			return nil, context.DeadlineExceeded
		}
		return nil, nil
	}
	has := func(v bool) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) { return v, nil }
	}
	got := droppedWithConfigs(ctx, map[string]int{"configured": 2, "plain": 5, "gone": 1, "broken": 1}, 0, configs, has(true))
	if len(got) != 2 || got[0] != (droppedTask{"broken", 1}) || got[1] != (droppedTask{"configured", 2}) {
		t.Errorf("got %+v, want broken (lookup failed) and configured", got)
	}
	if got := droppedWithConfigs(ctx, map[string]int{"plain": 5}, 7, configs, has(false)); len(got) != 0 {
		t.Errorf("no configuration anywhere: got %+v, want no warning", got)
	}
	if got := droppedWithConfigs(ctx, nil, 7, configs, has(true)); len(got) != 1 || got[0] != (droppedTask{"", 7}) {
		t.Errorf("untracked drops while some task has configurations: got %+v", got)
	}
}
