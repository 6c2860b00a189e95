package crewai_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pactum/pactum/agent/agenttest"
	"github.com/pactum/pactum/agent/crewai/crewaitest"
	"github.com/pactum/pactum/task"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestWireTranscript pins every call the runtime makes, and what the
// stand-in for CrewAI AMP answers, for a crew that checks its inputs,
// runs, pauses for feedback and completes once resumed. The transcript is
// testdata/hitl.txt; -update rewrites it.
func TestWireTranscript(t *testing.T) {
	t.Parallel()
	srv := crewaitest.New(t, token, crewaitest.Steps(
		running,
		crewaitest.Step{Status: crewaitest.StatusPending, Task: "research_task", Output: "Draft: agents plan and act."},
		done,
	))
	srv.Inputs = []string{"topic"}
	r := build(t, srv, "check_inputs: true\n")
	req := agenttest.Request("AI agents")
	res, err := r.Invoke(t.Context(), req)
	if err != nil || !res.InputRequired {
		t.Fatalf("first attempt: %+v, %v", res, err)
	}
	ans := task.Message{ID: "msg-2", Role: task.RoleUser, Parts: []task.Part{task.TextPart("Approved.")}}
	req.History = append(req.History, *res.Message, ans)
	req.Message, req.Attempt = ans, 2
	if _, err := r.Invoke(t.Context(), req); err != nil {
		t.Fatal(err)
	}

	got := []byte(srv.Transcript())
	golden := filepath.Join("testdata", "hitl.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("transcript differs from %s (run with -update if intended):\n%s", golden, got)
	}
}
