package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// tree returns a parent with two children, the second a parent itself,
// every task with its record, as loadTree would return them.
func tree() *taskNode {
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rec := func(id string, seq int, from, to task.State, attempt int, ev ...task.Evidence) task.Record {
		return task.Record{TaskID: id, Seq: seq, From: from, To: to, At: at.Add(time.Duration(seq) * time.Second), Attempt: attempt, Node: "n1", Evidence: ev}
	}
	mk := func(id, parent, step, agent string, state task.State, children int) *task.Task {
		return &task.Task{ID: id, Agent: agent, State: state, Attempt: 1, MaxAttempts: 3, Children: children,
			Envelope: task.Envelope{TaskID: id, ParentTaskID: parent, Step: step, Action: agent}}
	}
	check := task.Evidence{Step: "check", Kind: task.EvidenceVerdict, Outcome: "pass", Message: "output has a summary", Duration: 1500 * time.Microsecond}
	leaf := &taskNode{Task: mk("leaf-1", "nest-1", "leaf", "echo", task.StateSucceeded, 0), Timeline: []task.Record{
		rec("leaf-1", 1, task.StateRequested, task.StateValidated, 0),
		rec("leaf-1", 2, task.StateInProgress, task.StateSucceeded, 1, check),
	}}
	nest := &taskNode{Task: mk("nest-1", "plan-1", "nest", "sub", task.StateSucceeded, 1), Timeline: []task.Record{
		rec("nest-1", 1, task.StateRequested, task.StateValidated, 0),
	}, ChildTasks: []*taskNode{leaf}}
	fetch := &taskNode{Task: mk("fetch-1", "plan-1", "fetch", "echo", task.StateDeadLetter, 0), Timeline: []task.Record{
		rec("fetch-1", 1, task.StateRequested, task.StateValidated, 0),
	}}
	fetch.ErrorCode, fetch.Reason = task.CodeAgentFailed, "attempt 3 of 3 failed"
	root := &taskNode{Task: mk("plan-1", "", "", "plan", task.StateSucceeded, 2), Timeline: []task.Record{
		rec("plan-1", 1, task.StateQueued, task.StateInProgress, 1),
		rec("plan-1", 2, task.StateInProgress, task.StateWaiting, 1),
		rec("plan-1", 3, task.StateWaiting, task.StateQueued, 1),
	}, ChildTasks: []*taskNode{fetch, nest}}
	return root
}

func TestPrintChildren(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := printChildren(&b, tree()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	// The step column is indented by depth; the fields follow.
	want := []struct{ prefix, fields string }{
		{"  STEP", "STEP TASK AGENT STATE ATTEMPT REASON"},
		{"  fetch ", "fetch fetch-1 echo dead_letter 1/3 agent_failed: attempt 3 of 3 failed"},
		{"  nest ", "nest nest-1 sub succeeded 1/3"},
		{"    leaf ", "leaf leaf-1 echo succeeded 1/3"},
	}
	if len(lines) != len(want) {
		t.Fatalf("printChildren printed %d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w.prefix) || strings.Join(strings.Fields(lines[i]), " ") != w.fields {
			t.Errorf("line %d = %q, want %q…, fields %q", i, lines[i], w.prefix, w.fields)
		}
	}
	// The columns line up across depths.
	col := strings.Index(lines[0], "TASK")
	for _, l := range lines[1:] {
		if l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("line %q does not start its TASK column at %d", l, col)
		}
	}
}

func TestPrintTimeline(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := printTimeline(&b, tree(), 0); err != nil {
		t.Fatal(err)
	}
	// Trailing blanks of the table's empty cells aside.
	var trimmed []string
	for _, l := range strings.Split(b.String(), "\n") {
		trimmed = append(trimmed, strings.TrimRight(l, " "))
	}
	got := strings.Join(trimmed, "\n")
	for _, want := range []string{
		// The parent's table, then each child under a header, one level in.
		"SEQ  AT ",
		"\n3    2026-11-23T12:00:03Z  waiting      queued       0        1       n1\n",
		"\n\n  step fetch: task fetch-1 (agent echo, dead_letter, attempt 1 of 3)\n  SEQ  AT ",
		"\n\n  step nest: task nest-1 (agent sub, succeeded, attempt 1 of 3)\n  SEQ ",
		"\n\n    step leaf: task leaf-1 (agent echo, succeeded, attempt 1 of 3)\n    SEQ ",
		// Evidence goes under the record that stores it.
		"\n    2    2026-11-23T12:00:02Z  in_progress  succeeded  1        1       n1\n        evidence check verdict: pass (1.5ms): output has a summary\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
}

func TestTaskNodeJSON(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(tree())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	// The task's own fields stay at the top, its "children" the count;
	// timeline and childTasks are added, recursively; a task without
	// children has neither "children" nor "childTasks".
	if m["id"] != "plan-1" || m["state"] != "succeeded" || m["agent"] != "plan" || m["children"] != float64(2) {
		t.Errorf("task fields not at the top: %s", raw)
	}
	if tl, _ := m["timeline"].([]any); len(tl) != 3 {
		t.Errorf("timeline = %v, want 3 records", m["timeline"])
	}
	kids, _ := m["childTasks"].([]any)
	if len(kids) != 2 {
		t.Fatalf("childTasks = %v, want 2 tasks", m["childTasks"])
	}
	fetch, nest := kids[0].(map[string]any), kids[1].(map[string]any)
	_, counted := fetch["children"]
	if _, listed := fetch["childTasks"]; counted || listed || fetch["envelope"].(map[string]any)["step"] != "fetch" {
		t.Errorf("fetch = %v, want step fetch and no children", fetch)
	}
	leaf := nest["childTasks"].([]any)[0].(map[string]any)
	ev := leaf["timeline"].([]any)[1].(map[string]any)["evidence"].([]any)[0].(map[string]any)
	if leaf["id"] != "leaf-1" || ev["step"] != "check" || ev["outcome"] != "pass" || ev["durationNs"] != float64(1500000) {
		t.Errorf("leaf = %v", leaf)
	}
	// A task without children decodes into task.Task as before.
	var tk task.Task
	leafRaw, _ := json.Marshal(leaf)
	if err := json.Unmarshal(leafRaw, &tk); err != nil || tk.ID != "leaf-1" {
		t.Errorf("a leaf does not decode into task.Task: %v", err)
	}
}

func TestTimelineEntries(t *testing.T) {
	t.Parallel()
	es := timelineEntries(tree())
	var got []string
	for _, e := range es {
		got = append(got, e.TaskID+"/"+e.ParentTaskID+"/"+e.Step)
	}
	want := "plan-1//,plan-1//,plan-1//,fetch-1/plan-1/fetch,nest-1/plan-1/nest,leaf-1/nest-1/leaf,leaf-1/nest-1/leaf"
	if strings.Join(got, ",") != want {
		t.Errorf("entries = %s, want %s", strings.Join(got, ","), want)
	}
	raw, err := json.Marshal(es[:1])
	if err != nil {
		t.Fatal(err)
	}
	// The root's records are the record objects of before, nothing added.
	var recs []map[string]any
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatal(err)
	}
	if _, ok := recs[0]["parentTaskId"]; ok {
		t.Errorf("a root record carries parentTaskId: %s", raw)
	}
	plain, _ := json.Marshal([]task.Record{es[0].Record})
	if string(plain) != string(raw) {
		t.Errorf("root entry %s differs from the record %s", raw, plain)
	}
}
