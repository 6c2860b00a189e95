package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/server"
)

func newAgentsCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use: "agents", Short: "List the configured agents and their card URLs", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := cf.load()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tTYPE\tACTION\tSENSITIVE\tDRY-RUN\tCARD")
			for _, a := range cfg.Agents {
				def := ""
				if a.Name == cfg.DefaultAgent {
					def = " (default)"
				}
				dryRun, byDefault := cfg.DryRun(&a)
				dry := fmt.Sprint(dryRun)
				if byDefault {
					dry += " (default: no approval covers the action)"
				}
				fmt.Fprintf(w, "%s%s\t%s\t%s\t%v\t%s\t%s/agents/%s/.well-known/agent-card.json\n", a.Name, def, a.Type, a.Action, a.Sensitive, dry, cfg.BaseURL, a.Name)
			}
			return w.Flush()
		},
	}
	cf.register(cmd)
	return cmd
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Work with configuration files"}
	check := &cobra.Command{
		Use: "check FILE", Short: "Validate a configuration file without serving", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.Load(args[0])
			if err != nil {
				return err
			}
			if err := server.Check(cmd.Context(), cfg, dirOf(args[0])); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: OK (%d agents; runtimes known: %v)\n", args[0], len(cfg.Agents), agent.Types())
			return nil
		},
	}
	cmd.AddCommand(check)
	return cmd
}
