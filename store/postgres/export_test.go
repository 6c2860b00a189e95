package postgres

// Forming returns how many speculative creations of s wait for the
// current key round trip to end, to send theirs together (a group).
func Forming(s *Store) int {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	if s.forming == nil {
		return 0
	}
	return len(s.forming.members)
}

// Collisions returns how many speculative creations of s waited for an
// open creation with their task ID or idempotency key.
func Collisions(s *Store) int64 { return s.collisions.Load() }
