package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pactum/pactum/contract/trace"
	"github.com/pactum/pactum/internal/lgstate"
	"github.com/pactum/pactum/task"
)

// ThreadState is one checkpoint of a thread's history, as the LangGraph
// Agent Server returns it (POST /threads/{thread_id}/history, newest
// first): the state's values, the nodes to run next, and the tasks that
// ran from this checkpoint to the next, each with its result (the state
// update the node returned) or its error.
type ThreadState = lgstate.ThreadState

// ThreadTask is a node's run from a checkpoint.
type ThreadTask = lgstate.ThreadTask

// Checkpoint names a checkpoint of a thread.
type Checkpoint = lgstate.Checkpoint

// DecodeHistory reads a thread's history: the Agent Server's JSON array
// of thread states.
func DecodeHistory(data []byte) ([]ThreadState, error) {
	var h []ThreadState
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("langgraph: history: %w", err)
	}
	return h, nil
}

// HistoryTrace converts a thread's history to a pactum trace that
// `pactum verify` judges against a contract made from the graph
// (ToContract). A thread holds the runs of every task of a conversation;
// the trace is of the latest (lgstate.Latest: the runs of the newest
// checkpoint's pactum task, which include a run resumed after an
// interrupt and a run again after a violation; the newest run when pactum
// did not start it). The run is the trace's task (id the latest run's, agent the graph's id, input the run's
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
	states := lgstate.Latest(history)
	nodes, input, err := lgstate.NodeRuns(states)
	if err != nil {
		return nil, fmt.Errorf("langgraph: history: %w", err)
	}
	first, last := states[0], states[len(states)-1]
	start, _ := time.Parse(time.RFC3339Nano, first.CreatedAt)
	end, _ := time.Parse(time.RFC3339Nano, last.CreatedAt)
	start, end = start.UTC(), end.UTC()
	threadID := first.Checkpoint.ThreadID
	runID := lgstate.MetaString(last.Metadata, "run_id")
	if runID == "" {
		runID = "langgraph-" + threadID
	}
	graphID := lgstate.MetaString(last.Metadata, "graph_id")
	if graphID == "" {
		graphID = "langgraph"
	}

	in := task.Message{ID: runID + "/input", Role: task.RoleUser, ContextID: threadID, TaskID: runID}
	if text := lgstate.FirstMessageText(input); text != "" {
		in.Parts = append(in.Parts, task.TextPart(text))
	}
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			return nil, fmt.Errorf("langgraph: history: the run's input: %w", err)
		}
		in.Parts = append(in.Parts, task.DataPart(b))
	}

	parentState := task.StateSucceeded
	var parentCode task.Code
	var parentReason string
	children := make([]*trace.Node, 0, len(nodes))
	for _, r := range nodes {
		name := r.Task.Name
		id := r.Task.ID
		if id == "" {
			id = runID + "/" + name
		}
		child := &task.Task{
			ID: id, ContextID: threadID, Agent: name, MaxAttempts: 1, Attempt: 1,
			Envelope: task.Envelope{
				TaskID: id, IdempotencyKey: runID + "/" + name, Actor: "langgraph", Action: name,
				Input:     task.Message{ID: id + "/input", Role: task.RoleUser, Parts: in.Parts, ContextID: threadID, TaskID: id},
				ContextID: threadID, CorrelationID: runID, ParentTaskID: runID, Step: name,
				Metadata: map[string]any{"langgraphRuns": r.Runs}, CreatedAt: r.Start,
			},
			CreatedAt: r.Start, UpdatedAt: r.End,
		}
		state := task.StateSucceeded
		switch {
		case r.Task.Error != nil:
			state, child.ErrorCode, child.Reason = task.StateFailed, task.CodeAgentFailed, lgstate.ErrorText(r.Task.Error)
			parentState, parentCode, parentReason = task.StateFailed, task.CodeAgentFailed, fmt.Sprintf("node %s: %s", name, child.Reason)
		case len(r.Task.Interrupts) > 0 && r.Task.Result == nil:
			state = task.StateInputRequired
			if parentState == task.StateSucceeded {
				parentState = task.StateInputRequired
			}
		default:
			answer(child, r.Task.Result)
		}
		child.State = state
		child.Seq = 4
		children = append(children, &trace.Node{Task: child, Timeline: timeline(id, r.Start, r.End, state, child.ErrorCode, child.Reason)})
	}
	if parentState == task.StateSucceeded && len(last.Next) > 0 {
		// The run stopped before the graph's end (interrupted before a node).
		parentState = task.StateInputRequired
	}

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

// answer sets a task's answer from a state update, by the rule the live
// gate of a graph's nodes applies too (lgstate.NodeOutput).
func answer(t *task.Task, update any) {
	res := lgstate.NodeOutput(t.ID, t.ContextID, update)
	if res == nil {
		return
	}
	t.StatusMessage = res.Message
	t.History = append(t.History, *res.Message)
	t.Artifacts = res.Artifacts
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
