package multinode

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/pactum/pactum/internal/e2e/attemptlog"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/internal/e2e/steprun"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// TestThreeNodesKill9MidMultiStepRuns is the crash test of multi-step runs
// on PostgreSQL: three nodes of crashtest/stepnode on one database, runs
// (three sequential steps, then three parallel ones, on a slow exec agent)
// submitted round the nodes a little apart, and kill -9 of the node that
// runs the most steps once some steps have ended and others run. The other
// two nodes finish every run once the killed node's leases (2s) expire:
// every run succeeds with its six children, none of which ran to
// completion twice unless the kill cut its attempt, in order; the audit
// chain is intact and no task is left waiting, queued or running
// (steprun.Verify).
func TestThreeNodesKill9MidMultiStepRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three pactum processes; skipped with -short")
	}
	dsn := schemaDSN(t, baseDSN(t))
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := steprun.NewCluster(t, dsn)
	names := []string{"node-a", "node-b", "node-c"}
	nodes := map[string]*nodeproc.Process{}
	var clients []*a2aclient.Client
	// One after another: the first node migrates the schema.
	for _, name := range names {
		n := cl.Start(t, name, nodeproc.FreeAddr(t))
		nodes[name] = n
		clients = append(clients, nodeproc.Client(t, ctx, n.Addr, steprun.Agent))
	}
	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	const runs = 6
	ids := map[a2a.TaskID]string{}
	for i := range runs {
		in := fmt.Sprintf("run-%d", i)
		ids[steprun.Submit(t, ctx, clients[i%len(clients)], in)] = in
		time.Sleep(300 * time.Millisecond)
	}
	attemptlog.Wait(t, ctx, cl.AttemptsLog(), steprun.MidRun(6))
	victim, running := busiest(t, ctx, st)
	nodes[victim].Kill()
	kill := steprun.Kill{Node: victim, At: time.Now()}
	t.Logf("killed %s while it ran %d steps (in progress per node: %v)", victim, running[victim], running)

	steprun.WaitSettled(t, ctx, st, ids)
	for _, name := range names {
		nodes[name].Stop()
	}
	lines := attemptlog.Read(t, cl.AttemptsLog())
	steprun.Verify(t, ctx, st, ids, lines, kill)

	// The killed node's cut attempts finished elsewhere; count who ran
	// the runs' decisions and steps.
	byNode := map[string]int{}
	for id := range ids {
		recs, err := st.Records(ctx, string(id))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.To == task.StateInProgress {
				byNode[r.Node]++
			}
		}
	}
	t.Logf("parent attempts per node: %v; took %s", byNode, time.Since(began).Round(time.Millisecond))
}

// busiest returns the node whose attempts of steps are in progress the
// most (by the node of each task's last claim), with the count per node.
func busiest(t *testing.T, ctx context.Context, st task.Store) (string, map[string]int) {
	t.Helper()
	page, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateInProgress}, Agent: "slow", PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	running := map[string]int{}
	for _, tk := range page.Tasks {
		recs, err := st.Records(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range slices.Backward(recs) {
			if r.To == task.StateInProgress {
				running[r.Node]++
				break
			}
		}
	}
	if len(running) == 0 {
		t.Fatal("no step in progress at the kill: the test would not crash a run mid-step")
	}
	names := slices.Sorted(maps.Keys(running))
	best := names[0]
	for _, n := range names {
		if running[n] > running[best] {
			best = n
		}
	}
	return best, running
}
