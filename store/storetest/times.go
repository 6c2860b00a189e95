package storetest

import (
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

// testTimes checks that every stored time comes back exactly, location
// included (== on time.Time, not Equal).
func testTimes(t *testing.T, b *bundle) {
	created := time.Date(2031, 12, 31, 23, 59, 59, 999999000, time.UTC)
	runAfter := time.Date(1969, 7, 20, 20, 17, 40, 1000, time.UTC) // before the Unix epoch
	in := newTask(spec{id: "t1"})
	in.RunAfter = runAfter
	in.Envelope.CreatedAt = created.Add(-time.Microsecond)
	if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps(task.StateValidated, task.StateQueued), Now: created}); err != nil {
		t.Fatal(err)
	}
	claimNow := created.Add(7 * time.Microsecond)
	b.claim("t1", "w", claimNow, 1500*time.Millisecond+3*time.Microsecond)
	tk := b.get("t1")
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", tk.CreatedAt, created},
		{"UpdatedAt", tk.UpdatedAt, claimNow},
		{"RunAfter", tk.RunAfter, runAfter},
		{"LeaseExpires", tk.LeaseExpires, claimNow.Add(1500*time.Millisecond + 3*time.Microsecond)},
		{"Envelope.CreatedAt", tk.Envelope.CreatedAt, in.Envelope.CreatedAt},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	recs := b.records("t1")
	if recs[0].At != created || recs[len(recs)-1].At != claimNow {
		t.Errorf("record times %v … %v, want %v … %v", recs[0].At, recs[len(recs)-1].At, created, claimNow)
	}
	log := b.audit()
	if log[0].At != created || log[len(log)-1].At != claimNow {
		t.Errorf("audit times %v … %v, want %v … %v", log[0].At, log[len(log)-1].At, created, claimNow)
	}
	checkChain(t, log)
	pc := task.PushConfig{TaskID: "t1", ID: "c", URL: "https://x", CreatedAt: created.Add(11 * time.Microsecond)}
	if err := b.s.PutPushConfig(b.ctx, pc, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := b.s.GetPushConfig(b.ctx, "t1", "c"); err != nil || got.CreatedAt != pc.CreatedAt {
		t.Errorf("PushConfig.CreatedAt = %v, %v; want %v", got, err, pc.CreatedAt)
	}
	page, err := b.s.ListTasks(b.ctx, task.ListParams{UpdatedAfter: claimNow})
	if err != nil || len(page.Tasks) != 1 {
		t.Errorf("ListTasks(UpdatedAfter = UpdatedAt) = %v, %v; want the task", page, err)
	}
	page, err = b.s.ListTasks(b.ctx, task.ListParams{UpdatedAfter: claimNow.Add(time.Microsecond)})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("ListTasks(UpdatedAfter = UpdatedAt+1µs) = %v, %v; want none", page, err)
	}
}
