package multinode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
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
	"github.com/pactum/pactum/task"
)

// privateCluster is a PostgreSQL server of the test's own (initdb in a temp
// dir, its own port), so restarting it disturbs no other test that uses the
// shared server.
type privateCluster struct {
	bin, dir string
	port     int
	asUser   []string // runuser prefix when running as root
}

func (c *privateCluster) run(t *testing.T, name string, args ...string) {
	t.Helper()
	argv := append(append([]string(nil), c.asUser...), append([]string{filepath.Join(c.bin, name)}, args...)...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// startPrivateCluster initdbs and starts a server on a free port. It needs
// the PostgreSQL server binaries (pg_config --bindir); without them the
// test skips, or fails under PACTUM_REQUIRE_POSTGRES=1.
func startPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	bindir := ""
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		bindir = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(bindir, "initdb")); bindir == "" || err != nil {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(matches) == 0 {
			msg := "PostgreSQL server binaries (initdb, pg_ctl) not found"
			if os.Getenv("PACTUM_REQUIRE_POSTGRES") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		bindir = filepath.Dir(matches[len(matches)-1])
	}
	dir, err := os.MkdirTemp("", "pactum-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{bin: bindir, dir: dir}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root and there is no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	t.Cleanup(func() {
		argv := append(append([]string(nil), c.asUser...), filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop")
		_ = exec.Command(argv[0], argv[1:]...).Run()
		_ = os.RemoveAll(dir)
	})
	port, _ := strconv.Atoi(strings.TrimPrefix(nodeproc.FreeAddr(t), "127.0.0.1:"))
	c.port = port
	c.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	c.run(t, "pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", port, dir), "start")
	return c
}

func (c *privateCluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// postmasterPID is the running server's process id.
func (c *privateCluster) postmasterPID(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	return pid
}

// restart stops the server (fast: sessions are cut) and starts it again.
func (c *privateCluster) restart(t *testing.T) {
	t.Helper()
	before := c.postmasterPID(t)
	defer func() {
		if after := c.postmasterPID(t); after == before {
			t.Errorf("PostgreSQL was not restarted: postmaster pid %s before and after", before)
		}
	}()
	// -l: the new server must not inherit this process's output pipes.
	c.run(t, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "server.log"), "-m", "fast", "-w", "-t", "60", "restart")
}

// TestPostgresRestart: three nodes work through tasks while their
// PostgreSQL server restarts. Submissions during the outage may be refused
// (not acknowledged); every acknowledged task still succeeds, within its
// recorded attempts, and the audit chain stays intact.
func TestPostgresRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server and three pactum processes; skipped with -short")
	}
	baseDSN(t) // the same requirement as the other cluster tests
	pg := startPrivateCluster(t)
	dsn := pg.dsn()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := nodeproc.Build(t, nodeproc.Pactum)
	execLog := filepath.Join(dir, "exec.log")
	if err := os.WriteFile(execLog, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	names := []string{"node-a", "node-b", "node-c"}
	clients := make([]*a2aclient.Client, len(names))
	for i, name := range names {
		n := startNode(t, bin, dir, name, dsn, execLog, "0.3")
		clients[i] = n.client(t, ctx)
	}

	var mu sync.Mutex
	acked := map[a2a.TaskID]string{}
	refused := 0
	send := func(from, n int) {
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					k := randN(len(clients))
					msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d", i)))
					res, err := clients[k].SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
					mu.Lock()
					if tk, ok := res.(*a2a.Task); err == nil && ok {
						acked[tk.ID] = names[k]
					} else {
						refused++
					}
					mu.Unlock()
				}
			}()
		}
		for i := from; i < from+n; i++ {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
	}
	send(0, 150)
	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	restarted := make(chan struct{})
	var unfinished int
	go func() {
		defer close(restarted)
		time.Sleep(200 * time.Millisecond)
		page, err := st.ListTasks(ctx, task.ListParams{States: []task.State{task.StateQueued, task.StateInProgress}, PageSize: 1})
		if err == nil {
			unfinished = page.TotalSize
		}
		pg.restart(t)
	}()
	send(150, 150)
	<-restarted
	send(300, 100)
	t.Logf("%d tasks acknowledged, %d refused around the restart; %d tasks were queued or running when PostgreSQL went down", len(acked), refused, unfinished)
	if unfinished == 0 {
		t.Fatal("no task was in flight at the restart: the test did not test a restart mid-run")
	}
	if len(acked) < 250 {
		t.Fatalf("only %d of 400 submissions acknowledged", len(acked))
	}

	waitTerminal(t, ctx, st, acked)
	runs := executions(t, execLog)
	succeeded, retried := 0, 0
	for id := range acked {
		tk, err := st.GetTask(ctx, string(id), 0)
		if err != nil {
			t.Fatal(err)
		}
		if tk.State == task.StateSucceeded {
			succeeded++
		}
		if tk.Attempt > 1 {
			retried++
		}
		if n := len(runs[string(id)]); n > tk.Attempt || n == 0 {
			t.Errorf("task %s ran %d times in %d recorded attempts", id, n, tk.Attempt)
		}
	}
	t.Logf("%d acknowledged tasks: %d succeeded, %d needed more than one attempt", len(acked), succeeded, retried)
	if succeeded != len(acked) {
		t.Fatalf("%d of %d acknowledged tasks succeeded", succeeded, len(acked))
	}
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Fatalf("audit chain after the restart: %+v, %v", rep, err)
	}
}
