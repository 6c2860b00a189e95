package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/node"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// roles are the offline agents of examples/workflows.yaml.
var roles = []string{"planner", "code-reviewer", "security-reviewer", "explorer", "architect"}

// workflowNode starts a node whose agents are the example's role scripts
// (examples/scripts/workflow, by absolute path) and "sleeper", an exec
// agent that sleeps a minute; its workflows are the built-ins, "review"
// (a parallel phase) and "slow" (planner, then sleeper). It returns the
// node's base URL and the node.
func workflowNode(t *testing.T) (string, *node.Server) {
	t.Helper()
	scripts, err := filepath.Abs(filepath.Join("..", "..", "examples", "scripts", "workflow"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for _, r := range roles {
		fmt.Fprintf(&b, "  - {name: %s, type: exec, timeout: 30s, retry: {max_attempts: 2, initial_backoff: 10ms}, exec: {command: [sh, %q], input: stdin}}\n",
			r, filepath.Join(scripts, r+".sh"))
	}
	b.WriteString("  - {name: sleeper, type: exec, timeout: 2m, exec: {command: [sh, -c, 'sleep 60']}}\n")
	b.WriteString("workflows:\n")
	b.WriteString("  - {name: review, steps: [planner, {parallel: [code-reviewer, security-reviewer]}, architect]}\n")
	b.WriteString("  - {name: slow, steps: [planner, sleeper]}\n")

	return startIn(t, t.TempDir(), "workflows.yaml", b.String(), nil)
}

// checkReportParts checks a run's integration-report: its text reads with
// workflow.ParseReport, its data says the same, the agents are those
// given, and it recommends SHIP.
func checkReportParts(t *testing.T, text string, data any, name string, agents []string) {
	t.Helper()
	fromText, err := workflow.ParseReport(text)
	if err != nil {
		t.Fatalf("ParseReport: %v\n%s", err, text)
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var fromData workflow.Report
	if err := json.Unmarshal(b, &fromData); err != nil {
		t.Fatalf("data part: %v: %s", err, b)
	}
	if fromData.Workflow != fromText.Workflow || fromData.Task != fromText.Task || fromData.Summary != fromText.Summary ||
		!slices.Equal(fromData.Agents, fromText.Agents) || fromData.Recommendation != fromText.Recommendation ||
		fromData.TestResults != fromText.TestResults || fromData.SecurityStatus != fromText.SecurityStatus {
		t.Errorf("the text and the data part differ:\ntext: %+v\ndata: %s", fromText, b)
	}
	if fromText.Workflow != name || !slices.Equal(fromText.Agents, agents) || len(fromData.Steps) != len(agents) {
		t.Errorf("report of %q, agents %v, %d steps; want %q, %v", fromText.Workflow, fromText.Agents, len(fromData.Steps), name, agents)
	}
	if fromText.Recommendation != workflow.Ship {
		t.Errorf("recommendation %s (reasons %v), want SHIP", fromText.Recommendation, fromText.Reasons)
	}
}

// toolError calls a tool that must answer with a tool error and returns
// its structured content (code, message).
func toolError(ctx context.Context, t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (code, message string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: no tool error: %+v", name, args, res.StructuredContent)
	}
	info, _ := res.StructuredContent.(map[string]any)
	code, _ = info["code"].(string)
	message, _ = info["message"].(string)
	return code, message
}

// mcpReport returns the text and data of the integration-report artifact
// of a task as an MCP tool answered it.
func mcpReport(t *testing.T, out map[string]any) (string, any) {
	t.Helper()
	arts, _ := out["artifacts"].([]any)
	for _, x := range arts {
		a, _ := x.(map[string]any)
		if a["artifact_id"] != workflow.ReportArtifact {
			continue
		}
		if a["name"] != workflow.ReportArtifact {
			t.Errorf("artifact %s is named %v", workflow.ReportArtifact, a["name"])
		}
		var text string
		var data any
		parts, _ := a["parts"].([]any)
		for _, y := range parts {
			p, _ := y.(map[string]any)
			switch p["kind"] {
			case "text":
				text, _ = p["text"].(string)
			case "data":
				data = p["data"]
			}
		}
		if text == "" || data == nil {
			t.Fatalf("integration-report lacks the text or the data part: %v", a)
		}
		return text, data
	}
	t.Fatalf("no %s artifact: %v", workflow.ReportArtifact, out["artifacts"])
	return "", nil
}

// TestWorkflowMCP: the official MCP client runs a named workflow and a
// custom one with run_workflow and gets the finished run with its report;
// the tool refuses an unknown workflow (naming the served ones), custom
// without agents and agents with a named workflow; a custom run of an
// unknown agent fails invalid_argument naming it. list_agents lists the
// run agents (workflow.NAME) but not the step agents (workflow/AGENT).
func TestWorkflowMCP(t *testing.T) {
	t.Parallel()
	base, _ := workflowNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := mcpSession(ctx, t, base)

	for _, tc := range []struct {
		workflow string
		agents   []string
		want     []string
	}{
		{"feature", nil, []string{"planner", "code-reviewer", "security-reviewer"}},
		{"review", nil, []string{"planner", "code-reviewer", "security-reviewer", "architect"}},
		{"custom", []string{"explorer", "code-reviewer"}, []string{"explorer", "code-reviewer"}},
	} {
		args := map[string]any{"workflow": tc.workflow, "task": "Add a --json flag to tasks list"}
		if tc.agents != nil {
			args["agents"] = tc.agents
		}
		out := callTool(ctx, t, s, "run_workflow", args)
		if out["state"] != string(task.StateSucceeded) || out["agent"] != workflow.RunAgent(tc.workflow) || out["wait_timed_out"] == true {
			t.Fatalf("run_workflow %s: state %v, agent %v (reason %v)", tc.workflow, out["state"], out["agent"], out["reason"])
		}
		if n, _ := out["children"].(float64); int(n) != len(tc.want) {
			t.Errorf("run_workflow %s: %v children, want %d", tc.workflow, out["children"], len(tc.want))
		}
		text, data := mcpReport(t, out)
		checkReportParts(t, text, data, tc.workflow, tc.want)
		// get_task reads the same run.
		got := callTool(ctx, t, s, "get_task", map[string]any{"task_id": out["task_id"]})
		if gt, _ := mcpReport(t, got); gt != text {
			t.Errorf("get_task %v: report differs from run_workflow's", out["task_id"])
		}
	}

	code, msg := toolError(ctx, t, s, "run_workflow", map[string]any{"workflow": "nope", "task": "x"})
	if code != string(task.CodeNotFound) || !strings.Contains(msg, `"nope"`) {
		t.Errorf("unknown workflow: %s: %s", code, msg)
	}
	for _, w := range []string{"feature", "bugfix", "refactor", "security", "review", "slow", "custom"} {
		if !strings.Contains(msg, w) {
			t.Errorf("unknown workflow: the error %q does not name the served workflow %s", msg, w)
		}
	}
	code, msg = toolError(ctx, t, s, "run_workflow", map[string]any{"workflow": "custom", "task": "x"})
	if code != string(task.CodeInvalidArgument) || !strings.Contains(msg, "agents") {
		t.Errorf("custom without agents: %s: %s", code, msg)
	}
	code, msg = toolError(ctx, t, s, "run_workflow", map[string]any{"workflow": "feature", "task": "x", "agents": []string{"planner"}})
	if code != string(task.CodeInvalidArgument) || !strings.Contains(msg, "custom") {
		t.Errorf("agents with feature: %s: %s", code, msg)
	}
	out := callTool(ctx, t, s, "run_workflow", map[string]any{"workflow": "custom", "task": "x", "agents": []string{"planner", "no-such-agent"}})
	if out["state"] != string(task.StateFailed) || out["error_code"] != string(task.CodeInvalidArgument) ||
		!strings.Contains(fmt.Sprint(out["reason"]), "no-such-agent") {
		t.Errorf("custom with an unknown agent: state %v, error_code %v, reason %v; want failed, invalid_argument, naming no-such-agent",
			out["state"], out["error_code"], out["reason"])
	}

	agents := callTool(ctx, t, s, "list_agents", map[string]any{})
	var names []string
	list, _ := agents["agents"].([]any)
	for _, x := range list {
		a, _ := x.(map[string]any)
		names = append(names, fmt.Sprint(a["name"]))
	}
	for _, w := range []string{"feature", "bugfix", "refactor", "security", "review", "slow", "custom"} {
		if !slices.Contains(names, workflow.RunAgent(w)) {
			t.Errorf("list_agents %v lacks the run agent %s", names, workflow.RunAgent(w))
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "workflow/") {
			t.Errorf("list_agents lists the step agent %s", n)
		}
	}
	for _, r := range append(slices.Clone(roles), "sleeper") {
		if !slices.Contains(names, r) {
			t.Errorf("list_agents %v lacks the agent %s", names, r)
		}
	}
}

// TestWorkflowA2A: over A2A with the official Go client, workflow.feature's
// card has a skill per agent and a step agent has no card; a blocking
// SendMessage runs it to completed with the report; GetTask and ListTasks
// show the run; the tasks of the step agents are its children. CancelTask
// of a running run cancels its running child.
func TestWorkflowA2A(t *testing.T) {
	t.Parallel()
	base, srv := workflowNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coord := srv.Coordinator()

	feature := a2aClient(ctx, t, base, workflow.RunAgent("feature"))
	var pub a2a.AgentCard
	if code := getJSON(t, base+"/agents/workflow.feature/.well-known/agent-card.json", &pub); code != http.StatusOK {
		t.Fatalf("card of workflow.feature: %d", code)
	}
	var skills []string
	for _, sk := range pub.Skills {
		skills = append(skills, sk.ID)
	}
	if pub.Name != "workflow.feature" || !slices.Equal(skills, []string{"planner", "code-reviewer", "security-reviewer"}) {
		t.Errorf("card %q with skills %v, want workflow.feature with a skill per agent", pub.Name, skills)
	}
	for _, p := range []string{"workflow/planner", "workflow%2Fplanner"} {
		if code := getJSON(t, base+"/agents/"+p+"/.well-known/agent-card.json", nil); code != http.StatusNotFound {
			t.Errorf("the step agent workflow/planner has a card at /agents/%s: %d", p, code)
		}
	}

	run := sendText(ctx, t, feature, "Add a --json flag to tasks list", nil)
	if run.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("run %s is %s, want completed", run.ID, run.Status.State)
	}
	report := func(tk *a2a.Task) (string, any) {
		t.Helper()
		for _, a := range tk.Artifacts {
			if a.ID != workflow.ReportArtifact {
				continue
			}
			if a.Name != workflow.ReportArtifact {
				t.Errorf("artifact %s named %q", a.ID, a.Name)
			}
			var data any
			for _, p := range a.Parts {
				if d, ok := p.Content.(a2a.Data); ok {
					data = d.Value
				}
			}
			return partsText(a.Parts), data
		}
		t.Fatalf("task %s has no %s artifact", tk.ID, workflow.ReportArtifact)
		return "", nil
	}
	text, data := report(run)
	agents := []string{"planner", "code-reviewer", "security-reviewer"}
	checkReportParts(t, text, data, "feature", agents)

	got := getTask(ctx, t, feature, run.ID)
	if got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("GetTask: %s", got.Status.State)
	}
	if gt, _ := report(got); gt != text {
		t.Errorf("GetTask's report differs from SendMessage's")
	}
	if p, _ := got.Metadata["pactum"].(map[string]any); p["children"] != float64(len(agents)) {
		t.Errorf("GetTask metadata.pactum.children = %v, want %d", p["children"], len(agents))
	}
	listed, err := feature.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(listed.Tasks) != 1 || listed.Tasks[0].ID != run.ID {
		t.Errorf("ListTasks of workflow.feature: %d tasks, want the run %s alone", len(listed.Tasks), run.ID)
	}

	// The steps are tasks of the step agents, each a child of the run.
	for _, a := range agents {
		page, err := coord.List(ctx, task.ListParams{Agent: workflow.StepAgent(a)})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 1 {
			t.Errorf("agent %s has %d tasks, want 1", workflow.StepAgent(a), len(page.Tasks))
			continue
		}
		k := page.Tasks[0]
		if k.Envelope.ParentTaskID != string(run.ID) || k.Envelope.Step != a || k.State != task.StateSucceeded {
			t.Errorf("step %s: parent %q, step %q, %s; want a succeeded child of %s", a, k.Envelope.ParentTaskID, k.Envelope.Step, k.State, run.ID)
		}
	}

	// Cancel a running run: workflow slow runs planner, then sleeper.
	slow := a2aClient(ctx, t, base, workflow.RunAgent("slow"))
	started := startTask(ctx, t, slow, "Sleep on it")
	sleeper := waitChild(ctx, t, coord, string(started.ID), "sleeper", task.StateInProgress)
	canceled, err := slow.CancelTask(ctx, &a2a.CancelTaskRequest{ID: started.ID})
	if err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask answered %s, want canceled", canceled.Status.State)
	}
	if k := waitChild(ctx, t, coord, string(started.ID), "sleeper", task.StateCanceled); k.ID != sleeper.ID {
		t.Errorf("the canceled child is %s, the running one was %s", k.ID, sleeper.ID)
	}
	if got := getTask(ctx, t, slow, started.ID); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("GetTask of the canceled run: %s", got.Status.State)
	}
	planner := waitChild(ctx, t, coord, string(started.ID), "planner", task.StateSucceeded)
	if planner.Envelope.ParentTaskID != string(started.ID) {
		t.Errorf("planner's parent %q", planner.Envelope.ParentTaskID)
	}
}

// waitChild waits until the run's child for step is in state and returns
// it.
func waitChild(ctx context.Context, t *testing.T, coord *task.Coordinator, run, step string, state task.State) *task.Task {
	t.Helper()
	var last *task.Task
	for {
		page, err := coord.List(ctx, task.ListParams{ParentTaskID: run})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page.Tasks {
			if k.Envelope.Step == step {
				last = k
			}
		}
		if last != nil && last.State == state {
			return last
		}
		select {
		case <-ctx.Done():
			if last == nil {
				t.Fatalf("run %s never spawned step %s", run, step)
			}
			t.Fatalf("step %s of run %s is %s, want %s", step, run, last.State, state)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestWorkflowPermissions: a run's steps are admitted as the run's actor.
// An actor allowed to run workflow.custom but not code-reviewer's action
// gets its planner step, and its code-reviewer step is refused (a
// rejected child, never run: the report says BLOCKED); an actor not allowed workflow.custom cannot start one;
// an actor allowed every agent of feature runs it to its report.
func TestWorkflowPermissions(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Abs(filepath.Join("..", "..", "examples", "scripts", "workflow"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("agents:\n")
	for _, r := range roles {
		fmt.Fprintf(&b, "  - {name: %s, type: exec, timeout: 30s, exec: {command: [sh, %q], input: stdin}}\n", r, filepath.Join(scripts, r+".sh"))
	}
	b.WriteString("actors:\n")
	b.WriteString("  - {name: alice, actions: [workflow.custom, planner]}\n")
	b.WriteString("  - {name: bob, actions: [planner, code-reviewer]}\n")
	b.WriteString("  - {name: carol, actions: [workflow.feature, planner, code-reviewer, security-reviewer]}\n")
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(fmt.Sprintf("store: %q\n%s", "sqlite://"+filepath.Join(dir, "pactum.db"), b.String())), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := node.New(ctx, cfg, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	coord := srv.Coordinator()
	submit := func(actor, wf string, md map[string]any) (*task.Task, error) {
		res, err := coord.Submit(ctx, task.SubmitRequest{Envelope: task.Envelope{
			Actor: actor, Action: workflow.RunAgent(wf),
			Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart("Add a flag")}, Metadata: md},
		}})
		if err != nil {
			return nil, err
		}
		return coord.Wait(ctx, res.Task.ID)
	}

	run, err := submit("alice", workflow.Custom, workflow.CustomInput([]string{"planner", "code-reviewer"}))
	if err != nil {
		t.Fatal(err)
	}
	kids, err := coord.Children(ctx, run.ID, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	// The refused step is a rejected child: the run stops there and its
	// report says BLOCKED, naming the refusal; code-reviewer never ran.
	if len(kids) != 2 || kids[0].Envelope.Step != "planner" || kids[0].State != task.StateSucceeded {
		t.Fatalf("alice's run has children %v", kids)
	}
	if k := kids[1]; k.Envelope.Step != "code-reviewer" || k.State != task.StateFailed || k.ErrorCode != task.CodeForbidden || !k.Rejected || k.Attempt != 0 {
		t.Fatalf("alice's code-reviewer step: %s %s rejected=%v attempts=%d %q", k.State, k.ErrorCode, k.Rejected, k.Attempt, k.Reason)
	}
	r, err := workflow.ReportOf(run)
	if err != nil || r == nil || r.Recommendation != workflow.Blocked || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "code-reviewer") {
		t.Fatalf("alice's report: %+v %v", r, err)
	}
	// A refusal at submit is stored: a rejected task that never ran.
	run, err = submit("bob", workflow.Custom, workflow.CustomInput([]string{"planner"}))
	if err != nil {
		t.Fatal(err)
	}
	if run.State != task.StateFailed || !run.Rejected || run.ErrorCode != task.CodeForbidden || run.Children != 0 || !strings.Contains(run.Reason, "workflow.custom") {
		t.Fatalf("bob's custom run: %s %s rejected=%v children=%d %q", run.State, run.ErrorCode, run.Rejected, run.Children, run.Reason)
	}

	run, err = submit("carol", "feature", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err = workflow.ReportOf(run)
	if err != nil || r == nil || run.State != task.StateSucceeded || r.Recommendation != workflow.Ship {
		t.Fatalf("carol's feature run: %s %q, report %+v %v", run.State, run.Reason, r, err)
	}
}
