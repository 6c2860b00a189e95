// Package lgstate reads what a LangGraph Agent Server records of a run:
// a thread's checkpoints, the nodes that ran from them, and a node's state
// update as a pactum answer. It is the one rule both sides of a graph's
// verification use: the langgraph runtime, which hands each node's output
// to a contract gate while the graph runs (task.Request.OnStage), and the
// langgraph protocol adapter, which turns a thread's history into a trace
// that `pactum verify` judges offline. A node judged live and the same
// node judged from the history get the same output, built here, so that
// the two verdicts agree.
package lgstate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// Metadata keys the langgraph runtime puts on every run it starts; the
// Agent Server copies a run's metadata onto the checkpoints it writes.
const (
	// MetaTurn names the turn of a task (its id and the message the run
	// answers) a run belongs to.
	MetaTurn = "pactum_turn"
	// MetaTask names the pactum task a run belongs to.
	MetaTask = "pactum_task"
)

// The graph's own start and end nodes, which are not nodes of the user's.
const (
	Start = "__start__"
	End   = "__end__"
)

// ThreadState is one checkpoint of a thread's history, as the LangGraph
// Agent Server returns it (POST /threads/{thread_id}/history, newest
// first): the state's values, the nodes to run next, and the tasks that
// ran from this checkpoint to the next, each with its result (the state
// update the node returned) or its error.
type ThreadState struct {
	Values     any            `json:"values"`
	Next       []string       `json:"next"`
	Tasks      []ThreadTask   `json:"tasks"`
	Metadata   map[string]any `json:"metadata"`
	CreatedAt  string         `json:"created_at"`
	Checkpoint Checkpoint     `json:"checkpoint"`
	Parent     *Checkpoint    `json:"parent_checkpoint"`
}

// ThreadTask is a node's run from a checkpoint.
type ThreadTask struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Error      any    `json:"error"`
	Interrupts []any  `json:"interrupts"`
	Result     any    `json:"result"`
}

// Checkpoint names a checkpoint of a thread.
type Checkpoint struct {
	ThreadID     string `json:"thread_id"`
	CheckpointID string `json:"checkpoint_id"`
	CheckpointNS string `json:"checkpoint_ns"`
}

// Ran reports whether a checkpoint's task has run: it has a result, an
// error or an interrupt. A task with none of them is scheduled, not run
// (the last checkpoint's next nodes, an interrupted run's).
func (t ThreadTask) Ran() bool {
	return t.Result != nil || t.Error != nil || len(t.Interrupts) > 0
}

// UserNode reports whether name is a node of the user's graph, not the
// graph's start or end.
func UserNode(name string) bool {
	return name != "" && name != Start && name != End
}

// MetaString returns the string under key in m ("" when absent).
func MetaString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Latest returns the checkpoints of the latest pactum task in history
// (the Agent Server's order, newest first, or any order), oldest first:
// those whose metadata names the same task (MetaTask) as the newest
// checkpoint does, which spans every run of the task (a run after an
// interrupt resumes the one before it; a retry runs the graph again).
// Checkpoints of runs pactum did not start are grouped by their run
// (metadata run_id) instead: the newest checkpoint's run. A history
// without either is returned whole.
func Latest(history []ThreadState) []ThreadState {
	states := slices.Clone(history)
	slices.SortStableFunc(states, func(a, b ThreadState) int {
		return strings.Compare(a.CreatedAt, b.CreatedAt)
	})
	if len(states) == 0 {
		return states
	}
	newest := states[len(states)-1].Metadata
	key := MetaTask
	want := MetaString(newest, key)
	if want == "" {
		key = "run_id"
		want = MetaString(newest, key)
	}
	if want == "" {
		return states
	}
	return slices.DeleteFunc(states, func(s ThreadState) bool { return MetaString(s.Metadata, key) != want })
}

// NodeRun is the last run of one node among a run's checkpoints.
type NodeRun struct {
	// Task is the node's task in the checkpoint it ran from.
	Task ThreadTask
	// Start and End are the times of the checkpoint it ran from and of
	// the next one (End is Start for the last checkpoint).
	Start, End time.Time
	// Runs counts the node's runs (more than one in a loop).
	Runs int
}

// NodeRuns returns the nodes that ran among states (oldest first, as
// Latest returns them), in the order each first ran, each with its last
// run: a node that ran more than once (a loop) is judged on its last
// run. The graph's start and end are left out; the input the graph
// started with (the start node's result) is returned as input.
func NodeRuns(states []ThreadState) (runs []NodeRun, input any, err error) {
	times := make([]time.Time, len(states))
	for i, s := range states {
		t, err := time.Parse(time.RFC3339Nano, s.CreatedAt)
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint %s: created_at: %w", s.Checkpoint.CheckpointID, err)
		}
		times[i] = t.UTC()
	}
	at := map[string]int{}
	for i, s := range states {
		end := times[i]
		if i+1 < len(states) {
			end = times[i+1]
		}
		for _, tk := range s.Tasks {
			if tk.Name == Start && tk.Result != nil {
				input = tk.Result
			}
			if !UserNode(tk.Name) || !tk.Ran() {
				continue
			}
			j, ok := at[tk.Name]
			if !ok {
				j = len(runs)
				at[tk.Name] = j
				runs = append(runs, NodeRun{})
			}
			runs[j].Task, runs[j].Start, runs[j].End = tk, times[i], end
			runs[j].Runs++
		}
	}
	return runs, input, nil
}

// NodeOutput is a node's state update as a pactum answer: the text of its
// last message (the update as JSON text when it has none) as the status
// message, the update itself as the artifact "output" with one data part.
// id names the task the answer is of (the message is id/answer, the
// artifact id/output). It returns nil for a nil update.
func NodeOutput(id, contextID string, update any) *task.Result {
	if update == nil {
		return nil
	}
	b, err := json.Marshal(update)
	if err != nil {
		return nil
	}
	msg := &task.Message{ID: id + "/answer", Role: task.RoleAgent, ContextID: contextID, TaskID: id}
	if text := LastMessageText(update); text != "" {
		msg.Parts = []task.Part{task.TextPart(text)}
	} else {
		msg.Parts = []task.Part{task.TextPart(string(b))}
	}
	return &task.Result{
		Message:   msg,
		Artifacts: []task.Artifact{{ID: id + "/output", Name: "output", Parts: []task.Part{task.DataPart(b)}}},
	}
}

// ErrorText is a node's error as the history records it, as one line of
// text.
func ErrorText(e any) string {
	switch x := e.(type) {
	case string:
		return x
	case map[string]any:
		if m, ok := x["message"].(string); ok {
			if n, ok := x["name"].(string); ok && n != "" {
				return n + ": " + m
			}
			return m
		}
	}
	b, _ := json.Marshal(e)
	return string(b)
}

// Messages returns a state's or an update's messages.
func Messages(v any) []any {
	m, _ := v.(map[string]any)
	switch x := m["messages"].(type) {
	case []any:
		return x
	case map[string]any:
		return []any{x}
	}
	return nil
}

// ContentText is a message's text: its content string, or the text of
// its content blocks, one per line.
func ContentText(msg any) string {
	m, _ := msg.(map[string]any)
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok {
				if s, ok := bm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// FirstMessageText is the text of the first of v's messages.
func FirstMessageText(v any) string {
	if ms := Messages(v); len(ms) > 0 {
		return ContentText(ms[0])
	}
	return ""
}

// LastMessageText is the text of the last of v's messages.
func LastMessageText(v any) string {
	if ms := Messages(v); len(ms) > 0 {
		return ContentText(ms[len(ms)-1])
	}
	return ""
}
