package pactum_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/pactum/pactum"
	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
)

// TestServeDrainsOnCancel: when Serve's context ends with a task running,
// Serve logs what it drains, stops the task's attempt once the drain
// (pactum.Drain) is over and queues the task again at once, so that the
// next start runs it without waiting for its lease to expire; then it logs
// that it stopped.
func TestServeDrainsOnCancel(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	started := make(chan struct{}, 1)
	slow := pactum.Func("slow", func(ctx context.Context, _ string) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	var logs syncbuf.Buffer
	ln := listen(t)
	dsn := sqliteDSN(t)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- pactum.Serve(sctx, slow, pactum.Store(dsn), pactum.Listener(ln), pactum.Drain(200*time.Millisecond),
			pactum.Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	}()
	card, err := agentcard.DefaultResolver.Resolve(ctx, "http://"+ln.Addr().String()+"/agents/slow")
	if err != nil {
		t.Fatal(err)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := string(res.(*a2a.Task).ID)
	<-started
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return within 15s of its context ending (drain 200ms)")
	}
	out := logs.String()
	for _, want := range []string{`"draining 1 task (up to 200ms)"`, `msg="pactum stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("%s not in Serve's log:\n%s", want, out)
		}
	}
	if strings.Contains(out, `msg="task settled"`) {
		t.Errorf("the released task was logged as settled:\n%s", out)
	}
	st, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.GetTask(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateQueued || got.LeaseOwner != "" || got.ErrorCode != task.CodeNodeStopped {
		t.Errorf("after Serve returned: %s, lease %q, code %q; want queued, no lease, node_stopped", got.State, got.LeaseOwner, got.ErrorCode)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("test ran out of time")
	}
}
