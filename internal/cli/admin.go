package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/server"
)

func newAgentsCmd() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use: "agents", Short: "List the configured agents, agent definitions and workflows", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, baseDir, err := cf.load()
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
			if err := w.Flush(); err != nil {
				return err
			}
			return listWorkflows(cmd.OutOrStdout(), cfg, baseDir)
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

// listWorkflows prints the agent definitions (with their files and the
// runtime each runs on) and the workflows with their agents: a parallel
// phase in brackets, and the agents neither configured nor defined.
func listWorkflows(out io.Writer, cfg *config.Config, baseDir string) error {
	defs, reg, known, err := server.Workflows(cfg, baseDir)
	if err != nil {
		return err
	}
	if list := defs.List(); len(list) > 0 {
		fmt.Fprintln(out)
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "DEFINITION\tRUNTIME\tMODEL\tFILE\tCARD")
		for _, d := range list {
			_, rt, ok := cfg.DefinitionRuntime(d.Runtime)
			if !ok {
				rt = "(none)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s:%d\t%s/agents/%s/.well-known/agent-card.json\n",
				d.Name, rt, cmp.Or(d.Model, "-"), d.File, d.Line, cfg.BaseURL, d.Name)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKFLOW\tAGENTS\tMISSING")
	for _, wf := range reg.List() {
		name := wf.Name
		if wf.Builtin {
			name += " (built-in)"
		}
		var phases, missing []string
		for _, p := range wf.Phases {
			if p.Parallel() {
				phases = append(phases, "["+strings.Join(p.Agents, ", ")+"]")
			} else {
				phases = append(phases, strings.Join(p.Agents, ""))
			}
			for _, a := range p.Agents {
				if known != nil && !known(a) {
					missing = append(missing, a)
				}
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, strings.Join(phases, " -> "), cmp.Or(strings.Join(missing, ", "), "-"))
	}
	return w.Flush()
}
