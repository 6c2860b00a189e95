// Package crashtest kills a real pactum server with SIGKILL in the middle of
// work and checks, after a restart, that every acknowledged task ends in a
// terminal state with its attempts recorded, and that no attempt's process
// worked on after the kill or ran alongside the task's next attempt.
package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/internal/e2e/attemptlog"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// start runs `pactum serve` on cfgPath and waits until it is ready.
func start(t *testing.T, bin, cfgPath, addr string) *nodeproc.Process {
	t.Helper()
	return nodeproc.Start(t, bin, addr, "", "serve", "--config", cfgPath)
}

func TestKill9MidFlightLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	dbPath := filepath.Join(dir, "pactum.db")
	cfgPath := filepath.Join(dir, "pactum.yaml")
	script := attemptlog.Script(t)
	if err := os.WriteFile(cfgPath, []byte(attemptlog.Config(addr, "sqlite://"+dbPath, "", dir, script, "0.3")), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := start(t, bin, cfgPath, addr)
	c := nodeproc.Client(t, ctx, addr, "slow")

	const n = 200
	var (
		mu    sync.Mutex
		acked []a2a.TaskID
		wg    sync.WaitGroup
	)
	jobs := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d", i)))
				res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
				if err != nil {
					continue // not acknowledged: the server may be dead already
				}
				if tk, ok := res.(*a2a.Task); ok {
					mu.Lock()
					acked = append(acked, tk.ID)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if len(acked) != n {
		t.Fatalf("only %d of %d submissions acknowledged before the kill", len(acked), n)
	}
	// Let some work start, then kill -9 mid-flight.
	time.Sleep(800 * time.Millisecond)
	srv.KillServer()
	// Only the server: its attempts' processes must die with it.
	killedAt := time.Now()

	// Count what the crash left in flight.
	st, err := store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	inFlight, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateInProgress}, PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	t.Logf("after kill -9: %d tasks in progress", inFlight.TotalSize)
	if inFlight.TotalSize == 0 {
		t.Fatal("the kill found no task in progress; the test did not test a crash mid-flight")
	}

	restartAt := time.Now()
	srv = start(t, bin, cfgPath, addr)
	c = nodeproc.Client(t, ctx, addr, "slow")
	pending := map[a2a.TaskID]bool{}
	for _, id := range acked {
		pending[id] = true
	}
	for len(pending) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("%d tasks still not terminal: e.g. %v", len(pending), first(pending))
		}
		for id := range pending {
			tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatalf("acknowledged task %s lost: %v", id, err)
			}
			if tk.Status.State.Terminal() {
				delete(pending, id)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	srv.Stop()

	st, err = store.Open(ctx, "sqlite://"+dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	succeeded, requeued := 0, 0
	for _, id := range acked {
		tk, err := st.GetTask(ctx, string(id), 0)
		if err != nil {
			t.Fatal(err)
		}
		if tk.State == task.StateSucceeded {
			succeeded++
		}
		recs, err := st.Records(ctx, string(id))
		if err != nil {
			t.Fatal(err)
		}
		claims := 0
		for _, r := range recs {
			if r.To == task.StateInProgress {
				claims++
			}
			if r.ErrorCode == task.CodeLeaseExpired {
				requeued++
			}
		}
		if claims != tk.Attempt {
			t.Fatalf("task %s: %d claims recorded, attempt %d", id, claims, tk.Attempt)
		}
	}
	t.Logf("%d tasks: %d succeeded, %d requeued after their lease expired", n, succeeded, requeued)
	if succeeded != n {
		t.Fatalf("%d of %d succeeded", succeeded, n)
	}
	if requeued < inFlight.TotalSize {
		t.Fatalf("%d lease expiries recorded, %d tasks were in flight", requeued, inFlight.TotalSize)
	}
	attempts := attemptlog.Read(t, filepath.Join(dir, "attempts.log"))
	attemptlog.CheckNoOverlap(t, attempts)
	attemptlog.CheckQuietBetween(t, attempts, killedAt, restartAt)
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Fatalf("audit after crash: %+v %v", rep, err)
	}
}

func first(m map[a2a.TaskID]bool) a2a.TaskID {
	for k := range m {
		return k
	}
	return ""
}
