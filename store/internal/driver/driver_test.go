package driver_test

import (
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
