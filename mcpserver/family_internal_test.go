package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pactum/pactum/task"
)

// TestTaskInfoFamily: a child task answers its parent and step, a parent
// the number of its children, and a task that is neither has none of the
// three fields on the wire.
func TestTaskInfoFamily(t *testing.T) {
	t.Parallel()
	child := taskInfo(&task.Task{ID: "c", State: task.StateSucceeded, Envelope: task.Envelope{ParentTaskID: "p", Step: "fetch"}}, 0)
	if child.ParentTaskID != "p" || child.Step != "fetch" || child.Children != 0 {
		t.Errorf("child = %+v", child)
	}
	parent := taskInfo(&task.Task{ID: "p", State: task.StateWaiting, Children: 3}, 0)
	if parent.Children != 3 || parent.ParentTaskID != "" || parent.Final {
		t.Errorf("waiting parent = %+v, want children 3 and not final", parent)
	}
	raw, err := json.Marshal(taskInfo(&task.Task{ID: "t", State: task.StateSucceeded}, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"parent_task_id"`, `"step"`, `"children"`} {
		if strings.Contains(string(raw), k) {
			t.Errorf("a task without parent or children answers %s: %s", k, raw)
		}
	}
}
