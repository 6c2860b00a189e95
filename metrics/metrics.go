// Package metrics exposes pactum's Prometheus metrics: tasks by state,
// transitions, attempt durations, retries, dead letters, authentication
// refusals, push-notification outcomes and open event subscriptions.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pactum/pactum/task"
)

// Metrics is a task.Observer that records into its own registry.
type Metrics struct {
	reg         *prometheus.Registry
	transitions *prometheus.CounterVec
	attempts    *prometheus.HistogramVec
	retries     *prometheus.CounterVec
	deadLetters *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	pushes      *prometheus.CounterVec
	httpRefused *prometheus.CounterVec
	connWaits   prometheus.Counter
}

var _ task.Observer = (*Metrics)(nil)

// New returns metrics whose tasks-by-state gauge is read from store at
// scrape time, so it is right across restarts and nodes.
func New(store task.Store, logger *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_task_transitions_total", Help: "Committed task state transitions.",
		}, []string{"agent", "from", "to"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "pactum_attempt_duration_seconds", Help: "Duration of agent attempts.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 12),
		}, []string{"agent", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_task_retries_total", Help: "Attempts that ended in a retry (automatic or lease expiry).",
		}, []string{"agent"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_task_dead_letters_total", Help: "Tasks moved to dead_letter.",
		}, []string{"agent"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_auth_refusals_total", Help: "Requests refused for want of a valid bearer token (auth: bearer).",
		}, []string{"endpoint", "reason"}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_push_deliveries_total",
			Help: "Push notifications (one event to one webhook) by outcome: delivered, failed, refused, dropped, abandoned.",
		}, []string{"outcome"}),
		httpRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pactum_http_refusals_total", Help: "Requests refused at the HTTP edge: foreign Host, cross-origin, or not JSON.",
		}, []string{"reason"}),
		connWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pactum_http_connection_waits_total", Help: "Connections that waited because http.max_connections were open.",
		}),
	}
	m.reg.MustRegister(m.transitions, m.attempts, m.retries, m.deadLetters, m.refusals, m.pushes, m.httpRefused, m.connWaits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{store: store, log: logger})
	if ws, ok := store.(wireCounter); ok {
		// The PostgreSQL store counts what it sends; the benchmarks
		// divide the counts by the tasks run.
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "pactum_store_round_trips_total",
				Help: "Round trips to the database: batches and lone statements sent, each waited for.",
			}, func() float64 { rt, _ := ws.WireCounts(); return float64(rt) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "pactum_store_statements_total",
				Help: "Statements sent to the database, BEGIN and COMMIT included.",
			}, func() float64 { _, st := ws.WireCounts(); return float64(st) }))
	}
	if cc, ok := store.(commitCounter); ok {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pactum_store_commits_total",
			Help: "Write transactions the SQLite store committed (a group commit is one).",
		}, func() float64 { return float64(cc.Commits()) }))
	}
	return m
}

// commitCounter is a store that counts the write transactions it
// committed (the SQLite store).
type commitCounter interface {
	Commits() uint64
}

// wireCounter is a store that counts its round trips and statements (the
// PostgreSQL store).
type wireCounter interface {
	WireCounts() (roundTrips, statements uint64)
}

// Transition implements task.Observer.
func (m *Metrics) Transition(agent string, from, to task.State) {
	m.transitions.WithLabelValues(agent, string(from), string(to)).Inc()
	switch {
	case from == task.StateInProgress && to == task.StateQueued:
		m.retries.WithLabelValues(agent).Inc()
	case to == task.StateDeadLetter:
		m.deadLetters.WithLabelValues(agent).Inc()
	}
}

// AttemptFinished implements task.Observer.
func (m *Metrics) AttemptFinished(agent string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.attempts.WithLabelValues(agent, outcome).Observe(d.Seconds())
}

// AuthRefused counts a request to endpoint ("a2a" or "mcp") refused by the
// bearer check: invalid says it carried a bearer token no actor has (or
// more than one Authorization header), else it had none.
func (m *Metrics) AuthRefused(endpoint string, invalid bool) {
	reason := "missing"
	if invalid {
		reason = "invalid"
	}
	m.refusals.WithLabelValues(endpoint, reason).Inc()
}

// PushDelivery counts one push notification's outcome (a
// push.Options.Observe function): "delivered", "failed",
// "refused", "dropped" or "abandoned".
func (m *Metrics) PushDelivery(outcome string) {
	m.pushes.WithLabelValues(outcome).Inc()
}

// HTTPRefused counts a request refused at the HTTP edge; reason is "host",
// "origin" or "content_type".
func (m *Metrics) HTTPRefused(reason string) { m.httpRefused.WithLabelValues(reason).Inc() }

// ConnectionWaited counts a connection that had to wait for a free slot
// under the connection cap.
func (m *Metrics) ConnectionWaited() { m.connWaits.Inc() }

// CountSubscribers adds the gauge pactum_event_subscribers, read from
// count at scrape time (task.Broker.Subscribers: the event subscriptions
// open on this node). Call it once, when the coordinator exists.
func (m *Metrics) CountSubscribers(count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pactum_event_subscribers",
		Help: "Event subscriptions open on this node: streams following a task and blocking requests waiting for one.",
	}, func() float64 { return float64(count()) }))
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

type stateCollector struct {
	store task.Store
	log   *slog.Logger
}

var stateDesc = prometheus.NewDesc("pactum_tasks", "Tasks by lifecycle state (read from the store).", []string{"state"}, nil)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- stateDesc }

// stateCounter is a store that counts its tasks by state in one query;
// the SQLite and PostgreSQL stores are. Others are asked state by state.
type stateCounter interface {
	CountByState(ctx context.Context) (map[task.State]int, error)
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if sc, ok := c.store.(stateCounter); ok {
		// One scan of the task table instead of one per state.
		counts, err := sc.CountByState(ctx)
		if err != nil {
			c.log.Warn("metrics: count tasks", "err", err)
			return
		}
		for _, s := range task.States() {
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
		}
		return
	}
	for _, s := range task.States() {
		page, err := c.store.ListTasks(ctx, task.ListParams{States: []task.State{s}, PageSize: 1})
		if err != nil {
			c.log.Warn("metrics: count tasks", "state", s, "err", err)
			return
		}
		ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, float64(page.TotalSize), string(s))
	}
}
