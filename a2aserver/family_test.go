package a2aserver_test

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/task"
)

// planAgent is a parent: its first attempt spawns one step on agent, and
// once that child has ended it finishes with the child's artifacts.
func planAgent(name, agent string) task.AgentSpec {
	return task.AgentSpec{Name: name, Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if len(req.Children) == 0 {
			return &task.Result{Spawn: []task.Child{{Step: "greet", Agent: agent, Input: task.Message{Parts: []task.Part{task.TextPart("hello from the plan")}}}}}, nil
		}
		k := req.Children[0]
		if !k.State.Terminal() {
			return &task.Result{Wait: true}, nil
		}
		return &task.Result{Artifacts: k.Artifacts}, nil
	})}
}

// TestChildTaskOverA2A: a child task is an ordinary A2A task of its own
// agent whose metadata.pactum names its parent and step; the parent's
// counts its children, and while it waits for them it is WORKING with
// metadata.pactum.state "waiting".
//
// It needs the store drivers' support for children.
func TestChildTaskOverA2A(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.agents = append(c.agents, planAgent("plan", "echo"), planAgent("plan-slow", "slow"))
		c.opts.Agents = append(c.opts.Agents, a2aserver.AgentInfo{Name: "plan"}, a2aserver.AgentInfo{Name: "plan-slow"})
	})
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		parent := send(ctx, t, b.client("plan", proto), sendReq(userMessage("run")))
		if parent.Status.State != a2a.TaskStateCompleted || len(parent.Artifacts) != 1 || artifactText(parent.Artifacts[0]) != "hello from the plan" {
			t.Fatalf("parent = %s with %d artifacts, want COMPLETED with the child's artifact", parent.Status.State, len(parent.Artifacts))
		}
		pm := pactumMeta(t, parent.Metadata)
		if pm["children"] != float64(1) || pm["parentTaskId"] != nil || pm["step"] != nil {
			t.Errorf("parent's metadata.pactum = %v, want children 1 and no parentTaskId or step", pm)
		}
		kids, err := b.coord.List(ctx, task.ListParams{ParentTaskID: string(parent.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if len(kids.Tasks) != 1 {
			t.Fatalf("the parent has %d children, want 1", len(kids.Tasks))
		}
		child, err := b.client("echo", proto).GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(kids.Tasks[0].ID)})
		if err != nil {
			t.Fatalf("GetTask of the child on its own agent: %v", err)
		}
		cm := pactumMeta(t, child.Metadata)
		if child.Status.State != a2a.TaskStateCompleted || cm["parentTaskId"] != string(parent.ID) || cm["step"] != "greet" || cm["children"] != nil || cm["agent"] != "echo" {
			t.Errorf("child = %s, metadata.pactum %v; want COMPLETED, parentTaskId %s, step greet", child.Status.State, cm, parent.ID)
		}
		if child.ContextID != parent.ContextID {
			t.Errorf("child's context %q, want the parent's %q", child.ContextID, parent.ContextID)
		}

	})

	// A parent whose child still runs waits for it: WORKING over A2A.
	ctx := testCtx(t)
	req := sendReq(userMessage("run slowly"))
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	waiting := send(ctx, t, b.client("plan-slow", a2a.TransportProtocolJSONRPC), req)
	b.waitStarted()
	b.waitState(string(waiting.ID), task.StateWaiting)
	for _, proto := range transports {
		got, err := b.client("plan-slow", proto).GetTask(ctx, &a2a.GetTaskRequest{ID: waiting.ID})
		if err != nil {
			t.Fatal(err)
		}
		if m := pactumMeta(t, got.Metadata); got.Status.State != a2a.TaskStateWorking || m["state"] != "waiting" || m["children"] != float64(1) {
			t.Errorf("%s: a waiting parent = %s, metadata.pactum %v; want WORKING, state waiting, children 1", proto, got.Status.State, m)
		}
	}
	b.gate <- struct{}{}
	b.waitState(string(waiting.ID), task.StateSucceeded)
}
