package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// roleScript is the exec agent every definition of execDefinitions runs
// on. Its arguments are what the command's templates made of the
// attempt: {{.System}}, {{.Tools}}, {{.Model}}, {{.Arguments}} and the
// directory to record them in. It reads its heading with the docs'
// one-liner, records each argument and its standard input in
// DIR/ROLE.NAME, and answers with a valid handoff.
const roleScript = `input=$(cat)
heading=$(printf '%s\n' "$input" | sed -n 's/^Expected heading: //p')
role=$(printf '%s\n' "$heading" | sed -n 's/^## HANDOFF: \([^ ]*\) -> .*/\1/p')
[ -n "$role" ] || { echo "no heading in: $input" >&2; exit 3; }
printf '%s' "$1" > "$5/$role.system"
printf '%s' "$2" > "$5/$role.tools"
printf '%s' "$3" > "$5/$role.model"
printf '%s' "$4" > "$5/$role.arguments"
printf '%s' "$input" > "$5/$role.stdin"
printf '%s\n\n### Context\n%s answered.\n\n### Findings\n- %s looked.\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n' "$heading" "$role" "$role"
`

// execDefinition is one definition of execDefinitions and what its
// agent's templates must see.
type execDefinition struct {
	name, front, body string
	tools, model      string // {{.Tools}}, {{.Model}}
}

var execDefs = []execDefinition{
	{name: "planner", front: "tools: Read, Grep, Glob\nmodel: sonnet", body: "You are the planner.\nTurn the task into a plan.",
		tools: "Read,Grep,Glob", model: "claude-sonnet-4-5"},
	{name: "code-reviewer", front: "tools: [Read, \"Bash(git diff:*)\"]\nmodel: inherit", body: "You are the code reviewer; check the plan.",
		tools: "Read,Bash(git diff:*)", model: ""},
	{name: "architect", front: "model: opus-next", body: "You are the architect.",
		tools: "", model: "opus-next"},
}

// execDefinitions writes roleScript, a definition file per execDefs
// entry and a configuration whose definitions run on an exec runtime
// (models maps sonnet) with the workflow trio of the three; it returns
// the configuration's path and the directory the agents record in.
func execDefinitions(t *testing.T) (cfg, rec string) {
	t.Helper()
	dir := t.TempDir()
	rec = filepath.Join(dir, "rec")
	defs := filepath.Join(dir, "agents")
	for _, d := range []string{rec, defs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "role.sh")
	writeFile(t, script, roleScript)
	for _, d := range execDefs {
		writeFile(t, filepath.Join(defs, d.name+".md"), fmt.Sprintf("---\nname: %s\ndescription: The %s.\n%s\n---\n\n%s\n", d.name, d.name, d.front, d.body))
	}
	cfg = filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, fmt.Sprintf(`definitions:
  dirs: [agents]
  runtime: cli
  runtimes:
    cli:
      type: exec
      retry: {max_attempts: 2, initial_backoff: 10ms}
      exec:
        command: [sh, %q, "{{.System}}", "{{.Tools}}", "{{.Model}}", "{{.Arguments}}", %q]
        input: stdin
        timeout: 30s
        models: {sonnet: claude-sonnet-4-5}
workflows:
  - name: trio
    steps: [planner, code-reviewer, architect]
`, script, rec))
	return cfg, rec
}

// recorded reads what role's agent recorded as name.
func recorded(t *testing.T, rec, role, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rec, role+"."+name))
	if err != nil {
		t.Fatalf("%s did not record its %s: %v", role, name, err)
	}
	return string(b)
}

// TestWorkflowRunExecDefinitionsGetTheirRole: a `pactum run` of a
// workflow over definitions on an exec runtime gives each agent's
// command its definition: {{.System}} is the role body, {{.Tools}} its
// tools comma-separated, {{.Model}} its model through the runtime's
// models (inherit: ""; an alias without an entry: as written). Without
// --arguments, {{.Arguments}} is empty and the input has no "# Arguments"
// block.
func TestWorkflowRunExecDefinitionsGetTheirRole(t *testing.T) {
	t.Parallel()
	cfg, rec := execDefinitions(t)
	desc := "Add a --json flag to tasks list"
	r := pactumRun(t, tempStore(t), cfg, "trio", desc)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (SHIP)", r.code)
	}
	for _, d := range execDefs {
		if got := recorded(t, rec, d.name, "system"); got != d.body {
			t.Errorf("%s: {{.System}} = %q, want the role body %q", d.name, got, d.body)
		}
		if got := recorded(t, rec, d.name, "tools"); got != d.tools {
			t.Errorf("%s: {{.Tools}} = %q, want %q", d.name, got, d.tools)
		}
		if got := recorded(t, rec, d.name, "model"); got != d.model {
			t.Errorf("%s: {{.Model}} = %q, want %q", d.name, got, d.model)
		}
		if got := recorded(t, rec, d.name, "arguments"); got != "" {
			t.Errorf("%s: {{.Arguments}} = %q without --arguments", d.name, got)
		}
		if in := recorded(t, rec, d.name, "stdin"); !strings.HasPrefix(in, "# Task\n"+desc+"\n\n# Prior handoffs\n") || strings.Contains(in, "# Arguments") {
			t.Errorf("%s: the input without arguments:\n%s", d.name, in)
		}
	}
}

// TestWorkflowRunArguments: `pactum run … --arguments "x y"` gives every
// step the arguments, in its input under "# Arguments" right after the
// task (the docs' heading one-liner still reads the heading) and as
// {{.Arguments}}; the store keeps them in the run's input and in every
// step's input, text and metadata, so a restarted node has them.
func TestWorkflowRunArguments(t *testing.T) {
	t.Parallel()
	cfg, rec := execDefinitions(t)
	dsn := tempStore(t)
	desc := "Add a --json flag to tasks list"
	const args = "x y"
	r := pactumRun(t, dsn, cfg, "trio", desc, "--arguments", args)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (SHIP)", r.code)
	}
	block := "# Task\n" + desc + "\n\n# Arguments\n" + args + "\n\n# Prior handoffs\n"
	for _, d := range execDefs {
		if got := recorded(t, rec, d.name, "arguments"); got != args {
			t.Errorf("%s: {{.Arguments}} = %q, want %q", d.name, got, args)
		}
		if in := recorded(t, rec, d.name, "stdin"); !strings.HasPrefix(in, block) {
			t.Errorf("%s: the input does not start with %q:\n%s", d.name, block, in)
		}
	}

	// The stored run and its steps.
	run, steps := storedRun(t, dsn, runID(t, r.stdout))
	if got, err := workflow.Arguments(run.Envelope.Input); err != nil || got != args {
		t.Errorf("the stored run's arguments: %q, %v; want %q", got, err, args)
	}
	if len(steps) != len(execDefs) {
		t.Fatalf("the run has %d children, want %d", len(steps), len(execDefs))
	}
	for _, k := range steps {
		in := k.Envelope.Input
		if !strings.HasPrefix(in.Text(), block) {
			t.Errorf("step %s: stored input does not start with %q:\n%s", k.Envelope.Step, block, in.Text())
		}
		if got, err := workflow.Arguments(in); err != nil || got != args {
			t.Errorf("step %s: stored metadata arguments %q, %v; want %q", k.Envelope.Step, got, err, args)
		}
	}
}

// storedRun reads run id and its children, with their artifacts, from
// the store in dsn.
func storedRun(t *testing.T, dsn, id string) (*task.Task, []*task.Task) {
	t.Helper()
	ctx, coord := readStore(t, dsn)
	run, err := coord.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := coord.Children(ctx, id, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	return run, kids
}

// TestWorkflowRunArgumentsExamples: the example's role scripts, which
// read the message's blocks (examples/scripts/workflow/handoff.sh), run
// as before with --arguments: the arguments do not leak into the task
// they plan from, and the run ships.
func TestWorkflowRunArgumentsExamples(t *testing.T) {
	t.Parallel()
	desc := "Add a --json flag to tasks list"
	dsn := tempStore(t)
	r := pactumRun(t, dsn, examplesWorkflows, "feature", desc, "--arguments", "--dry-run please")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (SHIP)", r.code)
	}
	_, steps := storedRun(t, dsn, runID(t, r.stdout))
	if len(steps) != 3 {
		t.Fatalf("the run has %d children, want 3", len(steps))
	}
	for _, k := range steps {
		var text strings.Builder
		for _, a := range k.Artifacts {
			for _, p := range a.Parts {
				text.WriteString(p.Text)
			}
		}
		quotes := k.Envelope.Step != "planner" || strings.Contains(text.String(), `"`+desc+`"`)
		if !quotes || strings.Contains(text.String(), "dry-run") || strings.Contains(text.String(), "Arguments") {
			t.Errorf("step %s: the handoff does not quote the task alone:\n%s", k.Envelope.Step, text.String())
		}
	}
}

// cliStub stands in for claude and codex, which cannot run here (they
// need an account): it records its arguments, NUL-separated, in
// REC/ROLE, reads the heading its prompt asks for (on standard input for
// claude -p, the last argument for codex exec) and answers with a valid
// handoff.
const cliStub = `input=$(cat)
heading=$({ printf '%s\n' "$input"; for a in "$@"; do printf '%s\n' "$a"; done; } | sed -n 's/^Expected heading: //p' | sed -n 1p)
role=$(printf '%s\n' "$heading" | sed -n 's/^## HANDOFF: \([^ ]*\) -> .*/\1/p')
[ -n "$role" ] || { echo "no heading in: $input $*" >&2; exit 3; }
for a in "$@"; do printf '%s\0' "$a"; done > "REC/$role"
printf '%s\n\n### Context\nDone.\n\n### Findings\n- Looked.\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n' "$heading"
`

// TestDocDefinitionRecipes: the claude -p and codex exec recipes of
// docs/workflows.md ("Running definitions on claude -p or codex exec"),
// run as written by `pactum run` with their program replaced by a stub
// that records its arguments, hand each definition's role body, tools
// and model to the flags the docs name; the sh variant leaves out an
// empty --allowedTools or --model.
func TestDocDefinitionRecipes(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "workflows.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(doc), "### Running definitions on claude -p or codex exec\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	var blocks []string
	for rest := sec; ; {
		_, after, ok := strings.Cut(rest, "```yaml\n")
		if !ok {
			break
		}
		b, tail, _ := strings.Cut(after, "```\n")
		blocks = append(blocks, b)
		rest = tail
	}
	if len(blocks) != 3 {
		t.Fatalf("the section has %d yaml blocks, want 3 (claude, its sh variant, codex)", len(blocks))
	}
	claude, variant, codex := blocks[0], blocks[1], blocks[2]
	commandLine := func(b string) string {
		for l := range strings.SplitSeq(b, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "command: ") {
				return l
			}
		}
		t.Fatalf("no command line in\n%s", b)
		return ""
	}
	withoutModels := func(b string) string {
		var out []string
		for l := range strings.SplitSeq(b, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "models:") {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	body := map[string]string{}
	for _, d := range execDefs {
		body[d.name] = d.body
	}
	for _, tc := range []struct {
		name, yaml string
		want       map[string][]string
	}{
		{"claude", claude, map[string][]string{
			"planner":       {"-p", "--append-system-prompt", body["planner"], "--allowedTools", "Read,Grep,Glob", "--model", "sonnet"},
			"code-reviewer": {"-p", "--append-system-prompt", body["code-reviewer"], "--allowedTools", "Read,Bash(git diff:*)", "--model", "sonnet"},
			"architect":     {"-p", "--append-system-prompt", body["architect"], "--allowedTools", "", "--model", "opus-next"},
		}},
		{"claude sh variant", withoutModels(strings.Replace(claude, commandLine(claude), commandLine(variant), 1)), map[string][]string{
			"planner":       {"-p", "--append-system-prompt", body["planner"], "--allowedTools", "Read,Grep,Glob", "--model", "sonnet"},
			"code-reviewer": {"-p", "--append-system-prompt", body["code-reviewer"], "--allowedTools", "Read,Bash(git diff:*)"},
			"architect":     {"-p", "--append-system-prompt", body["architect"], "--model", "opus-next"},
		}},
		{"codex", codex, map[string][]string{
			"planner":       {"exec", "--sandbox", "read-only", "--model", "gpt-5", body["planner"] + "\n\n# Task\n"},
			"code-reviewer": {"exec", "--sandbox", "read-only", "--model", "gpt-5", body["code-reviewer"] + "\n\n# Task\n"},
			"architect":     {"exec", "--sandbox", "read-only", "--model", "opus-next", body["architect"] + "\n\n# Task\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, rec := execDefinitions(t)
			dir := filepath.Dir(cfg)
			stub := filepath.Join(dir, "stub")
			writeFile(t, stub, "#!/bin/sh\n"+strings.ReplaceAll(cliStub, "REC", rec))
			if err := os.Chmod(stub, 0o755); err != nil {
				t.Fatal(err)
			}
			y := strings.ReplaceAll(tc.yaml, "[.claude/agents]", "[agents]")
			y = strings.NewReplacer("[claude, ", "["+stub+", ", "exec claude ", "exec "+stub+" ", "[codex, ", "["+stub+", ").Replace(y)
			writeFile(t, cfg, y+"workflows:\n  - name: trio\n    steps: [planner, code-reviewer, architect]\n")
			r := pactumRun(t, tempStore(t), cfg, "trio", "Add a --json flag to tasks list")
			if r.code != 0 {
				t.Fatalf("exit %d, want 0 (SHIP)", r.code)
			}
			for role, want := range tc.want {
				b, err := os.ReadFile(filepath.Join(rec, role))
				if err != nil {
					t.Fatalf("%s: the stub was not called: %v", role, err)
				}
				got := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
				if n := len(want) - 1; tc.name == "codex" && len(got) == len(want) && strings.HasPrefix(got[n], want[n]) {
					got[n] = want[n] // the prompt: the role body, then the step's message
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: arguments\n%q\nwant\n%q", role, got, want)
				}
			}
		})
	}
}

// TestWorkflowRunWebhookDefinitionsGetTheirRole: definitions on a webhook
// runtime (an n8n-like flow on loopback) get their role in the default
// body (system, tools, model as written) and in a body template
// ({{.System}}, {{.Tools}}, {{.Model}}), with the arguments.
func TestWorkflowRunWebhookDefinitionsGetTheirRole(t *testing.T) {
	t.Parallel()
	type got struct {
		system, tools, model, args string
	}
	var mu sync.Mutex
	seen := map[string]got{}
	heading := regexp.MustCompile(`(?m)^Expected heading: (## HANDOFF: (\S+) -> .*)$`)
	flow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ChatInput string   `json:"chatInput"`
			System    string   `json:"system"`
			Tools     []string `json:"tools"`
			Model     string   `json:"model"`
			Templated *struct {
				System, Tools, Model, Arguments string
			} `json:"templated"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("body: %v", err)
		}
		var in string
		g := got{}
		if body.Templated != nil { // the body template
			in = body.ChatInput
			g = got{body.Templated.System, body.Templated.Tools, body.Templated.Model, body.Templated.Arguments}
		} else {
			in = body.ChatInput
			g = got{body.System, strings.Join(body.Tools, ","), body.Model, ""}
		}
		m := heading.FindStringSubmatch(in)
		if m == nil {
			http.Error(w, "no heading", http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[r.URL.Path+" "+m[2]] = g
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s\n\n### Context\nok\n\n### Findings\n- ok\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n", m[1])
	}))
	defer flow.Close()

	dir := t.TempDir()
	defs := filepath.Join(dir, "agents")
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range execDefs {
		writeFile(t, filepath.Join(defs, d.name+".md"), fmt.Sprintf("---\nname: %s\ndescription: The %s.\n%s\n---\n\n%s\n", d.name, d.name, d.front, d.body))
	}
	cfg := filepath.Join(dir, "pactum.yaml")
	writeFile(t, cfg, fmt.Sprintf(`definitions:
  dirs: [agents]
  runtime: flow
  runtimes:
    flow:
      type: webhook
      webhook: {url: %q, allow_private: true}
    templated:
      type: webhook
      webhook:
        url: %q
        allow_private: true
        body: '{"chatInput": {{json .Input}}, "templated": {"System": {{json .System}}, "Tools": {{json (printf "%%s" .Tools)}}, "Model": {{json .Model}}, "Arguments": {{json .Arguments}}}}'
workflows:
  - name: trio
    steps: [planner, code-reviewer, architect]
`, flow.URL+"/default", flow.URL+"/templated"))
	for _, runtime := range []string{"flow", "templated"} {
		c := cfg
		if runtime == "templated" {
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c = filepath.Join(dir, "templated.yaml")
			writeFile(t, c, strings.Replace(string(b), "  runtime: flow\n", "  runtime: templated\n", 1))
		}
		if r := pactumRun(t, tempStore(t), c, "trio", "Add a --json flag", "--arguments", "x y"); r.code != 0 {
			t.Fatalf("%s: exit %d, want 0 (SHIP)", runtime, r.code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range execDefs {
		// The model as the definition writes it: a webhook has no models map.
		model := d.front[strings.Index(d.front, "model: ")+len("model: "):]
		def := seen["/default "+d.name]
		if def.system != d.body || def.tools != d.tools || def.model != model {
			t.Errorf("%s, default body: %+v, want system %q tools %q model %q", d.name, def, d.body, d.tools, model)
		}
		tpl := seen["/templated "+d.name]
		if tpl.system != d.body || tpl.tools != d.tools || tpl.model != model || tpl.args != "x y" {
			t.Errorf("%s, body template: %+v, want system %q tools %q model %q arguments \"x y\"", d.name, tpl, d.body, d.tools, model)
		}
	}
}
