package node_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/agent/function"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
)

// An agent given in code with Extra.Runner runs its attempts through that
// runner, not through its runtime (the hook parent tasks use); its
// config.Agent still names it and sets its retry policy. An extra with a
// runner needs no runtime; one with neither is refused.
func TestExtraRunner(t *testing.T) {
	t.Parallel()
	src := fmt.Sprintf("store: sqlite://%s\nagents:\n  - {name: echo, type: echo}\n", filepath.Join(t.TempDir(), "p.db"))
	cfg, err := config.Parse([]byte(src), "extra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runner := func(name string) task.Runner {
		return task.RunnerFunc(func(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
			return &task.Result{Artifacts: []task.Artifact{{ID: "out", Parts: []task.Part{task.TextPart(name + " runner: " + req.Message.Text())}}}}, nil
		})
	}
	both := config.NewAgent("both")
	both.Retry.MaxAttempts = 7
	extra := []node.Extra{
		{Config: both, Agent: function.Text("both", func(context.Context, string) (string, error) { return "runtime", nil }), Runner: runner("both")},
		{Config: config.NewAgent("bare"), Runner: runner("bare")},
	}
	ctx := context.Background()
	srv, err := node.New(ctx, cfg, ".", extra, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, name := range []string{"both", "bare"} {
		res, err := srv.Coordinator().SubmitAndWait(wctx, task.SubmitRequest{Agent: name, Envelope: task.Envelope{
			Actor: "alice",
			Input: task.Message{ID: "m-" + name, Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		tk := res.Task
		if tk.State != task.StateSucceeded || len(tk.Artifacts) != 1 {
			t.Fatalf("%s: state %s, artifacts %+v", name, tk.State, tk.Artifacts)
		}
		if got, want := tk.Artifacts[0].Parts[0].Text, name+" runner: hi"; got != want {
			t.Errorf("%s: artifact %q, want %q (the runner's, not the runtime's)", name, got, want)
		}
		if name == "both" && tk.MaxAttempts != 7 {
			t.Errorf("both: max attempts %d, want 7 from its config.Agent", tk.MaxAttempts)
		}
	}

	_, err = node.New(ctx, cfg, ".", []node.Extra{{Config: config.NewAgent("nothing")}}, nil)
	if err == nil || !strings.Contains(err.Error(), `agent "nothing"`) {
		t.Fatalf("an extra with neither runtime nor runner: err %v", err)
	}
}
