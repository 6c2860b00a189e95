package ui

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// Workflows.

type workflowsPage struct {
	page
	// Selected is the workflow whose runs are paged ("" shows the newest
	// runs of each).
	Selected  string
	Workflows []workflowRuns
	Next      template.URL
}

type workflowRuns struct {
	Name string
	Runs []runView
}

type runView struct {
	Task   *task.Task
	Report *workflow.Report
}

// runsPerWorkflow is how many runs of each workflow the overview shows.
const runsPerWorkflow = 5

func (u *UI) workflows(w http.ResponseWriter, r *http.Request) {
	ctx := u.begin(w, r, "workflows", "Workflows")
	if ctx == nil {
		return
	}
	c := u.opts.Coordinator
	prefix := workflow.RunAgent("")
	var names []string
	for _, a := range c.Agents() {
		if name, ok := strings.CutPrefix(a.Name, prefix); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	q := r.URL.Query()
	data := workflowsPage{page: u.pageOf(ctx, "Workflows", "workflows"), Selected: q.Get("workflow")}
	if data.Selected != "" && !slices.Contains(names, data.Selected) {
		http.Error(w, "no workflow named "+strconv.Quote(data.Selected), http.StatusNotFound)
		return
	}
	for _, name := range names {
		if data.Selected != "" && name != data.Selected {
			continue
		}
		p := task.ListParams{Agent: workflow.RunAgent(name), IncludeArtifacts: true, PageSize: runsPerWorkflow}
		if data.Selected != "" {
			p.PageSize, p.PageToken = 20, q.Get("page")
		}
		pg, err := c.List(ctx, p)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		wr := workflowRuns{Name: name}
		for _, t := range pg.Tasks {
			rep, err := workflow.ReportOf(t)
			if err != nil {
				u.log.Warn("dashboard: report", "task", t.ID, "err", err)
			}
			wr.Runs = append(wr.Runs, runView{Task: t, Report: rep})
		}
		if data.Selected != "" && pg.NextPageToken != "" {
			data.Next = template.URL("/ui/workflows?workflow=" + url.QueryEscape(name) + "&page=" + url.QueryEscape(pg.NextPageToken))
		}
		data.Workflows = append(data.Workflows, wr)
	}
	u.write(w, r, "workflows", data)
}

// Audit.

type auditPage struct {
	page
	Head     *audit.Head
	Verified *audit.Report
	VerifyAt time.Time
	TookMs   int64
	// TaskID names the task whose entries are listed ("" for the newest
	// entries); Entries are newest first.
	TaskID  string
	Entries []task.AuditEntry
	// Older is the query of the next (older) page of entries.
	Older template.URL
	// Scanned says the task's entries were searched among this many
	// entries, and Cut that the search stopped at its bound.
	Scanned int
	Cut     bool
}

// auditPageSize is how many entries a page of the audit log shows;
// maxAuditScan bounds the entries read to find one task's.
const (
	auditPageSize = 50
	maxAuditScan  = 20000
)

func (u *UI) audit(w http.ResponseWriter, r *http.Request) {
	ctx := u.begin(w, r, "audit", "Audit")
	if ctx == nil {
		return
	}
	st := u.opts.Coordinator.Store()
	q := r.URL.Query()
	data := auditPage{page: u.pageOf(ctx, "Audit", "audit"), TaskID: q.Get("task")}
	var headSeq int64
	if hr, ok := st.(audit.HeadReader); ok {
		seq, hash, err := hr.AuditHead(ctx)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		data.Head, headSeq = &audit.Head{Seq: seq, Hash: hash}, seq
	}
	if q.Get("verify") != "" {
		start := time.Now()
		rep, err := audit.Verify(ctx, st)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		data.Verified, data.VerifyAt, data.TookMs = rep, start, time.Since(start).Milliseconds()
		if data.Head == nil {
			headSeq = rep.Head.Seq
		}
	}
	switch {
	case data.TaskID != "":
		// The task is read through the Coordinator first: a caller sees
		// only the entries of a task it may see.
		t, err := u.opts.Coordinator.Get(ctx, data.TaskID, 0)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		entries, scanned, cut, err := taskEntries(ctx, st, t, headSeq)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		slices.Reverse(entries)
		data.Entries, data.Scanned, data.Cut = entries, scanned, cut
	case task.Caller(ctx) == "":
		// The newest entries, a page at a time by sequence number. With
		// authentication the log's entries name other actors' tasks, so
		// only a task's own entries are listed.
		before := headSeq + 1
		if b, err := strconv.ParseInt(q.Get("before"), 10, 64); err == nil && b > 0 && b <= before {
			before = b
		}
		after := max(before-1-auditPageSize, 0)
		entries, err := st.AuditEntries(ctx, after, int(before-1-after))
		if err != nil {
			u.fail(w, r, err)
			return
		}
		slices.Reverse(entries)
		data.Entries = entries
		if after > 0 {
			data.Older = template.URL("/ui/audit?before=" + strconv.FormatInt(after+1, 10))
		}
	}
	u.write(w, r, "audit", data)
}

// taskEntries finds the audit entries of t: entries are sealed in order,
// so the first one at or after the task's creation (less a second for
// clocks of other nodes) is found by bisection on the sequence numbers,
// and the log is read from there until past the task's last update, at
// most maxAuditScan entries.
func taskEntries(ctx context.Context, st task.Store, t *task.Task, head int64) (out []task.AuditEntry, scanned int, cut bool, err error) {
	from := t.CreatedAt.Add(-time.Second)
	until := t.UpdatedAt.Add(time.Second)
	lo, hi := int64(0), head // the answer, as "after", is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, err := st.AuditEntries(ctx, mid, 1)
		if err != nil {
			return nil, 0, false, err
		}
		if len(e) == 0 || !e[0].At.Before(from) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	after := lo
	for scanned < maxAuditScan {
		batch, err := st.AuditEntries(ctx, after, 500)
		if err != nil {
			return nil, scanned, false, err
		}
		if len(batch) == 0 {
			return out, scanned, false, nil
		}
		for _, e := range batch {
			scanned++
			if e.At.After(until) {
				return out, scanned, false, nil
			}
			if e.TaskID == t.ID {
				out = append(out, e)
			}
		}
		after = batch[len(batch)-1].Seq
	}
	return out, scanned, true, nil
}

// Agents.

type agentsPage struct {
	page
	Agents []agentView
}

type agentView struct {
	Spec    task.AgentSpec
	Kind    string
	Runtime string
	Card    string
	CardURL string
	// Of the newest tasks read (at most statsWindow): how many settled,
	// how many succeeded, and the latency of the successes.
	Recent, Settled, Succeeded int
	Rate                       string
	P50, P95                   time.Duration
}

// statsWindow is how many of an agent's newest tasks its figures are
// computed from: one page of the core's list.
const statsWindow = task.MaxPageSize

func (u *UI) agents(w http.ResponseWriter, r *http.Request) {
	ctx := u.begin(w, r, "agents", "Agents")
	if ctx == nil {
		return
	}
	c := u.opts.Coordinator
	data := agentsPage{page: u.pageOf(ctx, "Agents", "agents")}
	base := "http://" + r.Host
	if r.TLS != nil {
		base = "https://" + r.Host
	}
	for _, spec := range c.Agents() {
		if spec.ChildOnly {
			continue
		}
		av := agentView{Spec: spec, Runtime: u.opts.Runtimes[spec.Name], Kind: "agent"}
		if strings.HasPrefix(spec.Name, workflow.RunAgent("")) {
			av.Kind = "workflow"
		} else if av.Runtime == "" {
			av.Kind = "contract or code"
		}
		if u.opts.Card != nil {
			if card, ok := u.opts.Card(spec.Name, base); ok {
				av.Card = prettyJSON(card)
				av.CardURL = "/agents/" + spec.Name + "/.well-known/agent-card.json"
			}
		}
		pg, err := c.List(ctx, task.ListParams{Agent: spec.Name, PageSize: statsWindow})
		if err != nil {
			u.fail(w, r, err)
			return
		}
		var lat []time.Duration
		for _, t := range pg.Tasks {
			av.Recent++
			switch t.State {
			case task.StateSucceeded:
				av.Settled++
				av.Succeeded++
				lat = append(lat, t.UpdatedAt.Sub(t.CreatedAt))
			case task.StateFailed, task.StateDeadLetter:
				av.Settled++
			}
		}
		if av.Settled > 0 {
			av.Rate = strconv.Itoa(av.Succeeded*100/av.Settled) + "%"
		}
		if len(lat) > 0 {
			slices.Sort(lat)
			av.P50 = lat[(len(lat)-1)*50/100]
			av.P95 = lat[(len(lat)-1)*95/100]
		}
		data.Agents = append(data.Agents, av)
	}
	slices.SortFunc(data.Agents, func(a, b agentView) int { return strings.Compare(a.Spec.Name, b.Spec.Name) })
	u.write(w, r, "agents", data)
}
