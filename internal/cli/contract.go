package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
)

func newContractCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "contract", Short: "Work with contract files"}
	cmd.AddCommand(newContractCheckCmd(), newContractRunCmd(), newContractShowCmd(),
		newContractImportCmd(), newContractDetectCmd(), newContractExportCmd(), newContractTraceCmd(), newContractDiscoverCmd(),
		newContractValidateCmd(), newContractNegotiateCmd())
	return cmd
}

func newContractCheckCmd() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "check FILE…",
		Short: "Parse, validate and compile contract files without running anything",
		Long: `Check reads each contract file (YAML or JSON), validates its structure
(dependsOn names existing steps without cycles, every consumed resource is
created by a step it depends on or is a declared input, ids, types and
policies are valid) and compiles every check (schemas, patterns, JSONPath
and CEL expressions). With --config, every step's agent must be an agent of
that configuration.

It prints "FILE: ok (N steps, M assertions)" for each valid file and
"FILE:LINE: PATH: message" on stderr for each problem of an invalid one.
Exit status: 0 when every file is valid, 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var opts contract.ValidateOptions
			if configPath != "" {
				cfg, err := config.Load(configPath)
				if err != nil {
					return err
				}
				opts.KnownAgent = func(name string) bool {
					_, ok := cfg.Agent(name)
					return ok
				}
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			bad := 0
			for _, file := range args {
				c, compiled, err := contract.LoadWith(file, opts)
				if err != nil {
					bad++
					var es contract.Errors
					if !errors.As(err, &es) {
						fmt.Fprintf(errOut, "%s: %v\n", file, err)
						continue
					}
					for _, e := range es {
						// A message of several lines (a CEL or JSON Schema
						// compiler's) keeps its continuation lines indented
						// under the FILE:LINE it belongs to.
						fmt.Fprintln(errOut, strings.ReplaceAll(e.Error(), "\n", "\n\t"))
					}
					continue
				}
				r := contract.Report(c, compiled, nil)
				fmt.Fprintf(out, "%s: ok (%s, %s)\n", file, plural(r.Steps, "step", "steps"), plural(r.Assertions, "assertion", "assertions"))
			}
			if bad > 0 {
				return fmt.Errorf("%d of %s invalid", bad, plural(len(args), "contract file", "contract files"))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "configuration file whose agents the steps must name (default: agents not checked)")
	return cmd
}
