// Package cli is pactum's command line: serve, send, tasks, agents, audit, card,
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
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/version"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/task"
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
	root.AddCommand(newServeCmd(), newRunCmd(), newRunsCmd(), newSendCmd(), newTasksCmd(), newAgentsCmd(), newAuditCmd(), newAuthCmd(), newCardCmd(), newConfigCmd(), newContractCmd(), newMCPCmd(), newMigrateCmd(), newReplayCmd(), newToolSpecCmd(), newVerifyCmd(), newVersionCmd())
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
	// local makes a command that reads the store (tasks, runs, audit,
	// verify) use ./pactum.yaml, when it exists, in place of the built-in
	// default configuration: without --config and --store such a command
	// reads the store the server started here reads. See localStore.
	local bool
	// used is the store DSN the last load produced, and from says where it
	// came from: what a "not found" or an empty listing names.
	used, from string
}

// localConfig is the configuration file the store-reading commands use
// without --config and --store, when it exists.
const localConfig = "pactum.yaml"

func (f *configFlags) register(cmd *cobra.Command) {
	use := "configuration file (default: built-in demo agents)"
	if f.local {
		use = "configuration file, for its store (default: ./" + localConfig + " when it exists, else the store ./pactum.db)"
	}
	cmd.Flags().StringVarP(&f.path, "config", "c", "", use)
	cmd.Flags().StringVar(&f.store, "store", "", "store DSN, e.g. sqlite://pactum.db or postgres://… (overrides the config)")
}

// registerStore registers --config and --store as persistent flags of a
// command group that reads the store (tasks, runs), with local set.
func (f *configFlags) registerStore(cmd *cobra.Command, configUse string) {
	f.local = true
	cmd.PersistentFlags().StringVarP(&f.path, "config", "c", "", configUse+" (default: ./"+localConfig+" when it exists, else the store ./pactum.db)")
	cmd.PersistentFlags().StringVar(&f.store, "store", "", "store DSN (overrides the config)")
}

// configPath returns the configuration file load reads: --config, else,
// for a store-reading command without --store, ./pactum.yaml when it
// exists; "" for the built-in default.
func (f *configFlags) configPath() string {
	if f.path != "" || !f.local || f.store != "" {
		return f.path
	}
	return foundLocalConfig()
}

// foundLocalConfig returns ./pactum.yaml when it exists (a regular file),
// else "": the configuration the commands that read what a server here
// uses (its store, its catalogues) take without --config.
func foundLocalConfig() string {
	if fi, err := os.Stat(localConfig); err == nil && fi.Mode().IsRegular() {
		return localConfig
	}
	return ""
}

// load reads the configuration (or the built-in default) and applies flag
// overrides. It returns the directory relative paths resolve against.
func (f *configFlags) load() (*config.Config, string, error) {
	var cfg *config.Config
	baseDir := "."
	path := f.configPath()
	if path == "" {
		cfg = config.Default()
	} else {
		var err error
		cfg, err = config.Load(path)
		if err != nil {
			return nil, "", err
		}
		baseDir = filepath.Dir(path)
	}
	switch {
	case f.store != "":
		cfg.Store = f.store
		f.from = "--store"
	case f.path != "":
		f.from = "the store: of " + f.path
	case path != "":
		f.from = "the store: of ./" + localConfig + ", found in the working directory"
	case f.local:
		f.from = "the default: no --config, --store or ./" + localConfig
	default:
		f.from = "the built-in default (no --config)"
	}
	f.used = cfg.Store
	return cfg, baseDir, nil
}

// storeName names the store the last load chose, for messages: its DSN
// with any password hidden and a relative SQLite path made absolute, and
// where it came from.
func (f *configFlags) storeName() string {
	return fmt.Sprintf("store %s (from %s)", displayDSN(f.used), f.from)
}

// displayDSN is dsn as messages show it: redacted (no password), and a
// relative sqlite:// path made absolute against the working directory,
// which is where the driver opens it.
func displayDSN(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if ok && strings.EqualFold(scheme, "sqlite") {
		p, query, hasQuery := strings.Cut(rest, "?")
		if p != "" && p != ":memory:" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "file:") {
			if abs, err := filepath.Abs(p); err == nil {
				dsn = scheme + "://" + abs
				if hasQuery {
					dsn += "?" + query
				}
			}
		}
	}
	return store.Redact(dsn)
}

// inStore adds to a "not found" error the store it was looked for in, so
// that a task missing from the wrong store does not read as a task that
// never existed. The domain error (and its code) stays in the chain.
func inStore(err error, cf *configFlags) error {
	if err == nil || task.ErrorCode(err) != task.CodeNotFound || cf.used == "" {
		return err
	}
	return fmt.Errorf("%w in %s", err, cf.storeName())
}

// namingStore wraps the RunE of each command below cmd so that a "not
// found" it returns names the store it read (inStore).
func namingStore(cmd *cobra.Command, cf *configFlags) {
	for _, sub := range cmd.Commands() {
		namingStore(sub, cf)
		if run := sub.RunE; run != nil {
			sub.RunE = func(c *cobra.Command, args []string) error { return inStore(run(c, args), cf) }
		}
	}
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
