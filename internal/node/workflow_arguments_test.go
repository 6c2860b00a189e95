package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// echoRoleScript answers with a valid handoff whose Context shows what
// the command's templates made of the attempt: its arguments are
// {{.System}}, {{.Tools}}, {{.Model}} and {{.Arguments}}.
const echoRoleScript = `input=$(cat)
heading=$(printf '%s\n' "$input" | sed -n 's/^Expected heading: //p')
printf '%s\n\n### Context\nsystem=[%s] tools=[%s] model=[%s] arguments=[%s]\n\n### Findings\n- looked\n\n### Files Modified\nNone\n\n### Open Questions\nNone\n\n### Recommendations\nNone\n' "$heading" "$1" "$2" "$3" "$4"
`

// definitionsNode starts a node whose agents are two definitions,
// planner and code-reviewer, on an exec runtime running echoRoleScript,
// with the workflow duo of the two. It returns the base URL and the node.
func definitionsNode(t *testing.T) (string, *node.Server) {
	t.Helper()
	dir := t.TempDir()
	defs := filepath.Join(dir, "agents")
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "role.sh")
	write(script, echoRoleScript)
	write(filepath.Join(defs, "planner.md"), "---\nname: planner\ndescription: Plans.\ntools: Read, Grep\nmodel: sonnet\n---\nYou plan.\n")
	write(filepath.Join(defs, "code-reviewer.md"), "---\nname: code-reviewer\ndescription: Reviews.\ntools: [Read]\nmodel: inherit\n---\nYou review.\n")
	yaml := fmt.Sprintf(`definitions:
  dirs: [agents]
  runtime: cli
  runtimes:
    cli:
      type: exec
      exec:
        command: [sh, %q, "{{.System}}", "{{.Tools}}", "{{.Model}}", "{{.Arguments}}"]
        timeout: 30s
        models: {sonnet: big-model}
workflows:
  - {name: duo, steps: [planner, code-reviewer]}
`, script)
	return startIn(t, dir, filepath.Join(dir, "pactum.yaml"), yaml, nil)
}

// checkStepsGot checks the steps of run: each succeeded, its stored input
// holds args under "# Arguments" after the task (and in its metadata),
// and its handoff shows its definition's role and args as its command's
// templates saw them.
func checkStepsGot(ctx context.Context, t *testing.T, coord *task.Coordinator, run, desc, args string, steps []string) {
	t.Helper()
	want := map[string]string{
		"planner":       "system=[You plan.] tools=[Read,Grep] model=[big-model] arguments=[" + args + "]",
		"code-reviewer": "system=[You review.] tools=[Read] model=[] arguments=[" + args + "]",
	}
	kids, err := coord.Children(ctx, run, -1, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != len(steps) {
		t.Fatalf("run %s has %d steps, want %d", run, len(kids), len(steps))
	}
	for i, k := range kids {
		name := k.Envelope.Step
		if name != steps[i] || k.State != task.StateSucceeded {
			t.Errorf("step %d: %s %s, want %s succeeded", i, name, k.State, steps[i])
			continue
		}
		in := k.Envelope.Input
		if block := "# Task\n" + desc + "\n\n# Arguments\n" + args + "\n\n# Prior handoffs\n"; !strings.HasPrefix(in.Text(), block) {
			t.Errorf("step %s: input does not start with %q:\n%s", name, block, in.Text())
		}
		if got, err := workflow.Arguments(in); err != nil || got != args {
			t.Errorf("step %s: metadata arguments %q, %v", name, got, err)
		}
		var out strings.Builder
		for _, a := range k.Artifacts {
			for _, p := range a.Parts {
				out.WriteString(p.Text)
			}
		}
		if !strings.Contains(out.String(), want[name]) {
			t.Errorf("step %s answered\n%s\nwant it to contain %q", name, out.String(), want[name])
		}
	}
}

// TestWorkflowArgumentsMCPAndA2A: the official MCP client's run_workflow
// with arguments, on a configured workflow and on custom, and an A2A
// message to workflow.duo with metadata {"pactum": {"arguments": ...}},
// give every step the arguments (input and {{.Arguments}}), and each
// exec definition its role ({{.System}}, {{.Tools}}, {{.Model}}); the
// stored run keeps them. Arguments that are not a string fail the run
// invalid_argument.
func TestWorkflowArgumentsMCPAndA2A(t *testing.T) {
	t.Parallel()
	base, srv := definitionsNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coord := srv.Coordinator()
	s := mcpSession(ctx, t, base)
	desc := "Add a --json flag to tasks list"

	for _, tc := range []struct {
		workflow string
		agents   []string
	}{
		{"duo", nil},
		{"custom", []string{"code-reviewer", "planner"}},
	} {
		args := map[string]any{"workflow": tc.workflow, "task": desc, "arguments": "x y"}
		steps := []string{"planner", "code-reviewer"}
		if tc.agents != nil {
			args["agents"] = tc.agents
			steps = tc.agents
		}
		out := callTool(ctx, t, s, "run_workflow", args)
		if out["state"] != string(task.StateSucceeded) {
			t.Fatalf("run_workflow %s: state %v (reason %v)", tc.workflow, out["state"], out["reason"])
		}
		id := fmt.Sprint(out["task_id"])
		run, err := coord.Get(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := workflow.Arguments(run.Envelope.Input); err != nil || got != "x y" {
			t.Errorf("run_workflow %s: the stored run's arguments %q, %v", tc.workflow, got, err)
		}
		checkStepsGot(ctx, t, coord, id, desc, "x y", steps)
	}

	duo := a2aClient(ctx, t, base, workflow.RunAgent("duo"))
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(desc))
	msg.Metadata = map[string]any{"pactum": map[string]any{"arguments": "over a2a"}}
	res, err := duo.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	run, ok := res.(*a2a.Task)
	if !ok || run.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("SendMessage answered %T %+v, want a completed task", res, res)
	}
	checkStepsGot(ctx, t, coord, string(run.ID), desc, "over a2a", []string{"planner", "code-reviewer"})

	msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(desc))
	msg.Metadata = map[string]any{"pactum": map[string]any{"arguments": []any{"not", "a string"}}}
	res, err = duo.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if bad, ok := res.(*a2a.Task); !ok || bad.Status.State != a2a.TaskStateFailed {
		t.Errorf("arguments that are not a string: %T %+v, want a failed task", res, res)
	} else if got, err := coord.Get(ctx, string(bad.ID), 0); err != nil || got.ErrorCode != task.CodeInvalidArgument {
		t.Errorf("arguments that are not a string: %v, %v; want invalid_argument", got, err)
	}
}
