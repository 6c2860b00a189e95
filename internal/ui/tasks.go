package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pactum/pactum/task"
)

// filter is the task list's filter as the form and the URL carry it.
type filter struct {
	State, Agent, Actor, Parent, Since string
}

// query returns the filter as URL query parameters (for links and the
// live stream).
func (f filter) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"state": f.State, "agent": f.Agent, "actor": f.Actor, "parent": f.Parent, "since": f.Since} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// parseSince reads a time as the form's datetime-local input (UTC) or
// RFC 3339 sends it.
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, task.Errorf(task.CodeInvalidArgument, "since %q is not a time such as 2026-11-23T17:00", s)
}

// parseFilter reads the list's filter and page token from q.
func parseFilter(q url.Values) (task.ListParams, filter, error) {
	f := filter{
		State: q.Get("state"), Agent: q.Get("agent"), Actor: q.Get("actor"),
		Parent: q.Get("parent"), Since: q.Get("since"),
	}
	p := task.ListParams{Agent: f.Agent, Actor: f.Actor, ParentTaskID: f.Parent, PageToken: q.Get("page")}
	if f.State != "" {
		s, err := task.ParseState(f.State)
		if err != nil {
			return p, f, task.Errorf(task.CodeInvalidArgument, "unknown state %q", f.State)
		}
		p.States = []task.State{s}
	}
	since, err := parseSince(f.Since)
	if err != nil {
		return p, f, err
	}
	p.UpdatedAfter = since
	return p, f, nil
}

// matches reports whether t passes p's filters (what the live stream
// sends as a row; a task that no longer passes is sent as gone).
func matches(p task.ListParams, t *task.Task) bool {
	return matchesBut(p, t) && (len(p.States) == 0 || slices.Contains(p.States, t.State))
}

// matchesBut reports whether t passes p's filters other than the state's:
// a task that does, but not the state filter, may have left the page's
// rows (it changed state) and is sent as gone; any other is not sent.
func matchesBut(p task.ListParams, t *task.Task) bool {
	return (p.Agent == "" || t.Agent == p.Agent) &&
		(p.Actor == "" || t.Envelope.Actor == p.Actor) &&
		(p.ParentTaskID == "" || t.Envelope.ParentTaskID == p.ParentTaskID) &&
		(p.UpdatedAfter.IsZero() || !t.UpdatedAt.Before(p.UpdatedAfter))
}

type tasksPage struct {
	page
	Filter filter
	Tasks  []*task.Task
	// Next is the query of the next page ("" on the last); Live says the
	// page is the first, which the live stream updates.
	Next   template.URL
	Live   bool
	Events string
	Agents []string
	States []task.State
}

// pageSize is the task list's page size (the core's maximum is 100).
const pageSize = 50

func (u *UI) tasks(w http.ResponseWriter, r *http.Request) {
	ctx := u.begin(w, r, "tasks", "Tasks")
	if ctx == nil {
		return
	}
	p, f, err := parseFilter(r.URL.Query())
	if err != nil {
		u.fail(w, r, err)
		return
	}
	p.PageSize = pageSize
	// The stream catches up from just before the list was read, so that a
	// change between the read and the stream's start is not lost.
	since := time.Now().Add(-time.Second)
	pg, err := u.opts.Coordinator.List(ctx, p)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	data := tasksPage{page: u.pageOf(ctx, "Tasks", "tasks"), Filter: f, Tasks: pg.Tasks, Live: p.PageToken == "", States: task.States()}
	for _, a := range u.opts.Coordinator.Agents() {
		if !a.ChildOnly {
			data.Agents = append(data.Agents, a.Name)
		}
	}
	slices.Sort(data.Agents)
	if pg.NextPageToken != "" {
		q := f.query()
		q.Set("page", pg.NextPageToken)
		data.Next = template.URL("/ui/?" + q.Encode())
	}
	if data.Live {
		q := f.query()
		q.Set("after", since.UTC().Format(time.RFC3339Nano))
		data.Events = "/ui/events?" + q.Encode()
	}
	u.write(w, r, "tasks", data)
}

// Live updates. Each stream subscribes to every task's events through the
// core's broker (a bounded buffer: a subscriber that falls behind is
// dropped, and the stream then tells the page to resync by reloading).
// Events are batched: every Options.Flush the tasks that changed are read
// back through the Coordinator, as the caller, so visibility applies, and
// sent as rendered rows.

// maxPending bounds the tasks one stream batches between two flushes;
// beyond it the page is told to resync rather than the stream reading
// them all.
const maxPending = 500

// heartbeat keeps idle streams (and proxies) alive.
const heartbeat = 15 * time.Second

// liveRow is the data of a row event.
type liveRow struct {
	ID    string `json:"id"`
	State string `json:"state"`
	HTML  string `json:"html,omitempty"`
}

func (u *UI) events(w http.ResponseWriter, r *http.Request) {
	ctx := u.caller(w, r)
	if ctx == nil {
		return
	}
	q := r.URL.Query()
	p, _, err := parseFilter(q)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	after, err := parseSince(q.Get("after"))
	if err != nil {
		u.fail(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	events, stop := u.opts.Coordinator.Broker().Subscribe("")
	defer stop()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return nil
	}
	s := &stream{u: u, ctx: ctx, p: p, send: send, pending: map[string]bool{}}
	// Catch up with what changed since the page was read, oldest first so
	// that the page, prepending, ends with the newest on top.
	if !after.IsZero() {
		cp := p
		cp.PageToken, cp.PageSize = "", task.MaxPageSize
		if cp.UpdatedAfter.Before(after) {
			cp.UpdatedAfter = after
		}
		pg, err := u.opts.Coordinator.List(ctx, cp)
		if err != nil {
			u.log.Warn("dashboard: live catch-up", "err", err)
		} else {
			for _, t := range slices.Backward(pg.Tasks) {
				s.add(t.ID)
			}
		}
	}
	if err := s.flush(); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(u.opts.Flush)
	defer tick.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok || ev.Kind == task.EventResync {
				// Dropped by the broker (or a relay restarted): events may
				// have been missed.
				_ = send("resync", map[string]string{"reason": "missed events"})
				_ = rc.Flush()
				return
			}
			if ev.Kind == task.EventStatus && !s.add(ev.TaskID) {
				_ = send("resync", map[string]string{"reason": "too many changes"})
				_ = rc.Flush()
				return
			}
		case <-tick.C:
			if len(s.order) == 0 {
				continue
			}
			if err := s.flush(); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// stream is one live stream's batch of changed tasks.
type stream struct {
	u       *UI
	ctx     context.Context
	p       task.ListParams
	send    func(event string, v any) error
	order   []string
	pending map[string]bool
}

// add queues a changed task; false when the batch is full.
func (s *stream) add(id string) bool {
	if s.pending[id] {
		return true
	}
	if len(s.order) >= maxPending {
		return false
	}
	s.pending[id] = true
	s.order = append(s.order, id)
	return true
}

// flush reads each queued task as the caller and sends it as a row (or as
// gone when it left the filter or cannot be seen).
func (s *stream) flush() error {
	order := s.order
	s.order, s.pending = nil, map[string]bool{}
	for _, id := range order {
		t, err := s.u.opts.Coordinator.Get(s.ctx, id, 0)
		var te *task.Error
		switch {
		case errors.As(err, &te) && te.Code == task.CodeNotFound:
			continue // another actor's task: nothing is said about it
		case err != nil:
			if s.ctx.Err() != nil {
				return err
			}
			s.u.log.Warn("dashboard: live read", "task", id, "err", err)
			continue
		}
		if !matches(s.p, t) {
			if !matchesBut(s.p, t) {
				continue
			}
			if err := s.send("gone", liveRow{ID: t.ID, State: string(t.State)}); err != nil {
				return err
			}
			continue
		}
		var b strings.Builder
		if err := s.u.pages["tasks"].ExecuteTemplate(&b, "row", t); err != nil {
			return err
		}
		if err := s.send("row", liveRow{ID: t.ID, State: string(t.State), HTML: b.String()}); err != nil {
			return err
		}
	}
	return nil
}
