//go:build !sqlite_cgo

package sqlite

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The tests of the log-buffering VFS (walbuf_modernc.go) are not parallel:
// they read its process-wide counters, which a parallel test's commits
// would move meanwhile.

// walDB opens path through the log-buffering VFS (vfs) or SQLite's
// default one, in WAL mode, on one connection.
func walDB(t *testing.T, path string, vfs bool, pragmas ...string) *sql.DB {
	t.Helper()
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=busy_timeout(5000)"
	if vfs {
		dsn += "&vfs=" + walVFSName
	}
	for _, p := range pragmas {
		dsn += "&_pragma=" + p
	}
	db, err := openDB(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// buffered reports the bytes the open log files hold unwritten.
func buffered() int {
	walvfs.mu.RLock()
	defer walvfs.mu.RUnlock()
	n := 0
	for _, w := range walvfs.files {
		n += w.n
	}
	return n
}

// TestWALBufOneWritePerCommit: a commit of several pages reaches the log
// file in one write call, and is there, whole, when the commit returns:
// the log has grown by every frame, and a connection through the default
// VFS reads the rows.
func TestWALBufOneWritePerCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db := walDB(t, path, true)
	mustExec(t, db, `CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT)`)
	mustExec(t, db, `CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT)`)
	mustExec(t, db, `CREATE INDEX a_v ON a (v)`)
	reader := walDB(t, path, false)

	for i := range 20 {
		frames, writes := walvfs.frames.Load(), walvfs.writes.Load()
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`INSERT INTO a (v) VALUES (?)`, `INSERT INTO b (v) VALUES (?)`} {
			if _, err := tx.Exec(q, fmt.Sprintf("row %d %s", i, bytes.Repeat([]byte("x"), 300))); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		f, w := walvfs.frames.Load()-frames, walvfs.writes.Load()-writes
		// Three b-trees at least (a, its index, b), one write.
		if f < 3 || w != 1 {
			t.Fatalf("commit %d: %d frames in %d write calls, want ≥ 3 frames in 1", i, f, w)
		}
		if n := buffered(); n != 0 {
			t.Fatalf("commit %d: %d bytes still buffered after the commit returned", i, n)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		var mx int64
		if err := reader.QueryRow(`SELECT count(*) FROM a`).Scan(&mx); err != nil {
			t.Fatal(err)
		}
		if mx != int64(i+1) {
			t.Fatalf("commit %d: the default VFS reads %d rows of a, want %d", i, mx, i+1)
		}
		if fi.Size() < 32+int64(f)*(24+4096) {
			t.Fatalf("commit %d: log is %d bytes, short of its %d new frames", i, fi.Size(), f)
		}
	}
}

// TestWALBufLargeCommit: a commit larger than one write call's bound is
// written in several, and reads back whole.
func TestWALBufLargeCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db := walDB(t, path, true)
	mustExec(t, db, `CREATE TABLE a (id INTEGER PRIMARY KEY, v BLOB)`)
	big := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB
	writes := walvfs.writes.Load()
	mustExec(t, db, `INSERT INTO a (v) VALUES (?)`, big)
	if w := walvfs.writes.Load() - writes; w < 5 {
		t.Errorf("a 640 KB commit took %d write calls, want ≥ 5 (≤ 128 KiB each)", w)
	}
	var got []byte
	if err := walDB(t, path, false).QueryRow(`SELECT v FROM a`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(big))
	}
}

// TestWALBufSpillRollbackCheckpoint: transactions larger than the page
// cache (which SQLite spills to the log before their commit, and whose
// spilled pages it rewrites in place when they change again), some rolled
// back, commits of every size, and checkpoints by another connection
// (TRUNCATE empties the log) in between, in a seeded random order: the
// database holds exactly the committed rows, passes SQLite's integrity
// check, and nothing stays buffered once a transaction has ended.
func TestWALBufSpillRollbackCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db := walDB(t, path, true, "cache_size(20)")
	mustExec(t, db, `CREATE TABLE a (id INTEGER PRIMARY KEY, v BLOB)`)
	other := walDB(t, path, false)
	rng := rand.New(rand.NewPCG(31, 7))
	type row struct {
		n int
		b byte
	}
	want := map[int64]row{}
	var next int64
	spilled, rewritten := 0, 0
	for step := range 150 {
		switch rng.IntN(6) {
		case 0, 1:
			mode := "PASSIVE"
			if rng.IntN(2) == 0 {
				mode = "TRUNCATE"
			}
			var busy, log, done int
			if err := other.QueryRow(`PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &log, &done); err != nil {
				t.Fatalf("step %d: checkpoint: %v", step, err)
			}
			continue
		}
		rows := 1 + rng.IntN(4)
		size := 100
		if rng.IntN(3) == 0 {
			size = 40_000 + rng.IntN(60_000) // spills past 20 cached pages
		}
		rollback := rng.IntN(3) == 0
		rewrite := size > 100 && rng.IntN(2) == 0
		frames := walvfs.frames.Load()
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		added := map[int64]row{}
		for range rows {
			next++
			r := row{n: size + rng.IntN(100), b: byte(next)}
			if _, err := tx.Exec(`INSERT INTO a (id, v) VALUES (?, ?)`, next, bytes.Repeat([]byte{r.b}, r.n)); err != nil {
				t.Fatal(err)
			}
			added[next] = r
		}
		if rewrite {
			// The same pages again, after they were spilled.
			for id, r := range added {
				r.b = ^r.b
				if _, err := tx.Exec(`UPDATE a SET v = ? WHERE id = ?`, bytes.Repeat([]byte{r.b}, r.n), id); err != nil {
					t.Fatal(err)
				}
				added[id] = r
			}
		}
		if walvfs.frames.Load() > frames {
			spilled++
			if rewrite {
				rewritten++
			}
		}
		if rollback {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
			for id, r := range added {
				want[id] = r
			}
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if n := buffered(); n != 0 {
			t.Fatalf("step %d: %d bytes buffered after the transaction ended (rollback %v)", step, n, rollback)
		}
	}
	if spilled == 0 || rewritten == 0 {
		t.Fatalf("%d transactions spilled frames before their end, %d of them rewrote spilled pages: the test does not exercise both", spilled, rewritten)
	}
	for _, c := range []*sql.DB{other, walDB(t, path, true)} {
		var ok string
		if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity_check: %q, %v", ok, err)
		}
		rows, err := c.Query(`SELECT id, v FROM a ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]row{}
		for rows.Next() {
			var id int64
			var v []byte
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			if len(v) == 0 || len(bytes.Trim(v, string(v[:1]))) != 0 {
				t.Fatalf("row %d is not one byte repeated", id)
			}
			got[id] = row{n: len(v), b: v[0]}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		for id, r := range want {
			if got[id] != r {
				t.Fatalf("row %d: %+v, want %+v", id, got[id], r)
			}
		}
	}
	t.Logf("%d committed rows; %d transactions spilled before their end, %d rewrote spilled pages", len(want), spilled, rewritten)
}
