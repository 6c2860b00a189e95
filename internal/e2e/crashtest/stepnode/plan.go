package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pactum/pactum/task"
)

// sequential steps run one after another, each once the one before it
// succeeded; the parallel steps then run together.
var (
	sequential = []string{"s1", "s2", "s3"}
	parallel   = []string{"p1", "p2", "p3"}
)

// plan is the parent agent's runner. It decides only from what is stored,
// the task's children in Request.Children, never from memory, so that a
// run goes on after a crash from where the store says it is:
//
//   - a child that ended other than succeeded fails the run (permanently,
//     naming the step and the child's reason);
//   - while a child is unsettled, the run waits;
//   - otherwise the first sequential step without a child is spawned,
//     each step's input being the run's input + "/" + the step;
//   - after the sequential steps, the parallel ones are spawned together;
//   - when every step has succeeded, the run finishes with the artifact
//     "steps": one line "step child-id" per step, and the same as data
//     ({"steps": [{"step": …, "task": …}, …]}).
type plan struct {
	agent string // the agent every step runs on
}

// stepRecord is one line of the run's "steps" artifact.
type stepRecord struct {
	Step string `json:"step"`
	Task string `json:"task"`
}

// Run implements task.Runner.
func (p plan) Run(_ context.Context, req *task.Request, _ task.Emit) (*task.Result, error) {
	known := map[string]bool{}
	for _, s := range append(append([]string(nil), sequential...), parallel...) {
		known[s] = true
	}
	byStep := map[string]*task.Task{}
	unsettled := false
	for _, k := range req.Children {
		step := k.Envelope.Step
		if !known[step] {
			return nil, task.Permanent(fmt.Errorf("child %s has step %q, which this run does not have", k.ID, step))
		}
		byStep[step] = k
		switch {
		case !k.State.Terminal():
			unsettled = true
		case k.State != task.StateSucceeded:
			return nil, task.Permanent(fmt.Errorf("step %s (task %s) ended %s: %s", step, k.ID, k.State, k.Reason))
		}
	}
	if unsettled {
		return &task.Result{Wait: true}, nil
	}
	in := req.Envelope.Input.Text()
	child := func(step string) task.Child {
		return task.Child{Step: step, Agent: p.agent, Input: task.Message{Role: task.RoleUser, Parts: []task.Part{task.TextPart(in + "/" + step)}}}
	}
	for _, s := range sequential {
		if byStep[s] == nil {
			return &task.Result{Spawn: []task.Child{child(s)}}, nil
		}
	}
	var spawn []task.Child
	for _, s := range parallel {
		if byStep[s] == nil {
			spawn = append(spawn, child(s))
		}
	}
	if len(spawn) > 0 {
		return &task.Result{Spawn: spawn}, nil
	}
	var lines []string
	var recs []stepRecord
	for _, s := range append(append([]string(nil), sequential...), parallel...) {
		lines = append(lines, s+" "+byStep[s].ID)
		recs = append(recs, stepRecord{Step: s, Task: byStep[s].ID})
	}
	data, err := json.Marshal(map[string]any{"steps": recs})
	if err != nil {
		return nil, task.Permanent(err)
	}
	return &task.Result{
		Artifacts: []task.Artifact{{ID: "steps", Name: "steps", Parts: []task.Part{task.TextPart(strings.Join(lines, "\n")), task.DataPart(data)}}},
		Reason:    fmt.Sprintf("all %d steps succeeded", len(lines)),
	}, nil
}
