package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/toolspec"
)

func newToolSpecCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "toolspec",
		Short: "Check ToolSpecs, lock adapter contracts and verify changes against the lock",
		Long: `toolspec keeps the adapter contracts ToolSpecs map to from changing
silently: check checks ToolSpecs files and catalogues with no configuration
or server, lock records the catalogue in use, verify classifies every
change since the lock (MAJOR, MINOR, PATCH) and refuses a frozen contract
whose version bump is missing or too small, diff shows the classified
changes between two catalogues. See docs/toolspecs.md.`,
	}
	cmd.AddCommand(newToolSpecCheckCmd(), newToolSpecLockCmd(), newToolSpecVerifyCmd(), newToolSpecDiffCmd())
	return cmd
}

// catalogueFlags say which catalogue is in use: pactum's default
// catalogue plus the --catalogue files and, with --config, the
// configuration's `adapters:` files; and the ToolSpecs that changes are
// reported against: the --toolspecs files and, with --config, the
// configuration's `toolspecs:`. This is the one place the catalogue in use
// is assembled.
type catalogueFlags struct {
	config     string
	catalogues []string
	toolspecs  []string

	// found: config is ./pactum.yaml, taken because --config was not given.
	found   bool
	cfg     *config.Config // loaded by load
	baseDir string
}

// findConfig takes ./pactum.yaml as the configuration when --config is
// not given and that file exists (foundLocalConfig), so that lock and
// verify never read different catalogues (a lock written without the
// configuration's adapters: would make every verify with it fail, and the
// reverse).
func (f *catalogueFlags) findConfig() {
	if f.config != "" {
		return
	}
	if p := foundLocalConfig(); p != "" {
		f.config, f.found = p, true
	}
}

// readFrom says which configuration was read, for the summary lines: ""
// without one.
func (f *catalogueFlags) readFrom() string {
	switch {
	case f.cfg == nil:
		return ""
	case f.found:
		return "configuration " + f.config + ", found in the current directory"
	}
	return "configuration " + f.config
}

// lockCommand is the `pactum toolspec lock` command that writes lockFile
// from the same catalogues as these flags: what verify tells users to run.
func (f *catalogueFlags) lockCommand(lockFile string) string {
	var b strings.Builder
	b.WriteString("pactum toolspec lock")
	if f.config != "" && !f.found {
		b.WriteString(" --config " + f.config)
	}
	for _, c := range f.catalogues {
		b.WriteString(" --catalogue " + c)
	}
	if lockFile != toolspec.DefaultLockFile {
		b.WriteString(" --out " + lockFile)
	}
	return b.String()
}

func (f *catalogueFlags) register(cmd *cobra.Command, withToolSpecs bool) {
	cmd.Flags().StringVarP(&f.config, "config", "c", "", "configuration file whose adapters: catalogues and toolspecs: are used (and whose mcp agents' servers are read) (default: ./pactum.yaml when it exists)")
	cmd.Flags().StringArrayVar(&f.catalogues, "catalogue", nil, "catalogue file of adapter contracts added to the default catalogue (repeatable)")
	if withToolSpecs {
		cmd.Flags().StringArrayVar(&f.toolspecs, "toolspecs", nil, "ToolSpecs file {toolspecs: [...]}; findings list the ToolSpecs they affect (repeatable)")
	}
}

// load reads the --config file, if any, as serve does: relative paths in
// it resolve against its directory.
func (f *catalogueFlags) load() error {
	if f.config == "" || f.cfg != nil {
		return nil
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		return err
	}
	f.cfg, f.baseDir = cfg, filepath.Dir(f.config)
	return nil
}

// catalogue returns the catalogue in use: the default catalogue, every
// --catalogue file and the configuration's `adapters:` files, merged (an
// adapter_id defined twice is an error).
func (f *catalogueFlags) catalogue() (*toolspec.Catalogue, error) {
	if err := f.load(); err != nil {
		return nil, err
	}
	files := slices.Clone(f.catalogues)
	if f.cfg != nil {
		files = append(files, node.CatalogueFiles(f.cfg, f.baseDir)...)
	}
	cats := []*toolspec.Catalogue{toolspec.Default()}
	for _, file := range files {
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

// toolSpecs returns the ToolSpecs of the --toolspecs files and of the
// configuration.
func (f *catalogueFlags) toolSpecs() ([]toolspec.ToolSpec, error) {
	if err := f.load(); err != nil {
		return nil, err
	}
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
	if f.cfg != nil {
		specs, err := node.ConfigToolSpecs(f.cfg)
		if err != nil {
			return nil, err
		}
		all = append(all, specs...)
	}
	return all, nil
}

// liveServers reads the server of every `mcp` agent of the --config
// configuration (none without one).
func (f *catalogueFlags) liveServers(ctx context.Context) ([]node.LiveServer, error) {
	if err := f.load(); err != nil || f.cfg == nil {
		return nil, err
	}
	return node.LiveServers(ctx, f.cfg, f.baseDir)
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

func newToolSpecCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE…",
		Short: "Check ToolSpecs files and catalogues without a configuration or server",
		Long: `Check reads each FILE, a ToolSpecs file {toolspecs: [...]} or a catalogue
of adapter contracts {adapters: [...]} (YAML or JSON), with no
configuration and no server. Each catalogue must be valid on its own and
define no adapter that the default catalogue or another FILE defines; the
catalogues are added to the default catalogue, as a configuration's
adapters: files are, and every ToolSpec is checked against the result:
assertions 1 to 4 (the adapter_id, the adapter, the operation, the
contract version and the input schema). A ToolSpec with adapter_id: mcp
maps a live MCP server: only its assertion 1 is checked here ("toolspec
verify --live" checks the rest).

It prints "FILE: ok (N ToolSpecs)" or "FILE: ok (N adapter contracts)" for
each file that passes, and each problem of one that does not as
"FILE:LINE: PATH: message" on stderr. Exit status: 0 when every file
passes, 1 when any check fails, 2 when a file cannot be read or is not a
catalogue or ToolSpecs file.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkToolSpecFiles(cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
}

// checkToolSpecFiles is `pactum toolspec check FILE…`.
func checkToolSpecFiles(out, errOut io.Writer, files []string) error {
	inputs := make([]toolspec.FileInput, 0, len(files))
	readErr := make([]error, len(files))
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			readErr[i] = err
			continue
		}
		inputs = append(inputs, toolspec.FileInput{Name: file, Data: data})
	}
	reports := toolspec.CheckFiles(inputs...)
	unusable, failed := 0, 0
	for i := range files {
		if readErr[i] != nil {
			unusable++
			fmt.Fprintln(errOut, readErr[i])
			continue
		}
		r := reports[0]
		reports = reports[1:]
		switch {
		case r.Err != nil:
			unusable++
			fmt.Fprintln(errOut, r.Err)
		case !r.OK():
			failed++
			for _, e := range r.Problems {
				// A JSON Schema compiler's message of several lines keeps
				// its continuation lines under the FILE:LINE it belongs to.
				fmt.Fprintln(errOut, strings.ReplaceAll(e.Error(), "\n", "\n\t"))
			}
			if len(r.Unchecked) > 0 {
				fmt.Fprintf(errOut, "%s: ToolSpecs not checked against the catalogues until their problems are fixed (%s)\n",
					r.Name, strings.Join(r.Unchecked, ", "))
			}
		case r.Kind == toolspec.CatalogueFile:
			fmt.Fprintf(out, "%s: ok (%s)\n", r.Name, plural(r.Adapters, "adapter contract", "adapter contracts"))
		default:
			live := ""
			if r.Live > 0 {
				live = fmt.Sprintf("; %d with adapter_id mcp, checked against its server by `pactum toolspec verify --live`", r.Live)
			}
			fmt.Fprintf(out, "%s: ok (%s%s)\n", r.Name, plural(r.ToolSpecs, "ToolSpec", "ToolSpecs"), live)
		}
	}
	n := plural(len(files), "file", "files")
	switch {
	case unusable > 0 && failed > 0:
		return usageError(fmt.Errorf("%d of %s cannot be checked, %d failed", unusable, n, failed))
	case unusable > 0:
		return usageError(fmt.Errorf("%d of %s cannot be checked", unusable, n))
	case failed > 0:
		return fmt.Errorf("%d of %s failed the check", failed, n)
	}
	return nil
}

func newToolSpecLockCmd() *cobra.Command {
	var cf catalogueFlags
	var out string
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Write the lock file of the catalogue in use",
		Long: `Lock writes, for each adapter contract of the catalogue in use (the default
catalogue, the --catalogue files and, with --config, the configuration's
adapters: files), its version, the SHA-256 of its canonical form (RFC 8785
JSON) and the canonical contract itself, so that verify can classify later
changes anywhere.

With --config, lock also connects to the server of every mcp agent (stdio:
starts it; HTTP: connects), lists its tools and records them as the
adapter contract "mcp-<agent>" in the lock's live section, for
"verify --live". A server that cannot be reached is an error. Commit the
lock file.

Without --config, lock reads ./pactum.yaml when it exists, as verify does,
so that the two compare the same catalogues.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.findConfig()
			cat, err := cf.catalogue()
			if err != nil {
				return err
			}
			l, err := toolspec.NewLock(cat)
			if err != nil {
				return err
			}
			servers, err := cf.liveServers(cmd.Context())
			if err != nil {
				return err
			}
			for _, s := range servers {
				if s.Err != nil {
					return fmt.Errorf("agent %s: read the tools of %s: %w", s.Agent, s.Server, s.Err)
				}
				if err := l.AddLive(s.Contract); err != nil {
					return err
				}
			}
			data, err := l.Marshal()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return fmt.Errorf("write lock: %w", err)
			}
			live := ""
			if len(l.Live) > 0 {
				live = " and " + plural(len(l.Live), "MCP server", "MCP servers")
			}
			from := ""
			if r := cf.readFrom(); r != "" {
				from = " (" + r + ")"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: locked %s%s%s\n", out, plural(len(l.Adapters), "adapter contract", "adapter contracts"), live, from)
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
	var live bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare the catalogue in use with the lock; exit 1 on any finding",
		Long: `Verify compares the catalogue in use (the default catalogue, the
--catalogue files and, with --config, the configuration's adapters: files)
with the lock file and prints every finding:

  - every change since the lock, classified: "MAJOR adapter.operation kind: detail";
  - every violation of assertion 5 (a frozen contract changed without the
    version bump its largest change needs, a version that went down or is
    not semver, a frozen contract removed);
  - a contract whose version changed with no change to its interface.

With --toolspecs (and --config: its toolspecs:), each finding lists the
ToolSpecs it affects. When the changes are intended and the versions
right, run "pactum toolspec lock" with the same --config and --catalogue
flags and commit the new lock. Without --config, verify reads
./pactum.yaml when it exists, as lock does. Exit status: 0 when the
catalogue matches the lock, 1 on any finding.

With --live (and --config, or ./pactum.yaml), verify instead connects to
the server of every mcp agent of the configuration (stdio: starts it;
HTTP: connects), lists its tools and classifies them against the
server's contract in the lock ("mcp-<agent>", written by "lock" with the
configuration) with the same rules: a
tool that disappeared is MAJOR, an input schema changed in a breaking way
is MAJOR, a new tool or optional input MINOR. Each change lists the agent
and the ToolSpecs it affects; an agent whose ToolSpec (adapter_id: mcp)
no longer matches its tool is reported too. Exit status 1 on any breaking
finding (MAJOR, a ToolSpec violation, a server that cannot be reached or
that the lock does not hold); MINOR and PATCH changes are printed only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.findConfig()
			l, err := readLock(lockFile)
			if err != nil {
				return err
			}
			if live {
				return verifyLive(cmd, &cf, l, lockFile)
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
				return fmt.Errorf("%s against %s; when the changes are intended and the versions right, run `%s` and commit %s",
					plural(n, "finding", "findings"), lockFile, cf.lockCommand(lockFile), lockFile)
			}
			from := ""
			if r := cf.readFrom(); r != "" {
				from = "; " + r
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s match the lock%s)\n", lockFile, plural(len(cur.Adapters), "adapter contract", "adapter contracts"), from)
			return nil
		},
	}
	cf.register(cmd, true)
	cmd.Flags().StringVarP(&lockFile, "lock", "l", toolspec.DefaultLockFile, "lock file to verify against")
	cmd.Flags().BoolVar(&live, "live", false, "compare the configured MCP servers' tools with the lock instead of the catalogue (needs --config, or ./pactum.yaml)")
	return cmd
}

// verifyLive is `pactum toolspec verify --live`: the tools of every
// configured MCP server now, classified against the lock's live section.
func verifyLive(cmd *cobra.Command, cf *catalogueFlags, l *toolspec.Lock, lockFile string) error {
	if cf.config == "" {
		return errors.New("--live needs --config (or a pactum.yaml in the current directory): the configuration names the MCP servers")
	}
	w := cmd.OutOrStdout()
	servers, err := cf.liveServers(cmd.Context())
	if err != nil {
		return err
	}
	specs, err := cf.toolSpecs()
	if err != nil {
		return err
	}
	locked, err := l.LiveCatalogue()
	if err != nil {
		return err
	}
	cur := &toolspec.Catalogue{}
	byID := map[string]node.LiveServer{}
	n := 0
	for _, s := range servers {
		id := toolspec.LiveAdapterID(s.Agent)
		byID[id] = s
		if s.Err != nil {
			n++
			fmt.Fprintf(w, "UNREACHABLE %s: agent %s (%s): %v\n", id, s.Agent, s.Server, s.Err)
			continue
		}
		if _, ok := l.Live[id]; !ok {
			n++
			fmt.Fprintf(w, "LOCK %s: the lock holds no contract of agent %s's server (%s); run `%s`\n", id, s.Agent, s.Server, cf.lockCommand(lockFile))
			continue
		}
		cur.Adapters = append(cur.Adapters, s.Contract)
		if s.ToolSpec != nil {
			for _, v := range toolspec.CheckLive(*s.ToolSpec, s.Tools) {
				n++
				fmt.Fprintf(w, "TOOLSPEC %s: agent %s: %s\n", id, s.Agent, v.Error())
			}
		}
	}
	for _, c := range toolspec.Classify(locked, cur) {
		s, configured := byID[c.AdapterID]
		if configured && s.Err != nil {
			continue // reported as unreachable
		}
		if !configured {
			// A server no agent of the configuration uses any more.
			c.Detail += " (no mcp agent of the configuration calls it)"
		}
		if c.Bump == toolspec.Major {
			n++
		}
		fmt.Fprintln(w, c)
		if configured {
			var affected []string
			for _, ts := range specs {
				if s.ToolSpec != nil && ts.ToolID == s.ToolSpec.ToolID && (c.Operation == "" || c.Operation == ts.AdapterOperation) {
					affected = append(affected, ts.ToolID)
				}
			}
			if c.Operation == "" || c.Operation == s.Tool {
				fmt.Fprintf(w, "  affects agent %s (tool %s)\n", s.Agent, s.Tool)
			}
			if len(affected) > 0 {
				fmt.Fprintf(w, "  affects ToolSpecs: %s\n", strings.Join(affected, ", "))
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%s against %s; when the servers' changes are intended, update the agents and ToolSpecs, then run `%s` and commit %s",
			plural(n, "breaking finding", "breaking findings"), lockFile, cf.lockCommand(lockFile), lockFile)
	}
	fmt.Fprintf(w, "%s: ok (%s match the lock)\n", lockFile, plural(len(cur.Adapters), "MCP server", "MCP servers"))
	return nil
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
