package lgstate

import (
	"encoding/json"
	"slices"
	"testing"
)

// state is a checkpoint at second sec of the given task and run, whose
// tasks are name=result pairs (a nil result: scheduled, not run).
func state(sec int, taskID, runID string, tasks ...ThreadTask) ThreadState {
	md := map[string]any{}
	if taskID != "" {
		md[MetaTask] = taskID
	}
	if runID != "" {
		md["run_id"] = runID
	}
	return ThreadState{CreatedAt: "2026-11-27T00:00:0" + string(rune('0'+sec)) + "Z", Metadata: md, Tasks: tasks}
}

func node(name string, result any) ThreadTask { return ThreadTask{Name: name, Result: result} }

func names(runs []NodeRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Task.Name)
	}
	return out
}

// TestLatestAndNodeRuns: the nodes of the newest task's runs (an
// interrupted run and the run that resumed it), each on its last run;
// an older task's runs and scheduled nodes are left out.
func TestLatestAndNodeRuns(t *testing.T) {
	history := []ThreadState{ // newest first, as the server lists them
		state(7, "t2", "r3", node(End, nil)),
		state(6, "t2", "r3", node("review", map[string]any{"messages": []any{map[string]any{"content": "ok"}}})),
		state(5, "t2", "r2", node("write", "w2"), node("review", nil)),
		state(4, "t2", "r2", node("write", "w1")),
		state(3, "t2", "r2", node("research", "facts"), node(Start, map[string]any{"messages": []any{map[string]any{"content": "topic"}}})),
		state(1, "t1", "r1", node("research", "old")),
	}
	states := Latest(history)
	if len(states) != 5 {
		t.Fatalf("Latest kept %d checkpoints, want the 5 of task t2", len(states))
	}
	runs, input, err := NodeRuns(states)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(runs), []string{"research", "write", "review"}; !slices.Equal(got, want) {
		t.Fatalf("nodes %v, want %v", got, want)
	}
	if runs[1].Task.Result != "w2" || runs[1].Runs != 2 {
		t.Errorf("write: result %v after %d runs, want its last (w2) after 2", runs[1].Task.Result, runs[1].Runs)
	}
	if FirstMessageText(input) != "topic" {
		t.Errorf("input %v", input)
	}
	out := NodeOutput("x", "c", runs[2].Task.Result)
	if out.Message.Text() != "ok" || len(out.Artifacts) != 1 || out.Artifacts[0].Name != "output" {
		t.Errorf("review's output %+v", out)
	}
	if NodeOutput("x", "c", nil) != nil {
		t.Error("a nil update has an output")
	}
	// Without pactum's metadata: the newest run.
	bare := []ThreadState{state(2, "", "r2", node("b", 1)), state(1, "", "r1", node("a", 1))}
	if got, _, _ := NodeRuns(Latest(bare)); !slices.Equal(names(got), []string{"b"}) {
		t.Errorf("without a task: nodes %v, want the newest run's [b]", names(got))
	}
}

// FuzzNodeRuns feeds arbitrary histories (what an Agent Server sends) to
// the reading of a task's nodes: it never panics.
func FuzzNodeRuns(f *testing.F) {
	f.Add([]byte(`[{"created_at":"2026-11-27T00:00:01Z","metadata":{"pactum_task":"t"},"tasks":[{"name":"a","result":{"messages":[{"content":[{"text":"x"}]}]}}]}]`))
	f.Add([]byte(`[{"created_at":"bad","tasks":[{"name":"a","error":{"name":"E","message":"m"}}]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h []ThreadState
		if json.Unmarshal(data, &h) != nil {
			return
		}
		runs, _, err := NodeRuns(Latest(h))
		if err != nil {
			return
		}
		for _, r := range runs {
			_ = NodeOutput("id", "ctx", r.Task.Result)
			_ = ErrorText(r.Task.Error)
		}
	})
}
