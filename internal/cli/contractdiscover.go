package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/spf13/cobra"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/discovery"
)

func newContractDiscoverCmd() *cobra.Command {
	var out string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "discover URL",
		Short: "Print the contracts an A2A agent's card declares it is verified against",
		Long: `Discover reads the agent card at URL (an agent's base URL, whose card is at
/.well-known/agent-card.json, or the card's own URL) and prints what its
contracts extension (` + "https://pactum.dev/ext/contracts/v1" + `) declares: whether
callers must activate it, each contract (id, version, digest, the steps
the agent's answers are checked against, where the contract is), the
resource types the agent produces and requires, and the URLs a contract
is validated and negotiated at (pactum contract validate, negotiate). Each contract is loaded
(embedded in the card, else from its URL) and its canonical form's digest
checked against the one the card names.

--out DIR writes each contract, checked, to DIR/ID.contract.json: a file
pactum contract check, verify and an a2a agent's contract: {file} take.
--json prints the extension's params as JSON.

Exit status: 0 when the card declares contracts and each loads with its
digest, 1 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return discover(cmd.Context(), cmd.OutOrStdout(), args[0], out, asJSON)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write each contract to DIR/ID.contract.json")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the extension's params as JSON")
	return cmd
}

// declared reads the agent card at url (an agent's base URL, or its
// card's own URL) and returns it with what its contracts extension
// declares.
func declared(ctx context.Context, url string) (*a2a.AgentCard, *discovery.Declared, error) {
	base, path := strings.TrimRight(url, "/"), ""
	if i := strings.Index(base, "/.well-known/"); i >= 0 {
		base, path = base[:i], base[i:]
	}
	var opts []agentcard.ResolveOption
	if path != "" {
		opts = append(opts, agentcard.WithPath(path))
	}
	card, err := agentcard.DefaultResolver.Resolve(ctx, base, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("read the agent card at %s: %w", url, err)
	}
	d, err := discovery.Contracts(card)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", card.Name, err)
	}
	return card, d, nil
}

func discover(ctx context.Context, w io.Writer, url, outDir string, asJSON bool) error {
	card, d, err := declared(ctx, url)
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(w, d.ContractsParams); err != nil {
			return err
		}
	} else {
		mode := "optional"
		if d.Required {
			mode = "required (callers must send A2A-Extensions: https://pactum.dev/ext/contracts/v1)"
		}
		fmt.Fprintf(w, "agent %s: contracts extension, %s\n", card.Name, mode)
		fmt.Fprintf(w, "produces: %s\nrequires: %s\n", orNone(d.Produces), orNone(d.Requires))
		if d.Validate != "" {
			fmt.Fprintf(w, "validate: %s\n", d.Validate)
		}
		if d.Negotiate != "" {
			fmt.Fprintf(w, "negotiate: %s\n", d.Negotiate)
		}
	}
	bad := 0
	for _, ref := range d.Contracts {
		c, from, err := discovery.Load(ctx, ref, func(ctx context.Context, u string) ([]byte, error) {
			return discovery.Fetch(ctx, nil, u, discovery.MaxContractBytes)
		})
		if !asJSON {
			how := "steps " + strings.Join(ref.Steps, ", ")
			if ref.Nodes {
				how = "each step on the node of its name: " + strings.Join(ref.Steps, ", ")
			}
			fmt.Fprintf(w, "contract %s %s %s\n  checked: %s\n  at: %s\n", ref.ID, ref.Version, ref.Digest, how, ref.URL)
		}
		if err != nil {
			bad++
			fmt.Fprintf(w, "  refused: %v\n", err)
			continue
		}
		if !asJSON {
			fmt.Fprintf(w, "  loaded from %s, digest checked (%d steps)\n", from, len(c.Steps))
		}
		if outDir != "" {
			b, err := contract.Canonical(c)
			if err != nil {
				return err
			}
			if !safeFileName.MatchString(c.ID) {
				// The id comes from the remote card: it names no path.
				bad++
				fmt.Fprintf(w, "  not written: its id %q is not a plain file name\n", c.ID)
				continue
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return err
			}
			f := filepath.Join(outDir, c.ID+".contract.json")
			if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(w, "  written to %s\n", f)
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %s could not be loaded with the digest the card names", bad, plural(len(d.Contracts), "contract", "contracts"))
	}
	return nil
}

// safeFileName is a contract id discover writes a file for.
var safeFileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func orNone(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}
