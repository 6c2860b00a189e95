package cli

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/telemetry"
	"github.com/pactum/pactum/internal/version"
)

func newServeCmd() *cobra.Command {
	var (
		cf         configFlags
		listen     string
		grpcListen string
		baseURL    string
		logFormat  string
		logLevel   string
		drain      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the configured agents over A2A",
		Long: `Serve every configured agent as an A2A 1.0 server on one listener, and
over A2A's gRPC binding on a second one with --grpc-listen (or grpc_listen).

Without --config pactum serves built-in demo agents (echo, slow-echo) on the
embedded SQLite store, so a first run shows something working at once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGC()
			cfg, baseDir, err := cf.load()
			if err != nil {
				return err
			}
			setListeners(cfg, listen, grpcListen)
			if baseURL != "" {
				cfg.BaseURL = baseURL
			}
			if logFormat == "" {
				logFormat = cfg.Log.Format
			}
			if logLevel == "" {
				logLevel = cfg.Log.Level
			}
			log, err := newLogger(cmd.ErrOrStderr(), logFormat, logLevel)
			if err != nil {
				return err
			}
			stopTracing, err := telemetry.Setup(cmd.Context(), version.String(), log)
			if err != nil {
				return err
			}
			defer flushTracing(stopTracing, log)
			srv, err := node.New(cmd.Context(), cfg, baseDir, nil, log)
			if err != nil {
				return err
			}
			for _, a := range srv.Coordinator().Agents() {
				if a.ChildOnly { // a step agent: no card, reached only by its run
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "agent %-16s %s/agents/%s/.well-known/agent-card.json\n", a.Name, cfg.BaseURL, a.Name)
			}
			now, release := secondSignal()
			defer release()
			return srv.ServeUntil(cmd.Context(), nil, node.Shutdown{Drain: drain, Now: now, Hint: stopNowHint})
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", "", "listen address (default from config, 127.0.0.1:9000)")
	cmd.Flags().StringVar(&grpcListen, "grpc-listen", "", "also serve A2A over gRPC on this address (default from config: off)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "public base URL written into agent cards")
	cmd.Flags().StringVar(&logFormat, "log-format", "", "log format: text or json")
	cmd.Flags().StringVar(&logLevel, "log-level", "", "log level: debug, info, warn, error")
	cmd.Flags().DurationVar(&drain, "drain", 30*time.Second, "how long shutdown waits for running tasks")
	return cmd
}

// setListeners applies --listen and --grpc-listen (each ignored when
// empty) to cfg. A base URL, or a gRPC address for the cards, that was
// only the default of the configured address follows the new one.
func setListeners(cfg *config.Config, listen, grpcListen string) {
	if listen != "" {
		if cfg.BaseURL == config.DefaultBaseURL(cfg.Listen) {
			cfg.BaseURL = config.DefaultBaseURL(listen)
		}
		cfg.Listen = listen
	}
	if grpcListen != "" {
		if cfg.GRPCListen == "" || cfg.GRPCURL == config.DefaultGRPCURL(cfg.GRPCListen) {
			cfg.GRPCURL = config.DefaultGRPCURL(grpcListen)
		}
		cfg.GRPCListen = grpcListen
	}
}

// serveGCPercent is the garbage collector's target for `pactum serve` when
// GOGC is not set: a server's heap is small and short-lived per request, so
// collecting a quarter as often buys throughput (≈ 9 % in
// docs/benchmarks.md) for a few tens of MB. GOMEMLIMIT, when set, still
// bounds the heap.
const serveGCPercent = 400

// tuneGC applies serveGCPercent unless the operator chose GOGC.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}

// stopNowHint ends the line a node logs when a signal starts its drain.
const stopNowHint = "press Ctrl-C again to stop now"

// secondSignal returns a channel closed when the process gets its second
// SIGINT or SIGTERM: the first ends the command's context (Main's signal
// context) and starts the drain, the second cuts it short. Call release
// when serving is over.
func secondSignal() (now <-chan struct{}, release func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ch, done := make(chan struct{}), make(chan struct{})
	go func() {
		// Count signals rather than wait for ctx first: a quick second
		// Ctrl-C must not be lost in between.
		seen := 0
		for {
			select {
			case <-sig:
				if seen++; seen == 2 {
					close(ch)
					return
				}
			case <-done:
				return
			}
		}
	}()
	return ch, func() { signal.Stop(sig); close(done) }
}
