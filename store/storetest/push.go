package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

func testPushConfig(t *testing.T, b *bundle) {
	b.create(spec{id: "t1"})
	hasConfigs := func(when string, want bool) {
		t.Helper()
		if got, err := b.s.HasPushConfigs(b.ctx); err != nil || got != want {
			t.Errorf("HasPushConfigs %s = %v, %v; want %v", when, got, err, want)
		}
	}
	hasConfigs("before any was set", false)
	c1 := task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/hook", Token: "tok", Auth: json.RawMessage(`{"schemes":["Bearer"]}`), CreatedAt: at(time.Microsecond)}
	c2 := task.PushConfig{TaskID: "t1", ID: "c2", URL: "https://example.com/other", CreatedAt: at(time.Second)}
	for _, c := range []task.PushConfig{c1, c2} {
		if err := b.s.PutPushConfig(b.ctx, c, nil); err != nil {
			t.Fatalf("PutPushConfig(%s): %v", c.ID, err)
		}
	}
	hasConfigs("with two", true)
	got, err := b.s.GetPushConfig(b.ctx, "t1", "c1")
	if err != nil || !reflect.DeepEqual(*got, c1) {
		t.Fatalf("GetPushConfig = %s, %v; want %s", dump(got), err, dump(c1))
	}
	list, err := b.s.ListPushConfigs(b.ctx, "t1")
	if err != nil {
		t.Fatalf("ListPushConfigs: %v", err)
	}
	slices.SortFunc(list, func(a, b task.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	if !reflect.DeepEqual(list, []task.PushConfig{c1, c2}) {
		t.Errorf("ListPushConfigs = %s", dump(list))
	}

	c1b := c1
	c1b.URL, c1b.Token, c1b.Auth = "https://example.com/new", "", nil
	if err := b.s.PutPushConfig(b.ctx, c1b, nil); err != nil {
		t.Fatalf("PutPushConfig(replace): %v", err)
	}
	if got, err := b.s.GetPushConfig(b.ctx, "t1", "c1"); err != nil || !reflect.DeepEqual(*got, c1b) {
		t.Errorf("after replace: GetPushConfig = %s, %v; want %s", dump(got), err, dump(c1b))
	}
	if list, err := b.s.ListPushConfigs(b.ctx, "t1"); err != nil || len(list) != 2 {
		t.Errorf("after replace: ListPushConfigs = %s, %v; want 2 configs", dump(list), err)
	}

	// Audit entries given with a change commit with it; a refused change
	// writes none.
	before := len(b.audit())
	del := task.AuditInput{Kind: task.AuditPushConfig, TaskID: "t1", Actor: "alice", Data: json.RawMessage(`{"op":"delete"}`)}
	if err := b.s.DeletePushConfig(b.ctx, "t1", "c1", []task.AuditInput{del}); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	_, err = b.s.GetPushConfig(b.ctx, "t1", "c1")
	wantErr(t, "GetPushConfig after delete", err, task.ErrNotFound)
	wantErr(t, "second DeletePushConfig", b.s.DeletePushConfig(b.ctx, "t1", "c1", []task.AuditInput{del}), task.ErrNotFound)
	set := task.AuditInput{Kind: task.AuditPushConfig, TaskID: "missing", Actor: "alice", Data: json.RawMessage(`{"op":"set"}`)}
	wantErr(t, "PutPushConfig with audit for a missing task", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "missing", ID: "c", URL: "https://x", CreatedAt: t0}, []task.AuditInput{set}), task.ErrNotFound)
	log := b.audit()
	checkChain(t, log)
	if len(log) != before+1 || log[len(log)-1].Kind != task.AuditPushConfig || string(log[len(log)-1].Data) != `{"op":"delete"}` {
		t.Fatalf("audit after push config changes: %s", dump(log[before:]))
	}
	if list, err := b.s.ListPushConfigs(b.ctx, "t1"); err != nil || len(list) != 1 || list[0].ID != "c2" {
		t.Errorf("after delete: ListPushConfigs = %s, %v; want [c2]", dump(list), err)
	}

	wantErr(t, "PutPushConfig for a missing task", b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "missing", ID: "c", URL: "https://x", CreatedAt: t0}, nil), task.ErrNotFound)
	if err := b.s.DeletePushConfig(b.ctx, "t1", "c2", nil); err != nil {
		t.Fatalf("DeletePushConfig(c2): %v", err)
	}
	hasConfigs("after the last was deleted", false)
	_, err = b.s.GetPushConfig(b.ctx, "missing", "c1")
	wantErr(t, "GetPushConfig for a missing task", err, task.ErrNotFound)
	if list, err := b.s.ListPushConfigs(b.ctx, "missing"); len(list) != 0 || (err != nil && !errors.Is(err, task.ErrNotFound)) {
		t.Errorf("ListPushConfigs for a missing task = %v, %v; want none", list, err)
	}
}

// testPushBacklog: a new config is owed nothing; a config whose task moves
// on is in the backlog (unless the task changed too recently) until it is
// marked delivered at the task's seq; marks never go back; replacing a
// config makes it current again; pages follow (task id, id).
func testPushBacklog(t *testing.T, b *bundle) {
	backlog := func(before time.Time, afterTask, afterID string, limit int) []task.PushBacklogItem {
		t.Helper()
		got, err := b.s.PushBacklog(b.ctx, task.PushBacklogParams{UpdatedBefore: before, AfterTaskID: afterTask, AfterID: afterID, Limit: limit})
		if err != nil {
			t.Fatalf("PushBacklog: %v", err)
		}
		return got
	}
	mark := func(taskID, id string, seq int) {
		t.Helper()
		if err := b.s.MarkPushDelivered(b.ctx, task.MarkPushParams{TaskID: taskID, ID: id, Seq: seq}); err != nil {
			t.Fatalf("MarkPushDelivered(%s/%s, %d): %v", taskID, id, seq, err)
		}
	}
	later := at(time.Hour)
	queued := b.queued("t1", t0)
	c1 := task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/hook", Token: "tok", Auth: json.RawMessage(`{"scheme":"Bearer"}`), CreatedAt: at(time.Microsecond)}
	if err := b.s.PutPushConfig(b.ctx, c1, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Fatalf("a new config is owed nothing; backlog = %s", dump(got))
	}
	running := b.claim("t1", "w", at(time.Minute), time.Minute)
	if running.Seq <= queued.Seq {
		t.Fatalf("claim did not advance the seq: %d → %d", queued.Seq, running.Seq)
	}
	got := backlog(later, "", "", 10)
	want := []task.PushBacklogItem{{Config: c1, DeliveredSeq: queued.Seq, TaskSeq: running.Seq}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backlog = %s, want %s", dump(got), dump(want))
	}
	if got := backlog(at(time.Minute), "", "", 10); len(got) != 0 {
		t.Errorf("a task updated at UpdatedBefore is left out; backlog = %s", dump(got))
	}
	mark("t1", "c1", running.Seq)
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Errorf("after marking: backlog = %s", dump(got))
	}
	mark("t1", "c1", queued.Seq) // never goes back
	mark("t1", "gone", 99)       // a deleted config is no error
	mark("missing", "c1", 99)
	if got := backlog(later, "", "", 10); len(got) != 0 {
		t.Errorf("a lower mark went back: backlog = %s", dump(got))
	}

	done := b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(2 * time.Minute)})
	b.queued("t2", t0)
	for _, id := range []string{"b", "a"} {
		if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t2", ID: id, URL: "https://example.com/" + id, CreatedAt: t0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	b.claim("t2", "w", at(time.Minute), time.Minute)
	var pages [][2]string
	after := [2]string{}
	for {
		page := backlog(later, after[0], after[1], 1)
		if len(page) == 0 {
			break
		}
		if len(page) != 1 || len(pages) > 5 {
			t.Fatalf("page = %s", dump(page))
		}
		after = [2]string{page[0].Config.TaskID, page[0].Config.ID}
		pages = append(pages, after)
	}
	if want := [][2]string{{"t1", "c1"}, {"t2", "a"}, {"t2", "b"}}; !reflect.DeepEqual(pages, want) {
		t.Errorf("pages = %v, want %v", pages, want)
	}

	// Replacing a config makes it current: it is owed the task's changes
	// from then on.
	if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/new", CreatedAt: at(3 * time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 10); len(got) != 2 || got[0].Config.TaskID != "t2" {
		t.Errorf("after replacing t1/c1 (task at seq %d): backlog = %s", done.Seq, dump(got))
	}

	// An owed config (one sent with a message) is owed the task's latest
	// state at once, even of a task that is finished, until it is marked;
	// so is one that replaces a config as owed.
	owed := task.PushConfig{TaskID: "t1", ID: "o", URL: "https://example.com/owed", CreatedAt: at(4 * time.Minute), Owed: true}
	if err := b.s.PutPushConfig(b.ctx, owed, nil); err != nil {
		t.Fatal(err)
	}
	owed.Owed = false // not stored
	got = backlog(later, "t1", "c1", 1)
	if want := []task.PushBacklogItem{{Config: owed, DeliveredSeq: 0, TaskSeq: done.Seq}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("an owed config of a finished task: backlog = %s, want %s", dump(got), dump(want))
	}
	mark("t1", "o", done.Seq)
	for _, it := range backlog(later, "", "", 10) {
		if it.Config.TaskID == "t1" && it.Config.ID == "o" {
			t.Errorf("after marking the owed config it is still owed: %s", dump(it))
		}
	}
	if err := b.s.PutPushConfig(b.ctx, task.PushConfig{TaskID: "t1", ID: "c1", URL: "https://example.com/c1", CreatedAt: at(5 * time.Minute), Owed: true}, nil); err != nil {
		t.Fatal(err)
	}
	if got := backlog(later, "", "", 1); len(got) != 1 || got[0].Config.ID != "c1" || got[0].DeliveredSeq != 0 {
		t.Errorf("after replacing t1/c1 as owed: backlog = %s", dump(got))
	}
}
