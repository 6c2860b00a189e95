package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

func openRO(t *testing.T, path string) (task.Store, error) {
	t.Helper()
	s, err := store.OpenWith(t.Context(), "sqlite://"+path, store.Options{ReadOnly: true})
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// createTasks adds tasks from..to-1 with inputs of a few hundred bytes to s.
func createTasks(tb testing.TB, s task.Store, from, to int) {
	tb.Helper()
	text := strings.Repeat("payload ", 40)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := from; i < to; i++ {
		id := fmt.Sprintf("t%06d", i)
		_, err := s.CreateTask(tb.Context(), task.CreateParams{
			Task: &task.Task{ID: id, ContextID: "c", Agent: "echo", MaxAttempts: 1, Envelope: task.Envelope{
				TaskID: id, Actor: "alice", Action: "echo",
				Input: task.Message{ID: "m" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart(text)}},
			}},
			Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice"}},
			Now:   now,
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

func TestReadOnlyMissing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none.db")
	_, err := openRO(t, path)
	if !errors.Is(err, store.ErrNoStore) || !strings.Contains(err.Error(), path) {
		t.Fatalf("read-only open of a missing file: %v; want ErrNoStore naming %s", err, path)
	}
	if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("read-only open created %s (stat: %v)", path, serr)
	}
}

func TestReadOnlyReadsAndRefusesWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pactum.db")
	w := openAt(t, path)
	createTasks(t, w, 0, 3)
	s, err := openRO(t, path)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := s.GetTask(t.Context(), "t000001", 0)
	if err != nil || tk.ID != "t000001" {
		t.Fatalf("GetTask on a read-only store: %v, %v", tk, err)
	}
	// It sees the writer's later commits.
	createTasks(t, w, 3, 4)
	if _, err := s.GetTask(t.Context(), "t000003", 0); err != nil {
		t.Errorf("read-only store does not see a later commit: %v", err)
	}
	err = s.AppendAudit(t.Context(), []task.AuditInput{{Kind: task.AuditPushConfig, TaskID: "t000001", Actor: "x"}})
	if !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("AppendAudit on a read-only store: %v, want ErrReadOnly", err)
	}
	err = s.RenewLease(t.Context(), task.RenewParams{TaskID: "t000001", Owner: "w", Now: time.Now(), LeaseFor: time.Minute})
	if !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("RenewLease on a read-only store: %v, want ErrReadOnly", err)
	}
}

// TestReadOnlyOldSchema: a read-only open of a store whose schema is older
// than the binary's says so and leaves it as it was.
func TestReadOnlyOldSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pactum.db")
	w := openAt(t, path)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	latest := sqlite.SchemaVersion()
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = ?`, latest); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = openRO(t, path)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d is older than this binary's %d", latest-1, latest)) {
		t.Fatalf("read-only open of an old schema: %v", err)
	}
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil || v != latest-1 {
		t.Errorf("schema version after a read-only open: %d, %v; want %d (not migrated)", v, err, latest-1)
	}
}

// TestCorruptRefused: a file with garbage over pages in its middle is
// refused by a read-write and a read-only open alike.
func TestCorruptRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pactum.db")
	w := openAt(t, path)
	createTasks(t, w, 0, 500)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	off := (fi.Size() / 2 / 4096) * 4096
	if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 3*1024)), off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "quick_check") {
		t.Errorf("Open of a corrupt file: %v; want ErrCorrupt naming the file and quick_check", err)
	}
	if _, err := openRO(t, path); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("read-only open of a corrupt file: %v; want ErrCorrupt", err)
	}
	// Without the check (shell completion) the open succeeds; the damage
	// shows only on the reads that reach it.
	s, err := store.OpenWith(t.Context(), "sqlite://"+path, store.Options{ReadOnly: true, SkipIntegrityCheck: true})
	if err != nil {
		t.Fatalf("read-only open without the integrity check: %v", err)
	}
	_ = s.Close()
}

// BenchmarkOpen100kTasks measures what opening a store of 100,000 tasks
// costs, most of it PRAGMA quick_check, which reads every page (see
// docs/benchmarks.md). The store is built once, outside the timer.
func BenchmarkOpen100kTasks(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pactum.db")
	s, err := sqlite.Open(b.Context(), "sqlite://"+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	createTasks(b, s, 0, 100_000)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		b.Run(fmt.Sprintf("readonly=%v", ro), func(b *testing.B) {
			for b.Loop() {
				s, err := store.OpenWith(b.Context(), "sqlite://"+path, store.Options{ReadOnly: ro})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
		})
	}
}
