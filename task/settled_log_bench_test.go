package task_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkSettledLogLine measures the one info line the coordinator logs
// per settled task ("task settled": task, agent, state, duration,
// attempts), built as logTransition builds it: with the level above info
// (the benchmarks' `log: {level: error}`), and at info through slog's JSON
// and text handlers writing to io.Discard (pactum serve's default level;
// the write system call to stderr is not counted). Run:
// go test -run x -bench SettledLogLine -benchmem ./task
func BenchmarkSettledLogLine(b *testing.B) {
	for _, c := range []struct {
		name string
		log  *slog.Logger
	}{
		{"level-error", slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))},
		{"info-json", slog.New(slog.NewJSONHandler(io.Discard, nil))},
		{"info-text", slog.New(slog.NewTextHandler(io.Discard, nil))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			created := time.Now()
			for b.Loop() {
				attrs := []slog.Attr{slog.String("task", "0195f6a2-7c3e-7b4a-9f1e-2d3c4b5a6978"), slog.String("agent", "echo"), slog.String("state", "succeeded"), slog.Duration("duration", time.Since(created)), slog.Int("attempts", 1)}
				c.log.LogAttrs(ctx, slog.LevelInfo, "task settled", attrs...)
			}
		})
	}
}
