package audit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 10000, time.UTC)

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
	for i := range 3 {
		id := fmt.Sprintf("t%d", i)
		now := t0.Add(time.Duration(i) * time.Second)
		_, err := s.CreateTask(ctx, task.CreateParams{
			Task: &task.Task{ID: id, ContextID: "c", Agent: "echo", MaxAttempts: 1, Envelope: task.Envelope{
				TaskID: id, Actor: "alice", Action: "echo",
				Input: task.Message{ID: "m" + id, Role: task.RoleUser, Parts: []task.Part{task.TextPart("hi")}},
			}},
			Steps: []task.Step{{To: task.StateValidated}, {To: task.StateQueued}},
			Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id, Actor: "alice", Data: json.RawMessage(`{"n":1}`)}},
			Now:   now,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, task.ClaimParams{Owner: "w", Now: now, LeaseFor: time.Minute, Limit: 1, TaskID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transition(ctx, task.TransitionParams{TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w", Now: now}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendAudit(ctx, []task.AuditInput{{Kind: task.AuditPushConfig, TaskID: id, Actor: "bob"}}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := s.AuditEntries(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 18 {
		t.Fatalf("built %d entries, want 18", len(entries))
	}
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
	for _, q := range append([]string{`DROP TRIGGER audit_log_no_update`, `DROP TRIGGER audit_log_no_delete`}, stmts...) {
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

// forged returns an INSERT of an entry that hashes correctly over its own
// content and the given previous hash.
func forged(seq int64, prevHash string, hash func(e *task.AuditEntry) string) string {
	e := task.AuditEntry{Seq: seq, At: t0, Kind: task.AuditPolicy, TaskID: "t1", Actor: "mallory", Data: json.RawMessage(`{"allow":true}`), PrevHash: prevHash}
	e.Hash = hash(&e)
	return fmt.Sprintf(`INSERT INTO audit_log (seq, at, kind, task_id, actor, data, prev_hash, hash) VALUES (%d, %d, '%s', '%s', '%s', CAST('%s' AS BLOB), '%s', '%s')`,
		e.Seq, e.At.UnixMicro(), e.Kind, e.TaskID, e.Actor, e.Data, e.PrevHash, e.Hash)
}

func sealed(e *task.AuditEntry) string { return e.ComputeHash() }

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

func TestVerifyTampered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tamper  func(es []task.AuditEntry) []string
		bad     int64
		problem string
		// forgedHead: the entry before FirstBad is itself the forgery.
		forgedHead bool
	}{
		{"edited data", func([]task.AuditEntry) []string {
			return []string{`UPDATE audit_log SET data = CAST('{"n":2}' AS BLOB) WHERE seq = 1`}
		}, 1, "edited", false},
		{"edited actor in the middle", func([]task.AuditEntry) []string {
			return []string{`UPDATE audit_log SET actor = 'mallory' WHERE seq = 9`}
		}, 9, "edited", false},
		{"edited time", func([]task.AuditEntry) []string {
			return []string{`UPDATE audit_log SET at = at + 1 WHERE seq = 14`}
		}, 14, "edited", false},
		{"edited last entry", func([]task.AuditEntry) []string {
			return []string{`UPDATE audit_log SET kind = 'other' WHERE seq = 18`}
		}, 18, "edited", false},
		{"edited and resealed", func(es []task.AuditEntry) []string {
			// The attacker recomputes the edited entry's own hash; the next
			// entry no longer links to it.
			e := es[9]
			e.Actor = "mallory"
			return []string{fmt.Sprintf(`UPDATE audit_log SET actor = 'mallory', hash = '%s' WHERE seq = 10`, e.ComputeHash())}
		}, 11, "does not follow entry 10", true},
		{"removed", func([]task.AuditEntry) []string {
			return []string{`DELETE FROM audit_log WHERE seq = 7`}
		}, 7, "entry 7 is missing", false},
		{"removed several", func([]task.AuditEntry) []string {
			return []string{`DELETE FROM audit_log WHERE seq BETWEEN 7 AND 9`}
		}, 7, "entries 7 to 9 are missing", false},
		{"removed first", func([]task.AuditEntry) []string {
			return []string{`DELETE FROM audit_log WHERE seq = 1`}
		}, 1, "entry 1 is missing", false},
		{"removed and renumbered", func([]task.AuditEntry) []string {
			// Closing the gap changes the later entries' sequence numbers,
			// which their hashes cover.
			return []string{
				`DELETE FROM audit_log WHERE seq = 7`,
				`UPDATE audit_log SET seq = seq + 1000 WHERE seq > 7`,
				`UPDATE audit_log SET seq = seq - 1001 WHERE seq > 1000`,
			}
		}, 7, "edited", false},
		{"inserted at the end, wrong link", func(es []task.AuditEntry) []string {
			return []string{forged(19, es[10].Hash, sealed)}
		}, 19, "does not follow entry 18", false},
		{"inserted at the end, forged hash", func(es []task.AuditEntry) []string {
			return []string{forged(19, es[17].Hash, func(*task.AuditEntry) string { return es[17].Hash })}
		}, 19, "edited (or forged)", false},
		{"inserted in the middle, forged hash", func(es []task.AuditEntry) []string {
			// Make room at 12 and put a forged entry there that links to 11
			// but whose hash the forger could not compute.
			return []string{
				`UPDATE audit_log SET seq = seq + 1000 WHERE seq >= 12`,
				`UPDATE audit_log SET seq = seq - 999 WHERE seq > 1000`,
				forged(12, es[10].Hash, func(*task.AuditEntry) string { return strings.Repeat("ab", 32) }),
			}
		}, 12, "entry 12 was edited (or forged)", false},
		{"inserted in the middle, resealed", func(es []task.AuditEntry) []string {
			// A forger who seals the inserted entry correctly is caught at
			// the entry after it, which no longer fits its place.
			return []string{
				`UPDATE audit_log SET seq = seq + 1000 WHERE seq >= 12`,
				`UPDATE audit_log SET seq = seq - 999 WHERE seq > 1000`,
				forged(12, es[10].Hash, sealed),
			}
		}, 13, "entry 13 was edited", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, entries := chain(t)
			tamper(t, path, tc.tamper(entries)...)
			r := verify(t, path)
			if r.OK || r.FirstBad != tc.bad || !strings.Contains(r.Problem, tc.problem) {
				t.Fatalf("Verify = %+v\nwant FirstBad %d with a problem containing %q", r, tc.bad, tc.problem)
			}
			if r.LastSeq != tc.bad-1 {
				t.Errorf("LastSeq = %d, want %d (the last good entry)", r.LastSeq, tc.bad-1)
			}
			if tc.bad > 1 && !tc.forgedHead && r.LastHash != entries[tc.bad-2].Hash {
				t.Errorf("LastHash = %s, want entry %d's %s", r.LastHash, tc.bad-1, entries[tc.bad-2].Hash)
			}
		})
	}
}

// TestVerifyTruncated documents the chain's limit: entries cut off the end
// leave a valid chain; only a head recorded elsewhere reveals it.
func TestVerifyTruncated(t *testing.T) {
	t.Parallel()
	path, entries := chain(t)
	head := verify(t, path)
	tamper(t, path, `DELETE FROM audit_log WHERE seq > 15`)
	r := verify(t, path)
	if !r.OK || r.LastSeq != 15 {
		t.Fatalf("Verify after truncation = %+v, want OK up to 15", r)
	}
	if r.LastHash == head.LastHash || head.LastHash != entries[17].Hash {
		t.Errorf("LastHash %s before and %s after truncation: the recorded head must differ", head.LastHash, r.LastHash)
	}
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
