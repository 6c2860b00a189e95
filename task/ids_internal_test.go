package task

import "testing"

// TestNewIDsGrow: the ids one process makes sort in the order it made
// them, even within one millisecond, and are RFC 9562 version 7.
func TestNewIDsGrow(t *testing.T) {
	t.Parallel()
	prev := NewID()
	for i := range 20000 {
		id := NewID()
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", i, id, prev)
		}
		if id[14] != '7' || (id[19] != '8' && id[19] != '9' && id[19] != 'a' && id[19] != 'b') {
			t.Fatalf("id %s: not a version 7, variant 10 UUID", id)
		}
		prev = id
	}
}

func TestMonotonicCounter(t *testing.T) {
	t.Parallel()
	var m monotonic
	if ms, seq := m.next(100); ms != 100 || seq != 0 {
		t.Fatalf("first: %d/%d", ms, seq)
	}
	if ms, seq := m.next(100); ms != 100 || seq != 1 {
		t.Fatalf("same millisecond: %d/%d", ms, seq)
	}
	if ms, seq := m.next(99); ms != 100 || seq != 2 {
		t.Fatalf("clock stepped back: %d/%d", ms, seq)
	}
	m.seq = 0xfff
	if ms, seq := m.next(100); ms != 101 || seq != 0 {
		t.Fatalf("counter spent: %d/%d, want the next millisecond", ms, seq)
	}
	if ms, seq := m.next(101); ms != 101 || seq != 1 {
		t.Fatalf("after borrowing: %d/%d", ms, seq)
	}
}
