package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

func openAt(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) task.Store {
		return openAt(t, filepath.Join(t.TempDir(), "pactum.db"))
	})
}

// TestConformanceOtherSettings runs the suite again with every commit
// synced, a small read pool and the background checkpointer firing all the
// time, so checkpoints run concurrently with every operation.
func TestConformanceOtherSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	t.Parallel()
	storetest.Run(t, func(t *testing.T) task.Store {
		s, err := sqlite.New(t.Context(), sqlite.Config{
			Path: filepath.Join(t.TempDir(), "pactum.db"), Synchronous: sqlite.SyncFull,
			ReadConns: 2, CheckpointInterval: time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestParseDSN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dsn     string
		path    string
		sync    sqlite.Synchronous
		timeout time.Duration
		err     string
	}{
		{dsn: "sqlite://pactum.db", path: "pactum.db"},
		{dsn: "sqlite://data/pactum.db", path: "data/pactum.db"},
		{dsn: "sqlite://./pactum.db", path: "./pactum.db"},
		{dsn: "sqlite:///var/lib/pactum/pactum.db", path: "/var/lib/pactum/pactum.db"},
		{dsn: "sqlite:///tmp/with%20space.db", path: "/tmp/with space.db"},
		{dsn: "sqlite://p.db?synchronous=full", path: "p.db", sync: sqlite.SyncFull},
		{dsn: "sqlite://p.db?synchronous=NORMAL&busy_timeout=250", path: "p.db", sync: sqlite.SyncNormal, timeout: 250 * time.Millisecond},
		{dsn: "sqlite://p.db?busy_timeout=2s", path: "p.db", timeout: 2 * time.Second},
		{dsn: "SQLite://p.db", path: "p.db"}, // the scheme is case-insensitive, as store.Open's registry
		{dsn: "postgres://p.db", err: "does not start with sqlite://"},
		{dsn: "sqlite:p.db", err: "does not start with sqlite://"},
		{dsn: "sqlite://", err: "no file path"},
		{dsn: "sqlite://?synchronous=full", err: "no file path"},
		{dsn: "sqlite://p.db?synchronous=off", err: "want normal or full"},
		{dsn: "sqlite://p.db?busy_timeout=-1", err: "must be positive"},
		{dsn: "sqlite://p.db?busy_timeout=soon", err: "busy_timeout"},
		{dsn: "sqlite://p.db?journal_mode=delete", err: `unknown parameter "journal_mode"`},
		{dsn: "sqlite://p.db?synchronous=full&synchronous=normal", err: "given 2 times"},
		{dsn: "sqlite://p%zz.db", err: "path"},
	} {
		c, err := sqlite.ParseDSN(tc.dsn)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDSN(%q) error %v, want one containing %q", tc.dsn, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", tc.dsn, err)
			continue
		}
		if c.Path != tc.path || c.Synchronous != tc.sync || c.BusyTimeout != tc.timeout {
			t.Errorf("ParseDSN(%q) = path %q, sync %q, timeout %v; want %q, %q, %v", tc.dsn, c.Path, c.Synchronous, c.BusyTimeout, tc.path, tc.sync, tc.timeout)
		}
	}
}

func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{"sqlite://pactum.db", "sqlite:///a/b.db?synchronous=full&busy_timeout=5s", "sqlite://%41?x=1", "sqlite://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		c, err := sqlite.ParseDSN(dsn)
		if err != nil {
			return
		}
		if c.Path == "" {
			t.Errorf("ParseDSN(%q) accepted an empty path", dsn)
		}
		if c.Synchronous != "" && c.Synchronous != sqlite.SyncNormal && c.Synchronous != sqlite.SyncFull {
			t.Errorf("ParseDSN(%q): synchronous %q", dsn, c.Synchronous)
		}
		if c.BusyTimeout < 0 {
			t.Errorf("ParseDSN(%q): busy timeout %v", dsn, c.BusyTimeout)
		}
	})
}

// TestValidate: store.Validate refuses what Open refuses before it opens
// anything, and creates no file either way.
func TestValidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		dsn, err string
	}{
		{"sqlite://" + dir + "/ok.db?synchronous=full", ""},
		{"sqlite://" + dir + "/a.db?journal_mode=wal", `unknown parameter "journal_mode"`},
		{"sqlite://:memory:", "want a plain file path"},
		{"sqlite://file:x.db", "want a plain file path"},
		{"SQLITE://" + dir + "/b.db?busy_timeout=0", "must be positive"},
		{"sqlite://" + dir + "/missing-dir/c.db", ""}, // a missing directory is the host's business, not the DSN's
	} {
		err := store.Validate(tc.dsn)
		if tc.err == "" && err != nil {
			t.Errorf("Validate(%q): %v", tc.dsn, err)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Validate(%q) = %v, want an error with %q", tc.dsn, err, tc.err)
		}
		if tc.err != "" {
			if _, oerr := store.Open(t.Context(), tc.dsn, nil); oerr == nil || !strings.Contains(oerr.Error(), tc.err) {
				t.Errorf("Open(%q) = %v, want the same refusal as Validate", tc.dsn, oerr)
			}
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("Validate left %v in the directory (%v)", entries, err)
	}
}

// FuzzValidate: Validate never panics and never creates a file, whatever
// the DSN.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"sqlite://p.db", "sqlite://p.db?busy_timeout=1&synchronous=FULL", "sqlite://:memory:", "sqlite://", "nope://x", "sqlite://%zz"} {
		f.Add(s)
	}
	dir := f.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		f.Fatal(err)
	}
	before, err := os.ReadDir(wd)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		_ = store.Validate("sqlite://" + dir + "/" + rest)
		_ = store.Validate(rest)
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Fatalf("Validate(%q) created %v", rest, entries)
		}
		if after, err := os.ReadDir(wd); err != nil || len(after) != len(before) {
			t.Fatalf("Validate(%q) changed the working directory: %d entries, was %d", rest, len(after), len(before))
		}
	})
}

func TestStoreOpenRegistry(t *testing.T) {
	t.Parallel()
	s, err := store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	if _, ok := s.(*sqlite.Store); !ok {
		t.Errorf("store.Open returned %T", s)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = store.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "missing-dir", "x.db"), nil)
	if err == nil {
		t.Error("store.Open in a missing directory succeeded")
	}
}

// rawDB opens the file directly, as an operator (or an attacker) would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path) // reopen: nothing to apply, no error
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, path)
	var n, version int
	if err := db.QueryRowContext(ctx, `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &version); err != nil {
		t.Fatal(err)
	}
	if n != sqlite.SchemaVersion() || version != sqlite.SchemaVersion() || version < 1 {
		t.Errorf("schema_migrations has %d rows up to version %d, want %d", n, version, sqlite.SchemaVersion())
	}
	for _, table := range []string{"tasks", "task_messages", "task_artifacts", "task_records", "audit_log", "audit_head", "idempotency_keys", "push_configs"} {
		var name string
		if err := db.QueryRowContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&name); err != nil {
			t.Errorf("table %s: %v", table, err)
		}
	}

	// A database from a newer binary is refused, and left alone.
	future := sqlite.SchemaVersion() + 1
	if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)`, future); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(ctx, "sqlite://"+path, nil)
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open of a database at version %d: %v, want a refusal", future, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != sqlite.SchemaVersion()+1 {
		t.Errorf("schema_migrations after refusal: %d rows, %v", n, err)
	}
}

// undo reverts each migration after the first, so that a test can put a
// database back to an older schema and watch a migration run on rows
// written by today's code.
var undo = map[int][]string{
	2: {`ALTER TABLE tasks DROP COLUMN turn_start`},
	3: {`ALTER TABLE push_configs DROP COLUMN delivered_seq`},
	4: {`DROP TABLE audit_head`},
	5: {
		`DROP INDEX tasks_parent`, `DROP INDEX tasks_parent_step`,
		`ALTER TABLE tasks DROP COLUMN parent_task_id`, `ALTER TABLE tasks DROP COLUMN step`,
		`ALTER TABLE tasks DROP COLUMN children`, `ALTER TABLE task_records DROP COLUMN evidence`,
	},
}

// rollBack reverts db's migrations newer than version, newest first.
func rollBack(t *testing.T, db *sql.DB, version int) {
	t.Helper()
	for v := sqlite.SchemaVersion(); v > version; v-- {
		qs, ok := undo[v]
		if !ok {
			t.Fatalf("migration %d has no undo statements: add them to undo", v)
		}
		for _, q := range qs {
			if _, err := db.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("undo migration %d: %s: %v", v, q, err)
			}
		}
	}
	if _, err := db.ExecContext(t.Context(), `DELETE FROM schema_migrations WHERE version > ?`, version); err != nil {
		t.Fatal(err)
	}
}

// TestAuditHeadMigration: a database written before the head record
// existed gets one that names its last entry, and sealing goes on from it.
func TestAuditHeadMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	storetest.MustCreate(t, s, "t1", time.Now())
	log, err := s.AuditEntries(ctx, 0, 100)
	if err != nil || len(log) == 0 {
		t.Fatalf("AuditEntries = %d, %v", len(log), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to schema version 3, as an older pactum left it.
	rollBack(t, rawDB(t, path), 3)
	s = openAt(t, path)
	last := log[len(log)-1]
	if seq, hash, err := s.AuditHead(ctx); err != nil || seq != last.Seq || hash != last.Hash {
		t.Fatalf("AuditHead after migration = %d, %s, %v; want %d, %s", seq, hash, err, last.Seq, last.Hash)
	}
	storetest.MustCreate(t, s, "t2", time.Now())
	r, err := audit.Verify(ctx, s)
	if err != nil || !r.OK || r.HeadRecord == nil || r.HeadRecord.Seq != r.Head.Seq || r.Head.Seq <= last.Seq {
		t.Fatalf("Verify after migration and more entries = %+v, %v", r, err)
	}
}

// TestMigrationTurnStart: migration 0002 gives tasks written before it the
// turn start their record shows (the last time a caller queued them again),
// and 0 to the others.
func TestMigrationTurnStart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(id string, to task.State) {
		t.Helper()
		if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transition(ctx, task.TransitionParams{TaskID: id, From: task.StateInProgress, To: to, LeaseOwner: "w", Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	// "retried": two attempts, dead-lettered, retried by hand (as a binary
	// before 0002 did it: no NewTurn), one more attempt, waiting again.
	storetest.MustCreate(t, s, "retried", now)
	run("retried", task.StateQueued)
	run("retried", task.StateDeadLetter)
	if _, err := s.Transition(ctx, task.TransitionParams{TaskID: "retried", From: task.StateDeadLetter, To: task.StateQueued, Reason: "manual retry", Now: now}); err != nil {
		t.Fatal(err)
	}
	run("retried", task.StateQueued)
	storetest.MustCreate(t, s, "plain", now)
	run("plain", task.StateQueued)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to schema 1, then open: 0002 (and those after it) run again on
	// these rows.
	rollBack(t, rawDB(t, path), 1)
	s = openAt(t, path)
	for id, want := range map[string]int{"retried": 2, "plain": 0} {
		tk, err := s.GetTask(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if tk.TurnStart != want {
			t.Errorf("%s after migration: TurnStart %d (Attempt %d), want %d", id, tk.TurnStart, tk.Attempt, want)
		}
	}
}

func TestWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pactum.db")
	openAt(t, path)
	var mode string
	if err := rawDB(t, path).QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

// TestReadersDoNotWaitForWriter holds the write transaction open (as a
// second process would, through the file) and reads meanwhile.
func TestReadersDoNotWaitForWriter(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	storetest.MustCreate(t, s, "t1", time.Now())

	other := rawDB(t, path)
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`) //nolint:errcheck

	// No deadline games: if reads waited for the writer, they would block
	// until the busy timeout (5s) and then fail, and this would report it.
	if _, err := s.GetTask(ctx, "t1", -1); err != nil {
		t.Errorf("GetTask while another writer holds the lock: %v", err)
	}
	if _, err := s.ListTasks(ctx, task.ListParams{}); err != nil {
		t.Errorf("ListTasks while another writer holds the lock: %v", err)
	}
	if _, err := s.AuditEntries(ctx, 0, 10); err != nil {
		t.Errorf("AuditEntries while another writer holds the lock: %v", err)
	}
}

func TestSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	storetest.MustCreate(t, s, "t1", now)
	if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, TaskID: "t1", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "k", Actor: "ops"}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetTask(ctx, "t1", -1)
	if err != nil {
		t.Fatal(err)
	}
	log, err := s.AuditEntries(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path)
	after, err := s.GetTask(ctx, "t1", -1)
	if err != nil {
		t.Fatalf("GetTask after reopen: %v", err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after reopen: %+v\nbefore: %+v", after, before)
	}
	log2, err := s.AuditEntries(ctx, 0, 100)
	if err != nil || len(log2) != len(log) || log2[len(log2)-1].Hash != log[len(log)-1].Hash {
		t.Fatalf("audit after reopen: %d entries, %v; want %d", len(log2), err, len(log))
	}
	// The chain continues from the stored head.
	if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: "k2"}}); err != nil {
		t.Fatal(err)
	}
	log3, err := s.AuditEntries(ctx, log[len(log)-1].Seq, 10)
	if err != nil || len(log3) != 1 || log3[0].PrevHash != log[len(log)-1].Hash || log3[0].Seq != log[len(log)-1].Seq+1 {
		t.Errorf("entry appended after reopen = %+v, %v", log3, err)
	}
}

// TestAppendOnly: the database itself refuses to rewrite history.
func TestAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	s := openAt(t, path)
	storetest.MustCreate(t, s, "t1", time.Now())
	db := rawDB(t, path)
	for _, q := range []string{
		`UPDATE task_records SET reason = 'x'`,
		`DELETE FROM task_records`,
		`UPDATE audit_log SET actor = 'x'`,
		`DELETE FROM audit_log`,
	} {
		if _, err := db.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refusal", q, err)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "pactum.db"))
	storetest.InvalidArguments(t, s)
}

func TestConflictErrorCode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, filepath.Join(t.TempDir(), "pactum.db"))
	storetest.MustCreate(t, s, "t1", time.Now())
	_, err := s.Transition(ctx, task.TransitionParams{TaskID: "t1", From: task.StateValidated, To: task.StateQueued, Now: time.Now()})
	if !errors.Is(err, task.ErrStateConflict) || task.ErrorCode(err) != task.CodeConflict {
		t.Errorf("conflict error %v (code %q), want ErrStateConflict with code conflict", err, task.ErrorCode(err))
	}
	_, err = s.Transition(ctx, task.TransitionParams{TaskID: "t1", From: task.StateQueued, To: task.StateSucceeded, Now: time.Now()})
	if !errors.Is(err, task.ErrIllegalTransition) || task.ErrorCode(err) != task.CodeIllegalTransition {
		t.Errorf("illegal transition error %v (code %q)", err, task.ErrorCode(err))
	}
}

// BenchmarkLifecycle measures one task's whole path through the store:
// CreateTask (requested → validated → queued), Claim, Transition to
// succeeded: 3 transactions, 4 records and 5 audit entries per task.
func BenchmarkLifecycle(b *testing.B) {
	for _, sync := range []sqlite.Synchronous{sqlite.SyncNormal, sqlite.SyncFull} {
		for _, parallel := range []bool{false, true} {
			name := fmt.Sprintf("sync=%s/serial", sync)
			if parallel {
				name = fmt.Sprintf("sync=%s/parallel", sync)
			}
			b.Run(name, func(b *testing.B) {
				s, err := sqlite.New(b.Context(), sqlite.Config{Path: filepath.Join(b.TempDir(), "bench.db"), Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				storetest.BenchLifecycle(b, s, parallel)
			})
		}
	}
}

func TestUseAfterCloseIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "closed.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.UseAfterClose(t, s)
}

func TestMigrateAndSkipMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	dsn := "sqlite://" + path
	if _, err := sqlite.New(ctx, sqlite.Config{Path: path, SkipMigrate: true}); err == nil || !strings.Contains(err.Error(), "pactum migrate") {
		t.Fatalf("SkipMigrate on a new file: err = %v, want a refusal naming `pactum migrate`", err)
	}
	n, err := sqlite.Migrate(ctx, dsn, nil)
	if err != nil || n != sqlite.SchemaVersion() {
		t.Fatalf("Migrate = %d, %v; want %d applied", n, err, sqlite.SchemaVersion())
	}
	if n, err := sqlite.Migrate(ctx, dsn, nil); err != nil || n != 0 {
		t.Fatalf("Migrate again = %d, %v; want 0", n, err)
	}
	s, err := sqlite.New(ctx, sqlite.Config{Path: path, SkipMigrate: true})
	if err != nil {
		t.Fatalf("SkipMigrate on a current schema: %v", err)
	}
	_ = s.Close()
}
