package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/contract/adapters"
	"github.com/pactum/pactum/contract/langgraph"
)

// The protocol adapters from the command line: import a protocol's
// workflow as a contract, say which protocol a file is, export a
// contract to a protocol.

func newContractImportCmd() *cobra.Command {
	var from, out, id, agent string
	var opts contract.AdapterOptions
	var strictness string
	cmd := &cobra.Command{
		Use:   "import FILE…",
		Short: "Make a contract from a protocol's workflow (LangGraph graph JSON, CrewAI YAML, AutoGen team JSON, …)",
		Long: `Import reads a protocol's description of a piece of agent work and writes
the contract it maps to, as YAML that "pactum contract check" accepts:

  - langgraph: a graph's JSON (Python get_graph().to_json(), JS getGraph().toJSON())
  - crewai:    a project's agents.yaml and tasks.yaml (two files), or one file with agents: and tasks:
  - autogen:   an AgentChat team's component JSON (team.dump_component())
  - a2a, mcp, specwright: their JSON (see docs/contracts.md)

The protocol is detected from the file unless --from names it; a file two
protocols could claim needs --from. Files in YAML are read too.

Each step's agent is the one the workflow names (a LangGraph node's id, a
CrewAI task's agent) unless --agent names the pactum agent that serves the
whole workflow, as the langgraph runtime serves a graph: then every step's
agent is that agent, which a contract on it needs (pactum config check
refuses a step whose agent is not configured); the step ids stay the
workflow's names.

The contract is written to --out (default: standard output). A contract the
workflow maps to that is not valid (a CrewAI context that closes a cycle) is
reported as "pactum contract check" would, and nothing is written.`,
		Example: `  pactum contract import graph.json --out contract.yaml
  pactum contract import config/agents.yaml config/tasks.yaml --from crewai
  pactum contract import team.json --id poem-review
  pactum contract import graph.json --from langgraph --id report --agent report`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("agent") {
				if err := config.CheckName(agent); err != nil {
					return fmt.Errorf("--agent: %w", err)
				}
			}
			if strictness != "" {
				opts.Strictness = contract.Strictness(strictness)
			}
			c, protocol, err := importContract(args, from, opts)
			if err != nil {
				return err
			}
			if id != "" {
				c.ID = id
			}
			if agent != "" {
				for i := range c.Steps {
					c.Steps[i].Agent = agent
				}
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# made by pactum contract import from %s (%s)\n", strings.Join(args, ", "), protocol)
			enc := yaml.NewEncoder(&b)
			enc.SetIndent(2)
			if err := enc.Encode(c); err != nil {
				return fmt.Errorf("contract %s: %w", c.ID, err)
			}
			if err := enc.Close(); err != nil {
				return fmt.Errorf("contract %s: %w", c.ID, err)
			}
			// What is written must be what contract check accepts.
			name := out
			if name == "" {
				name = "(output)"
			}
			if _, _, err := contract.LoadBytes(name, b.Bytes(), contract.ValidateOptions{}); err != nil {
				return fmt.Errorf("the contract %s maps to is not valid:\n%w", strings.Join(args, ", "), err)
			}
			if out == "" {
				_, err := cmd.OutOrStdout().Write(b.Bytes())
				return err
			}
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s contract %s (%s) written to %s\n", strings.Join(args, ", "), protocol, c.ID, plural(len(c.Steps), "step", "steps"), out)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the protocol of the files (default: detected): "+strings.Join(adapters.Default().Protocols(), ", "))
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write the contract to (default: standard output)")
	cmd.Flags().StringVar(&id, "id", "", "the contract's id (default: the adapter's, from a hash of the workflow)")
	cmd.Flags().StringVar(&agent, "agent", "", "the pactum agent that serves this workflow; every step's agent becomes `NAME` (default: the workflow's own names)")
	cmd.Flags().StringVar(&strictness, "strictness", "", "the contract's strictness: strict, loose or permissive (default: loose)")
	cmd.Flags().BoolVar(&opts.PreserveMetadata, "preserve-metadata", false, "also keep what the mapping table does not carry, so export gives it back")
	cmd.Flags().BoolVar(&opts.AutoAssertions, "auto-assertions", false, "add the assertions the adapter can derive (per adapter: docs/contracts.md)")
	return cmd
}

// readWorkflow reads the files of one workflow: one file is its bytes
// (converted from YAML to JSON when only that makes an adapter claim
// it), several are contract.Documents.
func readWorkflow(files []string, r *contract.Registry, from string) (any, error) {
	docs := make(contract.Documents, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs[i] = contract.Document{Name: f, Data: b}
	}
	if len(docs) > 1 {
		return docs, nil
	}
	data := docs[0].Data
	if json.Valid(data) {
		return data, nil
	}
	var probe yaml.Node
	if err := yaml.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: neither JSON nor YAML: %w", files[0], err)
	}
	// A protocol whose format is JSON, written as YAML: converted when
	// only the conversion is claimed (CrewAI reads its YAML itself, and
	// keeps its lines for errors).
	claimed := func(in []byte) bool {
		if from != "" {
			a, err := r.Lookup(from)
			d, ok := a.(contract.Detector)
			return err == nil && ok && d.Detects(in)
		}
		_, err := r.Detect(in)
		return !errors.Is(err, contract.ErrUnknownWorkflow)
	}
	if claimed(data) {
		return data, nil
	}
	if j, err := yamlToJSON(data); err == nil && claimed(j) {
		return j, nil
	}
	return data, nil
}

// yamlToJSON converts a YAML document to JSON.
func yamlToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// adapterFor returns the adapter --from names, or the one that detects
// in, with an error naming the files.
func adapterFor(r *contract.Registry, from string, in any, files []string) (contract.ProtocolAdapter, error) {
	if from != "" {
		return r.Lookup(from)
	}
	a, err := r.Detect(in)
	if err != nil {
		if errors.Is(err, contract.ErrAmbiguousWorkflow) {
			return nil, fmt.Errorf("%s: %w (use --from)", strings.Join(files, ", "), err)
		}
		return nil, fmt.Errorf("%s: %w", strings.Join(files, ", "), err)
	}
	return a, nil
}

func importContract(files []string, from string, opts contract.AdapterOptions) (*contract.AgentContract, string, error) {
	r := adapters.Default()
	in, err := readWorkflow(files, r, from)
	if err != nil {
		return nil, "", err
	}
	a, err := adapterFor(r, from, in, files)
	if err != nil {
		return nil, "", err
	}
	c, err := a.ToContract(in, opts)
	if err != nil {
		return nil, "", placeErr(files, a.Protocol(), err)
	}
	return c, a.Protocol(), nil
}

// placeErr names the file an adapter's error is about: field errors
// without a file get the file (there is one), any other error is
// prefixed with the files.
func placeErr(files []string, protocol string, err error) error {
	if errors.Is(err, contract.ErrUnsupportedInput) && len(files) > 1 {
		return fmt.Errorf("%s reads one file, not %d", protocol, len(files))
	}
	var es contract.Errors
	if errors.As(err, &es) {
		for i := range es {
			if es[i].File == "" {
				es[i].File = files[0]
			}
		}
		return es
	}
	if len(files) > 1 {
		return err // the adapter read named Documents: its errors name the file
	}
	return fmt.Errorf("%s: %w", files[0], err)
}

func newContractDetectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "detect FILE…",
		Short: "Say which protocol's workflow each file is",
		Long: `Detect prints "FILE: PROTOCOL" for each file an adapter claims. A file that
several protocols could claim prints "FILE: ambiguous: P1, P2" (import it
with --from); a file none claims prints what each adapter looks for. Exit
status: 0 when every file is claimed by exactly one protocol, 1 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := adapters.Default()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			bad := 0
			for _, f := range args {
				in, err := readWorkflow([]string{f}, r, "")
				if err != nil {
					bad++
					fmt.Fprintln(errOut, err)
					continue
				}
				var claims []string
				for _, p := range r.Protocols() {
					a, _ := r.Get(p)
					if d, ok := a.(contract.Detector); ok && d.Detects(in) {
						claims = append(claims, p)
					}
				}
				switch len(claims) {
				case 1:
					fmt.Fprintf(out, "%s: %s\n", f, claims[0])
				case 0:
					bad++
					_, err := r.Detect(in)
					fmt.Fprintf(errOut, "%s: %v\n", f, err)
				default:
					bad++
					fmt.Fprintf(out, "%s: ambiguous: %s\n", f, strings.Join(claims, ", "))
				}
			}
			if bad > 0 {
				return fmt.Errorf("%d of %s not claimed by exactly one protocol", bad, plural(len(args), "file", "files"))
			}
			return nil
		},
	}
}

func newContractExportCmd() *cobra.Command {
	var to, out string
	cmd := &cobra.Command{
		Use:   "export FILE --to PROTOCOL",
		Short: "Convert a contract to a protocol's workflow (LangGraph graph JSON, CrewAI YAML, AutoGen team JSON, …)",
		Long: `Export reads a contract file (it must pass "pactum contract check") and
writes the workflow the protocol's adapter makes of it: JSON, or for crewai
one YAML file with agents: and tasks:. A contract that was imported from the
same protocol gives back what was imported (docs/contracts.md says, per
adapter, what the round trip keeps).`,
		Example: `  pactum contract export contract.yaml --to langgraph
  pactum contract export contract.yaml --to crewai --out crew.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return fmt.Errorf("--to is required: one of %s", strings.Join(adapters.Default().Protocols(), ", "))
			}
			a, err := adapters.Default().Lookup(to)
			if err != nil {
				return err
			}
			c, _, err := contract.Load(args[0])
			if err != nil {
				return err
			}
			w, err := a.FromContract(c)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			b, err := encodeWorkflow(to, w)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			var dst io.Writer = cmd.OutOrStdout()
			if out != "" {
				return os.WriteFile(out, b, 0o644)
			}
			_, err = dst.Write(b)
			return err
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the protocol to export to: "+strings.Join(adapters.Default().Protocols(), ", "))
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write to (default: standard output)")
	return cmd
}

// encodeWorkflow writes a protocol's workflow in its file format.
func encodeWorkflow(protocol string, w any) ([]byte, error) {
	if protocol == "crewai" {
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(w); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func newContractTraceCmd() *cobra.Command {
	var from, out string
	cmd := &cobra.Command{
		Use:   "trace FILE --from PROTOCOL",
		Short: "Make a trace pactum verify judges from a protocol's record of a run (a LangGraph thread's history)",
		Long: `Trace reads a protocol's record of a run and writes it as a pactum trace
(docs/contracts.md, "The trace format"), for "pactum verify" to check
against the contract "pactum contract import" made of the workflow:

  - langgraph: a thread's history as the Agent Server returns it
    (POST /threads/THREAD_ID/history): the run is the trace's task, each
    node that ran a child running the node's step, its state update its
    answer.

The trace goes to --out (default: standard output).`,
		Example: `  curl -s -X POST $SERVER/threads/$THREAD/history -H 'content-type: application/json' -d '{}' > history.json
  pactum contract trace history.json --from langgraph --out run.json
  pactum verify --contract graph.contract.yaml --trace run.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from != "langgraph" {
				return fmt.Errorf("--from: %q has no run record pactum reads (supported: langgraph)", from)
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			h, err := langgraph.DecodeHistory(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			tr, err := langgraph.HistoryTrace(h, time.Now())
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			var b bytes.Buffer
			if err := tr.Encode(&b); err != nil {
				return err
			}
			if out == "" {
				_, err := cmd.OutOrStdout().Write(b.Bytes())
				return err
			}
			return os.WriteFile(out, b.Bytes(), 0o644)
		},
	}
	cmd.Flags().StringVar(&from, "from", "langgraph", "the protocol of the record: langgraph")
	cmd.Flags().StringVarP(&out, "out", "o", "", "file to write the trace to (default: standard output)")
	return cmd
}
