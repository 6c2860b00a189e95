package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// TestCallerSeesOnlyOwnTasks: with an authenticated caller in ctx
// (task.WithCaller) every by-id operation of the Coordinator answers
// another actor's task, running or finished, exactly as a task that does
// not exist, and changes nothing; List shows the caller its own tasks
// only. Without a caller every task is visible, as before.
func TestCallerSeesOnlyOwnTasks(t *testing.T) {
	t.Parallel()
	started := make(chan string, 1)
	runner := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		switch req.Message.Text() {
		case "block":
			started <- req.TaskID
			<-ctx.Done()
			return nil, ctx.Err()
		case "ask":
			return &task.Result{InputRequired: true, Message: &task.Message{Parts: []task.Part{task.TextPart("secret question")}}}, nil
		default:
			return nil, task.Permanent(errors.New("secret failure"))
		}
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "work", Runner: runner}}})
	bg := context.Background()
	alice, bob := task.WithCaller(bg, "alice"), task.WithCaller(bg, "bob")
	submit := func(ctx context.Context, actor, input string) *task.Task {
		t.Helper()
		res, err := b.coord.Submit(ctx, task.SubmitRequest{Envelope: envelope("work", actor, input)})
		if err != nil {
			t.Fatalf("submit %s as %s: %v", input, actor, err)
		}
		return res.Task
	}
	running := submit(alice, "alice", "block")
	<-started
	asking := wait(t, b, submit(alice, "alice", "ask").ID)
	failed := wait(t, b, submit(bg, "alice", "fail").ID)
	if asking.State != task.StateInputRequired || failed.State != task.StateFailed {
		t.Fatalf("alice's tasks: %s, %s", asking.State, failed.State)
	}
	bobs := submit(bob, "bob", "fail")
	// Alice has a push config on each task: bob must not read or delete it.
	for _, tk := range []*task.Task{running, asking, failed} {
		if err := b.coord.SetPushConfig(alice, task.PushConfig{TaskID: tk.ID, ID: "hook", URL: "https://hooks.example.com/a"}, "alice"); err != nil {
			t.Fatalf("alice sets a push config: %v", err)
		}
	}

	ops := []struct {
		name string
		do   func(ctx context.Context, id string) error
	}{
		{"Get", func(ctx context.Context, id string) error { _, err := b.coord.Get(ctx, id, -1); return err }},
		{"Timeline", func(ctx context.Context, id string) error { _, err := b.coord.Timeline(ctx, id); return err }},
		{"Cancel", func(ctx context.Context, id string) error {
			_, err := b.coord.Cancel(ctx, id, "by "+task.Caller(ctx))
			return err
		}},
		{"Retry", func(ctx context.Context, id string) error { _, err := b.coord.Retry(ctx, id); return err }},
		{"Continue", func(ctx context.Context, id string) error {
			_, err := b.coord.Continue(ctx, id, text("bob's answer"))
			return err
		}},
		{"Subscribe", func(ctx context.Context, id string) error {
			_, _, cancel, err := b.coord.Subscribe(ctx, id)
			if err == nil {
				cancel()
			}
			return err
		}},
		{"Wait", func(ctx context.Context, id string) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := b.coord.Wait(ctx, id)
			return err
		}},
		{"SetPushConfig", func(ctx context.Context, id string) error {
			return b.coord.SetPushConfig(ctx, task.PushConfig{TaskID: id, ID: "hook", URL: "https://evil.example.com/"}, "bob")
		}},
		{"PushConfig", func(ctx context.Context, id string) error { _, err := b.coord.PushConfig(ctx, id, "hook"); return err }},
		{"PushConfigs", func(ctx context.Context, id string) error { _, err := b.coord.PushConfigs(ctx, id); return err }},
		{"DeletePushConfig", func(ctx context.Context, id string) error { return b.coord.DeletePushConfig(ctx, id, "hook", "bob") }},
	}
	const missing = "no-such-task"
	for _, op := range ops {
		want := op.do(bob, missing)
		if task.ErrorCode(want) != task.CodeNotFound {
			t.Fatalf("%s of a missing task: %v, want not_found", op.name, want)
		}
		for _, tk := range []*task.Task{running, asking, failed} {
			what := map[*task.Task]string{running: "running", asking: "input_required", failed: "failed"}[tk]
			before := snapshot(t, b, tk.ID)
			err := op.do(bob, tk.ID)
			if after := snapshot(t, b, tk.ID); after != before {
				t.Errorf("bob's %s changed alice's %s task:\n%s\nwas\n%s", op.name, what, after, before)
			}
			if task.ErrorCode(err) != task.CodeNotFound || !errors.Is(err, task.ErrNotFound) ||
				err.Error() != strings.ReplaceAll(want.Error(), missing, tk.ID) {
				t.Errorf("bob's %s of alice's %s task: %v; want %q", op.name, what, err, strings.ReplaceAll(want.Error(), missing, tk.ID))
			}
			err = op.do(alice, tk.ID)
			if task.ErrorCode(err) == task.CodeNotFound {
				t.Errorf("alice's %s of her own %s task: %v", op.name, what, err)
			}
			if err == nil && (op.name == "Retry" || op.name == "Continue") {
				wait(t, b, tk.ID) // settled again before the next snapshot
			}
		}
	}
	// Lists: bob sees his task only, even when he asks for alice's; alice
	// and an unauthenticated caller see hers.
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		actor string
		want  int
	}{
		{"bob", bob, "", 1},
		{"bob asking for alice's", bob, "alice", 0},
		{"alice", alice, "", 3},
		{"no caller", bg, "", 4},
		{"no caller asking for alice's", bg, "alice", 3},
	} {
		page, err := b.coord.List(tc.ctx, task.ListParams{Actor: tc.actor})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(page.Tasks) != tc.want || page.TotalSize != tc.want {
			t.Errorf("List as %s: %d tasks (total %d), want %d", tc.name, len(page.Tasks), page.TotalSize, tc.want)
		}
		for _, tk := range page.Tasks {
			if c := task.Caller(tc.ctx); c != "" && tk.Envelope.Actor != c {
				t.Errorf("List as %s shows %s's task %s", tc.name, tk.Envelope.Actor, tk.ID)
			}
		}
	}
	if _, err := b.coord.Get(bob, bobs.ID, 0); err != nil {
		t.Errorf("bob reads his own task: %v", err)
	}

	// An authenticated caller submits only as itself.
	_, err := b.coord.Submit(bob, task.SubmitRequest{Envelope: envelope("work", "alice", "fail")})
	if task.ErrorCode(err) != task.CodeForbidden {
		t.Errorf("bob submitting as alice: %v, want forbidden", err)
	}
}

// snapshot renders what a caller could change about a task: its state, its
// record sequence and its push configs.
func snapshot(t *testing.T, b *bundle, id string) string {
	t.Helper()
	ctx := context.Background()
	tk, err := b.coord.Get(ctx, id, -1)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := b.coord.PushConfigs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s seq %d, %d messages, push configs %+v", tk.State, tk.Seq, len(tk.History), cs)
}

// TestReplayOfVisible: a task that replays another (Envelope.ReplayOf)
// is submitted only when its caller may see the task it names: another
// actor's task is refused as one that does not exist, and so is an
// unknown id; the link is stored with the envelope, and the replay is
// the caller's own task, which the other actor does not see.
func TestReplayOfVisible(t *testing.T) {
	t.Parallel()
	echo := task.RunnerFunc(func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
		return &task.Result{Message: &task.Message{Parts: []task.Part{task.TextPart(req.Message.Text())}}}, nil
	})
	b := setup(t, task.Options{Agents: []task.AgentSpec{{Name: "echo", Runner: echo}}})
	bg := context.Background()
	alice, bob := task.WithCaller(bg, "alice"), task.WithCaller(bg, "bob")
	res, err := b.coord.Submit(alice, task.SubmitRequest{Envelope: envelope("echo", "alice", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	orig := wait(t, b, res.Task.ID)
	replayOf := func(actor, id string) task.Envelope {
		env := envelope("echo", actor, "hi")
		env.ReplayOf = id
		return env
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		env    task.Envelope
		reason string
	}{
		{"another actor's task", bob, replayOf("bob", orig.ID), "task " + orig.ID + " not found"},
		{"an unknown task", alice, replayOf("alice", "nope"), "task nope not found"},
	} {
		_, err := b.coord.Submit(tc.ctx, task.SubmitRequest{Envelope: tc.env})
		if task.ErrorCode(err) != task.CodeInvalidArgument || !strings.Contains(err.Error(), "envelope.replayOf: "+tc.reason) {
			t.Errorf("%s: %v, want invalid_argument naming envelope.replayOf", tc.name, err)
		}
	}
	res, err = b.coord.Submit(alice, task.SubmitRequest{Envelope: replayOf("alice", orig.ID)})
	if err != nil {
		t.Fatal(err)
	}
	got := wait(t, b, res.Task.ID)
	if got.Envelope.ReplayOf != orig.ID || got.State != task.StateSucceeded {
		t.Errorf("replay: replayOf %q, %s; want %q, succeeded", got.Envelope.ReplayOf, got.State, orig.ID)
	}
	if _, err := b.coord.Get(bob, got.ID, 0); task.ErrorCode(err) != task.CodeNotFound {
		t.Errorf("bob reads alice's replay: %v, want not found", err)
	}
}
