package postgres

import "context"

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

// SealOnce runs one seal of s, bounded to about limit entries (all when
// limit < 1; see sqlTakePending), and returns how many entries it sealed.
func SealOnce(ctx context.Context, s *Store, limit int) (int, error) {
	var n int
	err := s.inTx(ctx, func(x *txn) error {
		var err error
		n, _, err = x.sealPending(false, limit)
		return err
	})
	return n, err
}
