package workflow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/internal/coordtest"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// agentFunc answers one attempt of a step: its request (Message is the
// step's input on the first attempt, the gate's feedback on a retry).
type agentFunc func(ctx context.Context, req *task.Request) (string, error)

// runBundle is a started Coordinator on a real SQLite store serving the
// workflows as run agents (workflow.RunAgent) and each agent as a step
// agent (workflow.StepAgent) behind the handoff gate, answering with
// agents[name].
type runBundle struct {
	coord *task.Coordinator
	mu    sync.Mutex
	calls map[string][]*task.Request // each agent's requests, in order
}

func setupRun(t *testing.T, wfs []*workflow.Workflow, agents map[string]agentFunc, attempts int) *runBundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &runBundle{calls: map[string][]*task.Request{}}
	retry := task.RetryPolicy{MaxAttempts: attempts, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	var specs []task.AgentSpec
	for _, w := range wfs {
		specs = append(specs, task.AgentSpec{Name: workflow.RunAgent(w.Name), Runner: workflow.Runner(w, workflow.RunOptions{}), Timeout: 10 * time.Second, Retry: retry})
	}
	specs = append(specs, task.AgentSpec{
		Name: workflow.RunAgent(workflow.Custom), Timeout: 10 * time.Second, Retry: retry,
		Runner: workflow.CustomRunner(func(a string) bool { return agents[a] != nil }, workflow.RunOptions{}),
	})
	for name, f := range agents {
		specs = append(specs, task.AgentSpec{
			Name: workflow.StepAgent(name), Timeout: 10 * time.Second, Retry: retry, ChildOnly: true,
			Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
				b.mu.Lock()
				b.calls[name] = append(b.calls[name], req)
				b.mu.Unlock()
				out, err := f(ctx, req)
				if err != nil {
					return nil, err
				}
				return &task.Result{Artifacts: []task.Artifact{{Name: "answer", Parts: []task.Part{task.TextPart(out)}}}}, nil
			}),
			Middleware: []task.Middleware{workflow.Gate(workflow.GateOptions{})},
		})
	}
	b.coord = coordtest.Start(t, task.Options{Store: st, PollInterval: 10 * time.Millisecond, Agents: specs, Workers: 8})
	return b
}

func (b *runBundle) submit(t *testing.T, wf, desc string, md map[string]any) *task.Task {
	t.Helper()
	sub, err := b.coord.Submit(context.Background(), task.SubmitRequest{Envelope: task.Envelope{
		Action: workflow.RunAgent(wf), Actor: "tester",
		Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(desc)}, Metadata: md},
	}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return sub.Task
}

func (b *runBundle) wait(t *testing.T, id string) (*task.Task, []*task.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.coord.Wait(ctx, id); err != nil {
		t.Fatalf("wait: %v", err)
	}
	got, err := b.coord.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := b.coord.Children(ctx, id, -1, true)
	if err != nil {
		t.Fatal(err)
	}
	return got, kids
}

func (b *runBundle) run(t *testing.T, wf, desc string, md map[string]any) (*task.Task, []*task.Task, *workflow.Report) {
	t.Helper()
	got, kids := b.wait(t, b.submit(t, wf, desc, md).ID)
	if got.State != task.StateSucceeded {
		t.Fatalf("run %s: %s (%s)", got.ID, got.State, got.Reason)
	}
	r, err := workflow.ReportOf(got)
	if err != nil || r == nil {
		t.Fatalf("report of %s: %v %v", got.ID, r, err)
	}
	// The text and the data are the same report.
	for _, a := range got.Artifacts {
		if a.Name == workflow.ReportArtifact {
			parsed, err := workflow.ParseReport(a.Parts[0].Text)
			if err != nil {
				t.Fatalf("parse the report's text: %v\n%s", err, a.Parts[0].Text)
			}
			if parsed.Recommendation != r.Recommendation || !slices.Equal(parsed.Agents, r.Agents) || parsed.Summary != r.Summary {
				t.Fatalf("the report's text and data differ:\n%+v\n%+v", parsed, r)
			}
		}
	}
	return got, kids, r
}

func (b *runBundle) requests(name string) []*task.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls[name])
}

var headingLine = regexp.MustCompile(`(?m)^Expected heading: (.*)$`)

// handoff answers with a valid handoff under the heading the input asks
// for (or, on a retry, the one the feedback quotes).
func handoff(findings string, files ...string) agentFunc {
	return func(_ context.Context, req *task.Request) (string, error) {
		return validHandoff(req, findings, "None", files...), nil
	}
}

func validHandoff(req *task.Request, findings, questions string, files ...string) string {
	heading := ""
	for _, m := range req.History {
		if s := headingLine.FindStringSubmatch(m.Text()); s != nil {
			heading = s[1]
		}
	}
	fm := "None"
	if len(files) > 0 {
		fm = "- " + strings.Join(files, "\n- ")
	}
	return fmt.Sprintf("Done.\n\n%s\n\n### Context\nWorked on the task.\n\n### Findings\n%s\n\n### Files Modified\n%s\n\n### Open Questions\n%s\n\n### Recommendations\nGo on.\n",
		heading, findings, fm, questions)
}

func TestSequentialRunHandsOverAndReports(t *testing.T) {
	t.Parallel()
	feature := builtin(t, "feature")
	b := setupRun(t, []*workflow.Workflow{feature}, map[string]agentFunc{
		"planner":           handoff("Three steps: parse, store, print.", "cmd/tool.go"),
		"code-reviewer":     handoff("The plan holds.", "cmd/tool.go", "cmd/tool_test.go"),
		"security-reviewer": handoff("No secrets in the diff."),
	}, 2)
	run, kids, r := b.run(t, "feature", "Add a --json flag", nil)
	if r.Recommendation != workflow.Ship {
		t.Fatalf("recommendation %s (%v), want SHIP", r.Recommendation, r.Reasons)
	}
	if got := strings.Join(r.Agents, ","); got != "planner,code-reviewer,security-reviewer" {
		t.Fatalf("agents %s", got)
	}
	if !slices.Equal(r.FilesChanged, []string{"cmd/tool.go", "cmd/tool_test.go"}) {
		t.Fatalf("files changed %v", r.FilesChanged)
	}
	if len(kids) != 3 || kids[0].Envelope.Step != "planner" || kids[2].Envelope.Step != "security-reviewer" {
		t.Fatalf("children %v", kids)
	}
	// Each agent got the description, every prior handoff and its heading.
	want := map[string][]string{
		"planner":           {"None: you are the first agent.", "Expected heading: ## HANDOFF: planner -> code-reviewer"},
		"code-reviewer":     {"## HANDOFF: planner -> code-reviewer", "Three steps: parse, store, print.", "Expected heading: ## HANDOFF: code-reviewer -> security-reviewer"},
		"security-reviewer": {"## HANDOFF: planner -> code-reviewer", "## HANDOFF: code-reviewer -> security-reviewer", "The plan holds.", "Expected heading: ## HANDOFF: security-reviewer -> done"},
	}
	for agent, subs := range want {
		reqs := b.requests(agent)
		if len(reqs) != 1 {
			t.Fatalf("%s called %d times", agent, len(reqs))
		}
		in := reqs[0].Message.Text()
		if !strings.HasPrefix(in, "# Task\nAdd a --json flag\n") {
			t.Fatalf("%s input starts %q", agent, in[:min(40, len(in))])
		}
		for _, s := range subs {
			if !strings.Contains(in, s) {
				t.Fatalf("%s input lacks %q:\n%s", agent, s, in)
			}
		}
	}
	if !strings.Contains(run.Reason, "SHIP") {
		t.Fatalf("run reason %q", run.Reason)
	}
}

// TestParallelMergeIsDeterministic runs a parallel phase 20 times with
// random completion order: the merged handoff the next agent gets is
// byte-identical every time, in declared order.
func TestParallelMergeIsDeterministic(t *testing.T) {
	t.Parallel()
	review := &workflow.Workflow{Name: "review", Phases: []workflow.Phase{
		{Agents: []string{"planner"}},
		{Agents: []string{"code-reviewer", "security-reviewer", "explorer"}},
		{Agents: []string{"architect"}},
	}}
	slow := func(findings string) agentFunc {
		return func(ctx context.Context, req *task.Request) (string, error) {
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
			return validHandoff(req, findings, "None", "f-"+findings), nil
		}
	}
	b := setupRun(t, []*workflow.Workflow{review}, map[string]agentFunc{
		"planner":           handoff("plan"),
		"code-reviewer":     slow("code"),
		"security-reviewer": slow("security"),
		"explorer":          slow("explore"),
		"architect":         handoff("design"),
	}, 2)
	var first string
	orders := map[string]bool{}
	for i := range 20 {
		_, kids, r := b.run(t, "review", "Refactor the store", nil)
		if r.Recommendation != workflow.Ship {
			t.Fatalf("run %d: %s %v", i, r.Recommendation, r.Reasons)
		}
		reqs := b.requests("architect")
		in := reqs[len(reqs)-1].Message.Text()
		start := strings.Index(in, "## HANDOFF: code-reviewer, security-reviewer, explorer -> architect")
		end := strings.Index(in, "# Your handoff")
		if start < 0 || end < start {
			t.Fatalf("run %d: no merged handoff in the architect's input:\n%s", i, in)
		}
		merged := in[start:end]
		if i == 0 {
			first = merged
			if !(strings.Index(merged, "#### code-reviewer") < strings.Index(merged, "#### security-reviewer") &&
				strings.Index(merged, "#### security-reviewer") < strings.Index(merged, "#### explorer")) {
				t.Fatalf("merged handoff not in declared order:\n%s", merged)
			}
		} else if merged != first {
			t.Fatalf("run %d: merged handoff differs:\n%s\n---\n%s", i, merged, first)
		}
		// Record the completion order of the parallel phase.
		var phase []*task.Task
		for _, k := range kids {
			if k.Envelope.Step != "planner" && k.Envelope.Step != "architect" {
				phase = append(phase, k)
			}
		}
		slices.SortFunc(phase, func(a, b *task.Task) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
		var names []string
		for _, k := range phase {
			names = append(names, k.Envelope.Step)
		}
		orders[strings.Join(names, ",")] = true
	}
	if len(orders) < 2 {
		t.Fatalf("the parallel phase always completed in one order (%v): the test did not vary it", orders)
	}
}

func TestMalformedHandoffsAreFixedByFeedback(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		bad     func(req *task.Request) string
		problem string
	}{
		{"missing heading", func(req *task.Request) string {
			return strings.Replace(validHandoff(req, "x", "None"), "## HANDOFF:", "HANDOFF", 1)
		}, "## HANDOFF: explorer -> code-reviewer"},
		{"empty section", func(req *task.Request) string {
			return strings.Replace(validHandoff(req, "x", "None"), "### Open Questions\nNone", "### Open Questions\n", 1)
		}, "Open Questions"},
		{"wrong names", func(req *task.Request) string {
			return strings.Replace(validHandoff(req, "x", "None"), "explorer -> code-reviewer", "explore -> reviewer", 1)
		}, "code-reviewer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			n := 0
			b := setupRun(t, nil, map[string]agentFunc{
				"explorer": func(_ context.Context, req *task.Request) (string, error) {
					mu.Lock()
					n++
					first := n == 1
					mu.Unlock()
					if first {
						return tc.bad(req), nil
					}
					return validHandoff(req, "fixed", "None"), nil
				},
				"code-reviewer": handoff("ok"),
			}, 3)
			_, _, r := b.run(t, workflow.Custom, "Fix the crash", workflow.CustomInput([]string{"explorer", "code-reviewer"}))
			reqs := b.requests("explorer")
			if len(reqs) != 2 {
				t.Fatalf("explorer called %d times, want 2 (a retry)", len(reqs))
			}
			fb := reqs[1].Message.Text()
			if !strings.HasPrefix(fb, contract.FeedbackIntro) {
				t.Fatalf("retry message is not the gate's feedback: %q", fb)
			}
			if !strings.Contains(fb, tc.problem) {
				t.Fatalf("feedback does not say %q:\n%s", tc.problem, fb)
			}
			if r.Recommendation != workflow.Ship {
				t.Fatalf("recommendation %s %v", r.Recommendation, r.Reasons)
			}
			if r.Steps[0].Attempts != 2 {
				t.Fatalf("explorer attempts %d", r.Steps[0].Attempts)
			}
		})
	}
}

func TestHandoffThatStaysInvalidBlocksTheRun(t *testing.T) {
	t.Parallel()
	b := setupRun(t, []*workflow.Workflow{builtin(t, "feature")}, map[string]agentFunc{
		"planner": handoff("plan"),
		"code-reviewer": func(context.Context, *task.Request) (string, error) {
			return "LGTM", nil
		},
		"security-reviewer": handoff("never"),
	}, 2)
	run, kids, r := b.run(t, "feature", "Add a flag", nil)
	if r.Recommendation != workflow.Blocked {
		t.Fatalf("recommendation %s, want BLOCKED", r.Recommendation)
	}
	if len(b.requests("code-reviewer")) != 2 {
		t.Fatalf("code-reviewer called %d times, want its 2 attempts", len(b.requests("code-reviewer")))
	}
	if len(b.requests("security-reviewer")) != 0 || len(kids) != 2 {
		t.Fatalf("the run went on after a blocked step: %d children", len(kids))
	}
	if kids[1].State != task.StateDeadLetter || kids[1].ErrorCode != task.CodeContractViolation {
		t.Fatalf("code-reviewer step %s %s", kids[1].State, kids[1].ErrorCode)
	}
	if r.Steps[2].State != workflow.NotRun || !strings.Contains(run.Reason, "BLOCKED") {
		t.Fatalf("steps %+v reason %q", r.Steps, run.Reason)
	}
}

func TestCancelRunCancelsUnfinishedAgents(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	b := setupRun(t, []*workflow.Workflow{builtin(t, "bugfix")}, map[string]agentFunc{
		"explorer": func(ctx context.Context, req *task.Request) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		},
		"code-reviewer": handoff("never"),
	}, 1)
	run := b.submit(t, "bugfix", "Fix it", nil)
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("explorer never started")
	}
	if _, err := b.coord.Cancel(context.Background(), run.ID, "tester"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	got, kids := b.wait(t, run.ID)
	if got.State != task.StateCanceled {
		t.Fatalf("run %s", got.State)
	}
	if len(kids) != 1 || kids[0].State != task.StateCanceled {
		t.Fatalf("children %v", kids)
	}
	if len(b.requests("code-reviewer")) != 0 {
		t.Fatal("code-reviewer ran after the cancel")
	}
}

func TestCustomRunNeedsKnownAgents(t *testing.T) {
	t.Parallel()
	b := setupRun(t, nil, map[string]agentFunc{"planner": handoff("p")}, 1)
	for _, md := range []map[string]any{nil, workflow.CustomInput([]string{"planner", "ghost"}), workflow.CustomInput([]string{"planner", "planner"})} {
		got, kids := b.wait(t, b.submit(t, workflow.Custom, "x", md).ID)
		if got.State != task.StateFailed || got.ErrorCode != task.CodeInvalidArgument || len(kids) != 0 {
			t.Fatalf("custom run with %v: %s %s %q", md, got.State, got.ErrorCode, got.Reason)
		}
	}
	_, _, r := b.run(t, workflow.Custom, "x", workflow.CustomInput([]string{"planner"}))
	if r.Recommendation != workflow.Ship || len(r.Agents) != 1 {
		t.Fatalf("one-agent custom run: %+v", r)
	}
}

func builtin(t *testing.T, name string) *workflow.Workflow {
	t.Helper()
	for _, w := range workflow.Builtins() {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no built-in workflow %s", name)
	return nil
}
