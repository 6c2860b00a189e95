package task

import (
	"errors"
	"testing"
	"time"
)

// TestTransitionTable walks every ordered pair of states and checks the table
// against the lifecycle written out by hand here.
func TestTransitionTable(t *testing.T) {
	t.Parallel()
	legal := map[[2]State]bool{
		{StateRequested, StateValidated}:      true,
		{StateRequested, StateFailed}:         true,
		{StateRequested, StateCanceled}:       true,
		{StateValidated, StateQueued}:         true,
		{StateValidated, StateFailed}:         true,
		{StateValidated, StateCanceled}:       true,
		{StateQueued, StateInProgress}:        true,
		{StateQueued, StateCanceled}:          true,
		{StateInProgress, StateSucceeded}:     true,
		{StateInProgress, StateFailed}:        true,
		{StateInProgress, StateQueued}:        true,
		{StateInProgress, StateDeadLetter}:    true,
		{StateInProgress, StateInputRequired}: true,
		{StateInProgress, StateCanceled}:      true,
		{StateInputRequired, StateQueued}:     true,
		{StateInputRequired, StateCanceled}:   true,
		{StateFailed, StateQueued}:            true,
		{StateDeadLetter, StateQueued}:        true,
	}
	n := 0
	for _, from := range States() {
		for _, to := range States() {
			want := legal[[2]State{from, to}]
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
			err := CheckTransition(from, to)
			if want && err != nil {
				t.Errorf("CheckTransition(%s, %s) = %v, want nil", from, to, err)
			}
			if !want {
				if !errors.Is(err, ErrIllegalTransition) || ErrorCode(err) != CodeIllegalTransition {
					t.Errorf("CheckTransition(%s, %s) = %v, want ErrIllegalTransition with code", from, to, err)
				}
				n++
			}
		}
	}
	if n != len(States())*len(States())-len(legal) {
		t.Fatalf("counted %d illegal pairs", n)
	}
	if CanTransition("bogus", StateQueued) || State("bogus").Valid() {
		t.Fatal("unknown state accepted")
	}
}

func TestStatePredicates(t *testing.T) {
	t.Parallel()
	terminal := map[State]bool{StateSucceeded: true, StateFailed: true, StateCanceled: true, StateDeadLetter: true}
	for _, s := range States() {
		if s.Terminal() != terminal[s] {
			t.Errorf("%s.Terminal() = %v", s, s.Terminal())
		}
		if s.Cancelable() == (terminal[s]) {
			t.Errorf("%s.Cancelable() = %v", s, s.Cancelable())
		}
		if p, err := ParseState(string(s)); err != nil || p != s {
			t.Errorf("ParseState(%s) = %v, %v", s, p, err)
		}
	}
	if _, err := ParseState("done"); ErrorCode(err) != CodeInvalidArgument {
		t.Fatalf("ParseState(done) = %v", err)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	r := RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Jitter: 0.5}
	for n := 1; n <= 8; n++ {
		base := 100 * time.Millisecond << (n - 1)
		if base > time.Second {
			base = time.Second
		}
		for range 50 {
			d := r.Backoff(n)
			if d > base || d < base/2 {
				t.Fatalf("Backoff(%d) = %s, want in [%s, %s]", n, d, base/2, base)
			}
		}
	}
	noJitter := RetryPolicy{InitialBackoff: time.Second, MaxBackoff: time.Hour}
	if d := noJitter.Backoff(3); d != 4*time.Second {
		t.Fatalf("Backoff(3) = %s, want 4s", d)
	}
}

func TestPermanentAndCodes(t *testing.T) {
	t.Parallel()
	base := errors.New("boom")
	p := Permanent(base)
	if !IsPermanent(p) || !errors.Is(p, base) || IsPermanent(base) {
		t.Fatal("Permanent marking broken")
	}
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) != nil")
	}
	e := Errorf(CodeNotFound, "task %s: %w", "x", ErrNotFound)
	if !errors.Is(e, ErrNotFound) || ErrorCode(e) != CodeNotFound || e.Error() != "task x: not found" {
		t.Fatalf("Errorf: %v", e)
	}
	if ErrorCode(base) != CodeInternal || ErrorCode(nil) != "" {
		t.Fatal("ErrorCode defaults")
	}
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	var none Permissions
	if !none.Allows("anyone", "x") {
		t.Fatal("nil permissions must allow")
	}
	p := Permissions{"alice": {"echo"}, "root": {"*"}}
	cases := []struct {
		actor, action string
		want          bool
	}{{"alice", "echo", true}, {"alice", "deploy", false}, {"root", "deploy", true}, {"mallory", "echo", false}}
	for _, c := range cases {
		if got := p.Allows(c.actor, c.action); got != c.want {
			t.Errorf("Allows(%s, %s) = %v", c.actor, c.action, got)
		}
	}
}

func TestAuditHashCoversEveryField(t *testing.T) {
	t.Parallel()
	e := AuditEntry{Seq: 1, At: time.Unix(1, 0), Kind: AuditTransition, TaskID: "t", Actor: "a", Data: []byte(`{"x":1}`), PrevHash: "p"}
	h := e.ComputeHash()
	mut := []func(*AuditEntry){
		func(e *AuditEntry) { e.Seq = 2 },
		func(e *AuditEntry) { e.At = e.At.Add(time.Microsecond) },
		func(e *AuditEntry) { e.Kind = AuditPolicy },
		func(e *AuditEntry) { e.TaskID = "u" },
		func(e *AuditEntry) { e.Actor = "b" },
		func(e *AuditEntry) { e.Data = []byte(`{"x":2}`) },
		func(e *AuditEntry) { e.PrevHash = "q" },
		// Moving bytes between adjacent fields must change the hash too.
		func(e *AuditEntry) { e.TaskID, e.Actor = "ta", "" },
	}
	for i, m := range mut {
		c := e
		m(&c)
		if c.ComputeHash() == h {
			t.Errorf("mutation %d did not change the hash", i)
		}
	}
}
