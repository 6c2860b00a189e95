// Package cli is pactum's command line: serve, send, tasks, agents, audit,
// config, contract and version. cmd/pactum only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/version"
)

// Main runs the command line and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "pactum:", err)
		var ee exitError
		if errors.As(err, &ee) {
			return int(ee)
		}
		var ce *exitErr
		if errors.As(err, &ce) {
			return ce.code
		}
		return 1
	}
	return 0
}

// exitError carries a specific exit code (e.g. audit verify finding tampering).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "pactum",
		Short:         "Serve any agent as a durable A2A server",
		Long:          "pactum serves any agent (Go function, CLI agent, webhook, remote A2A agent) as an A2A 1.0 server, running every task through one durable, audited orchestration core.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	// --version prints the line `pactum version` prints.
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newRunCmd(), newRunsCmd(), newSendCmd(), newTasksCmd(), newAgentsCmd(), newAuditCmd(), newConfigCmd(), newContractCmd(), newMCPCmd(), newMigrateCmd(), newToolSpecCmd(), newVerifyCmd(), newVersionCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the pactum version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

// versionLine is what `pactum version` and `pactum --version` print.
func versionLine() string { return "pactum " + version.String() }

// configFlags are the flags shared by commands that read a configuration.
type configFlags struct {
	path  string
	store string
}

func (f *configFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.path, "config", "c", "", "configuration file (default: built-in demo agents)")
	cmd.Flags().StringVar(&f.store, "store", "", "store DSN, e.g. sqlite://pactum.db or postgres://… (overrides the config)")
}

// load reads the configuration (or the built-in default) and applies flag
// overrides. It returns the directory relative paths resolve against.
func (f *configFlags) load() (*config.Config, string, error) {
	var cfg *config.Config
	baseDir := "."
	if f.path == "" {
		cfg = config.Default()
	} else {
		var err error
		cfg, err = config.Load(f.path)
		if err != nil {
			return nil, "", err
		}
		baseDir = filepath.Dir(f.path)
	}
	if f.store != "" {
		cfg.Store = f.store
	}
	return cfg, baseDir, nil
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", format)
}

func dirOf(path string) string { return filepath.Dir(path) }
