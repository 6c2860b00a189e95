package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/internal/telemetry"
	"github.com/pactum/pactum/internal/version"
	"github.com/pactum/pactum/store"
)

func newMCPCmd() *cobra.Command {
	var (
		cf    configFlags
		drain time.Duration
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the configured agents to an MCP client over stdio",
		Long: `Run a pactum node whose MCP tools (submit_task, get_task, list_tasks,
cancel_task, retry_task, continue_task, list_agents, a tool per agent,
and run_contract when contracts are configured) speak over stdin and
stdout, for
desktop MCP clients that start their servers as commands. Logs go to
stderr; stdout carries only the protocol. The node runs tasks like
'pactum serve' does, on the same store, without an HTTP listener.

Client configuration (Claude Desktop and most others):

  {"mcpServers": {"pactum": {"command": "pactum",
    "args": ["mcp", "--config", "/path/to/pactum.yaml"]}}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, baseDir, err := cf.load()
			if err != nil {
				return err
			}
			log, err := newLogger(cmd.ErrOrStderr(), cfg.Log.Format, cfg.Log.Level)
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
			now, release := secondSignal()
			defer release()
			if err := srv.Start(cmd.Context()); err != nil {
				_ = srv.Stop(context.Background())
				return err
			}
			runErr := srv.MCP().RunStdio(cmd.Context())
			if err := srv.Drain(node.Shutdown{Drain: drain, Now: now, Hint: stopNowHint}, nil); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil && cmd.Context().Err() == nil {
				return fmt.Errorf("mcp over stdio: %w", runErr)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().DurationVar(&drain, "drain", 30*time.Second, "how long shutdown waits for running tasks")
	return cmd
}

func newMigrateCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the store's schema to this binary's version",
		Long: `Apply the store's pending schema migrations and exit. 'pactum serve' does the
same at start unless the configuration says 'migrate: false'; run this
first when it does, e.g. once per deployment before starting several nodes
on one PostgreSQL database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := cf.load()
			if err != nil {
				return err
			}
			log, err := newLogger(cmd.ErrOrStderr(), cfg.Log.Format, cfg.Log.Level)
			if err != nil {
				return err
			}
			n, err := store.Migrate(cmd.Context(), cfg.Store, log)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d migration(s) applied; schema is current\n", store.Redact(cfg.Store), n)
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
