package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// planRunner is the decision logic of a parent: on its first attempt it
// spawns steps, on each wake-up it waits while a child still runs, and
// once every child has ended it finishes with the steps' results.
func planRunner(steps ...task.Child) task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		if len(req.Children) == 0 {
			return &task.Result{Spawn: steps}, nil
		}
		var done []string
		for _, k := range req.Children {
			if !k.State.Terminal() {
				return &task.Result{Wait: true}, nil
			}
			done = append(done, k.Envelope.Step+"="+string(k.State))
		}
		return &task.Result{Artifacts: []task.Artifact{{ID: "steps", Parts: []task.Part{task.TextPart(strings.Join(done, ","))}}}}, nil
	})
}

func step(name, agent, text string) task.Child {
	return task.Child{Step: name, Agent: agent, Input: task.Message{Parts: []task.Part{task.TextPart(text)}}}
}

// familyStore runs a parent task to its end on a real Coordinator over a
// real SQLite file: plan spawns fetch (echo) and nest (sub), nest spawns
// leaf (echo). echo's own pipeline step records a verdict on each of its
// attempts. It returns the store's DSN and the parent's id, with the
// Coordinator stopped and the store closed, for the CLI to read.
func familyStore(t *testing.T) (dsn, parentID string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pactum.db")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	st, err := sqlite.Open(ctx, "sqlite://"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check := task.MiddlewareFunc("check", func(ctx context.Context, a *task.Attempt, next task.Next) (*task.Result, error) {
		res, err := next(ctx)
		if err == nil && len(res.Artifacts) > 0 {
			a.AddEvidence(task.Evidence{Kind: task.EvidenceVerdict, Outcome: "pass", Message: "the step produced an artifact"})
		}
		return res, err
	})
	echo := task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{ID: "echo", Parts: []task.Part{task.TextPart(req.Message.Text())}}}}, nil
	})
	c, err := task.NewCoordinator(task.Options{
		Store: st,
		Agents: []task.AgentSpec{
			{Name: "plan", Runner: planRunner(step("fetch", "echo", "fetch it"), step("nest", "sub", "go deeper"))},
			{Name: "sub", Runner: planRunner(step("leaf", "echo", "leaf work"))},
			{Name: "echo", Runner: echo, Middleware: []task.Middleware{check}},
		},
		PollInterval: 20 * time.Millisecond,
		Node:         "test-node",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	res, err := c.SubmitAndWait(ctx, task.SubmitRequest{Agent: "plan", Envelope: task.Envelope{
		Actor: "alice", Input: task.Message{ID: "plan-input", Parts: []task.Part{task.TextPart("run the plan")}},
	}})
	if err != nil {
		t.Fatalf("the parent did not finish: %v", err)
	}
	if res.Task.State != task.StateSucceeded {
		t.Fatalf("parent is %s (%s: %s), want succeeded", res.Task.State, res.Task.ErrorCode, res.Task.Reason)
	}
	return "sqlite://" + path, res.Task.ID
}

var uuidRE = regexp.MustCompile(`^[0-9a-f-]{36}$`)

// TestTasksParentAndChildren: the tasks commands show a parent's children
// (list --parent, get, get --json), a child's parent, and the timeline of
// the whole tree with the evidence each record stores.
//
// It needs the store drivers' support for children and evidence.
func TestTasksParentAndChildren(t *testing.T) {
	t.Parallel()
	dsn, parentID := familyStore(t)

	// list --parent: the parent's own children, oldest first, with steps.
	out := mustRun(t, "tasks", "list", "--parent", parentID, "--store", dsn)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "STEP ") {
		t.Fatalf("tasks list --parent printed:\n%s\nwant a header with STEP and two children", out)
	}
	ids := map[string]string{} // step → task id
	for i, wantStep := range []string{"fetch", "nest"} {
		f := strings.Fields(lines[i+1])
		wantAgent := map[string]string{"fetch": "echo", "nest": "sub"}[wantStep]
		if len(f) < 4 || f[0] != wantStep || !uuidRE.MatchString(f[1]) || f[2] != wantAgent || f[3] != "succeeded" {
			t.Fatalf("tasks list --parent row %d = %q, want step %s, agent %s, succeeded", i, lines[i+1], wantStep, wantAgent)
		}
		ids[wantStep] = f[1]
	}
	var page task.TaskPage
	if err := json.Unmarshal([]byte(mustRun(t, "tasks", "list", "--parent", ids["nest"], "--json", "--store", dsn)), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].Envelope.ParentTaskID != ids["nest"] || page.Tasks[0].Envelope.Step != "leaf" {
		t.Fatalf("tasks list --parent nest --json = %+v, want the leaf step", page)
	}
	ids["leaf"] = page.Tasks[0].ID

	// get: a parent shows its tree, a child its parent and step.
	out = mustRun(t, "tasks", "get", parentID, "--store", dsn)
	if !strings.Contains(out, "\nchildren 2\n") {
		t.Errorf("tasks get of the parent does not say \"children 2\":\n%s", out)
	}
	tree := out[strings.Index(out, "\nchildren 2\n")+len("\nchildren 2\n"):]
	rows := strings.Split(strings.TrimRight(tree, "\n"), "\n")
	want := []struct{ indent, step, agent string }{{"  ", "fetch", "echo"}, {"  ", "nest", "sub"}, {"    ", "leaf", "echo"}}
	if len(rows) != len(want)+1 || strings.Fields(rows[0])[0] != "STEP" {
		t.Fatalf("tasks get tree:\n%s\nwant a header and %d rows", tree, len(want))
	}
	for i, w := range want {
		f := strings.Fields(rows[i+1])
		if !strings.HasPrefix(rows[i+1], w.indent+w.step+" ") || len(f) < 5 || f[1] != ids[w.step] || f[2] != w.agent || f[3] != "succeeded" || f[4] != "1/3" {
			t.Errorf("tree row %q, want %q indented by %d, task %s, agent %s, succeeded, 1/3", rows[i+1], w.step, len(w.indent), ids[w.step], w.agent)
		}
	}
	// Each child's end that found the parent waiting woke it: how often
	// depends on how the children's ends fell, so count the record.
	recs := parentRecords(t, dsn, parentID)
	wakes := 0
	for _, r := range recs {
		if r.From == task.StateWaiting && r.To == task.StateQueued {
			wakes++
		}
	}
	wantWakes := " in all, 1 wake-up by a child)\n"
	if wakes != 1 {
		wantWakes = " in all, " + strconv.Itoa(wakes) + " wake-ups by children)\n"
	}
	if wakes == 0 || !strings.Contains(out, wantWakes) {
		t.Errorf("tasks get of the parent woken %d times does not say %q:\n%s", wakes, wantWakes, out)
	}
	out = mustRun(t, "tasks", "get", ids["leaf"], "--store", dsn)
	if !strings.Contains(out, "\nparent   "+ids["nest"]+" (step leaf)\n") {
		t.Errorf("tasks get of the leaf does not name its parent and step:\n%s", out)
	}

	// get --json: the task object, plus its timeline and its children.
	var node struct {
		ID         string            `json:"id"`
		State      task.State        `json:"state"`
		Timeline   []task.Record     `json:"timeline"`
		Children   int               `json:"children"`
		ChildTasks []json.RawMessage `json:"childTasks"`
	}
	raw := mustRun(t, "tasks", "get", parentID, "--json", "--store", dsn)
	if err := json.Unmarshal([]byte(raw), &node); err != nil {
		t.Fatalf("tasks get --json: %v\n%s", err, raw)
	}
	if node.ID != parentID || node.State != task.StateSucceeded || len(node.Timeline) == 0 || node.Timeline[0].To != task.StateValidated || node.Children != 2 || len(node.ChildTasks) != 2 {
		t.Fatalf("tasks get --json = id %s, state %s, %d records, %d children counted, %d listed", node.ID, node.State, len(node.Timeline), node.Children, len(node.ChildTasks))
	}
	type kid struct {
		task.Task
		Timeline   []task.Record `json:"timeline"`
		ChildTasks []struct {
			task.Task
			Timeline []task.Record `json:"timeline"`
		} `json:"childTasks"`
	}
	var fetch, nest kid
	if err := json.Unmarshal(node.ChildTasks[0], &fetch); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(node.ChildTasks[1], &nest); err != nil {
		t.Fatal(err)
	}
	if fetch.ID != ids["fetch"] || fetch.Envelope.Step != "fetch" || len(fetch.Artifacts) != 1 || len(fetch.History) == 0 || len(fetch.ChildTasks) != 0 {
		t.Errorf("children[0] = %+v, want fetch with its artifact, history and no children", fetch.Task)
	}
	if !hasEvidence(fetch.Timeline, task.StateSucceeded, "check", "pass") {
		t.Errorf("fetch's timeline %+v has no check evidence on its success", fetch.Timeline)
	}
	if nest.ID != ids["nest"] || nest.Children != 1 || len(nest.ChildTasks) != 1 || nest.ChildTasks[0].ID != ids["leaf"] || len(nest.ChildTasks[0].Timeline) == 0 {
		t.Errorf("children[1] = %+v, want nest with the leaf under it", nest)
	}

	// timeline: the parent's records, then each child's under a header,
	// the evidence under the record that stores it.
	out = mustRun(t, "tasks", "timeline", parentID, "--store", dsn)
	own := strings.Split(out[:strings.Index(out, "\n\n")], "\n")
	if len(own) != len(recs)+1 {
		t.Errorf("the parent's table has %d lines, want a header and %d records:\n%s", len(own), len(recs), out)
	}
	for i, r := range recs {
		if f := strings.Fields(own[min(i+1, len(own)-1)]); len(f) < 4 || f[0] != strconv.Itoa(r.Seq) || f[2] != string(r.From) || f[3] != string(r.To) {
			t.Errorf("parent's timeline row %d = %q, want seq %d %s → %s", i+1, own[min(i+1, len(own)-1)], r.Seq, r.From, r.To)
		}
	}
	for _, want := range []string{
		"\n  step fetch: task " + ids["fetch"] + " (agent echo, succeeded, attempt 1 of 3)\n  SEQ ",
		"\n  step nest: task " + ids["nest"] + " (agent sub, succeeded, ",
		"\n    step leaf: task " + ids["leaf"] + " (agent echo, succeeded, attempt 1 of 3)\n    SEQ ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks timeline lacks %q:\n%s", want, out)
		}
	}
	// The evidence line follows the record of the success it led to: fetch's
	// one level in, the leaf's two levels in; the parent's and nest's
	// successes have none.
	var evidenceAt []int
	tl := strings.Split(out, "\n")
	for i, line := range tl[:len(tl)-1] {
		if f := strings.Fields(line); len(f) >= 4 && f[3] == "succeeded" && strings.TrimSpace(tl[i+1]) == "evidence check verdict: pass: the step produced an artifact" {
			evidenceAt = append(evidenceAt, len(tl[i+1])-len(strings.TrimLeft(tl[i+1], " ")))
		}
	}
	if len(evidenceAt) != 2 || evidenceAt[0] != 6 || evidenceAt[1] != 8 {
		t.Errorf("evidence lines under successes indented %v, want [6 8] (fetch, leaf):\n%s", evidenceAt, out)
	}

	// timeline --json: one list of records, the parent's first, then its
	// descendants', each naming its parent and step.
	var entries []struct {
		task.Record
		ParentTaskID string `json:"parentTaskId"`
		Step         string `json:"step"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "tasks", "timeline", parentID, "--json", "--store", dsn)), &entries); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range entries {
		key := e.TaskID + " " + e.ParentTaskID + " " + e.Step
		if len(order) == 0 || order[len(order)-1] != key {
			order = append(order, key)
		}
	}
	wantOrder := []string{parentID + "  ", ids["fetch"] + " " + parentID + " fetch", ids["nest"] + " " + parentID + " nest", ids["leaf"] + " " + ids["nest"] + " leaf"}
	if strings.Join(order, "|") != strings.Join(wantOrder, "|") {
		t.Errorf("timeline --json runs of records = %q, want %q", order, wantOrder)
	}
	var leafRecs []task.Record
	for _, e := range entries {
		if e.TaskID == ids["leaf"] {
			leafRecs = append(leafRecs, e.Record)
		}
	}
	if !hasEvidence(leafRecs, task.StateSucceeded, "check", "pass") {
		t.Errorf("the leaf's records in timeline --json carry no check evidence: %+v", leafRecs)
	}
}

// parentRecords reads a task's execution record through `tasks timeline
// --json`, leaving out its children's.
func parentRecords(t *testing.T, dsn, id string) []task.Record {
	t.Helper()
	var all []task.Record
	if err := json.Unmarshal([]byte(mustRun(t, "tasks", "timeline", id, "--json", "--store", dsn)), &all); err != nil {
		t.Fatal(err)
	}
	var own []task.Record
	for _, r := range all {
		if r.TaskID == id {
			own = append(own, r)
		}
	}
	if len(own) == 0 {
		t.Fatalf("task %s has no records", id)
	}
	return own
}

// hasEvidence reports whether the record entering to carries evidence of
// step with outcome.
func hasEvidence(recs []task.Record, to task.State, step, outcome string) bool {
	for _, r := range recs {
		if r.To != to {
			continue
		}
		for _, e := range r.Evidence {
			if e.Step == step && e.Outcome == outcome && e.Kind == task.EvidenceVerdict {
				return true
			}
		}
	}
	return false
}
