package audit_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/audit/audittest"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// chain builds an audit chain through a real SQLite store and closes it.
// It returns the database path and the sealed entries.
func chain(t *testing.T) (string, []task.AuditEntry) {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s, err := sqlite.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries := audittest.Build(t, s)
	return path, entries
}

// tamper opens the file as an attacker would and lifts the append-only
// triggers first.
func tamper(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	guards := []string{
		`DROP TRIGGER IF EXISTS audit_log_no_update`, `DROP TRIGGER IF EXISTS audit_log_no_delete`,
		`DROP TRIGGER IF EXISTS task_records_no_update`, `DROP TRIGGER IF EXISTS task_records_no_delete`,
	}
	for _, q := range append(guards, stmts...) {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func verify(t *testing.T, path string) *audit.Report {
	t.Helper()
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := audit.Verify(t.Context(), s)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return r
}

func TestVerifyIntact(t *testing.T) {
	t.Parallel()
	path, entries := chain(t)
	r := verify(t, path)
	last := entries[len(entries)-1]
	if !r.OK || r.Entries != len(entries) || r.FirstBad != 0 || r.Problem != "" || r.LastSeq != last.Seq || r.LastHash != last.Hash {
		t.Errorf("Verify = %+v, want OK over %d entries ending at %d/%s", r, len(entries), last.Seq, last.Hash)
	}
}

func TestVerifyEmpty(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := audit.Verify(t.Context(), s)
	if err != nil || !r.OK || r.Entries != 0 {
		t.Errorf("Verify(empty) = %+v, %v", r, err)
	}
}

// sqliteTarget is a fresh SQLite store in a file of its own and an
// attacker's connection to that file.
func sqliteTarget(t *testing.T) audittest.Target {
	path := filepath.Join(t.TempDir(), "pactum.db")
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return audittest.Target{
		Store: s,
		Exec: func(t *testing.T, stmts ...string) {
			t.Helper()
			tamper(t, path, stmts...)
		},
		Insert: func(e task.AuditEntry) string {
			data := "NULL"
			if len(e.Data) > 0 {
				data = fmt.Sprintf("X'%x'", []byte(e.Data))
			}
			return fmt.Sprintf(`INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash) VALUES (%d, %d, '%s', '%s', '%s', %s, '%s', '%s')`,
				e.Seq, e.At.UnixMicro(), e.Kind, e.TaskID, e.Actor, data, e.PrevHash, e.Hash)
		},
		// The primary key is the rowid: the table is made again without it.
		AllowDuplicates: []string{
			`CREATE TABLE audit_log_copy (seq INTEGER NOT NULL, at INTEGER NOT NULL, kind TEXT NOT NULL,
				task_id TEXT NOT NULL DEFAULT '', actor TEXT NOT NULL DEFAULT '', data BLOB,
				prev_hash TEXT NOT NULL, hash TEXT NOT NULL) STRICT`,
			`INSERT INTO audit_log_copy SELECT * FROM audit_log ORDER BY seq`,
			`DROP TABLE audit_log`,
			`ALTER TABLE audit_log_copy RENAME TO audit_log`,
		},
	}
}

// TestVerifyTampered runs the tampering suite on SQLite files.
func TestVerifyTampered(t *testing.T) {
	t.Parallel()
	audittest.Run(t, sqliteTarget)
}

// pagedStore serves a fixed chain in small pages, to check that Verify
// carries state across pages.
type pagedStore struct {
	task.Store
	entries []task.AuditEntry
	calls   int
}

func (p *pagedStore) AuditEntries(_ context.Context, after int64, limit int) ([]task.AuditEntry, error) {
	p.calls++
	var out []task.AuditEntry
	for _, e := range p.entries {
		if e.Seq > after && len(out) < min(limit, 3) {
			out = append(out, e)
		}
	}
	return out, nil
}

func TestVerifyAcrossPages(t *testing.T) {
	t.Parallel()
	_, entries := chain(t)
	p := &pagedStore{entries: entries}
	r, err := audit.Verify(t.Context(), p)
	if err != nil || !r.OK || r.Entries != len(entries) {
		t.Fatalf("Verify = %+v, %v", r, err)
	}
	if p.calls < len(entries)/3 {
		t.Errorf("Verify made %d calls, want pages of at most 3", p.calls)
	}
	// A gap exactly at a page boundary.
	p = &pagedStore{entries: append(append([]task.AuditEntry(nil), entries[:6]...), entries[7:]...)}
	r, err = audit.Verify(t.Context(), p)
	if err != nil || r.OK || r.FirstBad != 7 {
		t.Fatalf("Verify with entry 7 missing = %+v, %v", r, err)
	}
}
