package task

import "fmt"

// State is a task's lifecycle state.
type State string

// The lifecycle states. A task moves requested → validated → queued →
// in_progress → succeeded | failed | canceled | dead_letter, with
// input_required as an interruption for multi-turn agents and waiting for a
// parent task whose children run: it holds no worker and no lease, and the
// store queues it again when one of its children settles.
const (
	StateRequested     State = "requested"
	StateValidated     State = "validated"
	StateQueued        State = "queued"
	StateInProgress    State = "in_progress"
	StateInputRequired State = "input_required"
	StateWaiting       State = "waiting"
	StateSucceeded     State = "succeeded"
	StateFailed        State = "failed"
	StateCanceled      State = "canceled"
	StateDeadLetter    State = "dead_letter"
)

// States returns every lifecycle state in lifecycle order.
func States() []State {
	return []State{
		StateRequested, StateValidated, StateQueued, StateInProgress,
		StateInputRequired, StateWaiting, StateSucceeded, StateFailed, StateCanceled, StateDeadLetter,
	}
}

// transitions is the one transition table of the lifecycle. A pair that is
// not listed is illegal.
var transitions = map[State][]State{
	// Submission: validation passes, or the envelope is rejected (failed).
	StateRequested: {StateValidated, StateFailed, StateCanceled},
	// Validated tasks are queued, or refused by policy.
	StateValidated: {StateQueued, StateFailed, StateCanceled},
	// A worker claims a queued task; it may be canceled before it runs.
	StateQueued: {StateInProgress, StateCanceled},
	// An attempt ends: success, permanent failure, retry (back to queued),
	// spent attempts (dead_letter), a question for the user, children
	// spawned or still running (waiting), or cancel.
	StateInProgress: {StateSucceeded, StateFailed, StateQueued, StateDeadLetter, StateInputRequired, StateWaiting, StateCanceled},
	// The user answers (queued again) or gives up.
	StateInputRequired: {StateQueued, StateCanceled},
	// A child settled (queued again, for the parent to decide) or the
	// parent is canceled.
	StateWaiting: {StateQueued, StateCanceled},
	// An explicit retry starts a new, recorded attempt.
	StateFailed:     {StateQueued},
	StateDeadLetter: {StateQueued},
	StateSucceeded:  nil,
	StateCanceled:   nil,
}

// Valid reports whether s is one of the lifecycle states.
func (s State) Valid() bool {
	_, ok := transitions[s]
	return ok
}

// Terminal reports whether s ends the task's automatic progress: nothing moves
// it on but an explicit retry (failed, dead_letter) or nothing at all.
func (s State) Terminal() bool {
	switch s {
	case StateSucceeded, StateFailed, StateCanceled, StateDeadLetter:
		return true
	}
	return false
}

// Interrupted reports whether the task waits for the caller (input_required).
func (s State) Interrupted() bool { return s == StateInputRequired }

// CanTransition reports whether from → to is in the transition table.
func CanTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// CheckTransition returns an error wrapping ErrIllegalTransition when from →
// to is not in the transition table.
func CheckTransition(from, to State) error {
	if !CanTransition(from, to) {
		return Errorf(CodeIllegalTransition, "illegal transition %s → %s: %w", from, to, ErrIllegalTransition)
	}
	return nil
}

// Cancelable reports whether a task in s may still be canceled.
func (s State) Cancelable() bool { return CanTransition(s, StateCanceled) }

// String implements fmt.Stringer.
func (s State) String() string { return string(s) }

// ParseState parses a state name.
func ParseState(v string) (State, error) {
	s := State(v)
	if !s.Valid() {
		return "", Errorf(CodeInvalidArgument, "unknown task state %q", v)
	}
	return s, nil
}

var _ fmt.Stringer = State("")
