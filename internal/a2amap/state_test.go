package a2amap

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

func TestStateTable(t *testing.T) {
	t.Parallel()
	for _, s := range task.States() {
		if _, ok := stateTable[s]; !ok {
			t.Errorf("state %s has no A2A state", s)
		}
	}
	for _, tc := range []struct {
		state    task.State
		rejected bool
		want     a2a.TaskState
	}{
		{task.StateRequested, false, a2a.TaskStateSubmitted},
		{task.StateValidated, false, a2a.TaskStateSubmitted},
		{task.StateQueued, false, a2a.TaskStateSubmitted},
		{task.StateInProgress, false, a2a.TaskStateWorking},
		{task.StateInputRequired, false, a2a.TaskStateInputRequired},
		// A parent waiting for its children is still at work.
		{task.StateWaiting, false, a2a.TaskStateWorking},
		{task.StateSucceeded, false, a2a.TaskStateCompleted},
		{task.StateFailed, false, a2a.TaskStateFailed},
		{task.StateFailed, true, a2a.TaskStateRejected},
		{task.StateCanceled, false, a2a.TaskStateCanceled},
		{task.StateDeadLetter, false, a2a.TaskStateFailed},
	} {
		if got := StateToA2A(&task.Task{State: tc.state, Rejected: tc.rejected}); got != tc.want {
			t.Errorf("%s (rejected %v) → %s, want %s", tc.state, tc.rejected, got, tc.want)
		}
	}
	// Every A2A state pactum produces filters back to the states it came from.
	for _, s := range task.States() {
		for _, rejected := range []bool{false, true} {
			if rejected && s != task.StateFailed {
				continue
			}
			tk := &task.Task{State: s, Rejected: rejected}
			states, rej, ok := StatesFromA2A(StateToA2A(tk))
			if !ok || !containsState(states, s) || (rej != nil && *rej != rejected) {
				t.Errorf("filter %s does not select %s (rejected %v): %v %v", StateToA2A(tk), s, rejected, states, rej)
			}
		}
	}
	// WORKING selects running tasks and parents waiting for children.
	if states, _, _ := StatesFromA2A(a2a.TaskStateWorking); !containsState(states, task.StateInProgress) || !containsState(states, task.StateWaiting) || len(states) != 2 {
		t.Errorf("filter WORKING selects %v, want in_progress and waiting", states)
	}
	if _, _, ok := StatesFromA2A("TASK_STATE_NAPPING"); ok {
		t.Error("an unknown A2A state was accepted as a filter")
	}
}

func containsState(list []task.State, s task.State) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
