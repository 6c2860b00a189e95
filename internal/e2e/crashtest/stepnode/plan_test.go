package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

func kid(step string, state task.State) *task.Task {
	return &task.Task{ID: "t-" + step, State: state, Reason: "why " + step, Envelope: task.Envelope{Step: step}}
}

// TestPlan walks the run's decisions from its stored children.
func TestPlan(t *testing.T) {
	ok := task.StateSucceeded
	tests := []struct {
		name     string
		children []*task.Task
		spawn    []string // steps spawned
		wait     bool
		finish   bool
		fail     string // in the permanent error
	}{
		{name: "no children", spawn: []string{"s1"}},
		{name: "s1 running", children: []*task.Task{kid("s1", task.StateInProgress)}, wait: true},
		{name: "s1 queued after a crash", children: []*task.Task{kid("s1", task.StateQueued)}, wait: true},
		{name: "s1 done", children: []*task.Task{kid("s1", ok)}, spawn: []string{"s2"}},
		{name: "s2 done", children: []*task.Task{kid("s1", ok), kid("s2", ok)}, spawn: []string{"s3"}},
		{name: "s3 done", children: []*task.Task{kid("s1", ok), kid("s2", ok), kid("s3", ok)}, spawn: []string{"p1", "p2", "p3"}},
		{name: "one parallel step done", children: []*task.Task{kid("s1", ok), kid("s2", ok), kid("s3", ok), kid("p2", ok), kid("p1", task.StateQueued), kid("p3", task.StateInProgress)}, wait: true},
		{name: "all done", children: []*task.Task{kid("s1", ok), kid("s2", ok), kid("s3", ok), kid("p1", ok), kid("p2", ok), kid("p3", ok)}, finish: true},
		{name: "s2 dead-lettered", children: []*task.Task{kid("s1", ok), kid("s2", task.StateDeadLetter)}, fail: "step s2 (task t-s2) ended dead_letter: why s2"},
		{name: "p3 canceled while p1 runs", children: []*task.Task{kid("s1", ok), kid("s2", ok), kid("s3", ok), kid("p1", task.StateInProgress), kid("p2", ok), kid("p3", task.StateCanceled)}, fail: "step p3"},
		{name: "unknown step", children: []*task.Task{kid("x", ok)}, fail: `step "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &task.Request{Envelope: task.Envelope{Input: task.Message{Parts: []task.Part{task.TextPart("in")}}}, Children: tt.children}
			res, err := plan{agent: "slow"}.Run(context.Background(), req, nil)
			if tt.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fail) || !task.IsPermanent(err) {
					t.Fatalf("err %v (permanent: %v), want a permanent error with %q", err, task.IsPermanent(err), tt.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var spawned []string
			for _, c := range res.Spawn {
				spawned = append(spawned, c.Step)
				if c.Agent != "slow" || c.Input.Text() != "in/"+c.Step {
					t.Errorf("child %s: agent %q input %q", c.Step, c.Agent, c.Input.Text())
				}
			}
			if !slices.Equal(spawned, tt.spawn) || res.Wait != tt.wait {
				t.Fatalf("spawned %v wait %v, want %v wait %v", spawned, res.Wait, tt.spawn, tt.wait)
			}
			if !tt.finish {
				return
			}
			if len(res.Artifacts) != 1 || res.Artifacts[0].ID != "steps" {
				t.Fatalf("artifacts %+v", res.Artifacts)
			}
			parts := res.Artifacts[0].Parts
			if want := "s1 t-s1\ns2 t-s2\ns3 t-s3\np1 t-p1\np2 t-p2\np3 t-p3"; parts[0].Text != want {
				t.Errorf("text %q, want %q", parts[0].Text, want)
			}
			var data struct{ Steps []stepRecord }
			if err := json.Unmarshal(parts[1].Data, &data); err != nil || len(data.Steps) != 6 || data.Steps[5] != (stepRecord{"p3", "t-p3"}) {
				t.Errorf("data %s: %v", parts[1].Data, err)
			}
		})
	}
}
