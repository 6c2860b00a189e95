package cli_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/audit/audittest"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// auditDB seals the audittest chain (18 entries) into a new SQLite file
// and returns its DSN, its path and the entries.
func auditDB(t *testing.T) (dsn, path string, es []task.AuditEntry) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "pactum.db")
	s, err := sqlite.Open(t.Context(), "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	es = audittest.Build(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return "sqlite://" + path, path, es
}

// attack runs statements on the file as someone with write access would,
// append-only triggers lifted first.
func attack(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append([]string{`DROP TRIGGER IF EXISTS audit_log_no_update`, `DROP TRIGGER IF EXISTS audit_log_no_delete`}, stmts...) {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

var headLine = regexp.MustCompile(`(?m)^head: seq (\d+) hash ([0-9a-f]{64})$`)

// TestAuditVerifyHead: every run prints the head, OK or not; the head
// printed, given back with --expect-head, proves the chain up to it.
func TestAuditVerifyHead(t *testing.T) {
	t.Parallel()
	dsn, path, es := auditDB(t)
	last := es[len(es)-1]
	out := mustRun(t, "audit", "verify", "--store", dsn)
	m := headLine.FindStringSubmatch(out)
	if !strings.HasPrefix(out, "audit chain OK: 18 entries\n") || m == nil || m[1] != "18" || m[2] != last.Hash {
		t.Fatalf("audit verify printed %q, want OK and head 18 %s", out, last.Hash)
	}
	if !strings.Contains(out, "execution record OK: 12 records") {
		t.Errorf("audit verify printed %q, want the records cross-check", out)
	}
	anchor := m[1] + ":" + m[2]
	out = mustRun(t, "audit", "verify", "--store", dsn, "--expect-head", anchor)
	if !strings.Contains(out, "anchor: seq 18 hash "+last.Hash+": in the chain") {
		t.Errorf("audit verify --expect-head %s printed %q", anchor, out)
	}
	older := fmt.Sprintf("9:%s", strings.ToUpper(es[8].Hash))
	if _, err := run(t, "audit", "verify", "--store", dsn, "--expect-head", older); err != nil {
		t.Errorf("audit verify --expect-head with an older head: %v", err)
	}

	// Entry 18 cut off and the head record moved back: the chain and the
	// head record agree, only the anchor knows.
	attack(t, path, `DELETE FROM audit_log WHERE seq = 18`, fmt.Sprintf(`UPDATE audit_head SET seq = 17, hash = '%s'`, es[16].Hash))
	code, stdout, stderr := runMain("audit", "verify", "--store", dsn)
	if code != 0 || !strings.Contains(stdout, "head: seq 17 hash "+es[16].Hash) {
		t.Fatalf("audit verify after a truncation that rewrote the head record: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain("audit", "verify", "--store", dsn, "--expect-head", anchor)
	if code != 2 || !strings.HasPrefix(stdout, "audit chain BROKEN at entry 18: truncated: the anchor says 18/") ||
		!strings.Contains(stdout, "head: seq 17 hash "+es[16].Hash) || !strings.Contains(stdout, ": NOT in the chain") {
		t.Fatalf("audit verify --expect-head after the truncation: exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestAuditVerifyBrokenPrintsHead: a broken chain still prints the head,
// and the head record when it differs.
func TestAuditVerifyBrokenPrintsHead(t *testing.T) {
	t.Parallel()
	dsn, path, es := auditDB(t)
	attack(t, path, `DELETE FROM audit_log WHERE seq > 15`)
	code, stdout, stderr := runMain("audit", "verify", "--store", dsn)
	if code != 2 || !strings.HasPrefix(stdout, "audit chain BROKEN at entry 16: truncated: the head record says 18/") {
		t.Fatalf("audit verify of a truncated log: exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{
		"head: seq 15 hash " + es[14].Hash + "\n",
		"head record: seq 18 hash " + es[17].Hash + "\n",
		"execution record BROKEN: record 3 of task \"t2\"",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("audit verify printed\n%s\nwant it to contain %q", stdout, want)
		}
	}
}

// TestAuditVerifyJSON: --json prints the report for scripts, with the same
// exit codes.
func TestAuditVerifyJSON(t *testing.T) {
	t.Parallel()
	dsn, path, es := auditDB(t)
	type report struct {
		OK      bool       `json:"ok"`
		Entries int        `json:"entries"`
		Head    audit.Head `json:"head"`
		Break   *struct {
			Seq     int64  `json:"seq"`
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"break"`
		Records *struct {
			OK      bool `json:"ok"`
			Records int  `json:"records"`
			First   *struct {
				Kind   string `json:"kind"`
				TaskID string `json:"taskId"`
			} `json:"first"`
		} `json:"records"`
	}
	decode := func(s string) report {
		t.Helper()
		var r report
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatalf("--json printed %q: %v", s, err)
		}
		return r
	}
	code, stdout, stderr := runMain("audit", "verify", "--json", "--store", dsn)
	r := decode(stdout)
	if code != 0 || !r.OK || r.Entries != 18 || r.Head != (audit.Head{Seq: 18, Hash: es[17].Hash}) || r.Break != nil || r.Records == nil || !r.Records.OK || r.Records.Records != 12 {
		t.Fatalf("audit verify --json: exit %d, %+v\nstderr: %s", code, r, stderr)
	}
	attack(t, path, `UPDATE audit_log SET actor = 'mallory' WHERE seq = 9`)
	code, stdout, stderr = runMain("audit", "verify", "--json", "--store", dsn)
	r = decode(stdout)
	if code != 2 || r.OK || r.Break == nil || r.Break.Seq != 9 || r.Break.Kind != "edited" || !strings.Contains(r.Break.Message, "entry 9 was edited") || r.Head.Seq != 18 {
		t.Fatalf("audit verify --json of an edited log: exit %d, %+v\nstderr: %s", code, r, stderr)
	}
	attack(t, path, `DROP TRIGGER IF EXISTS task_records_no_delete`, `UPDATE audit_log SET actor = 'alice' WHERE seq = 9`, `DELETE FROM task_records WHERE task_id = 't0' AND seq = 4`)
	code, stdout, _ = runMain("audit", "verify", "--json", "--store", dsn)
	r = decode(stdout)
	if code != 2 || r.OK || r.Break != nil || r.Records == nil || r.Records.OK || r.Records.First == nil || r.Records.First.Kind != "unrecorded" || r.Records.First.TaskID != "t0" {
		t.Fatalf("audit verify --json with a record removed: exit %d, %+v", code, r)
	}
}

func TestAuditVerifyBadExpectHead(t *testing.T) {
	t.Parallel()
	dsn, _, _ := auditDB(t)
	for _, bad := range []string{"18", "x:ab", "0:" + strings.Repeat("a", 64), "18:abc", "-1:" + strings.Repeat("a", 64)} {
		code, _, stderr := runMain("audit", "verify", "--store", dsn, "--expect-head", bad)
		if code != 1 || !strings.Contains(stderr, "--expect-head") {
			t.Errorf("--expect-head %q: exit %d, stderr %q; want 1 and a message naming the flag", bad, code, stderr)
		}
	}
}
