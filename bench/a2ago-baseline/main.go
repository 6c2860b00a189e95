// Command a2ago-baseline is a baseline for bench/compare.sh and
// docs/benchmarks.md, not part of pactum: a2a-go v2's own default request
// handler with its in-memory task store, serving over JSON-RPC an echo
// executor that answers like pactum's echo agent (a submitted task, the
// message back as an artifact, a completed status). Nothing is durable.
//
//	go run ./bench/a2ago-baseline 127.0.0.1:9933
package main

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

func main() {
	addr := "127.0.0.1:9933"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, addr); err != nil {
		slog.Error("a2ago-baseline", "err", err)
		os.Exit(1)
	}
}

// serve answers on addr until ctx ends.
func serve(ctx context.Context, addr string) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echo{})),
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// echo is an a2asrv.AgentExecutor that completes every task with the
// user's message as its artifact and its status message.
type echo struct{}

var _ a2asrv.AgentExecutor = echo{}

// Execute yields a submitted task, the artifact and the completed status.
func (echo) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewArtifactEvent(ec, ec.Message.Parts...), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, ec.Message.Parts...)), nil)
	}
}

// Cancel yields the canceled status.
func (echo) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
