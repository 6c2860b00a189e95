package task

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
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
		{StateInProgress, StateWaiting}:       true,
		{StateWaiting, StateQueued}:           true,
		{StateWaiting, StateCanceled}:         true,
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

// TestAuditHashIsStable pins the hash layout: stored chains were sealed
// with it, so any change here breaks audit verify on existing data.
func TestAuditHashIsStable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    AuditEntry
		want string
	}{
		{AuditEntry{Seq: 42, At: time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.FixedZone("X", 3600)), Kind: AuditTransition,
			TaskID: "01a2029f-d5cd-70e0-be60-939515c1583a", Actor: "alice", Data: []byte(`{"from":"queued","to":"in_progress"}`),
			PrevHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
			"4668d76bf34efcb13003533ad1b85384afbdd94a705b244c10ad7725f69cf1d8"},
		{AuditEntry{Seq: 1, At: time.Unix(0, 0), Kind: AuditPolicy},
			"03b57e249934d3a3ead8ecfd41247ab425756a69f37c9ce3c0a2d886a321d05d"},
	} {
		if got := c.e.ComputeHash(); got != c.want {
			t.Errorf("hash of entry %d = %s, want %s", c.e.Seq, got, c.want)
		}
	}
	// Entries around and beyond the stack buffer's size (hashed in one
	// piece below it, in two above) hash by the same layout: each
	// field's length (8 bytes, little-endian), then its bytes.
	for n := 380; n <= 2000; n++ {
		if n > 560 && n != 2000 {
			continue
		}
		big := AuditEntry{Seq: 7, At: time.Unix(5, 0), Kind: AuditTransition, Actor: "bob", Data: []byte(`"` + strings.Repeat("x", n) + `"`)}
		h := sha256.New()
		for _, f := range []string{big.PrevHash, "7", "1970-01-01T00:00:05Z", string(big.Kind), big.TaskID, big.Actor, string(big.Data)} {
			_ = binary.Write(h, binary.LittleEndian, uint64(len(f)))
			h.Write([]byte(f))
		}
		if got, want := big.ComputeHash(), hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("hash of an entry with %d bytes of data = %s, want %s", len(big.Data), got, want)
		}
	}
}

func BenchmarkAuditHash(b *testing.B) {
	e := AuditEntry{Seq: 42, At: time.Now(), Kind: AuditTransition, TaskID: "01a2029f-d5cd-70e0-be60-939515c1583a",
		Actor: "alice", Data: []byte(`{"from":"queued","to":"in_progress","attempt":1}`), PrevHash: strings.Repeat("ab", 32)}
	b.ReportAllocs()
	for b.Loop() {
		e.ComputeHash()
	}
}

// BenchmarkAuditHashLarge is BenchmarkAuditHash for an entry whose data
// (a contract's evidence, say) does not fit the stack buffer.
func BenchmarkAuditHashLarge(b *testing.B) {
	e := AuditEntry{Seq: 42, At: time.Now(), Kind: AuditTransition, TaskID: "01a2029f-d5cd-70e0-be60-939515c1583a",
		Actor: "alice", Data: []byte(`{"evidence":"` + strings.Repeat("x", 800) + `"}`), PrevHash: strings.Repeat("ab", 32)}
	b.ReportAllocs()
	for b.Loop() {
		e.ComputeHash()
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

// TestStartsTurn: exactly the transitions that queue a task again for a
// new decision (a caller's answer, a manual retry, a child waking its
// waiting parent) start a turn.
func TestStartsTurn(t *testing.T) {
	t.Parallel()
	for _, from := range States() {
		for _, to := range States() {
			r := Record{From: from, To: to}
			want := to == StateQueued && (from == StateInputRequired || from == StateFailed || from == StateDeadLetter || from == StateWaiting)
			if got := r.StartsTurn(); got != want {
				t.Errorf("%s → %s: StartsTurn %v, want %v", from, to, got, want)
			}
		}
	}
	tk := Task{Attempt: 4, TurnStart: 3, MaxAttempts: 3}
	if got, want := tk.AttemptSummary(), "attempt 1 of 3, 4 in all"; got != want {
		t.Errorf("AttemptSummary = %q, want %q", got, want)
	}
	tk = Task{Attempt: 2, MaxAttempts: 3}
	if got, want := tk.AttemptSummary(), "attempt 2 of 3"; got != want {
		t.Errorf("AttemptSummary = %q, want %q", got, want)
	}
}
