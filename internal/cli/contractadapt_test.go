package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pactum/pactum/internal/e2e/mdblock"
)

// adapterTestdata is where the adapters' sample inputs are.
func adapterTestdata(p ...string) string {
	return filepath.Join(append([]string{"..", "..", "contract"}, p...)...)
}

// jsGraph is the shape @langchain/langgraph's getGraph().toJSON() prints
// (contract/langgraph's tests run the real one).
const jsGraph = `{"nodes": [{"id": "__start__", "type": "schema", "data": {"$schema": "https://json-schema.org/draft/2020-12/schema"}},
  {"id": "agent", "type": "runnable", "data": {"id": ["langgraph", "RunnableCallable"], "name": "agent"}, "metadata": {}},
  {"id": "tools", "type": "runnable", "data": {"id": ["langgraph", "RunnableCallable"], "name": "tools"}, "metadata": {}},
  {"id": "__end__", "type": "schema", "data": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}],
 "edges": [{"source": "__start__", "target": "agent", "conditional": false}, {"source": "tools", "target": "agent", "conditional": false},
  {"source": "agent", "target": "tools", "conditional": true}, {"source": "agent", "target": "__end__", "conditional": true}]}`

// TestContractImport: each new protocol's files import to a contract that
// contract check accepts; detection picks the protocol.
func TestContractImport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	graph := filepath.Join(dir, "graph.json")
	writeFile(t, graph, jsGraph)
	cases := []struct {
		name  string
		args  []string
		check string // contract check's line, after FILE
	}{
		{"langgraph", []string{graph}, ": ok (2 steps, 0 assertions)"},
		{"crewai two files", []string{adapterTestdata("crewai", "testdata", "agents.yaml"), adapterTestdata("crewai", "testdata", "tasks.yaml")}, ": ok (3 steps, 4 assertions)"},
		{"crewai one file", []string{adapterTestdata("crewai", "testdata", "crew.yaml"), "--from", "crewai"}, ": ok (2 steps, 3 assertions)"},
		{"autogen", []string{adapterTestdata("autogen", "testdata", "round_robin.json"), "--id", "poem-review"}, ": ok (2 steps, 1 assertion)"},
	}
	for i, tc := range cases {
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
		code, stdout, stderr := runMain(append([]string{"contract", "import", "--out", out}, tc.args...)...)
		if code != 0 || stdout != "" || !strings.Contains(stderr, "written to "+out) {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", tc.name, code, stdout, stderr)
		}
		code, stdout, stderr = runMain("contract", "check", out)
		if code != 0 || stdout != out+tc.check+"\n" {
			t.Fatalf("%s: contract check: exit %d\nstdout %s\nstderr %s", tc.name, code, stdout, stderr)
		}
		b, _ := os.ReadFile(out)
		if i == 3 && !strings.Contains(string(b), "\nid: poem-review\n") {
			t.Fatalf("--id not used:\n%s", b)
		}
	}
	// Without --out the contract goes to standard output.
	code, stdout, stderr := runMain("contract", "import", graph)
	if code != 0 || !strings.HasPrefix(stdout, "# made by pactum contract import from "+graph+" (langgraph)\nversion: \"1.0\"\n") || stderr != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// TestContractImportAgent: --agent puts every step on the pactum agent
// that serves the workflow (the step ids stay the nodes' names), so the
// contract passes contract check against a configuration with that agent,
// which refuses the same import without --agent; a name config would
// refuse is refused before anything is read.
func TestContractImportAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	graph := filepath.Join(dir, "graph.json")
	writeFile(t, graph, jsGraph)
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, "agents:\n  - name: report\n    type: echo\n")

	cases := []struct {
		name   string
		flags  []string
		agents []string // each step's agent, in order
		check  string   // contract check --config's stderr, empty when it passes
	}{
		{"without --agent", nil, []string{"agent", "tools"}, `steps[0].agent: agent "agent" is not configured`},
		{"with --agent", []string{"--agent", "report"}, []string{"report", "report"}, ""},
	}
	for _, tc := range cases {
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
		code, stdout, stderr := runMain(append([]string{"contract", "import", graph, "--out", out}, tc.flags...)...)
		if code != 0 || stdout != "" || !strings.Contains(stderr, "written to "+out) {
			t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", tc.name, code, stdout, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, step := range []string{"agent", "tools"} {
			if want := "  - id: " + step + "\n    agent: " + tc.agents[i] + "\n"; !strings.Contains(string(b), want) {
				t.Errorf("%s: no step %s on agent %s:\n%s", tc.name, step, tc.agents[i], b)
			}
		}
		if out := mustRun(t, "contract", "check", out); !strings.HasSuffix(out, ": ok (2 steps, 0 assertions)\n") {
			t.Errorf("%s: contract check printed %q", tc.name, out)
		}
		code, stdout, stderr = runMain("contract", "check", "--config", cfg, out)
		switch {
		case tc.check == "" && (code != 0 || stdout != out+": ok (2 steps, 0 assertions)\n"):
			t.Errorf("%s: contract check --config: exit %d\nstdout %s\nstderr %s", tc.name, code, stdout, stderr)
		case tc.check != "" && (code != 1 || !strings.Contains(stderr, tc.check)):
			t.Errorf("%s: contract check --config: exit %d, stderr %q; want exit 1 and %q", tc.name, code, stderr, tc.check)
		}
	}

	// Other protocols too: a CrewAI crew's tasks all go on the agent.
	code, stdout, stderr := runMain("contract", "import", adapterTestdata("crewai", "testdata", "crew.yaml"), "--from", "crewai", "--agent", "report")
	if code != 0 || strings.Count(stdout, "    agent: report\n") != 2 || strings.Count(stdout, "    agent: ") != 2 {
		t.Errorf("crewai --agent: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}

	for _, bad := range []string{"", "bad name", "-report", "ü", strings.Repeat("a", 65)} {
		code, stdout, stderr := runMain("contract", "import", graph, "--agent", bad)
		want := fmt.Sprintf("pactum: --agent: invalid name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)\n", bad)
		if code != 1 || stdout != "" || stderr != want {
			t.Errorf("--agent %q: exit %d\nstdout %s\nstderr %s\nwant %s", bad, code, stdout, stderr, want)
		}
	}
}

// TestContractImportErrors: problems name the file (and line, for YAML).
func TestContractImportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.yaml")
	writeFile(t, tasks, "write:\n  description: Write the post\n  expected_output: [a, b]\n  agent: writer\n  context: later\n")
	both := filepath.Join(dir, "both.json")
	writeFile(t, both, `{"task": {"id": "t1", "status": {"state": "TASK_STATE_SUBMITTED"}}, "tools": [], "calls": []}`)
	none := filepath.Join(dir, "none.json")
	writeFile(t, none, `{"hello": "world"}`)
	cycle := filepath.Join(dir, "cycle.yaml")
	writeFile(t, cycle, "tasks:\n  a: {description: d, expected_output: e, agent: w, context: [b]}\n  b: {description: d, expected_output: e, agent: w, context: [a]}\n")
	team := adapterTestdata("autogen", "testdata", "round_robin.json")
	broken := filepath.Join(dir, "broken.yaml")
	writeFile(t, broken, "a: [\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{tasks, "--from", "crewai"}, "pactum: " + tasks + ":3: write.expected_output: not a string\n" + tasks + ":5: write.context: not a list of task names\n"},
		{[]string{both}, "pactum: " + both + ": workflow matches more than one protocol: a2a and mcp; choose one by name (use --from)\n"},
		{[]string{none}, "pactum: " + none + ": workflow matches no protocol; looked for:\n"},
		{[]string{team, "--from", "nope"}, `pactum: no adapter for protocol "nope" (registered: a2a, autogen, crewai, langgraph, mcp, specwright)` + "\n"},
		{[]string{team, team}, "pactum: " + team + ", " + team + ": workflow matches no protocol"},
		{[]string{team, team, "--from", "autogen"}, "pactum: autogen reads one file, not 2\n"},
		{[]string{cycle}, "pactum: the contract " + cycle + " maps to is not valid:\n(output):"},
		{[]string{filepath.Join(dir, "missing.json")}, "no such file or directory"},
		{[]string{broken}, "pactum: " + broken + ": neither JSON nor YAML: yaml: line 1: did not find expected node content\n"},
		{[]string{broken, adapterTestdata("crewai", "testdata", "agents.yaml"), "--from", "crewai"}, "pactum: " + broken + ":2: invalid YAML: did not find expected node content\n"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runMain(append([]string{"contract", "import"}, tc.args...)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s\nwant %s", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestContractDetect prints each file's protocol, the candidates of an
// ambiguous one, and what was looked for when none claims a file; a YAML
// file of a JSON protocol is read too.
func TestContractDetect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	both := filepath.Join(dir, "both.json")
	writeFile(t, both, `{"task": {"id": "t1", "status": {"state": "TASK_STATE_SUBMITTED"}}, "tools": [], "calls": []}`)
	none := filepath.Join(dir, "none.json")
	writeFile(t, none, `{"hello": "world"}`)
	teamYAML := filepath.Join(dir, "team.yaml")
	writeFile(t, teamYAML, "component_type: team\nprovider: autogen_agentchat.teams.RoundRobinGroupChat\nconfig:\n  participants:\n    - config: {name: solo}\n")
	agents := adapterTestdata("crewai", "testdata", "agents.yaml")
	team := adapterTestdata("autogen", "testdata", "swarm.json")

	code, stdout, stderr := runMain("contract", "detect", agents, team, teamYAML)
	if want := agents + ": crewai\n" + team + ": autogen\n" + teamYAML + ": autogen\n"; code != 0 || stdout != want || stderr != "" {
		t.Fatalf("exit %d\nstdout %s\nwant %s\nstderr %s", code, stdout, want, stderr)
	}
	code, stdout, stderr = runMain("contract", "detect", both, none, team)
	if code != 1 || stdout != both+": ambiguous: a2a, mcp\n"+team+": autogen\n" ||
		!strings.HasPrefix(stderr, none+": workflow matches no protocol; looked for:\n  a2a: ") ||
		!strings.Contains(stderr, "\n  langgraph: an object with \"nodes\"") ||
		!strings.HasSuffix(stderr, "pactum: 2 of 3 files not claimed by exactly one protocol\n") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// TestContractExport: a contract exports to each protocol; what is
// exported is detected as that protocol and imports back to the same
// contract (CrewAI through its YAML).
func TestContractExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	imported := filepath.Join(dir, "crew.contract.yaml")
	if code, _, stderr := runMain("contract", "import", "--out", imported, adapterTestdata("crewai", "testdata", "agents.yaml"), adapterTestdata("crewai", "testdata", "tasks.yaml")); code != 0 {
		t.Fatal(stderr)
	}
	for _, to := range []string{"crewai", "langgraph", "autogen", "a2a", "mcp", "specwright"} {
		out := filepath.Join(dir, "exported."+to)
		code, stdout, stderr := runMain("contract", "export", imported, "--to", to, "--out", out)
		if code != 0 || stdout != "" || stderr != "" {
			t.Fatalf("export --to %s: exit %d\nstdout %s\nstderr %s", to, code, stdout, stderr)
		}
		code, stdout, stderr = runMain("contract", "detect", out)
		if code != 0 || stdout != out+": "+to+"\n" {
			t.Fatalf("the %s export is detected as: exit %d\nstdout %s\nstderr %s", to, code, stdout, stderr)
		}
	}
	// CrewAI to CrewAI: the same contract again.
	again := filepath.Join(dir, "again.yaml")
	if code, _, stderr := runMain("contract", "import", "--out", again, filepath.Join(dir, "exported.crewai")); code != 0 {
		t.Fatal(stderr)
	}
	a, _ := os.ReadFile(imported)
	b, _ := os.ReadFile(again)
	body := func(s []byte) string { return string(s[strings.IndexByte(string(s), '\n'):]) }
	if body(a) != body(b) {
		t.Fatalf("import → export → import changed the contract:\n%s\n----\n%s", a, b)
	}

	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "version: \"1.0\"\nid: bad\nsteps:\n  - id: a\n    dependsOn: [zz]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{imported}, "pactum: --to is required: one of a2a, autogen, crewai, langgraph, mcp, specwright\n"},
		{[]string{imported, "--to", "nope"}, `pactum: no adapter for protocol "nope"`},
		{[]string{bad, "--to", "langgraph"}, bad + `:5: steps[0].dependsOn[0]: unknown step "zz"`},
	} {
		code, stdout, stderr := runMain(append([]string{"contract", "export"}, tc.args...)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s\nwant %s", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestContractAdaptersDoc runs the lines of docs/contracts.md's
// import/detect/export example with the real binary, from a directory
// that sees the repository's examples, and compares what they print with
// what the doc shows.
func TestContractAdaptersDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contracts.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := mdblock.Extract(string(doc), "<!-- adapters:begin -->", "<!-- adapters:end -->", "sh", "the adapters example's")
	if err != nil {
		t.Fatal(err)
	}
	want, err := mdblock.Extract(string(doc), "<!-- adapters-output:begin -->", "<!-- adapters-output:end -->", "text", "the adapters example's output")
	if err != nil {
		t.Fatal(err)
	}
	bin := pactumBinary(t)
	dir := t.TempDir()
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		args := strings.Fields(line)
		if args[0] != "pactum" {
			t.Fatalf("%q: the example runs pactum only", line)
		}
		cmd := exec.Command(bin, args[1:]...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &got, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, stderr.String())
		}
	}
	if got.String() != want {
		t.Fatalf("the example printed:\n%s\ndocs/contracts.md shows:\n%s", got.String(), want)
	}
}

// TestContractTrace: a LangGraph thread's history (as the real Agent
// Server returned it) becomes a trace pactum verify judges.
func TestContractTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	history := adapterTestdata("langgraph", "testdata", "history.json")
	run := filepath.Join(dir, "run.json")
	if code, stdout, stderr := runMain("contract", "trace", history, "--from", "langgraph", "--out", run); code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	good := filepath.Join(dir, "report.yaml")
	writeFile(t, good, `version: "1.0"
id: report
protocol: langgraph
steps:
  - id: research
    agent: research
    assertions:
      - {type: assert, message: it found facts, check: {type: contains, value: "facts:"}}
  - id: write
    agent: write
    dependsOn: [research]
    assertions:
      - {type: assert, message: it wrote a report, check: {type: regex, pattern: "^# Report"}}
`)
	code, stdout, stderr := runMain("verify", "--contract", good, "--trace", run)
	if code != 0 || !strings.Contains(stdout, "passed: 2 of 2 steps passed") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, strings.Replace(readFile(t, good), "^# Report", "^# Summary", 1))
	if code, stdout, _ := runMain("verify", "--contract", bad, "--trace", run); code == 0 || !strings.Contains(stdout, "step write     failed") {
		t.Fatalf("exit %d\nstdout %s", code, stdout)
	}
	if code, _, stderr := runMain("contract", "trace", history, "--from", "crewai"); code != 1 || !strings.Contains(stderr, `--from: "crewai" has no run record pactum reads (supported: langgraph)`) {
		t.Fatalf("exit %d\nstderr %s", code, stderr)
	}
	notJSON := filepath.Join(dir, "h.json")
	writeFile(t, notJSON, `{"not": "a list"}`)
	if code, _, stderr := runMain("contract", "trace", notJSON); code != 1 || !strings.HasPrefix(stderr, "pactum: "+notJSON+": langgraph: history: ") {
		t.Fatalf("exit %d\nstderr %s", code, stderr)
	}
}
