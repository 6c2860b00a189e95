package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/agent"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
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
			if err := checkConfig(cmd.Context(), args[0]); err != nil {
				return err
			}
			cfg, err := config.Load(args[0])
			if err != nil {
				return err
			}
			counts, err := configCounts(cfg, dirOf(args[0]))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: OK (%s; runtimes known: %v)\n", args[0], counts, agent.Types())
			return nil
		},
	}
	cmd.AddCommand(check)
	return cmd
}

// configCounts says what a valid configuration serves: its agents, agent
// definitions and workflows, then its contracts and ToolSpecs when it has
// any ("2 agents, 3 agent definitions, 1 workflow, 1 contract").
func configCounts(cfg *config.Config, baseDir string) (string, error) {
	defs, _, _, err := node.Workflows(cfg, baseDir)
	if err != nil {
		return "", err
	}
	nDefs := 0
	if defs != nil {
		nDefs = len(defs.List())
	}
	parts := []string{
		plural(len(cfg.Agents), "agent", "agents"),
		plural(nDefs, "agent definition", "agent definitions"),
		plural(len(cfg.Workflows), "workflow", "workflows"),
	}
	if n := len(cfg.Contracts); n > 0 {
		parts = append(parts, plural(n, "contract", "contracts"))
	}
	if n := len(cfg.ToolSpecs); n > 0 {
		parts = append(parts, plural(n, "ToolSpec", "ToolSpecs"))
	}
	return strings.Join(parts, ", "), nil
}

// listWorkflows prints the agent definitions (with their files and the
// runtime each runs on) and the workflows with their agents: a parallel
// phase in brackets, and the agents neither configured nor defined.
func listWorkflows(out io.Writer, cfg *config.Config, baseDir string) error {
	defs, reg, known, err := node.Workflows(cfg, baseDir)
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
		var missing []string
		for _, a := range wf.Agents() {
			if known != nil && !known(a) {
				missing = append(missing, a)
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, phaseList(wf), cmp.Or(strings.Join(missing, ", "), "-"))
	}
	return w.Flush()
}

// checkConfig reports every problem of the configuration file at path at
// once, one per line in file order: what parsing finds and, on the parts
// that parsed, what node.Check finds (runtimes, contracts, definitions).
// A check error inside a field parsing already refused is left out: it
// says the same thing again.
func checkConfig(ctx context.Context, path string) error {
	cfg, perr := config.LoadPartial(path)
	if cfg == nil {
		return perr
	}
	var parsed config.Errors
	if perr != nil && !errors.As(perr, &parsed) {
		return perr
	}
	cerr := checkPartial(ctx, cfg, dirOf(path), perr != nil)
	if cerr == nil {
		return perr
	}
	var checked config.Errors
	if !errors.As(cerr, &checked) {
		if perr != nil {
			return errors.Join(perr, cerr)
		}
		return cerr
	}
	all := slices.Clone(parsed)
	for _, e := range checked {
		if !slices.ContainsFunc(parsed, func(p *config.Error) bool { return within(e.Path, p.Path) }) {
			all = append(all, e)
		}
	}
	return all.Err()
}

// checkPartial runs node.Check; on a configuration that did not parse
// cleanly (partial) a panic in a check is a consequence of what parsing
// already reported, and is dropped with that check's results.
func checkPartial(ctx context.Context, cfg *config.Config, baseDir string, partial bool) (err error) {
	if partial {
		defer func() {
			if recover() != nil {
				err = nil
			}
		}()
	}
	return node.Check(ctx, cfg, baseDir)
}

// within reports whether field path p is field path of or inside it.
func within(p, of string) bool {
	if of == "" || !strings.HasPrefix(p, of) {
		return of == "" && p == ""
	}
	rest := p[len(of):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}
