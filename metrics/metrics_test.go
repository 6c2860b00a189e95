package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/metrics"
	"github.com/pactum/pactum/store"
	_ "github.com/pactum/pactum/store/sqlite"
	"github.com/pactum/pactum/task"
)

// bundle is what a metrics test needs: a real SQLite store, the metrics
// over it and a Coordinator that reports to them.
type bundle struct {
	store   task.Store
	metrics *metrics.Metrics
	coord   *task.Coordinator
	logs    *syncbuf.Buffer
}

func setup(t *testing.T, agents ...task.AgentSpec) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{store: st, logs: &syncbuf.Buffer{}}
	b.metrics = metrics.New(st, slog.New(slog.NewTextHandler(b.logs, nil)))
	b.coord, err = task.NewCoordinator(task.Options{
		Store: st, Agents: agents, Observer: b.metrics, PollInterval: 10 * time.Millisecond, Node: "metrics-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.coord.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.stop(t)
		_ = st.Close()
	})
	return b
}

// stop stops the Coordinator. It returns once every attempt has been
// recorded, and with it reported to the Observer.
func (b *bundle) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.coord.Stop(ctx); err != nil {
		t.Fatalf("stop coordinator: %v", err)
	}
}

// run submits one task to agent and waits (bounded) until it is terminal.
func (b *bundle) run(t *testing.T, agent, input string) *task.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := b.coord.Submit(ctx, task.SubmitRequest{Agent: agent, Envelope: task.Envelope{
		Actor: "tester", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart(input)}},
	}})
	if err != nil {
		t.Fatalf("submit to %s: %v", agent, err)
	}
	tk, err := b.coord.Wait(ctx, res.Task.ID)
	if err != nil {
		t.Fatalf("wait for %s: %v", res.Task.ID, err)
	}
	return tk
}

// scrape GETs the metrics handler over HTTP and parses the exposition.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s\n%s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want the text exposition format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse exposition: %v\n%s", err, body)
	}
	return fams
}

// series flattens one family into "label=value,…" → value (a histogram's
// value is its sample count). It fails when the family is missing or has
// another type.
func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType) map[string]float64 {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s in the exposition", name)
	}
	if fam.GetType() != typ {
		t.Fatalf("%s has type %s, want %s", name, fam.GetType(), typ)
	}
	if fam.GetHelp() == "" {
		t.Errorf("%s has no help text", name)
	}
	out := map[string]float64{}
	for _, m := range fam.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		key := strings.Join(labels, ",")
		switch typ {
		case dto.MetricType_COUNTER:
			out[key] = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			out[key] = m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			out[key] = float64(m.GetHistogram().GetSampleCount())
		}
	}
	return out
}

// equal reports the differences between got and want.
func equal(t *testing.T, name string, got, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s{%s} = %v (present: %v), want %v", name, k, g, ok, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s{%s} = %v, want no such series", name, k, g)
		}
	}
}

func okRunner() task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return &task.Result{Artifacts: []task.Artifact{{Parts: []task.Part{task.TextPart("ok: " + req.Message.Text())}}}}, nil
	})
}

func failingRunner() task.Runner {
	return task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return nil, fmt.Errorf("attempt %d: upstream unavailable", req.Attempt)
	})
}

// fastRetry gives three attempts with no noticeable backoff.
var fastRetry = task.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}

func TestMetricsAfterTasks(t *testing.T) {
	t.Parallel()
	b := setup(t,
		task.AgentSpec{Name: "good", Runner: okRunner()},
		task.AgentSpec{Name: "flaky", Runner: failingRunner(), Retry: fastRetry},
	)
	if tk := b.run(t, "good", "hi"); tk.State != task.StateSucceeded {
		t.Fatalf("good task ended %s: %s", tk.State, tk.Reason)
	}
	if tk := b.run(t, "flaky", "hi"); tk.State != task.StateDeadLetter || tk.Attempt != 3 {
		t.Fatalf("flaky task ended %s after %d attempts, want dead_letter after 3", tk.State, tk.Attempt)
	}
	// Stopping waits for the last attempt's bookkeeping, observer included.
	b.stop(t)
	fams := scrape(t, b.metrics.Handler())

	wantStates := map[string]float64{}
	for _, s := range task.States() {
		wantStates["state="+string(s)] = 0
	}
	wantStates["state=succeeded"] = 1
	wantStates["state=dead_letter"] = 1
	equal(t, "pactum_tasks", series(t, fams, "pactum_tasks", dto.MetricType_GAUGE), wantStates)

	equal(t, "pactum_task_transitions_total", series(t, fams, "pactum_task_transitions_total", dto.MetricType_COUNTER), map[string]float64{
		"agent=good,from=requested,to=validated":      1,
		"agent=good,from=validated,to=queued":         1,
		"agent=good,from=queued,to=in_progress":       1,
		"agent=good,from=in_progress,to=succeeded":    1,
		"agent=flaky,from=requested,to=validated":     1,
		"agent=flaky,from=validated,to=queued":        1,
		"agent=flaky,from=queued,to=in_progress":      3,
		"agent=flaky,from=in_progress,to=queued":      2,
		"agent=flaky,from=in_progress,to=dead_letter": 1,
	})
	equal(t, "pactum_task_retries_total", series(t, fams, "pactum_task_retries_total", dto.MetricType_COUNTER), map[string]float64{
		"agent=flaky": 2,
	})
	equal(t, "pactum_task_dead_letters_total", series(t, fams, "pactum_task_dead_letters_total", dto.MetricType_COUNTER), map[string]float64{
		"agent=flaky": 1,
	})
	equal(t, "pactum_attempt_duration_seconds", series(t, fams, "pactum_attempt_duration_seconds", dto.MetricType_HISTOGRAM), map[string]float64{
		"agent=good,outcome=ok":     1,
		"agent=flaky,outcome=error": 3,
	})
	for _, m := range fams["pactum_attempt_duration_seconds"].GetMetric() {
		h := m.GetHistogram()
		// 12 buckets from 0.5ms up by ×4, and +Inf.
		bs := h.GetBucket()
		if len(bs) != 13 || bs[0].GetUpperBound() != 0.0005 || !math.IsInf(bs[12].GetUpperBound(), 1) || h.GetSampleSum() <= 0 {
			t.Fatalf("histogram %v: buckets %v, sum %v; want 12 from 0.0005 and +Inf, a positive sum", m.GetLabel(), bs, h.GetSampleSum())
		}
		// Attempts of these runners take far less than the largest finite
		// bucket.
		if c := bs[11].GetCumulativeCount(); c != h.GetSampleCount() {
			t.Errorf("histogram %v: largest finite bucket holds %d of %d samples", m.GetLabel(), c, h.GetSampleCount())
		}
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s: the Go and process collectors are not registered", name)
		}
	}
}

// TestMetricsPermanentFailure checks that a permanent error fails the task
// at once: no retry, no dead letter.
func TestMetricsPermanentFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, task.AgentSpec{Name: "broken", Retry: fastRetry, Runner: task.RunnerFunc(func(ctx context.Context, req *task.Request, emit task.Emit) (*task.Result, error) {
		return nil, task.Permanent(errors.New("bad input"))
	})})
	if tk := b.run(t, "broken", "x"); tk.State != task.StateFailed || tk.Attempt != 1 {
		t.Fatalf("task ended %s after %d attempts, want failed after 1", tk.State, tk.Attempt)
	}
	b.stop(t)
	fams := scrape(t, b.metrics.Handler())
	if got := series(t, fams, "pactum_tasks", dto.MetricType_GAUGE)["state=failed"]; got != 1 {
		t.Errorf(`pactum_tasks{state="failed"} = %v, want 1`, got)
	}
	equal(t, "pactum_task_transitions_total", series(t, fams, "pactum_task_transitions_total", dto.MetricType_COUNTER), map[string]float64{
		"agent=broken,from=requested,to=validated": 1,
		"agent=broken,from=validated,to=queued":    1,
		"agent=broken,from=queued,to=in_progress":  1,
		"agent=broken,from=in_progress,to=failed":  1,
	})
	for _, name := range []string{"pactum_task_retries_total", "pactum_task_dead_letters_total"} {
		if fam, ok := fams[name]; ok {
			t.Errorf("%s has series %v, want none", name, fam.GetMetric())
		}
	}
}

// TestMetricsStateFromStore checks that tasks by state come from the store,
// so a process that starts over the same store (a restart, another node)
// reports them while its own counters start at zero.
func TestMetricsStateFromStore(t *testing.T) {
	t.Parallel()
	b := setup(t, task.AgentSpec{Name: "good", Runner: okRunner()})
	for range 3 {
		b.run(t, "good", "hi")
	}
	b.stop(t)
	// The SQLite store counts all states in one query (CountByState); a
	// store without that method is asked state by state. Both report
	// every state, zeros included.
	for name, st := range map[string]task.Store{"one query": b.store, "state by state": plainStore{b.store}} {
		fresh := metrics.New(st, slog.New(slog.DiscardHandler))
		fams := scrape(t, fresh.Handler())
		got := series(t, fams, "pactum_tasks", dto.MetricType_GAUGE)
		if got["state=succeeded"] != 3 || len(got) != len(task.States()) {
			t.Errorf("%s: pactum_tasks after a restart = %v, want succeeded 3 and one series per state (%d)", name, got, len(task.States()))
		}
		if fam, ok := fams["pactum_task_transitions_total"]; ok {
			t.Errorf("%s: a fresh process reports transitions %v, want none", name, fam.GetMetric())
		}
	}
}

// plainStore hides every method of a store but task.Store's.
type plainStore struct{ task.Store }

// TestMetricsStoreDown checks that a scrape still succeeds when the store
// cannot be read: the state gauge is left out and the failure logged.
func TestMetricsStoreDown(t *testing.T) {
	t.Parallel()
	b := setup(t, task.AgentSpec{Name: "good", Runner: okRunner()})
	b.run(t, "good", "hi")
	b.stop(t)
	if err := b.store.Close(); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, b.metrics.Handler())
	if fam, ok := fams["pactum_tasks"]; ok {
		t.Errorf("pactum_tasks reported %v from a closed store", fam.GetMetric())
	}
	if got := series(t, fams, "pactum_task_transitions_total", dto.MetricType_COUNTER)["agent=good,from=in_progress,to=succeeded"]; got != 1 {
		t.Errorf("transitions lost when the store is down: %v", got)
	}
	if logs := b.logs.String(); !strings.Contains(logs, "metrics: count tasks") {
		t.Errorf("the store failure was not logged:\n%s", logs)
	}
}

// TestObserver checks the Observer methods directly, including the paths a
// Coordinator takes rarely (a lease that expired, a manual retry).
func TestObserver(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "pactum.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := metrics.New(st, slog.New(slog.DiscardHandler))
	var _ task.Observer = m

	// A lease expiry requeues the task: a retry.
	m.Transition("a", task.StateInProgress, task.StateQueued)
	// A lease expiry on the last attempt dead-letters it.
	m.Transition("a", task.StateInProgress, task.StateDeadLetter)
	// A manual retry of a dead letter is not an automatic retry.
	m.Transition("a", task.StateDeadLetter, task.StateQueued)
	// An answer after input_required is not a retry either.
	m.Transition("b", task.StateInputRequired, task.StateQueued)
	m.AttemptFinished("a", 2*time.Millisecond, nil)
	m.AttemptFinished("a", 3*time.Second, errors.New("boom"))
	m.AttemptFinished("a", time.Hour, errors.New("slow boom"))

	fams := scrape(t, m.Handler())
	equal(t, "pactum_task_retries_total", series(t, fams, "pactum_task_retries_total", dto.MetricType_COUNTER), map[string]float64{"agent=a": 1})
	equal(t, "pactum_task_dead_letters_total", series(t, fams, "pactum_task_dead_letters_total", dto.MetricType_COUNTER), map[string]float64{"agent=a": 1})
	equal(t, "pactum_task_transitions_total", series(t, fams, "pactum_task_transitions_total", dto.MetricType_COUNTER), map[string]float64{
		"agent=a,from=in_progress,to=queued":      1,
		"agent=a,from=in_progress,to=dead_letter": 1,
		"agent=a,from=dead_letter,to=queued":      1,
		"agent=b,from=input_required,to=queued":   1,
	})
	equal(t, "pactum_attempt_duration_seconds", series(t, fams, "pactum_attempt_duration_seconds", dto.MetricType_HISTOGRAM), map[string]float64{
		"agent=a,outcome=ok":    1,
		"agent=a,outcome=error": 2,
	})
	for _, mt := range fams["pactum_attempt_duration_seconds"].GetMetric() {
		if mt.GetLabel()[1].GetValue() != "error" {
			continue
		}
		h := mt.GetHistogram()
		if got, want := h.GetSampleSum(), 3.0+3600; got != want {
			t.Errorf("error attempts: sum %v s, want %v", got, want)
		}
		// 3s lands in a finite bucket; an hour is beyond the largest
		// (0.0005·4^11 s ≈ 35 min) and only counts in +Inf.
		bs := h.GetBucket()
		if last := bs[len(bs)-2]; last.GetCumulativeCount() != 1 {
			t.Errorf("largest finite bucket (le=%v) holds %d samples, want 1", last.GetUpperBound(), last.GetCumulativeCount())
		}
	}
}

func TestPushDeliveryCounter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, o := range []string{"delivered", "delivered", "failed", "abandoned"} {
		b.metrics.PushDelivery(o)
	}
	got := series(t, scrape(t, b.metrics.Handler()), "pactum_push_deliveries_total", dto.MetricType_COUNTER)
	if got["outcome=delivered"] != 2 || got["outcome=failed"] != 1 || got["outcome=abandoned"] != 1 || len(got) != 3 {
		t.Errorf("pactum_push_deliveries_total = %v", got)
	}
}

// wireStore is a store that counts its round trips and statements, as
// the PostgreSQL store does.
type wireStore struct {
	task.Store
	roundTrips, statements uint64
}

func (w wireStore) WireCounts() (roundTrips, statements uint64) { return w.roundTrips, w.statements }

// TestMetricsWireCounts: a store that counts what it sends is served as
// pactum_store_round_trips_total and pactum_store_statements_total; one
// that does not (SQLite) has neither series.
func TestMetricsWireCounts(t *testing.T) {
	t.Parallel()
	b := setup(t, task.AgentSpec{Name: "good", Runner: okRunner()})
	b.stop(t)
	fams := scrape(t, metrics.New(wireStore{Store: b.store, roundTrips: 7, statements: 19}, slog.New(slog.DiscardHandler)).Handler())
	rt := series(t, fams, "pactum_store_round_trips_total", dto.MetricType_COUNTER)
	st := series(t, fams, "pactum_store_statements_total", dto.MetricType_COUNTER)
	if rt[""] != 7 || st[""] != 19 {
		t.Errorf("round trips %v, statements %v; want 7 and 19", rt, st)
	}
	plain := scrape(t, b.metrics.Handler())
	if _, ok := plain["pactum_store_round_trips_total"]; ok {
		t.Error("a store without WireCounts reports round trips")
	}
}

// TestMetricsCommits: the SQLite store's commits are served as
// pactum_store_commits_total, and one blocking submission whose agent
// answers at once is one commit (its creation held for its end).
func TestMetricsCommits(t *testing.T) {
	t.Parallel()
	b := setup(t, task.AgentSpec{Name: "good", Runner: okRunner()})
	commits := func() float64 {
		return series(t, scrape(t, b.metrics.Handler()), "pactum_store_commits_total", dto.MetricType_COUNTER)[""]
	}
	b.run(t, "good", "warm up")
	before := commits()
	if before < 1 {
		t.Fatalf("pactum_store_commits_total %v after a task ran, want at least 1", before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := b.coord.SubmitAndWait(ctx, task.SubmitRequest{Agent: "good", Envelope: task.Envelope{
		Actor: "tester", Input: task.Message{ID: task.NewID(), Role: task.RoleUser, Parts: []task.Part{task.TextPart("x")}},
	}})
	if err != nil || res.Task.State != task.StateSucceeded {
		t.Fatalf("SubmitAndWait = %v, %v", res, err)
	}
	if got := commits() - before; got < 1 {
		t.Errorf("a blocking task added %v commits, want at least 1", got)
	}
}
