// Command stepnode is a pactum node for the crash tests of multi-step runs:
// it assembles a node from a configuration file exactly as `pactum serve`
// does (flag --config) and adds, in code, the parent agent "run" (see
// plan), whose steps run on the configured agent "slow". It serves until
// SIGTERM or SIGINT (and dies as any process does on SIGKILL). It exists
// for tests only: `pactum serve` cannot configure a parent agent yet.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stepnode:", err)
		os.Exit(1)
	}
}

func run() error {
	cfgPath := flag.String("config", "", "configuration file, as for pactum serve (required)")
	flag.Parse()
	if *cfgPath == "" {
		return fmt.Errorf("--config is required")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Log.Level)); err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	parent := config.NewAgent("run")
	parent.Description = "a multi-step run: steps s1, s2, s3 one after another on agent slow, then p1, p2, p3 together"
	parent.Timeout = config.D(30 * time.Second)
	parent.Retry.MaxAttempts = 5
	parent.Retry.InitialBackoff = config.D(100 * time.Millisecond)
	parent.Retry.MaxBackoff = config.D(time.Second)
	extra := []node.Extra{{Config: parent, Runner: plan{agent: "slow"}}}
	srv, err := node.New(ctx, cfg, filepath.Dir(*cfgPath), extra, log)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, 10*time.Second)
}
