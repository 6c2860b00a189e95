package driver_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pactum/pactum/store/internal/driver"
	"github.com/pactum/pactum/task"
)

// row is a driver.Row that copies its values into the destinations, as a
// database row would.
type row []any

func (r row) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return errors.New("column count")
	}
	for i, v := range r {
		d := reflect.ValueOf(dest[i]).Elem()
		d.Set(reflect.ValueOf(v).Convert(d.Type()))
	}
	return nil
}

func TestScanRows(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	e, err := driver.ScanAuditEntry(row{int64(3), at.UnixMicro(), string(task.AuditPolicy), "t1", "alice", []byte(`{"a":1}`), "p", "h"}, driver.FromMicros)
	want := task.AuditEntry{Seq: 3, At: at, Kind: task.AuditPolicy, TaskID: "t1", Actor: "alice", Data: []byte(`{"a":1}`), PrevHash: "p", Hash: "h"}
	if err != nil || !reflect.DeepEqual(e, want) {
		t.Errorf("ScanAuditEntry = %+v, %v; want %+v", e, err, want)
	}
	e, err = driver.ScanAuditEntry(row{int64(1), at.In(time.FixedZone("X", 3600)), "k", "", "", []byte{}, "", "h"}, time.Time.UTC)
	if err != nil || e.Data != nil || e.At != at {
		t.Errorf("ScanAuditEntry without data = %+v, %v; want nil Data, time in UTC", e, err)
	}
	r, err := driver.ScanRecord(row{"t1", int64(2), "queued", "in_progress", at.UnixMicro(), 1, "n", "why", "internal", "v1", []byte(nil)}, driver.FromMicros)
	wantRec := task.Record{TaskID: "t1", Seq: 2, From: task.StateQueued, To: task.StateInProgress, At: at, Attempt: 1,
		Node: "n", Reason: "why", ErrorCode: task.CodeInternal, PolicyVersion: "v1"}
	if err != nil || !reflect.DeepEqual(r, wantRec) {
		t.Errorf("ScanRecord = %+v, %v; want %+v", r, err, wantRec)
	}
	r, err = driver.ScanRecord(row{"t1", int64(3), "in_progress", "succeeded", at.UnixMicro(), 1, "", "", "", "",
		[]byte(`[{"step":"policy","kind":"decision","outcome":"allow"}]`)}, driver.FromMicros)
	if want := []task.Evidence{{Step: "policy", Kind: task.EvidenceDecision, Outcome: "allow"}}; err != nil || !reflect.DeepEqual(r.Evidence, want) {
		t.Errorf("ScanRecord with evidence = %+v, %v; want evidence %+v", r, err, want)
	}
	if _, err := driver.ScanRecord(row{"t1", int64(3), "a", "b", at.UnixMicro(), 1, "", "", "", "", []byte(`{`)}, driver.FromMicros); err == nil {
		t.Error("ScanRecord of malformed evidence: no error")
	}
	if _, err := driver.ScanRecord(row{"short"}, driver.FromMicros); err == nil {
		t.Error("ScanRecord of a short row: no error")
	}
}

func TestClaim(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	tk := &task.Task{ID: "t1", State: task.StateQueued, Attempt: 1, Seq: 2}
	rec, err := driver.Claim(tk, "w", "n1", now, time.Minute+time.Nanosecond)
	if err != nil || tk.State != task.StateInProgress || tk.Attempt != 2 || tk.LeaseOwner != "w" || tk.LeaseExpires != now.Add(time.Minute) ||
		rec.Node != "n1" || rec.Attempt != 2 || rec.From != task.StateQueued {
		t.Errorf("Claim = %+v, %v; task %+v", rec, err, tk)
	}
	if _, err := driver.Claim(&task.Task{ID: "t2", State: task.StateValidated}, "w", "", now, time.Minute); !errors.Is(err, task.ErrIllegalTransition) {
		t.Errorf("Claim of a validated task: %v, want ErrIllegalTransition", err)
	}
	for name, err := range map[string]error{
		"claim no owner": driver.CheckClaim(task.ClaimParams{LeaseFor: time.Second, Now: now}),
		"claim no lease": driver.CheckClaim(task.ClaimParams{Owner: "w", Now: now}),
		"claim no now":   driver.CheckClaim(task.ClaimParams{Owner: "w", LeaseFor: time.Second}),
		"renew no owner": driver.CheckRenew(task.RenewParams{LeaseFor: time.Second, Now: now}),
		"renew no lease": driver.CheckRenew(task.RenewParams{Owner: "w", Now: now}),
		"renew no now":   driver.CheckRenew(task.RenewParams{Owner: "w", LeaseFor: time.Second}),
	} {
		if task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
	if err := driver.CheckClaim(task.ClaimParams{Owner: "w", LeaseFor: time.Second, Now: now}); err != nil {
		t.Errorf("CheckClaim of good params: %v", err)
	}
	if err := driver.CheckRenew(task.RenewParams{Owner: "w", LeaseFor: time.Second, Now: now}); err != nil {
		t.Errorf("CheckRenew of good params: %v", err)
	}
}
