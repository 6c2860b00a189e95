// Package audittest is the tampering suite every task.Store driver runs
// against audit.Verify: each case builds a real audit chain through the
// store, tampers with the driver's tables in SQL as someone with write
// access to the database would, and checks that Verify names the right
// entry with the right kind. A driver's tests call Run with a function that
// opens a fresh store and says how to run SQL on its database.
package audittest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/task"
)

// Target is a fresh store under test and the attacker's access to its
// database.
type Target struct {
	// Store is a new, empty store; Run closes it.
	Store task.Store
	// Exec runs statements on the store's database directly, with the
	// append-only triggers of audit_log and task_records already lifted.
	Exec func(t *testing.T, stmts ...string)
	// Insert returns a statement inserting e into audit_log as a raw row.
	Insert func(e task.AuditEntry) string
	// AllowDuplicates are statements after which audit_log accepts two rows
	// with one seq (the attacker drops the primary key).
	AllowDuplicates []string
}

// t0 is the chain's clock.
var t0 = time.Date(2026, 5, 6, 7, 8, 9, 10000, time.UTC)

// Build seals a chain of 18 entries through s: three tasks, each submitted,
// queued, claimed and succeeded (one submission, four transitions; the
// last carries a pipeline step's evidence), and a push-config entry after
// each. It returns the entries.
func Build(t *testing.T, s task.Store) []task.AuditEntry {
	t.Helper()
	ctx := t.Context()
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
		if _, err := s.Transition(ctx, task.TransitionParams{TaskID: id, From: task.StateInProgress, To: task.StateSucceeded, LeaseOwner: "w", Now: now,
			Evidence: []task.Evidence{{Step: "check", Kind: task.EvidenceVerdict, Outcome: "fail", Message: "no title"}}}); err != nil {
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
	return entries
}

// Forged returns an entry at seq that links to prevHash and is sealed
// correctly over its own content.
func Forged(seq int64, prevHash string) task.AuditEntry {
	e := task.AuditEntry{Seq: seq, At: t0, Kind: task.AuditPolicy, TaskID: "t1", Actor: "mallory",
		Data: json.RawMessage(`{"allow":true}`), PrevHash: prevHash}
	e.Hash = e.ComputeHash()
	return e
}

// Rechain returns es without the entries for which drop is true,
// renumbered from 1 and sealed again: what someone with write access and
// the hashing code can make of a chain.
func Rechain(es []task.AuditEntry, drop func(e task.AuditEntry) bool) []task.AuditEntry {
	var out []task.AuditEntry
	prev := ""
	for _, e := range es {
		if drop(e) {
			continue
		}
		e.Seq, e.PrevHash = int64(len(out)+1), prev
		e.Hash = e.ComputeHash()
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

// headTo is the statement that sets the head record.
func headTo(seq int64, hash string) string {
	return fmt.Sprintf(`UPDATE audit_head SET seq = %d, hash = '%s'`, seq, hash)
}

// Case is one tampering and the verdict it must get.
type Case struct {
	Name string
	// Tamper returns the statements to run, given the genuine entries
	// (es[i] has seq i+1) and the target.
	Tamper func(es []task.AuditEntry, tg *Target) []string
	// Anchor, when set, is passed to Verify.
	Anchor func(es []task.AuditEntry) *audit.Head
	// Bad is the entry Verify must name, Kind its kind, and Problem a part
	// of the message. OK cases have Kind "".
	Bad     int64
	Kind    audit.Kind
	Problem string
	// LastForged: the entry before Bad is itself a forgery that checks
	// out, so LastHash is not the genuine one.
	LastForged bool
	// Records, when set, is the kind of the first records problem
	// expected ("" for a clean cross-check).
	Records string
}

// transitionAt returns the seq of the first transition entry after seq.
func transitionAt(es []task.AuditEntry, after int64) int64 {
	for _, e := range es {
		if e.Seq > after && e.Kind == task.AuditTransition {
			return e.Seq
		}
	}
	panic("no transition entry")
}

// Cases are the tamperings Run applies.
func Cases() []Case {
	anchorAt := func(seq int64) func(es []task.AuditEntry) *audit.Head {
		return func(es []task.AuditEntry) *audit.Head { return &audit.Head{Seq: seq, Hash: es[seq-1].Hash} }
	}
	rechainWithout := func(seq func(es []task.AuditEntry) int64) func(es []task.AuditEntry, tg *Target) []string {
		return func(es []task.AuditEntry, tg *Target) []string {
			drop := seq(es)
			re := Rechain(es, func(e task.AuditEntry) bool { return e.Seq == drop })
			stmts := []string{`DELETE FROM audit_log`}
			for _, e := range re {
				stmts = append(stmts, tg.Insert(e))
			}
			return append(stmts, headTo(re[len(re)-1].Seq, re[len(re)-1].Hash))
		}
	}
	renumberFrom := func(seq int64, by int) []string {
		// Two steps, so that no seq collides on the way.
		return []string{
			fmt.Sprintf(`UPDATE audit_log SET seq = seq + 1000 WHERE seq >= %d`, seq),
			fmt.Sprintf(`UPDATE audit_log SET seq = seq - %d WHERE seq > 1000`, 1000-by),
		}
	}
	stmts := func(s ...string) func([]task.AuditEntry, *Target) []string {
		return func([]task.AuditEntry, *Target) []string { return s }
	}
	return []Case{
		{Name: "intact", Tamper: stmts()},
		{Name: "intact with anchor", Tamper: stmts(), Anchor: anchorAt(18)},
		{Name: "intact with an older anchor", Tamper: stmts(), Anchor: anchorAt(9)},
		{Name: "edited data", Tamper: stmts(`UPDATE audit_log SET data = NULL WHERE seq = 1`),
			Bad: 1, Kind: audit.KindEdited, Problem: "entry 1 was edited"},
		{Name: "edited actor in the middle", Tamper: stmts(`UPDATE audit_log SET actor = 'mallory' WHERE seq = 9`),
			Bad: 9, Kind: audit.KindEdited, Problem: "entry 9 was edited"},
		{Name: "edited last entry", Tamper: stmts(`UPDATE audit_log SET kind = 'other' WHERE seq = 18`),
			Bad: 18, Kind: audit.KindEdited, Problem: "entry 18 was edited"},
		{Name: "edited and resealed", Tamper: func(es []task.AuditEntry, _ *Target) []string {
			// The attacker seals the edited entry again; the next entry
			// still names the original, so the blame is on entry 10.
			e := es[9]
			e.Actor = "mallory"
			return []string{fmt.Sprintf(`UPDATE audit_log SET actor = 'mallory', hash = '%s' WHERE seq = 10`, e.ComputeHash())}
		}, Bad: 10, Kind: audit.KindEdited, Problem: "entry 10 was rewritten and resealed"},
		{Name: "edited and resealed last entry", Tamper: func(es []task.AuditEntry, _ *Target) []string {
			e := es[17]
			e.Actor = "mallory"
			return []string{fmt.Sprintf(`UPDATE audit_log SET actor = 'mallory', hash = '%s' WHERE seq = 18`, e.ComputeHash())}
		}, Bad: 18, Kind: audit.KindEdited, Problem: "entry 18 does not match the head record"},
		{Name: "edited and resealed with the next link replaced", Tamper: func(es []task.AuditEntry, _ *Target) []string {
			// Entry 10 rewritten, and entry 11 pointed at it without being
			// sealed again: entry 11 no longer hashes.
			e := es[9]
			e.Actor = "mallory"
			h := e.ComputeHash()
			return []string{
				fmt.Sprintf(`UPDATE audit_log SET actor = 'mallory', hash = '%s' WHERE seq = 10`, h),
				fmt.Sprintf(`UPDATE audit_log SET prev_hash = '%s' WHERE seq = 11`, h),
			}
		}, Bad: 11, Kind: audit.KindEdited, Problem: "entry 11 was edited", LastForged: true},
		{Name: "removed", Tamper: stmts(`DELETE FROM audit_log WHERE seq = 7`),
			Bad: 7, Kind: audit.KindRemoved, Problem: "entry 7 is missing"},
		{Name: "removed several", Tamper: stmts(`DELETE FROM audit_log WHERE seq BETWEEN 7 AND 9`),
			Bad: 7, Kind: audit.KindRemoved, Problem: "entries 7 to 9 are missing", Records: "unaudited"},
		{Name: "removed first", Tamper: stmts(`DELETE FROM audit_log WHERE seq = 1`),
			Bad: 1, Kind: audit.KindRemoved, Problem: "entry 1 is missing"},
		{Name: "removed and renumbered", Tamper: func([]task.AuditEntry, *Target) []string {
			return append([]string{`DELETE FROM audit_log WHERE seq = 7`}, renumberFrom(8, -1)...)
		}, Bad: 7, Kind: audit.KindRemoved, Problem: "entry 7 was removed"},
		{Name: "removed two and renumbered", Tamper: func([]task.AuditEntry, *Target) []string {
			return append([]string{`DELETE FROM audit_log WHERE seq IN (7, 8)`}, renumberFrom(9, -2)...)
		}, Bad: 7, Kind: audit.KindRemoved, Problem: "entries 7 to 8 were removed", Records: "unaudited"},
		{Name: "inserted in the middle, resealed", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			// The forged entry at 12 links to 11 and hashes correctly; the
			// genuine entries after it were moved up by one.
			return append(renumberFrom(12, 1), tg.Insert(Forged(12, es[10].Hash)))
		}, Bad: 12, Kind: audit.KindInserted, Problem: "entry 12 was inserted"},
		{Name: "inserted two in the middle, resealed", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			f1 := Forged(12, es[10].Hash)
			f2 := Forged(13, f1.Hash)
			return append(renumberFrom(12, 2), tg.Insert(f1), tg.Insert(f2))
		}, Bad: 12, Kind: audit.KindInserted, Problem: "entry 12 was inserted"},
		{Name: "inserted in the middle, forged hash", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			f := Forged(12, es[10].Hash)
			f.Hash = strings.Repeat("ab", 32)
			return append(renumberFrom(12, 1), tg.Insert(f))
		}, Bad: 12, Kind: audit.KindEdited, Problem: "entry 12 was edited (or forged)"},
		{Name: "inserted at the end, wrong link", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			return []string{tg.Insert(Forged(19, es[10].Hash))}
		}, Bad: 19, Kind: audit.KindInserted, Problem: "entry 19 does not follow entry 18"},
		{Name: "inserted at the end, sealed, head not moved", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			return []string{tg.Insert(Forged(19, es[17].Hash))}
		}, Bad: 19, Kind: audit.KindOutOfRange, Problem: "beyond the head record (18)"},
		{Name: "inserted far beyond the head", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			return []string{tg.Insert(Forged(1000, es[17].Hash))}
		}, Bad: 1000, Kind: audit.KindOutOfRange, Problem: "entry 1000 is beyond the head record"},
		{Name: "inserted at seq 0", Tamper: func(_ []task.AuditEntry, tg *Target) []string {
			return []string{tg.Insert(Forged(0, ""))}
		}, Bad: 0, Kind: audit.KindOutOfRange, Problem: "sequence number 0 is out of range"},
		{Name: "inserted at a negative seq", Tamper: func(_ []task.AuditEntry, tg *Target) []string {
			return []string{tg.Insert(Forged(-5, ""))}
		}, Bad: -5, Kind: audit.KindOutOfRange, Problem: "sequence number -5 is out of range"},
		{Name: "duplicate seq", Tamper: func(es []task.AuditEntry, tg *Target) []string {
			f := Forged(12, es[10].Hash)
			return append(append([]string(nil), tg.AllowDuplicates...), tg.Insert(f))
		}, Bad: 12, Kind: audit.KindDuplicate, Problem: "entry 12 appears 2 times"},
		{Name: "truncated", Tamper: stmts(`DELETE FROM audit_log WHERE seq > 15`),
			Bad: 16, Kind: audit.KindTruncated, Problem: "the head record says 18/", Records: "unaudited"},
		{Name: "truncated, head record rewritten", Tamper: func(es []task.AuditEntry, _ *Target) []string {
			// Entry 18 is a push-config entry: no record refers to it, so
			// only an anchor can tell.
			return []string{`DELETE FROM audit_log WHERE seq = 18`, headTo(17, es[16].Hash)}
		}},
		{Name: "truncated, head record rewritten, anchored", Tamper: func(es []task.AuditEntry, _ *Target) []string {
			return []string{`DELETE FROM audit_log WHERE seq = 18`, headTo(17, es[16].Hash)}
		}, Anchor: anchorAt(18), Bad: 18, Kind: audit.KindTruncated, Problem: "the anchor says 18/"},
		{Name: "head record deleted", Tamper: stmts(`DELETE FROM audit_head`),
			Bad: 19, Kind: audit.KindHead, Problem: "head record is missing"},
		{Name: "head record edited", Tamper: stmts(headTo(18, strings.Repeat("cd", 32))),
			Bad: 18, Kind: audit.KindEdited, Problem: "does not match the head record"},
		{Name: "transition entry removed, chain resealed", Tamper: rechainWithout(func(es []task.AuditEntry) int64 { return transitionAt(es, 8) }),
			Records: "unaudited"},
		{Name: "transition entry removed, chain resealed, anchored", Tamper: rechainWithout(func(es []task.AuditEntry) int64 { return transitionAt(es, 8) }),
			Anchor: anchorAt(12), Bad: 12, Kind: audit.KindAnchor, Problem: "the chain was rewritten at or before entry 12", Records: "unaudited"},
		{Name: "record edited", Tamper: stmts(`UPDATE task_records SET reason = 'forged' WHERE task_id = 't1' AND seq = 2`),
			Records: "differs"},
		{Name: "record evidence edited", Tamper: stmts(`UPDATE task_records SET evidence = '[{"step":"check","kind":"verdict","outcome":"pass"}]' WHERE task_id = 't1' AND seq = 4`),
			Records: "differs"},
		{Name: "record evidence removed", Tamper: stmts(`UPDATE task_records SET evidence = NULL WHERE task_id = 't1' AND seq = 4`),
			Records: "differs"},
		{Name: "record removed", Tamper: stmts(`DELETE FROM task_records WHERE task_id = 't2' AND seq = 4`),
			Records: "unrecorded"},
	}
}

// Run applies every case to a fresh target.
func Run(t *testing.T, open func(t *testing.T) Target) {
	for _, tc := range Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			tg := open(t)
			t.Cleanup(func() { _ = tg.Store.Close() })
			es := Build(t, tg.Store)
			if s := tc.Tamper(es, &tg); len(s) > 0 {
				tg.Exec(t, s...)
			}
			var opts audit.Options
			if tc.Anchor != nil {
				opts.Anchor = tc.Anchor(es)
			}
			r, err := audit.VerifyWith(t.Context(), tg.Store, opts)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			Check(t, r, tc, es)
		})
	}
}

// Check fails the test unless r is tc's verdict on the chain es.
func Check(t *testing.T, r *audit.Report, tc Case, es []task.AuditEntry) {
	t.Helper()
	if r.Records == nil {
		t.Fatalf("Verify did not cross-check the execution record: %+v", r)
	}
	if tc.Kind == "" {
		if r.Break != nil {
			t.Fatalf("Verify = break %+v, want none", *r.Break)
		}
	} else {
		if r.Break == nil {
			t.Fatalf("Verify found no break, want %s at %d (report %+v)", tc.Kind, tc.Bad, r)
		}
		b := r.Break
		if b.Seq != tc.Bad || b.Kind != tc.Kind || !strings.Contains(b.Message, tc.Problem) {
			t.Fatalf("Verify = break %+v\nwant %s at %d with a message containing %q", *b, tc.Kind, tc.Bad, tc.Problem)
		}
		if r.FirstBad != b.Seq || r.Kind != b.Kind || r.Problem != b.Message {
			t.Errorf("FirstBad/Kind/Problem = %d/%s/%q, want Break's", r.FirstBad, r.Kind, r.Problem)
		}
		if tc.Kind == audit.KindDuplicate {
			genuine := es[tc.Bad-1].Hash[:12]
			if !strings.Contains(b.Message, "the row with hash "+genuine+"… is genuine") {
				t.Errorf("duplicate break %q does not name entry %d's genuine row (%s…)", b.Message, tc.Bad, genuine)
			}
		}
		if tc.Bad >= 2 && tc.Bad <= int64(len(es))+1 && tc.Kind != audit.KindHead && tc.Kind != audit.KindAnchor {
			if r.LastSeq != tc.Bad-1 || (!tc.LastForged && r.LastHash != es[tc.Bad-2].Hash) {
				t.Errorf("LastSeq/LastHash = %d/%s, want entry %d's %s", r.LastSeq, short(r.LastHash), tc.Bad-1, short(es[tc.Bad-2].Hash))
			}
		}
	}
	gotRecords := ""
	if r.Records.First != nil {
		gotRecords = r.Records.First.Kind
	}
	if gotRecords != tc.Records || r.Records.OK != (tc.Records == "") {
		t.Errorf("records cross-check = %+v (first %+v), want first problem %q", r.Records, r.Records.First, tc.Records)
	}
	if want := tc.Kind == "" && tc.Records == ""; r.OK != want {
		t.Errorf("OK = %v, want %v", r.OK, want)
	}
	if tc.Anchor != nil && r.AnchorOK != (tc.Kind != audit.KindAnchor && tc.Kind != audit.KindTruncated) {
		t.Errorf("AnchorOK = %v", r.AnchorOK)
	}
	if r.Records.Records == 0 || r.Records.Transitions == 0 {
		t.Errorf("cross-check read %d records and %d transitions", r.Records.Records, r.Records.Transitions)
	}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
