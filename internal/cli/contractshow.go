package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/workflow"
)

func newContractShowCmd() *cobra.Command {
	cf := &configFlags{local: true}
	var (
		agents string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a contract the configuration serves: a contract file's, or the one pactum writes for a workflow",
		Long: `Show prints the contract with id ID as the configuration serves it: a
contract of its contracts list, or workflow.NAME, the contract pactum writes
for workflow NAME (built-in or configured; each agent a step, each handoff
checked, its handoff check's configuration included). For workflow.custom
name the agents with --agents a,b,c.

The output is a contract file (YAML, or JSON with --json) that pactum
verify --contract reads; its first line is a comment with the digest of the
contract's canonical form, which every verified result of a run records.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, baseDir, err := cf.load()
			if err != nil {
				return usageError(err)
			}
			c, err := findContract(cfg, baseDir, args[0], splitList(agents))
			if err != nil {
				return usageError(err)
			}
			digest, err := contract.Digest(c)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, c)
			}
			return writeContractYAML(out, c, digest)
		},
	}
	cmd.Flags().StringVarP(&cf.path, "config", "c", "", "configuration file (default: ./"+localConfig+" when it exists, else the built-in default)")
	cmd.Flags().StringVar(&agents, "agents", "", "the agents of workflow.custom, in order: a,b,c")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the contract as JSON")
	return cmd
}

// writeContractYAML writes c as a contract file, after a comment naming
// its digest.
func writeContractYAML(w io.Writer, c *contract.AgentContract, digest string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# contract %s, digest %s\n", c.ID, digest)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("contract %s: %w", c.ID, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("contract %s: %w", c.ID, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// findContract returns the contract id names in cfg: workflow.NAME's (for
// custom, over agents), or a contract file's of its contracts list.
func findContract(cfg *config.Config, baseDir, id string, agents []string) (*contract.AgentContract, error) {
	if name, ok := strings.CutPrefix(id, "workflow."); ok {
		w, err := findWorkflow(cfg, baseDir, name, agents)
		if err != nil {
			return nil, err
		}
		return w.Contract(), nil
	}
	var ids []string
	for i := range cfg.Contracts {
		entry := cfg.ContractFile(i, baseDir)
		c, _, err := contract.Load(entry.File)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", entry.Path, err)
		}
		if c.ID == id {
			return c, nil
		}
		ids = append(ids, c.ID)
	}
	_, reg, _, err := node.Workflows(cfg, baseDir)
	if err != nil {
		return nil, err
	}
	for _, w := range reg.List() {
		ids = append(ids, workflow.ContractID(w.Name))
	}
	ids = append(ids, workflow.ContractID(workflow.Custom))
	return nil, fmt.Errorf("no contract %q in %s (contracts: %s)", id, configName(cfg), strings.Join(ids, ", "))
}

// findWorkflow returns workflow name of cfg (custom: of agents).
func findWorkflow(cfg *config.Config, baseDir, name string, agents []string) (*workflow.Workflow, error) {
	if name == workflow.Custom {
		if len(agents) == 0 {
			return nil, errors.New("workflow.custom runs the agents a run names: give them with --agents a,b,c")
		}
		return workflow.CustomWorkflow(agents)
	}
	if len(agents) > 0 {
		return nil, fmt.Errorf("--agents is for workflow.custom; workflow %s has its own agents", name)
	}
	_, reg, _, err := node.Workflows(cfg, baseDir)
	if err != nil {
		return nil, err
	}
	return reg.Lookup(name)
}

func configName(cfg *config.Config) string {
	if cfg.File() == "" {
		return "the built-in configuration"
	}
	return cfg.File()
}

// workflowForTrace returns the workflow to verify tr against: workflow
// name of cfg, or for custom the agents the run recorded on its steps.
// A run that recorded other agents than cfg's workflow has is refused,
// naming both.
func workflowForTrace(cfg *config.Config, baseDir, name string, tr *trace.Trace) (*workflow.Workflow, error) {
	var rec *workflow.Workflow
	for _, k := range tr.Children {
		if k == nil || k.Task == nil {
			continue
		}
		if w, ok := workflow.Recorded(k.Task.Envelope.Input); ok {
			rec = w
			break
		}
	}
	if rec != nil && rec.Name != name {
		return nil, fmt.Errorf("the trace is a run of workflow %s, not %s", rec.Name, name)
	}
	if name == workflow.Custom {
		if rec == nil {
			return nil, errors.New("the trace does not record the agents of its custom run: it is not a workflow run, or was recorded before pactum recorded them")
		}
		return rec, nil
	}
	w, err := findWorkflow(cfg, baseDir, name, nil)
	if err != nil {
		return nil, err
	}
	if rec != nil && !slices.EqualFunc(rec.Phases, w.Phases, func(a, b workflow.Phase) bool { return slices.Equal(a.Agents, b.Agents) }) {
		return nil, fmt.Errorf("the trace ran workflow %s with the agents %s; %s has %s", name, phaseList(rec), configName(cfg), phaseList(w))
	}
	return w, nil
}

// phaseList writes w's agents in order, as pactum agents lists them: a
// parallel phase in brackets, phases joined by " -> ".
func phaseList(w *workflow.Workflow) string {
	parts := make([]string, len(w.Phases))
	for i, p := range w.Phases {
		parts[i] = strings.Join(p.Agents, ", ")
		if p.Parallel() {
			parts[i] = "[" + parts[i] + "]"
		}
	}
	return strings.Join(parts, " -> ")
}
