package node_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/agent/crewai/crewaitest"
)

// TestCrewAIAgent runs a crewai agent on a real node, through A2A: the
// crew pauses for human feedback, the task waits in input_required with
// the output to review, the node restarts, and the caller's answer
// resumes the same kickoff on the new node until the crew completes.
//
// CrewAI cannot run on this machine (no PyPI, and AMP is a hosted
// service): crewaitest.Server stands in for a deployed crew, written from
// CrewAI's published OpenAPI document of the AMP REST API
// (docs/edge/enterprise-api.en.yaml in github.com/crewAIInc/crewAI).
func TestCrewAIAgent(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("PACTUM_TEST_CREWAI_TOKEN", "amp-secret")
	crew := crewaitest.New(t, "amp-secret", crewaitest.Steps(
		crewaitest.Step{Status: crewaitest.StatusRunning, Task: "research_task"},
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft: agents plan and act."},
		crewaitest.Step{Status: crewaitest.StatusCompleted, Task: "writing_task", Output: "A report on AI agents."},
	))
	crew.Inputs = []string{"topic"}
	quick := crewaitest.New(t, "amp-secret", crewaitest.Steps(crewaitest.Step{Status: crewaitest.StatusCompleted, Output: `{"summary":"Done."}`}))
	yaml := fmt.Sprintf(`agents:
  - name: quick
    type: crewai
    crewai:
      url: %s
      token_env: PACTUM_TEST_CREWAI_TOKEN
      inputs_key: question
      output: json
      poll_interval: 5ms
  - name: crew
    type: crewai
    crewai:
      url: %s
      token_env: PACTUM_TEST_CREWAI_TOKEN
      check_inputs: true
      poll_interval: 5ms
      max_poll_interval: 20ms
`, quick.URL, crew.URL)
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "pactum.db")
	ctx := t.Context()

	n1 := startNode(t, dsn, yaml)

	// A crew that completes without asking; its JSON output is the answer.
	tk := sendText(ctx, t, a2aClient(ctx, t, n1.base, "quick"), "What now?", nil)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s: %s", tk.Status.State, n1.logs.String())
	}
	if len(tk.Artifacts) != 1 || fmt.Sprint(tk.Artifacts[0].Parts[0].Data()) != "map[summary:Done.]" {
		t.Errorf("artifacts = %+v", tk.Artifacts)
	}
	if ks := quick.Kickoffs(); len(ks) != 1 || fmt.Sprint(ks[0].Inputs) != "map[question:What now?]" {
		t.Errorf("kickoffs = %+v", ks)
	}

	c1 := a2aClient(ctx, t, n1.base, "crew")
	tk = sendText(ctx, t, c1, "AI agents", nil)
	if tk.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %s: %s", tk.Status.State, n1.logs.String())
	}
	if tk.Status.Message == nil || len(tk.Status.Message.Parts) != 1 || tk.Status.Message.Parts[0].Text() != "Draft: agents plan and act." {
		t.Fatalf("question = %+v", tk.Status.Message)
	}
	n1.stop()

	n2 := startNode(t, dsn, yaml)
	c2 := a2aClient(ctx, t, n2.base, "crew")
	tk = sendText(ctx, t, c2, "Approved, go on.", tk)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s: %s", tk.Status.State, n2.logs.String())
	}
	if len(tk.Artifacts) != 1 || tk.Artifacts[0].Parts[0].Text() != "A report on AI agents." {
		t.Errorf("artifacts = %+v", tk.Artifacts)
	}
	ks, rs := crew.Kickoffs(), crew.Resumes()
	if len(ks) != 1 || fmt.Sprint(ks[0].Inputs) != "map[topic:AI agents]" {
		t.Fatalf("kickoffs = %+v", ks)
	}
	want := crewaitest.Resume{ExecutionID: ks[0].ID, TaskID: "research_task", HumanFeedback: "Approved, go on.", IsApprove: true}
	if len(rs) != 1 || rs[0] != want {
		t.Errorf("resumes = %+v, want [%+v]", rs, want)
	}
}
