package a2amap_test

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/task"
)

// TestPactumMetadataFamily: a child task names its parent and step under
// metadata.pactum, a parent counts its children, and a task that is
// neither carries none of the three keys; a parent waiting for its
// children is TASK_STATE_WORKING with metadata.pactum.state "waiting".
func TestPactumMetadataFamily(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		t    task.Task
		want map[string]any // the three keys; absent ones must be absent
	}{
		{"plain task", task.Task{ID: "t1", State: task.StateSucceeded}, map[string]any{}},
		{"child", task.Task{ID: "t2", State: task.StateInProgress, Envelope: task.Envelope{ParentTaskID: "p1", Step: "fetch"}},
			map[string]any{"parentTaskId": "p1", "step": "fetch"}},
		{"waiting parent that is a child too", task.Task{ID: "t3", State: task.StateWaiting, Children: 2, Envelope: task.Envelope{ParentTaskID: "p0", Step: "nest"}},
			map[string]any{"parentTaskId": "p0", "step": "nest", "children": 2}},
	} {
		for _, meta := range []map[string]any{
			a2amap.TaskToA2A(&tc.t, 0, false).Metadata,
			a2amap.StatusEvent(&tc.t, tc.t.UpdatedAt).Metadata,
		} {
			m := meta[a2amap.MetadataKey].(map[string]any)
			for _, k := range []string{"parentTaskId", "step", "children"} {
				if got, want := m[k], tc.want[k]; got != want {
					t.Errorf("%s: metadata.pactum.%s = %#v, want %#v", tc.name, k, got, want)
				}
			}
			if m["state"] != string(tc.t.State) {
				t.Errorf("%s: metadata.pactum.state = %v, want %s", tc.name, m["state"], tc.t.State)
			}
		}
	}
	if got := a2amap.TaskToA2A(&task.Task{State: task.StateWaiting}, 0, false).Status.State; got != a2a.TaskStateWorking {
		t.Errorf("a waiting parent is %s over A2A, want %s", got, a2a.TaskStateWorking)
	}
}
