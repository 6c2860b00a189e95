package ui

import (
	"context"
	"net/http"
	"time"

	"github.com/pactum/pactum/contract"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/workflow"
)

// The tree of a parent's steps is bounded so that one page never reads
// without limit.
const (
	maxTreeDepth = 4
	maxTreeNodes = 200
)

type taskPage struct {
	page
	Task     *task.Task
	Records  []recordView
	Timeline timeline
	Children []*childView
	// TreeCut says the tree was cut at maxTreeNodes.
	TreeCut bool
	Report  *workflow.Report
	Verdict *contract.VerifiedResult
}

// recordView is one transition of the execution record with its
// contract verdict, if a gate recorded one.
type recordView struct {
	task.Record
	Offset  time.Duration // since the first record
	Verdict *contract.VerifiedResult
}

// childView is one step of a parent's tree.
type childView struct {
	Task     *task.Task
	Verdict  *contract.VerifiedResult
	Children []*childView
}

func (u *UI) task(w http.ResponseWriter, r *http.Request) {
	ctx := u.begin(w, r, "task", "Task")
	if ctx == nil {
		return
	}
	id := r.PathValue("id")
	c := u.opts.Coordinator
	t, err := c.Get(ctx, id, -1)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	recs, err := c.Timeline(ctx, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	data := taskPage{page: u.pageOf(ctx, "Task "+t.ID, "tasks"), Task: t}
	for _, rec := range recs {
		rv := recordView{Record: rec, Offset: rec.At.Sub(recs[0].At)}
		rv.Verdict, _ = contract.NewestIn(rec.Evidence)
		data.Records = append(data.Records, rv)
	}
	data.Verdict, _ = contract.Newest(recs)
	data.Timeline = drawTimeline(t, recs, time.Now())
	if data.Report, err = workflow.ReportOf(t); err != nil {
		u.log.Warn("dashboard: report", "task", t.ID, "err", err)
	}
	if t.Children > 0 {
		budget := maxTreeNodes
		data.Children, err = u.tree(ctx, t.ID, 1, &budget)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		data.TreeCut = budget <= 0
	}
	u.write(w, r, "task", data)
}

// tree reads the children of parent, with each one's newest verdict, down
// to maxTreeDepth and at most *budget tasks in all.
func (u *UI) tree(ctx context.Context, parent string, depth int, budget *int) ([]*childView, error) {
	c := u.opts.Coordinator
	kids, err := c.Children(ctx, parent, 0, false)
	if err != nil {
		return nil, err
	}
	var out []*childView
	for _, k := range kids {
		if *budget <= 0 {
			break
		}
		*budget--
		cv := &childView{Task: k}
		if recs, err := c.Timeline(ctx, k.ID); err == nil {
			cv.Verdict, _ = contract.Newest(recs)
		}
		if k.Children > 0 && depth < maxTreeDepth {
			if cv.Children, err = u.tree(ctx, k.ID, depth+1, budget); err != nil {
				return nil, err
			}
		}
		out = append(out, cv)
	}
	return out, nil
}

// timeline is a task's execution record drawn on a time axis (an SVG
// whose geometry is computed here: the page's CSP allows no inline
// style).
type timeline struct {
	Width, Height int
	Segments      []segment
	Ticks         []tick
	Total         time.Duration
}

// segment is the time the task spent in one state.
type segment struct {
	X, W    float64
	TX      float64 // where its label starts
	State   string
	Label   string
	Attempt int
	Title   string
	Failed  bool
}

// tick is a transition's mark on the axis.
type tick struct {
	X     float64
	Label string
	// End says the label ends at X (near the right edge).
	End bool
}

const (
	timelineWidth = 960
	timelineLeft  = 8.0
	timelineRight = 8.0
)

// drawTimeline lays out recs (oldest first) between the first record and
// the task's end (now for a task still running).
func drawTimeline(t *task.Task, recs []task.Record, now time.Time) timeline {
	tl := timeline{Width: timelineWidth, Height: 74}
	if len(recs) == 0 {
		return tl
	}
	start := recs[0].At
	end := t.UpdatedAt
	if !t.State.Terminal() {
		end = now
	}
	if last := recs[len(recs)-1].At; end.Before(last) {
		end = last
	}
	total := end.Sub(start)
	tl.Total = total
	span := float64(timelineWidth) - timelineLeft - timelineRight
	x := func(at time.Time) float64 {
		if total <= 0 {
			return timelineLeft
		}
		return timelineLeft + span*float64(at.Sub(start))/float64(total)
	}
	for i, rec := range recs {
		to := end
		if i+1 < len(recs) {
			to = recs[i+1].At
		}
		x0, x1 := x(rec.At), x(to)
		w := x1 - x0
		if w < 2 {
			w = 2
		}
		failed := rec.To == task.StateFailed || rec.To == task.StateDeadLetter
		for _, ev := range rec.Evidence {
			if ev.Outcome == "fail" || ev.Outcome == "deny" {
				failed = true
			}
		}
		tl.Segments = append(tl.Segments, segment{
			X: x0, W: w, TX: x0 + 4, State: string(rec.To), Attempt: rec.Attempt, Failed: failed,
			Label: string(rec.To),
			Title: string(rec.From) + " → " + string(rec.To) + " at +" + dur(rec.At.Sub(start)) + " (" + dur(to.Sub(rec.At)) + ")",
		})
		tl.Ticks = append(tl.Ticks, tick{X: x0, Label: "+" + dur(rec.At.Sub(start))})
	}
	// The end gets a tick too; labels that would overlap a later one are
	// dropped (the end's is kept), and the last ones are drawn ending at
	// their tick so that they stay inside the picture.
	tl.Ticks = append(tl.Ticks, tick{X: x(end), Label: "+" + dur(total)})
	next := 1e9
	for i := len(tl.Ticks) - 1; i >= 0; i-- {
		tk := &tl.Ticks[i]
		if next-tk.X < 70 {
			tk.Label = ""
			continue
		}
		next = tk.X
		tk.End = tk.X > float64(timelineWidth)-70
	}
	for i := range tl.Segments {
		if tl.Segments[i].W < 60 {
			tl.Segments[i].Label = ""
		}
	}
	return tl
}
