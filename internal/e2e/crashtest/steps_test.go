package crashtest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/e2e/attemptlog"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/internal/e2e/steprun"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// TestKill9MidMultiStepRuns is the crash test of multi-step runs on SQLite:
// parent tasks of three sequential steps and a phase of three parallel
// ones on a slow exec agent (crashtest/stepnode's agent "run"), started a
// little apart so that the kill finds them at different steps; kill -9 of
// the node once some steps have ended and others run; a restart on the
// same store. Every run succeeds with its six children, none of which ran
// to completion twice unless the kill cut its attempt, in order; the
// audit chain is intact and no task is left waiting, queued or running
// (steprun.Verify).
func TestKill9MidMultiStepRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dbPath := filepath.Join(t.TempDir(), "pactum.db")
	cl := steprun.NewCluster(t, "sqlite://"+dbPath)
	addr := nodeproc.FreeAddr(t)
	srv := cl.Start(t, "solo", addr)
	c := nodeproc.Client(t, ctx, addr, steprun.Agent)

	const runs = 4
	ids := map[a2a.TaskID]string{}
	for i := range runs {
		in := fmt.Sprintf("run-%d", i)
		ids[steprun.Submit(t, ctx, c, in)] = in
		time.Sleep(450 * time.Millisecond)
	}
	// Kill once about six steps have ended and some run.
	attemptlog.Wait(t, ctx, cl.AttemptsLog(), steprun.MidRun(6))
	srv.Kill()
	kill := steprun.Kill{Node: "solo", At: time.Now()}

	st, err := store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	inFlight, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateInProgress}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateWaiting}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Logf("after kill -9: %d tasks in progress, %d parents waiting", inFlight.TotalSize, waiting.TotalSize)

	restartAt := time.Now()
	srv = cl.Start(t, "solo", addr)
	st, err = store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	steprun.WaitSettled(t, ctx, st, ids)
	srv.Stop()

	lines := attemptlog.Read(t, cl.AttemptsLog())
	attemptlog.CheckQuietBetween(t, lines, kill.At, restartAt)
	steprun.Verify(t, ctx, st, ids, lines, kill)
	t.Logf("took %s", time.Since(began).Round(time.Millisecond))
}
