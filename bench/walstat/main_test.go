package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// walstat reads a real SQLite log: 20 commits of one row each into a
// table with an index (autocheckpoint off, the connection kept open so
// the log stays), read from a copy as the doc says to take one.
func TestWalstatCountsPagesOfRealCommits(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	conn, err := sql.Open("sqlite", db+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL); CREATE INDEX t_k ON t (k)`); err != nil {
		t.Fatal(err)
	}
	const setup, rows = 2, 20 // each CREATE is a commit
	for i := range rows {
		if _, err := conn.Exec(`INSERT INTO t (k) VALUES (?)`, fmt.Sprint("key ", i)); err != nil {
			t.Fatal(err)
		}
	}
	copyDB := filepath.Join(t.TempDir(), "c.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyDB+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wal, _ := os.ReadFile(copyDB + "-wal")
	commits, err := parseWAL(wal)
	if err != nil || len(commits) != setup+rows {
		t.Fatalf("parseWAL: %d commits, %v; want %d", len(commits), err, setup+rows)
	}
	var out bytes.Buffer
	if err := run(&out, copyDB, setup); err != nil {
		t.Fatal(err)
	}
	// Each insert writes the table's leaf and the index's leaf, both
	// the root pages of tiny b-trees.
	got := out.String()
	for _, want := range []string{"20 commits (after 2 skipped), 2.00 pages per commit", "   1.00  t/leaf", "   1.00  t_k/leaf"} {
		if !strings.Contains(got, want) {
			t.Errorf("walstat printed:\n%s\nwant a line %q", got, want)
		}
	}
	// The log is read, not consumed: a second run says the same.
	var again bytes.Buffer
	if err := run(&again, copyDB, setup); err != nil || again.String() != got {
		t.Fatalf("second run: %v\n%s\nfirst:\n%s", err, again.String(), got)
	}
	// A later generation overwrites the log from its start: frames
	// past it, with the old salts, are not read as commits.
	old := append([]byte(nil), wal...)
	copy(old[16:24], []byte{1, 2, 3, 4, 5, 6, 7, 8}) // a new header's salts
	if c, err := parseWAL(old); err != nil || len(c) != 0 {
		t.Fatalf("a log whose frames carry other salts: %d commits, %v; want none", len(c), err)
	}
	if _, err := parseWAL([]byte("not a log, but long enough to hold a header")); err == nil {
		t.Fatal("parseWAL took a file that is not a log")
	}
}
