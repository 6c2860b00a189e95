package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// testAuditInvalidData: audit Data must be JSON; a write carrying anything
// else is refused as invalid_argument and writes nothing, whichever method
// carries it.
func testAuditInvalidData(t *testing.T, b *bundle) {
	bad := []task.AuditInput{{Kind: "custom", Data: json.RawMessage(`{not json`)}}
	check := func(op string, err error) {
		t.Helper()
		if task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s with invalid audit Data: err = %v, want invalid_argument", op, err)
		}
	}
	check("AppendAudit", b.s.AppendAudit(b.ctx, bad))
	_, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Audit: bad, Now: t0})
	check("CreateTask", err)
	_, err = b.s.CreateTask(b.ctx, task.CreateParams{Task: newTask(spec{id: "t1"}), Steps: []task.Step{{To: task.StateValidated, Audit: bad}}, Now: t0})
	check("CreateTask step", err)
	if _, err := b.s.GetTask(b.ctx, "t1", -1); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask after refused creates: err = %v, want ErrNotFound", err)
	}
	b.create(spec{id: "t2", steps: []task.State{task.StateValidated}})
	_, err = b.s.Transition(b.ctx, task.TransitionParams{TaskID: "t2", From: task.StateValidated, To: task.StateQueued, Now: t0, Audit: bad})
	check("Transition", err)
	if got := b.get("t2"); got.State != task.StateValidated {
		t.Errorf("state after a refused transition = %s, want validated", got.State)
	}
	check("PutPushConfig", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t2", ID: "p1", URL: "https://example.com/hook", CreatedAt: t0}, bad))
	if _, err := b.s.GetPushConfig(b.ctx, "t2", "p1"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetPushConfig after a refused put: err = %v, want ErrNotFound", err)
	}
	before, err := b.s.AuditEntries(b.ctx, 0, 1000)
	if err != nil {
		t.Fatalf("AuditEntries: %v", err)
	}
	for _, e := range before {
		if e.Kind == "custom" {
			t.Errorf("refused entry was written: %s", dump(e))
		}
	}
	checkChain(t, before)
}

func testAuditAppend(t *testing.T, b *bundle) {
	if err := b.s.AppendAudit(b.ctx, nil); err != nil {
		t.Fatalf("AppendAudit(nil): %v", err)
	}
	if got, err := b.s.AuditEntries(b.ctx, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("AuditEntries on an empty log = %v, %v", got, err)
	}
	in := []task.AuditInput{
		// Data is kept byte for byte: the hash covers it.
		{Kind: task.AuditPushConfig, TaskID: "t9", Actor: "alice", Data: json.RawMessage(`{ "b": 1,  "a": [1, 2] }`)},
		{Kind: task.AuditPolicy, Actor: "ops"},
		{Kind: "custom", Data: json.RawMessage(`"ünïcode ✓"`)},
	}
	if err := b.s.AppendAudit(b.ctx, in[:2]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	if err := b.s.AppendAudit(b.ctx, in[2:]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	all, err := b.s.AuditEntries(b.ctx, 0, 100)
	if err != nil {
		t.Fatalf("AuditEntries: %v", err)
	}
	checkChain(t, all)
	if len(all) != 3 {
		t.Fatalf("AuditEntries = %d entries, want 3", len(all))
	}
	for i, e := range all {
		if e.Kind != in[i].Kind || e.TaskID != in[i].TaskID || e.Actor != in[i].Actor || string(e.Data) != string(in[i].Data) {
			t.Errorf("entry %d = %s, want %s", e.Seq, dump(e), dump(in[i]))
		}
		if e.At.IsZero() || e.At.Location() != time.UTC || e.At.Nanosecond()%1000 != 0 {
			t.Errorf("entry %d: At %v, want a UTC time in whole microseconds", e.Seq, e.At)
		}
	}
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{{0, 1, []int64{1}}, {1, 1, []int64{2}}, {1, 5, []int64{2, 3}}, {3, 5, nil}, {99, 5, nil}} {
		got, err := b.s.AuditEntries(b.ctx, tc.after, tc.limit)
		if err != nil {
			t.Fatalf("AuditEntries(%d, %d): %v", tc.after, tc.limit, err)
		}
		var seqs []int64
		for _, e := range got {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(seqs, tc.want) {
			t.Errorf("AuditEntries(%d, %d) = %v, want %v", tc.after, tc.limit, seqs, tc.want)
		}
	}
	if !reflect.DeepEqual(b.audit(), all) {
		t.Error("paged reads differ from one read")
	}
}

// testAuditConcurrent: writers of every kind at once still build one linear
// chain with no gap.
func testAuditConcurrent(t *testing.T, b *bundle) {
	const writers, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("w%d-r%d", w, r)
				_, err := b.s.CreateTask(b.ctx, task.CreateParams{
					Task: newTask(spec{id: id}), Steps: steps(task.StateValidated, task.StateQueued),
					Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: t0,
				}) // 3 entries
				if err == nil {
					_, err = b.s.Claim(b.ctx, task.ClaimParams{Owner: id, Now: t0, LeaseFor: time.Minute, Limit: 1, TaskID: id}) // 1
				}
				if err == nil {
					err = b.s.AppendAudit(b.ctx, []task.AuditInput{{Kind: "a", TaskID: id}, {Kind: "b", TaskID: id}}) // 2
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	log := b.audit()
	checkChain(t, log)
	if want := writers * rounds * 6; len(log) != want {
		t.Errorf("audit log has %d entries, want %d", len(log), want)
	}
	last := log[len(log)-1]
	if seq, hash, err := auditReaderOf(t, b.s).AuditHead(b.ctx); err != nil || seq != last.Seq || hash != last.Hash {
		t.Errorf("AuditHead = %d, %s, %v; want the last entry %d, %s", seq, hash, err, last.Seq, last.Hash)
	}
}

// auditReader is what audit.Verify and the anchor publisher need beyond
// task.Store (audit.Scanner and audit.HeadReader); every driver has it.
type auditReader interface {
	AuditHead(ctx context.Context) (int64, string, error)
	ScanAudit(ctx context.Context, head func(seq int64, hash string, found bool) error,
		entry func(*task.AuditEntry) error, record func(*task.Record) error) error
}

func auditReaderOf(t *testing.T, s task.Store) auditReader {
	t.Helper()
	r, ok := s.(auditReader)
	if !ok {
		t.Fatalf("%T has no AuditHead and ScanAudit", s)
	}
	return r
}

// scanned is one ScanAudit's result.
type scanned struct {
	headSeq  int64
	headHash string
	found    bool
	entries  []task.AuditEntry
	records  []task.Record
}

func scanAll(ctx context.Context, r auditReader) (scanned, error) {
	var sc scanned
	err := r.ScanAudit(ctx, func(seq int64, hash string, found bool) error {
		sc.headSeq, sc.headHash, sc.found = seq, hash, found
		return nil
	}, func(e *task.AuditEntry) error {
		sc.entries = append(sc.entries, *e)
		return nil
	}, func(rec *task.Record) error {
		sc.records = append(sc.records, *rec)
		return nil
	})
	return sc, err
}

// testAuditHeadAndScan: the head record follows every seal; ScanAudit
// reads the head, every entry as AuditEntries returns it and every record
// as Records returns it, and stops at a callback's error.
func testAuditHeadAndScan(t *testing.T, b *bundle) {
	r := auditReaderOf(t, b.s)
	if seq, hash, err := r.AuditHead(b.ctx); err != nil || seq != 0 || hash != "" {
		t.Fatalf("AuditHead of an empty store = %d, %q, %v; want 0, \"\"", seq, hash, err)
	}
	sc, err := scanAll(b.ctx, r)
	if err != nil || !sc.found || sc.headSeq != 0 || len(sc.entries) != 0 || len(sc.records) != 0 {
		t.Fatalf("ScanAudit of an empty store = %+v, %v", sc, err)
	}
	b.reach("b", task.StateSucceeded)
	b.reach("a", task.StateQueued)
	if err := b.s.AppendAudit(b.ctx, []task.AuditInput{{Kind: task.AuditPushConfig, TaskID: "a"}}); err != nil {
		t.Fatal(err)
	}
	log := b.audit()
	last := log[len(log)-1]
	if seq, hash, err := r.AuditHead(b.ctx); err != nil || seq != last.Seq || hash != last.Hash {
		t.Fatalf("AuditHead = %d, %s, %v; want %d, %s", seq, hash, err, last.Seq, last.Hash)
	}
	sc, err = scanAll(b.ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.found || sc.headSeq != last.Seq || sc.headHash != last.Hash {
		t.Errorf("ScanAudit head = %d, %s, %v; want %d, %s", sc.headSeq, sc.headHash, sc.found, last.Seq, last.Hash)
	}
	if !reflect.DeepEqual(sc.entries, log) {
		t.Errorf("ScanAudit entries:\n%s\nwant\n%s", dump(sc.entries), dump(log))
	}
	// Records in (task id, seq) order: task a's, then b's.
	want := append(b.records("a"), b.records("b")...)
	if !reflect.DeepEqual(sc.records, want) {
		t.Errorf("ScanAudit records:\n%s\nwant\n%s", dump(sc.records), dump(want))
	}
	stop := errors.New("stop")
	n := 0
	err = r.ScanAudit(b.ctx, func(int64, string, bool) error { return nil }, func(*task.AuditEntry) error {
		n++
		return stop
	}, func(*task.Record) error { t.Error("ScanAudit read records after an entry callback failed"); return nil })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("ScanAudit with a failing callback = %v after %d entries, want the callback's error after 1", err, n)
	}
}

// testAuditScanSnapshot: ScanAudit reads one snapshot while writers seal:
// its head record is its last entry, and every transition entry it sees
// has its record and the other way round.
func testAuditScanSnapshot(t *testing.T, b *bundle) {
	r := auditReaderOf(t, b.s)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil && i < 200; i++ {
				id := fmt.Sprintf("s%d-%d", w, i)
				if _, err := b.s.CreateTask(ctx, task.CreateParams{
					Task: newTask(spec{id: id}), Steps: steps(task.StateValidated, task.StateQueued),
					Audit: []task.AuditInput{{Kind: task.AuditSubmitted, TaskID: id}}, Now: t0,
				}); err != nil && ctx.Err() == nil {
					t.Errorf("CreateTask(%s): %v", id, err)
					return
				}
			}
		})
	}
	for range 20 {
		sc, err := scanAll(b.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		var endSeq int64
		endHash := ""
		if n := len(sc.entries); n > 0 {
			endSeq, endHash = sc.entries[n-1].Seq, sc.entries[n-1].Hash
		}
		if sc.headSeq != endSeq || sc.headHash != endHash {
			t.Fatalf("ScanAudit head %d/%s, but its entries end at %d/%s: not one snapshot", sc.headSeq, sc.headHash, endSeq, endHash)
		}
		transitions := 0
		for _, e := range sc.entries {
			if e.Kind == task.AuditTransition {
				transitions++
			}
		}
		if transitions != len(sc.records) {
			t.Fatalf("ScanAudit saw %d transition entries and %d records: not one snapshot", transitions, len(sc.records))
		}
	}
	cancel()
	wg.Wait()
}
