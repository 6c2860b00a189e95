package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/task"
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

// DecodeHistory reads a thread's history: the Agent Server's JSON array
// of thread states.
func DecodeHistory(data []byte) ([]ThreadState, error) {
	var h []ThreadState
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("langgraph: history: %w", err)
	}
	return h, nil
}

// HistoryTrace converts a thread's history (one run; a history of several
// runs gives its latest) to a pactum trace that `pactum verify` judges
// against a contract made from the graph (ToContract): the run is the
// trace's task (id the run's, agent the graph's id, input the run's
// input: the text of its first message, and its whole input as a data
// part), and each node that ran is a child task running the step of the
// node's id. A child's answer is the node's state update: the text of its
// last message as the status message, the update itself as an artifact
// "output" with one data part. A node that ran more than once (a loop) is
// judged on its last run; the child's envelope metadata langgraphRuns
// says how many. A node whose run raised an error failed with it (code
// agent_failed); one interrupted waits for input (input_required). The
// records' times are the checkpoints': a node ran from the checkpoint
// that scheduled it to the next.
func HistoryTrace(history []ThreadState, exportedAt time.Time) (*trace.Trace, error) {
	if len(history) == 0 {
		return nil, errors.New("langgraph: the history is empty")
	}
	states := append([]ThreadState(nil), history...)
	// Oldest first: the server lists newest first.
	slices.SortStableFunc(states, func(a, b ThreadState) int {
		return strings.Compare(a.CreatedAt, b.CreatedAt)
	})
	// The latest run only.
	runID := metaString(states[len(states)-1].Metadata, "run_id")
	if runID != "" {
		var run []ThreadState
		for _, s := range states {
			if metaString(s.Metadata, "run_id") == runID {
				run = append(run, s)
			}
		}
		states = run
	}
	times := make([]time.Time, len(states))
	for i, s := range states {
		t, err := time.Parse(time.RFC3339Nano, s.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("langgraph: history: checkpoint %s: created_at: %w", s.Checkpoint.CheckpointID, err)
		}
		times[i] = t.UTC()
	}
	first, last := states[0], states[len(states)-1]
	threadID := first.Checkpoint.ThreadID
	if runID == "" {
		runID = "langgraph-" + threadID
	}
	graphID := metaString(last.Metadata, "graph_id")
	if graphID == "" {
		graphID = "langgraph"
	}

	var input any
	for _, s := range states {
		for _, tk := range s.Tasks {
			if tk.Name == Start {
				input = tk.Result
			}
		}
	}
	in := task.Message{ID: runID + "/input", Role: task.RoleUser, ContextID: threadID, TaskID: runID}
	if text := firstMessageText(input); text != "" {
		in.Parts = append(in.Parts, task.TextPart(text))
	}
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			return nil, fmt.Errorf("langgraph: history: the run's input: %w", err)
		}
		in.Parts = append(in.Parts, task.DataPart(b))
	}

	type run struct {
		tk         ThreadTask
		start, end time.Time
		runs       int
	}
	byNode := map[string]*run{}
	var order []string
	for i, s := range states {
		end := times[i]
		if i+1 < len(states) {
			end = times[i+1]
		}
		for _, tk := range s.Tasks {
			if tk.Name == Start || tk.Name == End || tk.Name == "" {
				continue
			}
			// A task without a result or an error has not run yet (the
			// last checkpoint's next nodes, an interrupted run's).
			if tk.Result == nil && tk.Error == nil && len(tk.Interrupts) == 0 {
				continue
			}
			r, ok := byNode[tk.Name]
			if !ok {
				r = &run{}
				byNode[tk.Name] = r
				order = append(order, tk.Name)
			}
			r.tk, r.start, r.end = tk, times[i], end
			r.runs++
		}
	}

	parentState := task.StateSucceeded
	var parentCode task.Code
	var parentReason string
	children := make([]*trace.Node, 0, len(order))
	for _, name := range order {
		r := byNode[name]
		id := r.tk.ID
		if id == "" {
			id = runID + "/" + name
		}
		child := &task.Task{
			ID: id, ContextID: threadID, Agent: name, MaxAttempts: 1, Attempt: 1,
			Envelope: task.Envelope{
				TaskID: id, IdempotencyKey: runID + "/" + name, Actor: "langgraph", Action: name,
				Input:     task.Message{ID: id + "/input", Role: task.RoleUser, Parts: in.Parts, ContextID: threadID, TaskID: id},
				ContextID: threadID, CorrelationID: runID, ParentTaskID: runID, Step: name,
				Metadata: map[string]any{"langgraphRuns": r.runs}, CreatedAt: r.start,
			},
			CreatedAt: r.start, UpdatedAt: r.end,
		}
		state := task.StateSucceeded
		switch {
		case r.tk.Error != nil:
			state, child.ErrorCode, child.Reason = task.StateFailed, task.CodeAgentFailed, errorText(r.tk.Error)
			parentState, parentCode, parentReason = task.StateFailed, task.CodeAgentFailed, fmt.Sprintf("node %s: %s", name, child.Reason)
		case len(r.tk.Interrupts) > 0 && r.tk.Result == nil:
			state = task.StateInputRequired
			if parentState == task.StateSucceeded {
				parentState = task.StateInputRequired
			}
		default:
			answer(child, r.tk.Result)
		}
		child.State = state
		child.Seq = 4
		children = append(children, &trace.Node{Task: child, Timeline: timeline(id, r.start, r.end, state, child.ErrorCode, child.Reason)})
	}
	if parentState == task.StateSucceeded && len(last.Next) > 0 {
		// The run stopped before the graph's end (interrupted before a node).
		parentState = task.StateInputRequired
	}

	start, end := times[0], times[len(times)-1]
	parent := &task.Task{
		ID: runID, ContextID: threadID, Agent: graphID, MaxAttempts: 1, Attempt: 1,
		Envelope: task.Envelope{
			TaskID: runID, IdempotencyKey: runID, Actor: "langgraph", Action: graphID, Input: in,
			ContextID: threadID, CorrelationID: runID,
			Metadata:  map[string]any{"langgraphThreadId": threadID},
			CreatedAt: start,
		},
		State: parentState, ErrorCode: parentCode, Reason: parentReason, Children: len(children),
		History: []task.Message{in},
		Seq:     4, CreatedAt: start, UpdatedAt: end,
	}
	// The run's answer is the graph's output: its final state.
	answer(parent, last.Values)
	return &trace.Trace{
		Version:    "1.1",
		ExportedAt: exportedAt.UTC(),
		Node:       trace.Node{Task: parent, Timeline: timeline(runID, start, end, parentState, parentCode, parentReason), Children: children},
	}, nil
}

// answer sets a task's answer from a state update: its last message's
// text as the status message, the update as the artifact "output".
func answer(t *task.Task, update any) {
	if update == nil {
		return
	}
	b, err := json.Marshal(update)
	if err != nil {
		return
	}
	msg := &task.Message{ID: t.ID + "/answer", Role: task.RoleAgent, ContextID: t.ContextID, TaskID: t.ID}
	if text := lastMessageText(update); text != "" {
		msg.Parts = []task.Part{task.TextPart(text)}
	} else {
		msg.Parts = []task.Part{task.TextPart(string(b))}
	}
	t.StatusMessage = msg
	t.History = append(t.History, *msg)
	t.Artifacts = []task.Artifact{{ID: t.ID + "/output", Name: "output", Parts: []task.Part{task.DataPart(b)}}}
}

// timeline is a task's execution record: requested → validated → queued
// at start, in_progress from start, and the end state at end.
func timeline(id string, start, end time.Time, state task.State, code task.Code, reason string) []task.Record {
	recs := []task.Record{
		{TaskID: id, Seq: 1, From: task.StateRequested, To: task.StateValidated, At: start},
		{TaskID: id, Seq: 2, From: task.StateValidated, To: task.StateQueued, At: start},
		{TaskID: id, Seq: 3, From: task.StateQueued, To: task.StateInProgress, At: start, Attempt: 1},
		{TaskID: id, Seq: 4, From: task.StateInProgress, To: state, At: end, Attempt: 1, ErrorCode: code, Reason: reason},
	}
	return recs
}

func metaString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// messages returns a state's or an update's messages.
func messages(v any) []any {
	m, _ := v.(map[string]any)
	switch x := m["messages"].(type) {
	case []any:
		return x
	case map[string]any:
		return []any{x}
	}
	return nil
}

func contentText(msg any) string {
	m, _ := msg.(map[string]any)
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		// Content blocks: their text.
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

func firstMessageText(v any) string {
	if ms := messages(v); len(ms) > 0 {
		return contentText(ms[0])
	}
	return ""
}

func lastMessageText(v any) string {
	if ms := messages(v); len(ms) > 0 {
		return contentText(ms[len(ms)-1])
	}
	return ""
}

func errorText(e any) string {
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
