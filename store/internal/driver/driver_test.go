package driver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

func TestMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	good := fstest.MapFS{
		"migrations/0002_more.sql": file("B"),
		"migrations/0001_init.sql": file("A"),
		"migrations/README":        file("not a migration"),
	}
	ms, err := driver.Migrations(good)
	if err != nil || len(ms) != 2 || ms[0].Name != "0001_init" || ms[1].SQL != "B" || driver.SchemaVersion(good) != 2 {
		t.Fatalf("Migrations = %+v, %v; SchemaVersion %d", ms, err, driver.SchemaVersion(good))
	}
	for name, fsys := range map[string]fstest.MapFS{
		"a gap":          {"migrations/0001_a.sql": file(""), "migrations/0003_c.sql": file("")},
		"no number":      {"migrations/init.sql": file("")},
		"version zero":   {"migrations/0000_x.sql": file("")},
		"no underscore":  {"migrations/0001.sql": file("")},
		"duplicate vers": {"migrations/0001_a.sql": file(""), "migrations/1_b.sql": file("")},
	} {
		if _, err := driver.Migrations(fsys); err == nil || !strings.Contains(err.Error(), "migration") {
			t.Errorf("%s: err = %v, want a migration error", name, err)
		}
		if driver.SchemaVersion(fsys) != 0 {
			t.Errorf("%s: SchemaVersion = %d, want 0", name, driver.SchemaVersion(fsys))
		}
	}
}

func TestAdvance(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	tk := &task.Task{ID: "t1", State: task.StateQueued, Seq: 3}
	rec, err := driver.Advance(tk, driver.Change{To: task.StateInProgress, Claim: true, Owner: "w1", LeaseUntil: now.Add(time.Minute), Now: now, Node: "n"})
	if err != nil || tk.Attempt != 1 || tk.LeaseOwner != "w1" || tk.Seq != 4 || rec.Seq != 4 || rec.From != task.StateQueued || rec.Attempt != 1 {
		t.Fatalf("claim: task %+v, record %+v, %v", tk, rec, err)
	}
	if _, err := driver.Advance(tk, driver.Change{To: task.StateSucceeded, Now: now}); err != nil || tk.LeaseOwner != "" || !tk.LeaseExpires.IsZero() {
		t.Fatalf("finish: task %+v, %v; the lease must end", tk, err)
	}
	before := *tk
	if _, err := driver.Advance(tk, driver.Change{To: task.StateQueued, Now: now}); err == nil || tk.State != before.State || tk.Seq != before.Seq {
		t.Fatalf("illegal succeeded → queued: err %v, task %+v changed", err, tk)
	}
}

// EncodeRecord's record JSON is json.Marshal's, byte for byte (the audit
// chain hashes it), and its evidence JSON is json.Marshal's of the
// evidence: with and without evidence, with data that encoding/json
// compacts and escapes.
func TestEncodeRecordIsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 11, 23, 1, 2, 3, 4000, time.UTC)
	for _, rec := range []task.Record{
		{TaskID: "t1", Seq: 1, From: task.StateRequested, To: task.StateValidated, At: at},
		{TaskID: "t<2>", Seq: 4, From: task.StateInProgress, To: task.StateSucceeded, At: at, Attempt: 1, Node: "n&1",
			Evidence: []task.Evidence{
				{Step: "policy", Kind: task.EvidenceDecision, Outcome: "allow"},
				{Step: "contract", Kind: "verdict", Outcome: "pass", Message: "<all> hold", Duration: 26512,
					Data: json.RawMessage(`{"contract": "c", "note": "<b>&</b>", "n": [1, 2.5]}`)},
			}},
		{TaskID: "t3", Seq: 5, From: task.StateInProgress, To: task.StateSucceeded, At: at, Attempt: 1,
			Evidence: []task.Evidence{
				{Step: "contract", Kind: "verdict", Outcome: "pass", Message: "all assertions hold", Duration: 26512,
					Data: json.RawMessage(`{"contract":"c","verification":{"passed":true,"timing":{"totalMs":0.026512}}}`)},
				{Step: "contract", Kind: task.EvidenceOutput, Outcome: "judged", Data: json.RawMessage(`"\u003cx\u003e"`)},
			}},
	} {
		data, ev, err := driver.EncodeRecord(rec)
		want, werr := json.Marshal(rec)
		if err != nil || werr != nil || string(data) != string(want) {
			t.Errorf("record %d: EncodeRecord = %s, %v\njson.Marshal = %s, %v", rec.Seq, data, err, want, werr)
		}
		wantEv := ""
		if len(rec.Evidence) > 0 {
			b, _ := json.Marshal(rec.Evidence)
			wantEv = string(b)
		}
		if ev != wantEv {
			t.Errorf("record %d: evidence = %s, want %s", rec.Seq, ev, wantEv)
		}
	}
}

// FuzzEncodeRecord checks EncodeRecord against json.Marshal on any record
// text, number and time, offsets and out-of-range years included.
func FuzzEncodeRecord(f *testing.F) {
	f.Add("t1", 1, "queued", "in_progress", int64(1795000000123456789), 0, 2, "node-1", "", "", "v1")
	f.Add("t<2>\u2028", -3, "a\"b", "c\\d", int64(-62167219200000000), 3600, 0, "n&1", "é\xff", "\x01\t\n", "<p>")
	f.Add("", 0, "", "", int64(253402300800000000), -86340, 1<<40, "", "", "CODE", "")
	f.Fuzz(func(t *testing.T, id string, seq int, from, to string, nanos int64, offset, attempt int,
		node, reason, code, policy string) {
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset))
		rec := task.Record{TaskID: id, Seq: seq, From: task.State(from), To: task.State(to), At: at,
			Attempt: attempt, Node: node, Reason: reason, ErrorCode: task.Code(code), PolicyVersion: policy}
		data, _, err := driver.EncodeRecord(rec)
		want, werr := json.Marshal(rec)
		if (err != nil) != (werr != nil) || string(data) != string(want) {
			t.Fatalf("EncodeRecord = %s, %v\njson.Marshal = %s, %v", data, err, want, werr)
		}
	})
}

// FuzzEncodeRecordEvidence checks EncodeRecord's evidence against
// json.Marshal on any evidence data (JSON to keep, to compact and escape,
// or not JSON at all) and text.
func FuzzEncodeRecordEvidence(f *testing.F) {
	f.Add("contract", "verdict", "pass", "all <hold>", int64(26512), []byte(`{"a":[1,"x",null,true,{"b":-0.5e3}]}`))
	f.Add("contract", "output", "", "", int64(0), []byte(` {"a": "<b>&\u2028"} `))
	f.Add("p\u2028", "k\x01", "o", "m\xff", int64(-1), []byte(`{"a":`))
	f.Add("", "", "", "", int64(1), []byte(nil))
	f.Fuzz(func(t *testing.T, step, kind, outcome, msg string, d int64, data []byte) {
		rec := task.Record{TaskID: "t", Seq: 2, From: task.StateInProgress, To: task.StateSucceeded,
			At: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC), Attempt: 1,
			Evidence: []task.Evidence{{Step: "policy", Kind: task.EvidenceDecision, Outcome: "allow"},
				{Step: step, Kind: task.EvidenceKind(kind), Outcome: outcome, Message: msg, Duration: time.Duration(d), Data: data}}}
		got, ev, err := driver.EncodeRecord(rec)
		want, werr := json.Marshal(rec)
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Fatalf("EncodeRecord = %s, %v\njson.Marshal = %s, %v", got, err, want, werr)
		}
		if err == nil {
			wantEv, _ := json.Marshal(rec.Evidence)
			if ev != string(wantEv) {
				t.Fatalf("evidence = %s, want %s", ev, wantEv)
			}
		}
	})
}

// A time json.Marshal cannot write fails EncodeRecord too.
func TestEncodeRecordRefusesWhatJSONRefuses(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("odd", 24*3600+60)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("east", 3600)),
	} {
		rec := task.Record{TaskID: "t", Seq: 1, At: at}
		data, _, err := driver.EncodeRecord(rec)
		want, werr := json.Marshal(rec)
		if (err != nil) != (werr != nil) || string(data) != string(want) ||
			(err != nil && err.Error() != "encode record: "+werr.Error()) {
			t.Errorf("at %v: EncodeRecord = %s, %v; json.Marshal = %s, %v", at, data, err, want, werr)
		}
	}
}

// BenchmarkEncodeRecord encodes a transition's record as a blocking
// request's settle writes it. Run: go test -run '^$' -bench EncodeRecord -benchmem ./store/internal/driver
func BenchmarkEncodeRecord(b *testing.B) {
	rec := task.Record{TaskID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2b", Seq: 4, From: task.StateInProgress,
		To: task.StateSucceeded, At: time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC), Attempt: 1, Node: "node-a"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := driver.EncodeRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRecordVerdict encodes the record of a checked attempt's
// end: a contract gate's verdict (a 3-assertion verified result, as
// json.Marshal wrote it) as its evidence. Run:
// go test -run '^$' -bench EncodeRecordVerdict -benchmem ./store/internal/driver
func BenchmarkEncodeRecordVerdict(b *testing.B) {
	vr := `{"contract":"checked","contractDigest":"sha256:2cc67302bc90888d6deb0e5ceb8e20ceb47da300bc762bd3854bae20a14fe805","step":"checked","executed":true,"verification":{"passed":true,"preGate":{"passed":true,"results":[]},"postGate":{"passed":true,"results":[{"check":"contains","type":"assert","message":"echoes the greeting","passed":true},{"check":"regex","type":"assert","message":"starts with it","passed":true},{"check":"max_duration","type":"assert","message":"answers at once","passed":true}]},"resourcesCreated":[],"timing":{"preGateMs":0.003535,"executionMs":0.018738,"postGateMs":0.010476,"totalMs":0.032749}}}`
	rec := task.Record{TaskID: "0196f1c2-7d3e-7a40-9b1e-3c5d7e9f1a2b", Seq: 4, From: task.StateInProgress,
		To: task.StateSucceeded, At: time.Date(2026, 11, 28, 2, 3, 4, 567891000, time.UTC), Attempt: 1, Node: "node-a",
		Evidence: []task.Evidence{{Step: "contract", Kind: task.EvidenceVerdict, Outcome: "pass", Message: "all assertions hold",
			Duration: 32749, Data: json.RawMessage(vr)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := driver.EncodeRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
}
