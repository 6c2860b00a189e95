package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/audit"
)

// exitTampered is audit verify's exit code when the log does not check
// out.
const exitTampered = 2

func newAuditCmd() *cobra.Command {
	cf := configFlags{local: true}
	var expectHead string
	var asJSON bool
	cmd := &cobra.Command{Use: "audit", Short: "Work with the hash-chained audit log"}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Verify the audit chain, its head and the execution record; report the first bad entry",
		Long: `Verify reads every row of the audit log and reports the first edited, inserted,
removed, duplicated or out-of-range entry, a chain that ends before the store's
head record (truncated), and execution records without their audit entry.
It always prints the chain's head (sequence number and hash): keep it
somewhere the store's writers cannot reach and pass it back with
--expect-head to prove that nothing up to it was rewritten or cut off.
Exit status: 0 when everything checks out, 2 when it does not, 1 on errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opts audit.Options
			if expectHead != "" {
				h, err := audit.ParseHead(expectHead)
				if err != nil {
					return fmt.Errorf("--expect-head: %w", err)
				}
				opts.Anchor = &h
			}
			st, err := openStore(cmd.Context(), &cf, readOnly)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := audit.VerifyWith(cmd.Context(), st, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printReport(out, rep)
			}
			if !rep.OK {
				return exitError(exitTampered)
			}
			return nil
		},
	}
	cf.register(verify)
	verify.Flags().StringVar(&expectHead, "expect-head", "", "SEQ:HASH of a head recorded earlier: fail unless the chain still holds that entry")
	verify.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.AddCommand(verify)
	return cmd
}

// printReport writes the human-readable verdict: the chain's, the head,
// the anchor's and the execution record's, one line each.
func printReport(w io.Writer, rep *audit.Report) {
	if b := rep.Break; b != nil {
		fmt.Fprintf(w, "audit chain BROKEN at entry %d: %s (%s; %d entries read)\n", b.Seq, b.Message, b.Kind, rep.Entries)
	} else {
		fmt.Fprintf(w, "audit chain OK: %d entries\n", rep.Entries)
	}
	fmt.Fprintf(w, "head: seq %d hash %s\n", rep.Head.Seq, rep.Head.Hash)
	if h := rep.HeadRecord; h != nil && *h != rep.Head {
		fmt.Fprintf(w, "head record: seq %d hash %s\n", h.Seq, h.Hash)
	}
	if a := rep.Anchor; a != nil {
		verdict := "NOT in the chain"
		if rep.AnchorOK {
			verdict = "in the chain"
		}
		fmt.Fprintf(w, "anchor: seq %d hash %s: %s\n", a.Seq, a.Hash, verdict)
	}
	switch r := rep.Records; {
	case r == nil:
		fmt.Fprintln(w, "execution record: not cross-checked (the store cannot list it)")
	case r.OK:
		fmt.Fprintf(w, "execution record OK: %d records, each with its audit entry\n", r.Records)
	default:
		fmt.Fprintf(w, "execution record BROKEN: %s (%d problems; %d records, %d transition entries)\n", r.First.Message, r.Problems, r.Records, r.Transitions)
	}
}
