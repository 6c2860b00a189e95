// Package multinode runs several real pactum processes on one PostgreSQL
// database and checks what a cluster promises: every task runs once (or once
// per recorded attempt), a killed node's tasks finish on the others, events
// of a task reach clients streaming from any node, and the nodes ride out a
// PostgreSQL restart. The tests need PostgreSQL (PACTUM_TEST_POSTGRES,
// default 127.0.0.1:5432 database test); with PACTUM_REQUIRE_POSTGRES=1, as
// in CI, its absence fails them instead of skipping.
package multinode

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/task"
)

// baseDSN returns the test server's DSN or skips (fails under
// PACTUM_REQUIRE_POSTGRES=1) when it cannot be reached.
func baseDSN(t *testing.T) string { return nodeproc.PostgresDSN(t) }

// schemaDSN creates a fresh schema on the server dsn names, drops it when
// the test ends, and returns a DSN whose connections use it.
func schemaDSN(t *testing.T, dsn string) string { return nodeproc.SchemaDSN(t, dsn, "mn_") }

// nodeConfig: an exec agent that appends "task attempt" to a shared log
// each time it runs, then takes a moment, so a kill finds work in flight.
const nodeConfig = `
listen: %[1]s
store: %[2]q
node: %[3]s
lease: 2s
workers: 8
log: {level: warn}
agents:
  - name: work
    type: exec
    timeout: 30s
    retry: {max_attempts: 5, initial_backoff: 100ms, max_backoff: 1s}
    exec:
      command: ["sh", "-c", "echo \"$1 $2\" >> %[4]s; sleep %[5]s; echo done $1", "sh", "{{.TaskID}}", "{{.Attempt}}"]
`

type node struct {
	name string
	*nodeproc.Process
}

// startNode runs `pactum serve` and waits until it is ready.
func startNode(t *testing.T, bin, dir, name, dsn, execLog, sleep string) *node {
	t.Helper()
	addr := nodeproc.FreeAddr(t)
	cfg := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(nodeConfig, addr, dsn, name, execLog, sleep)), 0o600); err != nil {
		t.Fatal(err)
	}
	return &node{name: name, Process: nodeproc.Start(t, bin, addr, filepath.Join(dir, name+".log"), "serve", "--config", cfg)}
}

func (n *node) client(t *testing.T, ctx context.Context) *a2aclient.Client {
	t.Helper()
	return nodeproc.Client(t, ctx, n.Addr, "work")
}

func randN(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

// executions reads the exec log: how many times each task ran, by attempt.
func executions(t *testing.T, path string) map[string][]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, att, ok := strings.Cut(sc.Text(), " ")
		a, err := strconv.Atoi(att)
		if !ok || err != nil {
			t.Fatalf("exec log line %q", sc.Text())
		}
		out[id] = append(out[id], a)
	}
	return out
}

// submit sends n tasks (return immediately) to random nodes among live and
// returns the acknowledged task ids with the node that took each.
func submit(t *testing.T, ctx context.Context, clients []*a2aclient.Client, names []string, from, n int) map[a2a.TaskID]string {
	t.Helper()
	var mu sync.Mutex
	acked := map[a2a.TaskID]string{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				k := randN(len(clients))
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d", i)))
				res, err := clients[k].SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
				if err != nil {
					t.Errorf("send task %d to %s: %v", i, names[k], err)
					continue
				}
				tk, ok := res.(*a2a.Task)
				if !ok {
					t.Errorf("send task %d: answer %T, want a task", i, res)
					continue
				}
				mu.Lock()
				acked[tk.ID] = names[k]
				mu.Unlock()
			}
		}()
	}
	for i := from; i < from+n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return acked
}

// waitTerminal polls the store until every task is terminal.
func waitTerminal(t *testing.T, ctx context.Context, st task.Store, ids map[a2a.TaskID]string) {
	t.Helper()
	pending := map[a2a.TaskID]bool{}
	for id := range ids {
		pending[id] = true
	}
	for len(pending) > 0 {
		if ctx.Err() != nil {
			var some []a2a.TaskID
			for id := range pending {
				if some = append(some, id); len(some) == 5 {
					break
				}
			}
			t.Fatalf("%d tasks not terminal in time, e.g. %v", len(pending), some)
		}
		for id := range pending {
			tk, err := st.GetTask(ctx, string(id), 0)
			if err != nil {
				t.Fatalf("acknowledged task %s: %v", id, err)
			}
			if tk.State.Terminal() {
				delete(pending, id)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestThreeNodesKill9 is the cluster test: three nodes on one database,
// 1,000 tasks through the A2A API of random nodes, one node killed with
// SIGKILL mid-flight. Every task succeeds; a task ran once per claim
// recorded in its execution record (exactly once unless its node died
// under it); the killed node's tasks finished elsewhere after their leases
// expired; the audit chain is one intact chain. Before the load, a client
// streaming from one node follows a task that another node runs.
func TestThreeNodesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three pactum processes; skipped with -short")
	}
	dsn := schemaDSN(t, baseDSN(t))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := nodeproc.Build(t, nodeproc.Pactum)
	execLog := filepath.Join(dir, "exec.log")
	if err := os.WriteFile(execLog, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Migrate once, then start the nodes together.
	if out, err := exec.Command(bin, "migrate", "--store", dsn).CombinedOutput(); err != nil {
		t.Fatalf("pactum migrate: %v\n%s", err, out)
	}
	names := []string{"node-a", "node-b", "node-c"}
	nodes := make([]*node, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i] = startNode(t, bin, dir, name, dsn, execLog, "0.2")
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	clients := make([]*a2aclient.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = n.client(t, ctx)
	}

	crossNodeStream(t, ctx, clients[1], clients[0])

	const total, beforeKill = 1000, 400
	acked := submit(t, ctx, clients, names, 0, beforeKill)
	// Kill node C while its tasks run.
	time.Sleep(300 * time.Millisecond)
	victim := nodes[2]
	victim.Kill()
	t.Logf("killed %s after %d submissions", victim.name, len(acked))
	rest := submit(t, ctx, clients[:2], names[:2], beforeKill, total-beforeKill)
	for id, n := range rest {
		acked[id] = n
	}
	if len(acked) != total {
		t.Fatalf("%d of %d submissions acknowledged", len(acked), total)
	}

	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitTerminal(t, ctx, st, acked)

	runs := executions(t, execLog)
	var succeeded, expired, moved, twice int
	for id := range acked {
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
		claims, claimedByVictim, lastClaimer := 0, false, ""
		for _, r := range recs {
			if r.To == task.StateInProgress {
				claims++
				lastClaimer = r.Node
				claimedByVictim = claimedByVictim || r.Node == victim.name
			}
			if r.ErrorCode == task.CodeLeaseExpired {
				expired++
			}
		}
		if claims != tk.Attempt {
			t.Errorf("task %s: %d claims recorded, attempt %d", id, claims, tk.Attempt)
		}
		n := len(runs[string(id)])
		if n > claims {
			t.Errorf("task %s ran %d times with %d claims recorded", id, n, claims)
		}
		if !claimedByVictim && n != 1 {
			t.Errorf("task %s never touched by the killed node ran %d times, want once", id, n)
		}
		if claimedByVictim && tk.State == task.StateSucceeded && lastClaimer != victim.name {
			moved++
		}
		if n > 1 {
			twice++
		}
	}
	t.Logf("%d tasks: %d succeeded; %d lease expiries; %d tasks of the killed node finished elsewhere; %d ran more than once (each within its recorded attempts)",
		total, succeeded, expired, moved, twice)
	if succeeded != total {
		t.Fatalf("%d of %d tasks succeeded", succeeded, total)
	}
	if moved == 0 {
		t.Fatal("no task of the killed node finished on another node: the kill did not hit work in flight")
	}
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Fatalf("audit chain across nodes: %+v, %v", rep, err)
	}
}

// crossNodeStream submits a task to one node and follows it from another
// with SubscribeToTask: the events come from the node that runs it, through
// the store's relay.
func crossNodeStream(t *testing.T, ctx context.Context, runner, watcher *a2aclient.Client) {
	t.Helper()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("watched"))
	res, err := runner.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var last a2a.TaskState
	events := 0
	for ev, err := range watcher.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			t.Fatalf("subscribe from another node: %v (after %d events, last state %s)", err, events, last)
		}
		events++
		switch e := ev.(type) {
		case *a2a.Task:
			last = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			last = e.Status.State
		}
		if last.Terminal() {
			break
		}
	}
	if last != a2a.TaskStateCompleted {
		t.Fatalf("stream from another node ended in %q after %d events, want completed", last, events)
	}
	t.Logf("cross-node stream: %d events, ended %s", events, last)
}
