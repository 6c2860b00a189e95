package workflow_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// The role scripts of examples/workflows.yaml, run as real subprocesses on
// messages in the layout the engine sends each step (docs/workflows.md,
// "What each agent receives"), the way the exec runtime runs them: in the
// configuration file's directory, the message on standard input.

// message builds a step's message: the task, the prior handoffs (none for
// the first agent) and the heading the agent must write.
func message(task, prior, agent string, step, steps int, workflow, next string) string {
	if prior == "" {
		prior = "None: you are the first agent."
	}
	return fmt.Sprintf("# Task\n%s\n\n# Prior handoffs\n%s\n\n# Your handoff\n"+
		"You are %s, step %d of %d of workflow %s. End your answer with a handoff under exactly this heading:\n"+
		"Expected heading: ## HANDOFF: %s -> %s\n"+
		"Sections, each required, each \"None\" when there is nothing to say: ### Context, ### Findings, "+
		"### Files Modified, ### Open Questions, ### Recommendations. Optional: ### Test Results, ### Security Status.\n",
		task, prior, agent, step, steps, workflow, agent, next)
}

// runScript runs examples/scripts/workflow/<role>.sh with stdin as its
// standard input, in examples/ (where the exec runtime runs it: the
// configuration file's directory), and returns its standard output.
func runScript(t *testing.T, role, stdin string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", filepath.Join("scripts", "workflow", role+".sh"))
	cmd.Dir = filepath.Join("..", "examples")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s.sh: %v\nstderr: %s", role, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("%s.sh wrote to stderr: %s", role, stderr.String())
	}
	return stdout.String()
}

var (
	requiredSections = []string{"Context", "Findings", "Files Modified", "Open Questions", "Recommendations"}
	optionalSections = []string{"Test Results", "Security Status"}
)

// checkHandoff is a minimal stand-in for the engine's validator: the
// output's first line is the heading, every required section is present
// once with a non-blank body, and an optional section present has one. It
// will be replaced by workflow.CheckHandoff once that exists.
func checkHandoff(out, heading string) []string {
	var problems []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != heading {
		problems = append(problems, fmt.Sprintf("first line %q, want %q", lines[0], heading))
	}
	bodies := map[string][]string{}
	count := map[string]int{}
	var cur string
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "## "):
			problems = append(problems, fmt.Sprintf("a second heading %q", l))
			cur = ""
		case strings.HasPrefix(l, "### "):
			cur = strings.TrimPrefix(l, "### ")
			count[cur]++
		case cur != "" && strings.TrimSpace(l) != "":
			bodies[cur] = append(bodies[cur], l)
		}
	}
	for _, s := range requiredSections {
		if count[s] != 1 {
			problems = append(problems, fmt.Sprintf("section %q appears %d times, want 1", s, count[s]))
		}
	}
	for s, n := range count {
		known := false
		for _, k := range append(requiredSections[:len(requiredSections):len(requiredSections)], optionalSections...) {
			known = known || s == k
		}
		if !known {
			problems = append(problems, fmt.Sprintf("unknown section %q", s))
		}
		if n > 0 && len(bodies[s]) == 0 {
			problems = append(problems, fmt.Sprintf("section %q is empty (want None)", s))
		}
	}
	return problems
}

// sectionBody returns a section's body, trimmed.
func sectionBody(out, name string) string {
	_, rest, ok := strings.Cut(out, "\n### "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n### "); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

// mustHandoff runs a role on a message and checks its handoff.
func mustHandoff(t *testing.T, role, stdin, heading string) string {
	t.Helper()
	out := runScript(t, role, stdin)
	if problems := checkHandoff(out, heading); len(problems) > 0 {
		t.Fatalf("%s.sh: invalid handoff:\n- %s\noutput:\n%s", role, strings.Join(problems, "\n- "), out)
	}
	return out
}

// TestWorkflowScriptsFeature chains the feature workflow's scripts as the
// engine would: each gets the task and every earlier handoff.
func TestWorkflowScriptsFeature(t *testing.T) {
	t.Parallel()
	const task = "Add a --json flag to tasks list. Document it in docs/cli.md"

	plan := mustHandoff(t, "planner",
		message(task, "", "planner", 1, 3, "feature", "code-reviewer"),
		"## HANDOFF: planner -> code-reviewer")
	findings := sectionBody(plan, "Findings")
	for _, want := range []string{"1. Add a --json flag to tasks list.", "2. Document it in docs/cli.md."} {
		if !strings.Contains(findings, want) {
			t.Errorf("planner's plan lacks %q:\n%s", want, findings)
		}
	}
	if got := sectionBody(plan, "Files Modified"); got != "- docs/cli.md" {
		t.Errorf("planner's Files Modified = %q, want the path the task names", got)
	}

	review := mustHandoff(t, "code-reviewer",
		message(task, plan, "code-reviewer", 2, 3, "feature", "security-reviewer"),
		"## HANDOFF: code-reviewer -> security-reviewer")
	if got := sectionBody(review, "Findings"); !strings.Contains(got, "> 1. Add a --json flag to tasks list.") {
		t.Errorf("code-reviewer does not quote the plan it received:\n%s", got)
	}
	if got := sectionBody(review, "Test Results"); !strings.HasPrefix(got, "PASS: sh -n found no syntax errors in ") {
		t.Errorf("code-reviewer's Test Results = %q, want PASS from sh -n", got)
	}

	sec := mustHandoff(t, "security-reviewer",
		message(task, plan+"\n"+review, "security-reviewer", 3, 3, "feature", "done"),
		"## HANDOFF: security-reviewer -> done")
	if got := sectionBody(sec, "Security Status"); !strings.HasPrefix(got, "CLEAN") {
		t.Errorf("security-reviewer's Security Status = %q, want CLEAN", got)
	}
	for _, out := range []string{plan, review, sec} {
		if got := sectionBody(out, "Open Questions"); got != "None" {
			t.Errorf("Open Questions = %q, want None for a plain task (the run would not SHIP)", got)
		}
	}
}

// TestWorkflowScriptsSecrets: the security reviewer reports a secret in a
// file a prior handoff names, by place and kind, without repeating it.
func TestWorkflowScriptsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-but-longer"
	file := filepath.Join(t.TempDir(), "settings.go")
	if err := os.WriteFile(file, []byte("package settings\n\nconst password = \""+secret+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	prior := "## HANDOFF: code-reviewer -> security-reviewer\n\n### Context\nReviewed.\n\n### Findings\nNone\n\n" +
		"### Files Modified\n- `" + file + "`\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n"
	out := mustHandoff(t, "security-reviewer",
		message("Store the settings", prior, "security-reviewer", 2, 3, "security", "architect"),
		"## HANDOFF: security-reviewer -> architect")
	if got := sectionBody(out, "Security Status"); !strings.HasPrefix(got, "FINDINGS") {
		t.Errorf("Security Status = %q, want FINDINGS", got)
	}
	if got := sectionBody(out, "Findings"); !strings.Contains(got, file+":3: hard-coded password or token") {
		t.Errorf("Findings do not place the secret at %s:3:\n%s", file, got)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the handoff repeats the secret:\n%s", out)
	}
}

// TestWorkflowScriptsOthers: the explorer on a bug report, and the
// architect on a parallel phase's merged handoff (sections under
// "#### agent") before it.
func TestWorkflowScriptsOthers(t *testing.T) {
	t.Parallel()
	explore := mustHandoff(t, "explorer",
		message("summarize miscounts words; see scripts/summarize.sh", "", "explorer", 1, 2, "bugfix", "code-reviewer"),
		"## HANDOFF: explorer -> code-reviewer")
	if got := sectionBody(explore, "Files Modified"); got != "- scripts/summarize.sh" {
		t.Errorf("explorer's Files Modified = %q, want the existing file the report names", got)
	}

	plan := mustHandoff(t, "planner",
		message("Tighten the review", "", "planner", 1, 4, "review", "code-reviewer, security-reviewer"),
		"## HANDOFF: planner -> code-reviewer, security-reviewer")
	merged := "## HANDOFF: code-reviewer, security-reviewer -> architect\n\n" +
		"### Context\n#### code-reviewer\nReviewed.\n\n#### security-reviewer\nScanned.\n\n" +
		"### Findings\n#### code-reviewer\nNone\n\n#### security-reviewer\nNone\n\n" +
		"### Files Modified\n#### code-reviewer\n- exec.yaml\n\n#### security-reviewer\nNone\n\n" +
		"### Open Questions\n#### code-reviewer\nNone\n\n#### security-reviewer\nIs the token rotated?\n\n" +
		"### Recommendations\n#### code-reviewer\nNone\n\n#### security-reviewer\nNone\n\n" +
		"### Test Results\n#### code-reviewer\nPASS: 3 tests\n\n" +
		"### Security Status\n#### security-reviewer\nCLEAN: nothing found\n"
	arch := mustHandoff(t, "architect",
		message("Tighten the review", plan+"\n"+merged, "architect", 4, 4, "review", "done"),
		"## HANDOFF: architect -> done")
	if got := sectionBody(arch, "Context"); !strings.Contains(got, "from planner; code-reviewer, security-reviewer") {
		t.Errorf("architect's Context does not name the prior handoffs' authors: %q", got)
	}
	findings := sectionBody(arch, "Findings")
	for _, want := range []string{"> PASS: 3 tests", "> CLEAN: nothing found"} {
		if !strings.Contains(findings, want) {
			t.Errorf("architect's Findings lack %q:\n%s", want, findings)
		}
	}
	if got := sectionBody(arch, "Open Questions"); got != "Is the token rotated?" {
		t.Errorf("architect's Open Questions = %q, want the one still open", got)
	}
}

// TestWorkflowScriptsRetry: on a retry the script's standard input is its
// first message again, then its rejected answer and the feedback
// (task.Request.Text, as the engine sends an attempt after feedback); it
// writes the heading of its message (not the wrong one the rejected answer
// carries) and answers the feedback.
func TestWorkflowScriptsRetry(t *testing.T) {
	t.Parallel()
	for _, role := range []string{"planner", "code-reviewer", "security-reviewer", "explorer", "architect"} {
		first := message("Fix the crash", "", role, 2, 4, "review", "architect, security-reviewer")
		rejected := "## HANDOFF: " + role + "x -> architect\n\n### Context\nFirst try.\n\n### Findings\n\n"
		fb := "Your previous answer did not meet its contract. Fix the following and answer again:\n" +
			"- the heading is \"## HANDOFF: " + role + "x -> architect\"\n" +
			"- section \"Findings\" is empty (write None when there is nothing to say)\n"
		rt := &task.Retry{
			Request:  task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart(first)}},
			Answer:   &task.Message{Role: task.RoleAgent, Parts: []task.Part{task.TextPart(rejected)}},
			Feedback: []task.Message{{Role: task.RoleUser, Parts: []task.Part{task.TextPart(fb)}}},
		}
		out := mustHandoff(t, role, rt.Text(), "## HANDOFF: "+role+" -> architect, security-reviewer")
		if !regexp.MustCompile(`(?m)^- Fixed: section "Findings" is empty`).MatchString(sectionBody(out, "Findings")) {
			t.Errorf("%s.sh's retry does not answer the feedback:\n%s", role, out)
		}
	}
}
