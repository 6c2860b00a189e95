package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/toolspec"
)

func newToolSpecCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "toolspec",
		Short: "Lock adapter contracts and verify changes against the lock",
		Long: `toolspec keeps the adapter contracts ToolSpecs map to from changing
silently: lock records the catalogue in use, verify classifies every change
since the lock (MAJOR, MINOR, PATCH) and refuses a frozen contract whose
version bump is missing or too small, diff shows the classified changes
between two catalogues. See docs/toolspecs-versions.md.`,
	}
	cmd.AddCommand(newToolSpecLockCmd(), newToolSpecVerifyCmd(), newToolSpecDiffCmd())
	return cmd
}

// catalogueFlags say which catalogue is in use: pactum's default
// catalogue plus the --catalogue files, and the ToolSpecs (--toolspecs)
// that changes are reported against. This is the one place the
// catalogue in use is assembled: the configuration's adapters: files and
// toolspecs: join it here, next to the --catalogue files and the
// --toolspecs files, when the command takes --config.
type catalogueFlags struct {
	catalogues []string
	toolspecs  []string
}

func (f *catalogueFlags) register(cmd *cobra.Command, withToolSpecs bool) {
	cmd.Flags().StringArrayVar(&f.catalogues, "catalogue", nil, "catalogue file of adapter contracts added to the default catalogue (repeatable)")
	if withToolSpecs {
		cmd.Flags().StringArrayVar(&f.toolspecs, "toolspecs", nil, "ToolSpecs file {toolspecs: [...]}; findings list the ToolSpecs they affect (repeatable)")
	}
}

// catalogue returns the catalogue in use: the default catalogue and every
// --catalogue file, merged (an adapter_id defined twice is an error).
func (f *catalogueFlags) catalogue() (*toolspec.Catalogue, error) {
	cats := []*toolspec.Catalogue{toolspec.Default()}
	for _, file := range f.catalogues {
		c, err := readCatalogue(file)
		if err != nil {
			return nil, err
		}
		cats = append(cats, c)
	}
	return mergeCatalogues(cats...)
}

// mergeCatalogues checks the catalogues together (as the registry does)
// and returns their adapters as one catalogue.
func mergeCatalogues(cats ...*toolspec.Catalogue) (*toolspec.Catalogue, error) {
	if _, err := toolspec.NewRegistry(cats...); err != nil {
		return nil, err
	}
	all := &toolspec.Catalogue{Source: "catalogue in use"}
	for _, c := range cats {
		all.Adapters = append(all.Adapters, c.Adapters...)
	}
	return all, nil
}

func (f *catalogueFlags) toolSpecs() ([]toolspec.ToolSpec, error) {
	var all []toolspec.ToolSpec
	for _, file := range f.toolspecs {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		specs, err := toolspec.ParseToolSpecs(file, data)
		if err != nil {
			return nil, err
		}
		all = append(all, specs...)
	}
	return all, nil
}

func readCatalogue(file string) (*toolspec.Catalogue, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return toolspec.ParseCatalogue(file, data)
}

// readCatalogueOrLock reads a catalogue file, or the catalogue a lock file
// records.
func readCatalogueOrLock(file string) (*toolspec.Catalogue, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c, err := toolspec.ParseCatalogue(file, data)
	if err == nil {
		return c, nil
	}
	if l, lerr := toolspec.DecodeLock(data); lerr == nil {
		return l.Catalogue()
	}
	return nil, err
}

func readLock(file string) (*toolspec.Lock, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w (write one with `pactum toolspec lock`)", err)
		}
		return nil, err
	}
	l, err := toolspec.DecodeLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return l, nil
}

func newToolSpecLockCmd() *cobra.Command {
	var cf catalogueFlags
	var out string
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Write the lock file of the catalogue in use",
		Long: `Lock writes, for each adapter contract of the catalogue in use (the default
catalogue plus the --catalogue files), its version, the SHA-256 of its
canonical form (RFC 8785 JSON) and the canonical contract itself, so that
verify can classify later changes anywhere. Commit the lock file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := cf.catalogue()
			if err != nil {
				return err
			}
			l, err := toolspec.NewLock(cat)
			if err != nil {
				return err
			}
			data, err := l.Marshal()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return fmt.Errorf("write lock: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: locked %s\n", out, plural(len(l.Adapters), "adapter contract", "adapter contracts"))
			return nil
		},
	}
	cf.register(cmd, false)
	cmd.Flags().StringVarP(&out, "out", "o", toolspec.DefaultLockFile, "lock file to write")
	return cmd
}

func newToolSpecVerifyCmd() *cobra.Command {
	var cf catalogueFlags
	var lockFile string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare the catalogue in use with the lock; exit 1 on any finding",
		Long: `Verify compares the catalogue in use (the default catalogue plus the
--catalogue files) with the lock file and prints every finding:

  - every change since the lock, classified: "MAJOR adapter.operation kind: detail";
  - every violation of assertion 5 (a frozen contract changed without the
    version bump its largest change needs, a version that went down or is
    not semver, a frozen contract removed);
  - a contract whose version changed with no change to its interface.

With --toolspecs, each finding lists the ToolSpecs it affects. When the
changes are intended and the versions right, run "pactum toolspec lock" and
commit the new lock. Exit status: 0 when the catalogue matches the lock, 1
on any finding.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := readLock(lockFile)
			if err != nil {
				return err
			}
			locked, err := l.Catalogue()
			if err != nil {
				return err
			}
			cur, err := cf.catalogue()
			if err != nil {
				return err
			}
			specs, err := cf.toolSpecs()
			if err != nil {
				return err
			}
			n := report(cmd.OutOrStdout(), locked, cur, specs)
			drifted, err := l.Drifted(cur)
			if err != nil {
				return err
			}
			changed := map[string]bool{}
			for _, c := range toolspec.Classify(locked, cur) {
				changed[c.AdapterID] = true
			}
			lockedBy := map[string]toolspec.AdapterContract{}
			for _, a := range locked.Adapters {
				lockedBy[a.AdapterID] = a
			}
			for _, a := range cur.Adapters {
				if !changed[a.AdapterID] && slices.Contains(drifted, a.AdapterID) {
					n++
					fmt.Fprintf(cmd.OutOrStdout(), "LOCK %s: version %s → %s with no change to the contract; the lock is out of date\n",
						a.AdapterID, lockedBy[a.AdapterID].Version, a.Version)
				}
			}
			if n > 0 {
				return fmt.Errorf("%s against %s; when the changes are intended and the versions right, run `pactum toolspec lock` and commit %s",
					plural(n, "finding", "findings"), lockFile, lockFile)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s match the lock)\n", lockFile, plural(len(cur.Adapters), "adapter contract", "adapter contracts"))
			return nil
		},
	}
	cf.register(cmd, true)
	cmd.Flags().StringVarP(&lockFile, "lock", "l", toolspec.DefaultLockFile, "lock file to verify against")
	return cmd
}

// report prints the classified changes from old to new and the bump
// violations, each with the ToolSpecs it affects, and returns how many
// findings it printed.
func report(w io.Writer, old, new *toolspec.Catalogue, specs []toolspec.ToolSpec) int {
	n := 0
	affects := func(c toolspec.Change) {
		if ids := toolspec.AffectedToolSpecs(c, specs); len(ids) > 0 {
			fmt.Fprintf(w, "  affects ToolSpecs: %s\n", strings.Join(ids, ", "))
		}
	}
	for _, c := range toolspec.Classify(old, new) {
		n++
		fmt.Fprintln(w, c)
		affects(c)
	}
	for _, v := range toolspec.CheckBumps(old, new) {
		n++
		fmt.Fprintln(w, v.Error())
		affects(toolspec.Change{AdapterID: v.AdapterID})
	}
	return n
}

func newToolSpecDiffCmd() *cobra.Command {
	var specFiles []string
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Print the classified changes between two catalogues",
		Long: `Diff prints every change from catalogue file OLD to catalogue file NEW
(either may also be a lock file), classified as MAJOR, MINOR or PATCH, then
every version bump the changes need and do not have (assertion 5). It is
for reviewing a change; the exit status is 0 unless a file cannot be read.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			old, err := readCatalogueOrLock(args[0])
			if err != nil {
				return err
			}
			cur, err := readCatalogueOrLock(args[1])
			if err != nil {
				return err
			}
			cf := catalogueFlags{toolspecs: specFiles}
			specs, err := cf.toolSpecs()
			if err != nil {
				return err
			}
			if report(cmd.OutOrStdout(), old, cur, specs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no changes")
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&specFiles, "toolspecs", nil, "ToolSpecs file {toolspecs: [...]}; changes list the ToolSpecs they affect (repeatable)")
	return cmd
}
