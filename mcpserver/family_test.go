package mcpserver_test

import (
	"context"
	"testing"

	"github.com/pactum/pactum/mcpserver"
	"github.com/pactum/pactum/task"
)

// TestParentAndChildTasks: submit_task on a parent answers it with the
// number of its children, list_tasks parent_task_id lists them, and each
// child answers its parent and step; list_tasks' schema offers the filter.
//
// It needs the store drivers' support for children.
func TestParentAndChildTasks(t *testing.T) {
	t.Parallel()
	plan := task.AgentSpec{Name: "plan", Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if len(req.Children) == 0 {
			return &task.Result{Spawn: []task.Child{
				{Step: "first", Agent: "echo", Input: task.Message{Parts: []task.Part{task.TextPart("one")}}},
				{Step: "second", Agent: "echo", Input: task.Message{Parts: []task.Part{task.TextPart("two")}}},
			}}, nil
		}
		for _, k := range req.Children {
			if !k.State.Terminal() {
				return &task.Result{Wait: true}, nil
			}
		}
		return &task.Result{Artifacts: []task.Artifact{{ID: "done", Parts: []task.Part{task.TextPart("both steps ran")}}}}, nil
	})}
	b := setup(t, func(c *setupConfig) { c.agents = append(c.agents, plan) })
	cs := b.connect(t, nil)

	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != mcpserver.ToolListTasks {
			continue
		}
		props, _ := schemaObject(t, tl.Name, "input", tl.InputSchema)["properties"].(map[string]any)
		if _, ok := props["parent_task_id"]; !ok {
			t.Errorf("list_tasks input schema lacks parent_task_id: %v", props)
		}
	}

	parent := call[mcpserver.SubmitTaskOutput](t, cs, mcpserver.ToolSubmitTask, map[string]any{"agent": "plan", "text": "go", "wait": true})
	if parent.State != "succeeded" || parent.Children != 2 || parent.ParentTaskID != "" || parent.Step != "" {
		t.Fatalf("parent = state %s, children %d, parent %q, step %q; want succeeded with 2 children", parent.State, parent.Children, parent.ParentTaskID, parent.Step)
	}
	kids := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"parent_task_id": parent.TaskID, "include_artifacts": true})
	if kids.TotalSize != 2 || len(kids.Tasks) != 2 {
		t.Fatalf("list_tasks parent_task_id = %d of %d tasks, want 2", len(kids.Tasks), kids.TotalSize)
	}
	for i, want := range []struct{ step, text string }{{"first", "one"}, {"second", "two"}} {
		k := kids.Tasks[i]
		if k.ParentTaskID != parent.TaskID || k.Step != want.step || k.State != "succeeded" || k.Agent != "echo" || len(k.Artifacts) != 1 || k.Artifacts[0].Text != want.text {
			t.Errorf("child %d = %+v, want step %s of %s, succeeded, artifact %q", i, k, want.step, parent.TaskID, want.text)
		}
		got := call[mcpserver.TaskInfo](t, cs, mcpserver.ToolGetTask, map[string]any{"task_id": k.TaskID})
		if got.ParentTaskID != parent.TaskID || got.Step != want.step || got.Children != 0 {
			t.Errorf("get_task of child %d = parent %q, step %q, children %d", i, got.ParentTaskID, got.Step, got.Children)
		}
	}
	if none := call[mcpserver.ListTasksOutput](t, cs, mcpserver.ToolListTasks, map[string]any{"parent_task_id": kids.Tasks[0].TaskID}); none.TotalSize != 0 || len(none.Tasks) != 0 {
		t.Errorf("children of a task without any: %+v, want none", none)
	}
}
