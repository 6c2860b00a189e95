package sqlite_test

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/store/storetest"
	"github.com/pactum/pactum/task"
)

// gunzip returns the content of the gzipped file at path.
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rowDump returns every row of task_messages and task_artifacts, in key
// order, as text: what a migration must carry over unchanged.
func rowDump(t *testing.T, path string) string {
	t.Helper()
	db := rawDB(t, path)
	var b strings.Builder
	for _, q := range []string{
		`SELECT task_id, seq, message FROM task_messages ORDER BY task_id, seq`,
		`SELECT task_id, artifact_id, position, artifact FROM task_artifacts ORDER BY task_id, artifact_id`,
	} {
		rows, err := db.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			fmt.Fprintf(&b, "%q\n", scanAny(t, rows))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSchema5Upgrade opens a database that pactum at schema version 5
// wrote (testdata/schema5, made by its gen.go at main 7e1bac6: tasks with
// messages and artifacts from 5 bytes to 50 KB, an artifact replaced under
// its id) with this binary: `pactum migrate` applies the migrations after
// 5 (none yet), and the tasks read back as that binary read them, row for
// row. A migration that rebuilds a table (issue 31 tried one for
// task_messages and task_artifacts, docs/benchmarks.md) must pass it.
func TestSchema5Upgrade(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pactum.db")
	if err := os.WriteFile(path, gunzip(t, "testdata/schema5/pactum.db.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	var version int
	db := rawDB(t, path)
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version); err != nil || version != 5 {
		t.Fatalf("fixture schema version = %d, %v; want 5", version, err)
	}
	_ = db.Close()
	before := rowDump(t, path)

	n, err := sqlite.Migrate(ctx, "sqlite://"+path, nil)
	if err != nil || n != sqlite.SchemaVersion()-5 {
		t.Fatalf("Migrate = %d, %v; want %d applied", n, err, sqlite.SchemaVersion()-5)
	}
	if after := rowDump(t, path); after != before {
		t.Errorf("rows changed by the migration:\n%s\nwant\n%s", after, before)
	}
	db = rawDB(t, path)
	for _, q := range []string{`PRAGMA foreign_key_check`, `PRAGMA integrity_check`} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			lines = append(lines, fmt.Sprint(scanAny(t, rows)...))
		}
		rows.Close()
		if q == `PRAGMA integrity_check` && reflect.DeepEqual(lines, []string{"ok"}) {
			continue
		}
		if len(lines) > 0 {
			t.Errorf("%s after migration: %v", q, lines)
		}
	}
	_ = db.Close()

	s := openAt(t, path)
	var want map[string]json.RawMessage
	if err := json.Unmarshal(gunzip(t, "testdata/schema5/want.json.gz"), &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, id := range []string{"small", "large", "turns", "waiting"} {
		for _, n := range []int{-1, 1} {
			tk, err := s.GetTask(ctx, id, n)
			if err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("GetTask %s %d", id, n)] = tk
		}
	}
	page, err := s.ListTasks(ctx, task.ListParams{HistoryLength: 2, IncludeArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	got["ListTasks"] = page
	if len(got) != len(want) {
		t.Errorf("want.json has %d entries, the test reads %d", len(want), len(got))
	}
	for k, w := range want {
		g, err := json.Marshal(got[k])
		if err != nil {
			t.Fatal(err)
		}
		var wc bytes.Buffer
		if err := json.Compact(&wc, w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, wc.Bytes()) {
			t.Errorf("%s after migration differs from what schema 5 returned:\n%.2000s\nwant\n%.2000s", k, g, wc.Bytes())
		}
	}

	// The migrated tables take new rows, and the audit chain is whole.
	now := time.Now()
	storetest.MustCreate(t, s, "new", now)
	if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: "new"}); err != nil {
		t.Fatal(err)
	}
	reply := task.Message{ID: "r-new", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("hello")}}
	art := task.Artifact{ID: "a", Parts: []task.Part{task.TextPart("hello")}}
	if _, err := s.Transition(ctx, task.TransitionParams{
		TaskID: "new", From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w", Now: now,
		Messages: []task.Message{reply}, Artifacts: []task.Artifact{art},
	}); err != nil {
		t.Fatal(err)
	}
	tk, err := s.GetTask(ctx, "new", -1)
	if err != nil || len(tk.History) != 2 || !reflect.DeepEqual(tk.History[1], reply) || !reflect.DeepEqual(tk.Artifacts, []task.Artifact{art}) {
		t.Errorf("a task written after the migration = %+v, %v", tk, err)
	}
	r, err := audit.Verify(ctx, s)
	if err != nil || !r.OK {
		t.Errorf("audit.Verify after migration = %+v, %v", r, err)
	}
}

// scanAny scans the current row of rows into one value per column.
func scanAny(t *testing.T, rows *sql.Rows) []any {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	v := make([]any, len(cols))
	p := make([]any, len(cols))
	for i := range v {
		p[i] = &v[i]
	}
	if err := rows.Scan(p...); err != nil {
		t.Fatal(err)
	}
	return v
}
