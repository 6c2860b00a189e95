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
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/internal/e2e/nodeproc"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/task"
)

// TestKill9BlockingRequests kills a node while blocking SendMessage
// requests to an echo agent are in flight: their tasks are created
// speculatively and committed with their end, in one transaction held
// open for a moment. Every request answered before the kill has its task
// stored, succeeded; every request cut by the kill, sent again with the
// same messageId to the restarted node, is answered with a succeeded
// task; each messageId names exactly one task; the audit chain verifies.
func TestKill9BlockingRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills a real server; skipped with -short")
	}
	t.Run("sqlite", func(t *testing.T) {
		killBlocking(t, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		killBlocking(t, nodeproc.SchemaDSN(t, nodeproc.PostgresDSN(t), "crash_"))
	})
}

func killBlocking(t *testing.T, dsn string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := nodeproc.FreeAddr(t)
	cfgPath := filepath.Join(dir, "pactum.yaml")
	cfg := fmt.Sprintf("listen: %s\nstore: %q\nlease: 1s\nworkers: 16\nlog: {level: warn}\nagents:\n  - name: echo\n    type: echo\n", addr, dsn)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := nodeproc.Build(t, nodeproc.Pactum)
	srv := start(t, bin, cfgPath, addr)
	c := nodeproc.Client(t, ctx, addr, "echo")

	// message i is the same request whenever it is sent: its messageId
	// is the idempotency key, its text the payload.
	message := func(i int) *a2a.Message {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(fmt.Sprintf("task %d", i)))
		msg.ID = fmt.Sprintf("blocking-%d", i)
		return msg
	}
	send := func(c *a2aclient.Client, i int) (*a2a.Task, error) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: message(i)})
		if err != nil {
			return nil, err
		}
		tk, ok := res.(*a2a.Task)
		if !ok {
			return nil, fmt.Errorf("answer %T, want a task", res)
		}
		return tk, nil
	}

	const senders, beforeKill = 8, 300
	var (
		mu       sync.Mutex
		answered = map[int]a2a.TaskID{}
		cut      []int
		next     int
		wg       sync.WaitGroup
	)
	enough := make(chan struct{})
	for range senders {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				tk, err := send(c, i)
				mu.Lock()
				if err != nil {
					// The node is dead (or dying): sent again after the restart.
					cut = append(cut, i)
					mu.Unlock()
					return
				}
				if tk.Status.State != a2a.TaskStateCompleted {
					mu.Unlock()
					t.Errorf("request %d answered with task %s in state %s", i, tk.ID, tk.Status.State)
					return
				}
				answered[i] = tk.ID
				if len(answered) == beforeKill {
					close(enough)
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatal("the node did not answer enough requests before the kill")
	}
	srv.KillServer()
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(cut) == 0 {
		t.Fatal("no request was in flight at the kill; the test did not test a crash mid-request")
	}
	atKill := countTasks(t, ctx, dsn)
	t.Logf("kill -9 after %d answers; %d requests cut, of which %d had their task stored", len(answered), len(cut), atKill-len(answered))

	srv = start(t, bin, cfgPath, addr)
	c = nodeproc.Client(t, ctx, addr, "echo")
	for _, i := range cut {
		tk, err := send(c, i)
		if err != nil {
			t.Fatalf("request %d sent again after the restart: %v", i, err)
		}
		if tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("request %d sent again: task %s in state %s", i, tk.ID, tk.Status.State)
		}
		answered[i] = tk.ID
	}
	srv.Stop()
	srv.Wait()

	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, id := range answered {
		tk, err := st.GetTask(ctx, string(id), 0)
		if err != nil {
			t.Fatalf("answered request %d: task %s: %v", i, id, err)
		}
		if tk.State != task.StateSucceeded || tk.Envelope.IdempotencyKey != fmt.Sprintf("blocking-%d", i) {
			t.Fatalf("answered request %d: task %s %s under key %q", i, id, tk.State, tk.Envelope.IdempotencyKey)
		}
	}
	if n := countTasks(t, ctx, dsn); n != len(answered) {
		t.Fatalf("%d tasks stored for %d messageIds: a request sent twice made two tasks", n, len(answered))
	}
	rep, err := audit.Verify(ctx, st)
	if err != nil || !rep.OK {
		t.Fatalf("audit after the crash: %+v %v", rep, err)
	}
}

// countTasks returns how many tasks the store at dsn holds.
func countTasks(t *testing.T, ctx context.Context, dsn string) int {
	t.Helper()
	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.ListTasks(ctx, task.ListParams{PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	return page.TotalSize
}
