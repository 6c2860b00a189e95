package sqlite

import (
	"context"
	"path/filepath"
	"testing"
)

// TestPageCacheBounded: every connection, the writer's and each reader's,
// holds at most 2 MB of page cache, so the node's SQLite memory
// stays bounded however many tasks the file holds (issue 15: RSS after
// 100,000 settled tasks within 20 % of RSS after 1,000).
func TestPageCacheBounded(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, Config{Path: filepath.Join(t.TempDir(), "cache.db"), ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	check := func(name string, q func() (int, error)) {
		t.Helper()
		n, err := q()
		if err != nil {
			t.Fatalf("%s: PRAGMA cache_size: %v", name, err)
		}
		// A negative cache_size is a size in KiB; a positive one a count of
		// pages, which this store does not set.
		if n >= 0 || -n > 2000 {
			t.Fatalf("%s: cache_size = %d, want at most 2000 KiB (-2000); see docs/benchmarks.md, Memory after 100,000 tasks", name, n)
		}
	}
	check("writer", func() (n int, err error) {
		// The writer owns the write connection: ask on it, holding its
		// turn (a write function runs with the connection borrowed by the
		// writer's driver statements, conn.go).
		s.takeLead(false)
		defer s.passLead()
		return n, s.wconn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n)
	})
	// Hold both readers at once so that each one is asked.
	c1, err := s.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := s.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	check("reader 1", func() (n int, err error) { return n, c1.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n) })
	check("reader 2", func() (n int, err error) { return n, c2.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n) })
}
