package a2amap

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// stateTable is the one mapping of pactum lifecycle states to A2A task
// states. Two refinements are applied by StateToA2A: a failed task that was
// refused before it ran (task.Rejected) is TASK_STATE_REJECTED, and
// dead_letter, which A2A has no state for, is TASK_STATE_FAILED (the A2A
// server adds metadata.pactum.state = "dead_letter"). waiting, a parent
// whose children run, is TASK_STATE_WORKING: the task is at work, through
// its children (metadata.pactum.state = "waiting").
var stateTable = map[task.State]a2a.TaskState{
	task.StateRequested:     a2a.TaskStateSubmitted,
	task.StateValidated:     a2a.TaskStateSubmitted,
	task.StateQueued:        a2a.TaskStateSubmitted,
	task.StateInProgress:    a2a.TaskStateWorking,
	task.StateInputRequired: a2a.TaskStateInputRequired,
	task.StateWaiting:       a2a.TaskStateWorking,
	task.StateSucceeded:     a2a.TaskStateCompleted,
	task.StateFailed:        a2a.TaskStateFailed,
	task.StateCanceled:      a2a.TaskStateCanceled,
	task.StateDeadLetter:    a2a.TaskStateFailed,
}

// StateToA2A returns the A2A state of t: its lifecycle state through the
// state table, TASK_STATE_REJECTED for a failed task that was refused before
// it ran, and TASK_STATE_UNSPECIFIED for a state the table does not know.
func StateToA2A(t *task.Task) a2a.TaskState {
	if t.State == task.StateFailed && t.Rejected {
		return a2a.TaskStateRejected
	}
	if s, ok := stateTable[t.State]; ok {
		return s
	}
	return a2a.TaskStateUnspecified
}

// StatesFromA2A returns the pactum states an A2A status filter selects, and
// whether the filter additionally needs the Rejected flag checked (nil: no
// check). It inverts StateToA2A: the filter on a state StateToA2A produces
// selects exactly the tasks StateToA2A maps to it. TASK_STATE_UNSPECIFIED
// selects every state (states is nil); TASK_STATE_AUTH_REQUIRED, which pactum never
// produces, selects nothing (states is empty); an unknown A2A state returns
// ok == false.
func StatesFromA2A(s a2a.TaskState) (states []task.State, rejected *bool, ok bool) {
	switch s {
	case a2a.TaskStateUnspecified:
		return nil, nil, true
	case a2a.TaskStateAuthRequired:
		return []task.State{}, nil, true
	case a2a.TaskStateRejected:
		yes := true
		return []task.State{task.StateFailed}, &yes, true
	case a2a.TaskStateFailed:
		no := false
		return []task.State{task.StateFailed, task.StateDeadLetter}, &no, true
	}
	for _, d := range task.States() {
		if stateTable[d] == s {
			states = append(states, d)
		}
	}
	return states, nil, len(states) > 0
}
