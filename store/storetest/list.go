package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

func testGetTaskHistory(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	var want []task.Message
	want = append(want, b.get("t1").History...)
	for i := range 4 {
		m := task.Message{ID: fmt.Sprintf("m%d", i), Role: task.RoleAgent, Parts: []task.Part{task.TextPart(fmt.Sprint(i))}}
		want = append(want, m)
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateInputRequired, Messages: []task.Message{m}, Now: t0})
		b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInputRequired, To: task.StateQueued, Now: t0})
		b.claim("t1", "w", t0, time.Minute)
	}
	if len(want) != 5 {
		t.Fatalf("setup: %d messages", len(want))
	}
	for _, tc := range []struct {
		n    int
		want []task.Message
	}{{-1, want}, {0, nil}, {1, want[4:]}, {2, want[3:]}, {5, want}, {10, want}} {
		got, err := b.s.GetTask(b.ctx, "t1", tc.n)
		if err != nil {
			t.Fatalf("GetTask(%d): %v", tc.n, err)
		}
		if len(got.History) != len(tc.want) || (len(tc.want) > 0 && !reflect.DeepEqual(got.History, tc.want)) {
			t.Errorf("GetTask(historyLength %d).History = %s\nwant %s", tc.n, dump(got.History), dump(tc.want))
		}
	}
}

func testGetTaskNotFound(t *testing.T, b *bundle) {
	_, err := b.s.GetTask(b.ctx, "missing", -1)
	wantErr(t, "GetTask of a missing task", err, task.ErrNotFound)
}

func testListFilters(t *testing.T, b *bundle) {
	type row struct {
		id, ctx, agent, actor string
		state                 task.State
	}
	rows := []row{
		{"t1", "c1", "echo", "alice", task.StateQueued},
		{"t2", "c1", "echo", "bob", task.StateRequested},
		{"t3", "c2", "code", "alice", task.StateQueued},
		{"t4", "c2", "code", "bob", task.StateCanceled},
		{"t5", "c2", "echo", "alice", task.StateValidated},
	}
	for i, r := range rows {
		path := map[task.State][]task.State{
			task.StateQueued:    {task.StateValidated, task.StateQueued},
			task.StateRequested: nil,
			task.StateCanceled:  {task.StateCanceled},
			task.StateValidated: {task.StateValidated},
		}[r.state]
		b.create(spec{id: r.id, context: r.ctx, agent: r.agent, actor: r.actor, steps: path, now: at(time.Duration(i) * time.Second)})
	}
	// t1 moves later: UpdatedAfter finds it.
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateQueued, To: task.StateCanceled, Now: at(time.Hour)})

	for _, tc := range []struct {
		name string
		p    task.ListParams
		want []string
	}{
		{"all", task.ListParams{}, []string{"t5", "t4", "t3", "t2", "t1"}},
		{"context", task.ListParams{ContextID: "c1"}, []string{"t2", "t1"}},
		{"agent", task.ListParams{Agent: "code"}, []string{"t4", "t3"}},
		{"actor", task.ListParams{Actor: "alice"}, []string{"t5", "t3", "t1"}},
		{"states", task.ListParams{States: []task.State{task.StateQueued, task.StateCanceled}}, []string{"t4", "t3", "t1"}},
		{"one state", task.ListParams{States: []task.State{task.StateValidated}}, []string{"t5"}},
		{"updated after", task.ListParams{UpdatedAfter: at(3 * time.Second)}, []string{"t5", "t4", "t1"}},
		{"combined", task.ListParams{ContextID: "c2", Actor: "alice", States: []task.State{task.StateQueued}}, []string{"t3"}},
		{"no match", task.ListParams{ContextID: "c3"}, nil},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil {
			t.Errorf("%s: ListTasks: %v", tc.name, err)
			continue
		}
		if got := ids(page.Tasks); !slices.Equal(got, tc.want) || page.TotalSize != len(tc.want) || page.NextPageToken != "" {
			t.Errorf("%s: ListTasks = %v (total %d, next %q), want %v", tc.name, got, page.TotalSize, page.NextPageToken, tc.want)
		}
	}
}

// testListPagination walks pages, with creation times shared between tasks
// (ties are ordered by ID, descending), and checks no task is repeated or
// missed.
func testListPagination(t *testing.T, b *bundle) {
	const n = 23
	var want, queued []string
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		steps := []task.State{task.StateValidated}
		if i%3 == 0 {
			steps = append(steps, task.StateQueued)
			queued = append(queued, id)
		}
		b.create(spec{id: id, steps: steps, now: at(time.Duration(i/4) * time.Second)})
		want = append(want, id)
	}
	// Newest first: t22 … t00, tasks created in the same microsecond by ID,
	// descending.
	slices.Reverse(want)
	slices.Reverse(queued)
	walk := func(p task.ListParams, want []string) {
		t.Helper()
		var got []string
		pages := 0
		for {
			page, err := b.s.ListTasks(b.ctx, p)
			if err != nil {
				t.Fatalf("ListTasks page %d: %v", pages, err)
			}
			pages++
			if page.TotalSize != len(want) {
				t.Errorf("page %d: TotalSize %d, want %d", pages, page.TotalSize, len(want))
			}
			if len(page.Tasks) > p.PageSize {
				t.Fatalf("page %d has %d tasks, page size %d", pages, len(page.Tasks), p.PageSize)
			}
			got = append(got, ids(page.Tasks)...)
			if page.NextPageToken == "" {
				break
			}
			if pages > len(want) {
				t.Fatalf("more than %d pages", len(want))
			}
			p.PageToken = page.NextPageToken
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages gave %v\nwant %v", got, want)
		}
		if wantPages := max(1, (len(want)+p.PageSize-1)/p.PageSize); pages != wantPages {
			t.Errorf("%d pages, want %d", pages, wantPages)
		}
	}
	walk(task.ListParams{PageSize: 5}, want)
	walk(task.ListParams{PageSize: 1}, want)
	walk(task.ListParams{PageSize: n}, want)
	walk(task.ListParams{PageSize: 3, States: []task.State{task.StateQueued}}, queued)

	// A page token stays valid while tasks are added in front of it.
	page, err := b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	b.create(spec{id: "newest", now: at(time.Hour)})
	page, err = b.s.ListTasks(b.ctx, task.ListParams{PageSize: 10, PageToken: page.NextPageToken})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(page.Tasks); !slices.Equal(got, want[10:20]) {
		t.Errorf("second page after an insert = %v, want %v", got, want[10:20])
	}
}

func testListHistoryArtifacts(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	m := task.Message{ID: "reply", Role: task.RoleAgent, Parts: []task.Part{task.TextPart("done")}}
	art := task.Artifact{ID: "a1", Parts: []task.Part{task.TextPart("result")}}
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Messages: []task.Message{m}, Artifacts: []task.Artifact{art}, Now: t0})
	for _, tc := range []struct {
		p        task.ListParams
		history  []string
		artifact bool
	}{
		{task.ListParams{HistoryLength: 0}, nil, false},
		{task.ListParams{HistoryLength: -1}, []string{"m-t1", "reply"}, false},
		{task.ListParams{HistoryLength: 1, IncludeArtifacts: true}, []string{"reply"}, true},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil || len(page.Tasks) != 1 {
			t.Fatalf("ListTasks(%+v) = %v, %v", tc.p, page, err)
		}
		tk := page.Tasks[0]
		var got []string
		for _, m := range tk.History {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, tc.history) {
			t.Errorf("HistoryLength %d: history %v, want %v", tc.p.HistoryLength, got, tc.history)
		}
		if tc.artifact != (len(tk.Artifacts) == 1) || (tc.artifact && !reflect.DeepEqual(tk.Artifacts[0], art)) {
			t.Errorf("IncludeArtifacts %v: artifacts %s", tc.p.IncludeArtifacts, dump(tk.Artifacts))
		}
	}
}

func testListBadToken(t *testing.T, b *bundle) {
	b.create(spec{id: "t1"})
	for _, tok := range []string{"not a token!", "%%%", "bm8tc2xhc2g", "LTEv"} {
		_, err := b.s.ListTasks(b.ctx, task.ListParams{PageToken: tok})
		if err == nil {
			t.Errorf("ListTasks with the malformed page token %q succeeded", tok)
			continue
		}
		// The caller sees this message: a domain error that names no driver.
		if !errors.Is(err, task.ErrBadPageToken) || task.ErrorCode(err) != task.CodeInvalidArgument {
			t.Errorf("ListTasks with the malformed page token %q: err = %v, want task.ErrBadPageToken", tok, err)
		}
	}
}

func testRecords(t *testing.T, b *bundle) {
	b.reach("t1", task.StateInProgress)
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateQueued, Now: at(time.Second), Reason: "retry", ErrorCode: task.CodeTimeout})
	b.claim("t1", "w", at(2*time.Second), time.Minute)
	b.transition(task.TransitionParams{TaskID: "t1", From: task.StateInProgress, To: task.StateSucceeded, Now: at(3 * time.Second), PolicyVersion: "p2"})
	recs := b.records("t1")
	want := []struct {
		from, to task.State
		attempt  int
		at       time.Time
	}{
		{task.StateRequested, task.StateValidated, 0, t0},
		{task.StateValidated, task.StateQueued, 0, t0},
		{task.StateQueued, task.StateInProgress, 1, t0},
		{task.StateInProgress, task.StateQueued, 1, at(time.Second)},
		{task.StateQueued, task.StateInProgress, 2, at(2 * time.Second)},
		{task.StateInProgress, task.StateSucceeded, 2, at(3 * time.Second)},
	}
	if len(recs) != len(want) {
		t.Fatalf("Records = %s, want %d records", dump(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.TaskID != "t1" || r.Seq != i+1 || r.From != w.from || r.To != w.to || r.Attempt != w.attempt || !r.At.Equal(w.at) {
			t.Errorf("record %d = %s, want %+v", i, dump(r), w)
		}
	}
	if r := recs[3]; r.Reason != "retry" || r.ErrorCode != task.CodeTimeout {
		t.Errorf("retry record = %s", dump(r))
	}
	if r := recs[5]; r.PolicyVersion != "p2" {
		t.Errorf("last record = %s", dump(r))
	}
	if tk := b.get("t1"); tk.Seq != len(recs) {
		t.Errorf("Task.Seq = %d, want the last record's %d", tk.Seq, len(recs))
	}
}

// testListRejected: the Rejected filter tells refused tasks from failed ones
// in the store, so pages and TotalSize are exact.
func testListRejected(t *testing.T, b *bundle) {
	for i, id := range []string{"r1", "f1", "r2", "q1"} {
		in := newTask(spec{id: id})
		steps := []task.Step{{To: task.StateValidated}, {To: task.StateQueued}}
		switch id[0] {
		case 'r':
			steps = []task.Step{{To: task.StateFailed, Rejected: true, ErrorCode: task.CodeForbidden}}
		case 'f':
			steps = []task.Step{{To: task.StateValidated}, {To: task.StateFailed, ErrorCode: task.CodePolicyDenied}}
		}
		if _, err := b.s.CreateTask(b.ctx, task.CreateParams{Task: in, Steps: steps, Now: at(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	for _, tc := range []struct {
		p    task.ListParams
		want []string
	}{
		{task.ListParams{Rejected: &yes}, []string{"r2", "r1"}},
		{task.ListParams{Rejected: &no, States: []task.State{task.StateFailed}}, []string{"f1"}},
		{task.ListParams{Rejected: &no}, []string{"q1", "f1"}},
		{task.ListParams{Rejected: &yes, PageSize: 1}, []string{"r2"}},
	} {
		page, err := b.s.ListTasks(b.ctx, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tk := range page.Tasks {
			got = append(got, tk.ID)
		}
		wantTotal := 2
		if tc.p.States != nil {
			wantTotal = 1
		}
		if !slices.Equal(got, tc.want) || page.TotalSize != wantTotal {
			t.Errorf("ListTasks(rejected=%v states=%v size=%d) = %v total %d; want %v total %d", *tc.p.Rejected, tc.p.States, tc.p.PageSize, got, page.TotalSize, tc.want, wantTotal)
		}
	}
}
