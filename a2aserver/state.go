package a2aserver

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// stateTable is the one mapping of pactum lifecycle states to A2A task
// states. Two refinements are applied by wireState: a failed task that was
// refused before it ran (task.Rejected) is TASK_STATE_REJECTED, and
// dead_letter, which A2A has no state for, is TASK_STATE_FAILED with
// metadata.pactum.state = "dead_letter".
var stateTable = map[task.State]a2a.TaskState{
	task.StateRequested:     a2a.TaskStateSubmitted,
	task.StateValidated:     a2a.TaskStateSubmitted,
	task.StateQueued:        a2a.TaskStateSubmitted,
	task.StateInProgress:    a2a.TaskStateWorking,
	task.StateInputRequired: a2a.TaskStateInputRequired,
	task.StateSucceeded:     a2a.TaskStateCompleted,
	task.StateFailed:        a2a.TaskStateFailed,
	task.StateCanceled:      a2a.TaskStateCanceled,
	task.StateDeadLetter:    a2a.TaskStateFailed,
}

// wireState returns the A2A state of t.
func wireState(t *task.Task) a2a.TaskState {
	if t.State == task.StateFailed && t.Rejected {
		return a2a.TaskStateRejected
	}
	if s, ok := stateTable[t.State]; ok {
		return s
	}
	return a2a.TaskStateUnspecified
}

// domainStates returns the pactum states an A2A status filter selects, and
// whether the filter additionally needs the Rejected flag checked (nil: no
// check). An unknown A2A state returns ok == false; TASK_STATE_AUTH_REQUIRED,
// which pactum never produces, selects nothing.
func domainStates(s a2a.TaskState) (states []task.State, rejected *bool, ok bool) {
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
