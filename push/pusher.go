package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/internal/backoff"
	"github.com/pactum/pactum/internal/httpstatus"
	"github.com/pactum/pactum/internal/netguard"
	"github.com/pactum/pactum/task"
)

// Push notification headers. The token goes out under both names: the
// X- form is what 0.3 receivers check, the bare form what a2a-go 1.0 uses.
const (
	headerNotificationToken           = "X-A2A-Notification-Token"
	headerNotificationTokenBare       = "A2A-Notification-Token"
	pushContentType                   = "application/a2a+json"
	maxPushRedirects                  = 5
	pushConfigCacheTTL                = 2 * time.Second
	pushConfigCacheMax                = 10000
	invalidSlots                      = 256
	pushResponseDrainLimit      int64 = 64 << 10
)

// Options configure a Pusher. Every field has a default.
type Options struct {
	// AllowPrivate lets webhooks reach addresses that are not globally
	// routable (see package internal/netguard; default false: such
	// destinations are refused when dialed).
	AllowPrivate bool
	// Timeout bounds one delivery attempt (default 10s).
	Timeout time.Duration
	// MaxAttempts bounds the attempts per event and webhook (default 5).
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt (default
	// 500ms); it doubles per attempt up to MaxBackoff (default 30s).
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Workers is the number of lanes that look up push configurations
	// (default 4). Events of one task always go through the same lane.
	Workers int
	// QueueSize bounds each lane's backlog and each task's delivery
	// backlog (default 1024); a full queue drops the new event and logs
	// it, it is never waited for.
	QueueSize int
	// Client sends the webhooks (default: a client whose dialer refuses
	// non-public addresses unless AllowPrivate is set).
	Client *http.Client
	// Logger receives delivery failures (default: discard).
	Logger *slog.Logger
	// TracerProvider makes the span of each delivery attempt, a child of
	// the trace context stored with the task (default: otel's global
	// provider, as the core's: a no-op unless the process set one).
	TracerProvider trace.TracerProvider
	// Observe, when set, is told the outcome of each delivery of one event
	// to one webhook: one of the outcome constants (Delivered, Failed,
	// Refused, Dropped, Abandoned). It must not block.
	Observe func(outcome string)
	// CatchUpInterval is how often the Pusher looks for push
	// configurations that were not sent their task's latest state (after
	// a stop, a crash or dropped events) and sends them the task (default
	// 1m; the first look is at Start).
	CatchUpInterval time.Duration
	// CatchUpGrace leaves tasks changed less than this long ago to the
	// notifications that may still be under way, here or on another node
	// (default: the longest one notification can take with all its
	// attempts and backoffs, plus 30s).
	CatchUpGrace time.Duration
}

// Outcomes of one delivery, as Options.Observe is told them.
const (
	// Delivered: the webhook answered 2xx.
	Delivered = "delivered"
	// Failed: every attempt failed, or the webhook answered a status
	// that retrying cannot change.
	Failed = "failed"
	// Refused: the destination is not public (and AllowPrivate is
	// off), so it was never contacted.
	Refused = "refused"
	// Dropped: the task's delivery queue was full.
	Dropped = "dropped"
	// Abandoned: the Pusher stopped before the delivery succeeded or
	// ran out of attempts; it was queued or being retried. The task's
	// latest state is sent by a later catch-up, on this node or another.
	Abandoned = "abandoned"
)

// Attributes of a push delivery's span (and task.AttrTaskID).
const (
	attrPushConfig  = attribute.Key("pactum.push.config")
	attrPushEvent   = attribute.Key("pactum.push.event")
	attrPushAttempt = attribute.Key("pactum.push.attempt")
	attrHTTPStatus  = attribute.Key("http.response.status_code")
)

// tracerName is the instrumentation scope of the delivery spans: that of
// package a2aserver, where push delivery used to live, so that traces keep
// the scope they had.
const tracerName = "github.com/pactum/pactum/a2aserver"

// catchUpPage bounds one PushBacklog read.
const catchUpPage = 100

// kindSnapshot marks a delivery of a whole task by the catch-up.
const kindSnapshot task.EventKind = "snapshot"

// Pusher delivers task events to the webhooks in the tasks' push
// configurations. It listens to every task on the Coordinator's broker and
// never blocks it: events go into bounded lanes that look up the task's
// configurations, and the deliveries of a task that has some go into that
// task's own queue, so that a slow webhook delays only its own task. A full
// queue drops the event (and logs it when the task has configurations).
// Each event is POSTed, in order, as an A2A StreamResponse with the
// configuration's token and authentication, retried with exponential
// backoff on network errors and the statuses internal/httpstatus calls
// retryable (408, 423, 425, 429, 5xx but 501 and 505).
//
// Deliveries are at least once and coalesced to the latest state: the
// store keeps, per configuration, the task seq it was last sent, and a
// catch-up (at Start, then every CatchUpInterval) sends the current task,
// whole, to every configuration left behind by a stop, a crash or a drop.
type Pusher struct {
	coord  *task.Coordinator
	opts   Options
	log    *slog.Logger
	tracer trace.Tracer

	mu          sync.Mutex
	started     bool
	stopped     bool
	cancel      context.CancelFunc // ends deliveries
	unsubscribe func()             // ends the broker subscription
	lanes       []chan task.Event
	wg          sync.WaitGroup

	// dropMu guards dropped: the tasks whose events a full lane dropped,
	// not yet looked at by reportDrops, which dropWake wakes.
	dropMu       sync.Mutex
	dropped      map[string]int
	droppedOther int // drops beyond pushConfigCacheMax tasks
	dropWake     chan struct{}

	// abandoned counts deliveries given up because the Pusher stopped.
	abandoned atomic.Int64
	// stopping is closed by Stop; the catch-up loop ends on it.
	stopping chan struct{}
	// catchUpSlots bounds the catch-up deliveries under way.
	catchUpSlots chan struct{}

	cacheMu sync.Mutex
	// gen counts Invalidate calls; slots holds, per hash slot of task IDs,
	// the gen of the last Invalidate of a task in it. A lookup that began
	// before an Invalidate of its task is not cached.
	gen   uint64
	slots [invalidSlots]uint64
	// anyAt is when the store last said whether any task has push configs
	// (anyConfigs); zero when that is unknown. Until it is stale, a node
	// without any skips the per-task lookups.
	anyAt      time.Time
	anyConfigs bool
	// anyCall is the HasPushConfigs lookup under way, which lanes that
	// need the same answer wait for instead of asking too.
	anyCall *anyLookup
	cache   map[string]cachedConfigs
	pending map[string][]task.PushConfig // see Expect
	// pendingSent is the task seq sent to each pending configuration
	// (task id → config id → seq): recorded before the configuration was
	// stored, the mark did not stick; Expect's cleanup records it again.
	pendingSent map[string]map[string]int

	// queues holds the delivery queue of each task with deliveries under
	// way; a queue's goroutine removes it when it runs dry.
	qmu    sync.Mutex
	queues map[string]chan delivery
}

// delivery is one event body bound for one webhook.
type delivery struct {
	config task.PushConfig
	body   []byte
	kind   task.EventKind
	seq    int
	// trace is the W3C traceparent stored with the task (the submission's
	// span), the parent of the delivery's span; "" for none.
	trace string
	// release, when set, frees the catch-up slot the delivery holds.
	release func()
}

// marks says whether delivering d records its seq as sent to its
// configuration: a status event or a whole task does; an artifact chunk,
// whose seq is that of the status before it, does not.
func (d delivery) marks() bool { return d.kind == task.EventStatus || d.kind == kindSnapshot }

type cachedConfigs struct {
	configs []task.PushConfig
	at      time.Time
}

// New returns a Pusher for the tasks of coord; call Start to run it.
func New(coord *task.Coordinator, opts Options) *Pusher {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 5
	}
	if opts.InitialBackoff <= 0 {
		opts.InitialBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.CatchUpInterval <= 0 {
		opts.CatchUpInterval = time.Minute
	}
	if opts.CatchUpGrace <= 0 {
		opts.CatchUpGrace = 30 * time.Second
		for n := 1; n <= opts.MaxAttempts; n++ {
			opts.CatchUpGrace += opts.Timeout
			if n < opts.MaxAttempts {
				opts.CatchUpGrace += pushBackoff(opts).Base(n)
			}
		}
	}
	if opts.Client == nil {
		opts.Client = newPushClient(opts.AllowPrivate)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &Pusher{
		coord: coord, opts: opts, log: log, tracer: tp.Tracer(tracerName),
		cache: map[string]cachedConfigs{}, pending: map[string][]task.PushConfig{}, pendingSent: map[string]map[string]int{}, queues: map[string]chan delivery{},
		dropped: map[string]int{}, dropWake: make(chan struct{}, 1),
		stopping: make(chan struct{}), catchUpSlots: make(chan struct{}, 4*opts.Workers),
	}
}

// newPushClient returns the webhook client. Unless allowPrivate, its dialer
// checks every resolved address (redirect hops and DNS rebinding included)
// and refuses non-public ones; it uses no proxy, so that the check applies
// to the destination itself.
func newPushClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = netguard.Control
	}
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxPushRedirects {
				return fmt.Errorf("push stopped after %d redirects", maxPushRedirects)
			}
			if req.URL.Host != via[len(via)-1].URL.Host {
				req.Header.Del(headerNotificationToken)
				req.Header.Del(headerNotificationTokenBare)
			}
			return nil
		},
	}
}

// Start subscribes to every task's events and starts the delivery lanes.
func (p *Pusher) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return errors.New("push: pusher already started")
	}
	p.started = true
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.lanes = make([]chan task.Event, p.opts.Workers)
	for i := range p.lanes {
		p.lanes[i] = make(chan task.Event, p.opts.QueueSize)
		p.wg.Add(1)
		go p.lane(ctx, p.lanes[i])
	}
	p.wg.Add(2)
	go p.reportDrops(ctx)
	go p.catchUpLoop(ctx)
	// A function subscription is never dropped by the broker: a resync
	// (the relay reconnected) reaches dispatch as an event, so the only
	// events lost are those a full lane drops, and dispatch knows which.
	p.unsubscribe = p.coord.Broker().SubscribeFunc(p.dispatch)
	return nil
}

// Stop stops taking events, lets the deliveries already queued finish
// until ctx ends, then abandons the rest. Stopping twice, or a Pusher never
// started, is safe.
func (p *Pusher) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.started || p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	p.mu.Unlock()
	// Once unsubscribe returns dispatch is not called again, so the lanes
	// can be closed.
	p.unsubscribe()
	for _, l := range p.lanes {
		close(l)
	}
	close(p.dropWake)
	close(p.stopping)
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		p.cancel()
		// Every goroutine watches the canceled context, so they end
		// promptly; a short grace keeps them off a store the caller closes
		// next.
		select {
		case <-done:
		case <-time.After(stopGrace):
		}
		err = ctx.Err()
	}
	p.cancel()
	if n := p.abandoned.Load(); n > 0 {
		p.log.Warn("push: stopped with deliveries not done; their tasks' latest states are sent by a later catch-up", "abandoned", n)
	}
	return err
}

// Abandoned returns how many deliveries (one event to one webhook) the
// Pusher gave up because it stopped before they succeeded or ran out of
// attempts. They are not resumed as such: a later catch-up sends each
// affected configuration its task's latest state instead.
func (p *Pusher) Abandoned() int64 { return p.abandoned.Load() }

// observe reports a delivery outcome to Options.Observe.
func (p *Pusher) observe(outcome string) {
	if outcome == Abandoned {
		p.abandoned.Add(1)
	}
	if p.opts.Observe != nil {
		p.opts.Observe(outcome)
	}
}

// stopGrace is how long Stop still waits for its goroutines after the
// caller's context ended.
const stopGrace = 2 * time.Second

// Invalidate forgets what the Pusher knows of a task's push configurations,
// so that the next event reads them from the store. Handlers call it when
// they change a configuration.
func (p *Pusher) Invalidate(taskID string) {
	p.cacheMu.Lock()
	p.gen++
	p.slots[slotOf(taskID)] = p.gen
	p.anyAt = time.Time{}
	delete(p.cache, taskID)
	p.cacheMu.Unlock()
}

// invalidateAll is Invalidate for every task.
func (p *Pusher) invalidateAll() {
	p.cacheMu.Lock()
	p.gen++
	for i := range p.slots {
		p.slots[i] = p.gen
	}
	p.anyAt = time.Time{}
	clear(p.cache)
	p.cacheMu.Unlock()
}

// forget drops a task's cached configurations (its last event was handled);
// unlike Invalidate it says nothing changed.
func (p *Pusher) forget(taskID string) {
	p.cacheMu.Lock()
	delete(p.cache, taskID)
	p.cacheMu.Unlock()
}

// hashID spreads task ids over the lanes and the invalidation slots.
func hashID(taskID string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(taskID))
	return h.Sum32()
}

func slotOf(taskID string) int { return int(hashID(taskID) % invalidSlots) }

// dispatch moves broker events into the lanes. The broker calls it with
// its lock held, so it never blocks: an event whose lane is full is dropped
// and its task noted for reportDrops.
func (p *Pusher) dispatch(ev task.Event) {
	switch {
	case ev.Kind == task.EventResync:
		// The relay listened again: configurations changed on other nodes
		// meanwhile went unheard, so read everything again. This node's
		// own events were all seen; nothing was dropped.
		p.invalidateAll()
		return
	case ev.Kind == task.EventPushConfig:
		// Changed on another node: read them again.
		p.Invalidate(ev.TaskID)
		return
	case ev.Node != "":
		// Another node's event, heard through the relay: the node that
		// published it pushes it, so it is pushed once.
		return
	case p.surelyUnconfigured(ev.TaskID):
		return
	}
	lane := p.lanes[int(hashID(ev.TaskID)%uint32(len(p.lanes)))]
	select {
	case lane <- ev:
	default:
		p.noteDropped(ev.TaskID)
	}
}

// surelyUnconfigured reports whether the Pusher knows, without a store
// read, that no task has push configurations, so an event needs no lane.
func (p *Pusher) surelyUnconfigured(taskID string) bool {
	p.cacheMu.Lock()
	defer p.cacheMu.Unlock()
	return !p.anyAt.IsZero() && !p.anyConfigs && time.Since(p.anyAt) < pushConfigCacheTTL && len(p.pending[taskID]) == 0
}

// noteDropped remembers that an event of taskID was dropped for a full
// lane, for reportDrops to judge.
func (p *Pusher) noteDropped(taskID string) {
	p.dropMu.Lock()
	if _, ok := p.dropped[taskID]; ok || len(p.dropped) < pushConfigCacheMax {
		p.dropped[taskID]++
	} else {
		p.droppedOther++
	}
	p.dropMu.Unlock()
	select {
	case p.dropWake <- struct{}{}:
	default:
	}
}

// reportDrops logs the events that full lanes dropped, but only those of
// tasks that have push configurations: an event of a task without any
// would not have been pushed anyway, so dropping it loses nothing.
func (p *Pusher) reportDrops(ctx context.Context) {
	defer p.wg.Done()
	for range p.dropWake {
		p.dropMu.Lock()
		dropped, other := p.dropped, p.droppedOther
		p.dropped, p.droppedOther = map[string]int{}, 0
		p.dropMu.Unlock()
		if ctx.Err() != nil {
			continue // stopping: lookups would fail
		}
		for _, d := range droppedWithConfigs(ctx, dropped, other, p.configs, p.coord.HasPushConfigs) {
			p.log.Warn("push: delivery lane full; events of a task with push configurations were dropped; its latest state is sent by a later catch-up",
				"task", d.taskID, "events", d.events)
		}
	}
}

// droppedTask is a task some of whose events were dropped.
type droppedTask struct {
	taskID string // "" for tasks beyond the tracked ones
	events int
}

// droppedWithConfigs decides which drops deserve a warning: those of tasks
// that have push configurations (configs), and, for drops whose tasks were
// not tracked (other > 0), all of them as long as any task has some
// (hasAny).
// A lookup that fails counts as having configurations.
func droppedWithConfigs(ctx context.Context, dropped map[string]int, other int,
	configs func(context.Context, string) ([]task.PushConfig, error), hasAny func(context.Context) (bool, error)) []droppedTask {
	var out []droppedTask
	for id, n := range dropped {
		if cs, err := configs(ctx, id); err == nil && len(cs) == 0 || errors.Is(err, task.ErrNotFound) {
			continue
		}
		out = append(out, droppedTask{taskID: id, events: n})
	}
	if other > 0 {
		if has, err := hasAny(ctx); err != nil || has {
			out = append(out, droppedTask{events: other})
		}
	}
	slices.SortFunc(out, func(a, b droppedTask) int { return strings.Compare(a.taskID, b.taskID) })
	return out
}

// lane turns the events of its tasks into deliveries, in order. It
// remembers which artifacts streamed per task, so that a final status is
// preceded by the stored artifacts that did not (the agent's result
// artifacts).
func (p *Pusher) lane(ctx context.Context, events <-chan task.Event) {
	defer p.wg.Done()
	l := &laneState{streamed: map[string]map[string]bool{}, traces: map[string]string{}}
	for ev := range events {
		if ctx.Err() != nil {
			continue // Stop gave up waiting: drain without delivering (never looked up, so not counted)
		}
		p.handle(ctx, ev, l)
	}
}

// laneState is what a lane remembers of the tasks with push configs whose
// events it handles (a task's events all go through one lane), until
// their end.
type laneState struct {
	// streamed holds the artifacts sent as chunks, per task.
	streamed map[string]map[string]bool
	// traces holds each task's stored traceparent, for its artifact
	// chunks, whose events carry no task.
	traces map[string]string
}

func (p *Pusher) handle(ctx context.Context, ev task.Event, l *laneState) {
	streamed := l.streamed
	terminal := ev.Kind == task.EventStatus && ev.Final && ev.State.Terminal()
	if terminal {
		defer func() {
			delete(streamed, ev.TaskID)
			delete(l.traces, ev.TaskID)
			p.forget(ev.TaskID)
		}()
	}
	configs, err := p.configs(ctx, ev.TaskID)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Error("push: read push configs", "task", ev.TaskID, "err", err)
		}
		return
	}
	if len(configs) == 0 {
		return
	}
	out := a2amap.EventToA2A(ev)
	if out == nil {
		return
	}
	traceParent := l.traces[ev.TaskID]
	if ev.Task != nil {
		traceParent = ev.Task.Envelope.TraceParent
		if len(l.traces) >= pushConfigCacheMax {
			clear(l.traces) // tasks whose end was never seen; forget them
		}
		if traceParent != "" && !terminal {
			l.traces[ev.TaskID] = traceParent
		}
	}
	var events []a2a.Event
	switch {
	case ev.Kind == task.EventArtifact:
		if len(streamed) >= pushConfigCacheMax {
			clear(streamed) // tasks whose end was never seen; forget them
		}
		if streamed[ev.TaskID] == nil {
			streamed[ev.TaskID] = map[string]bool{}
		}
		streamed[ev.TaskID][ev.Chunk.Artifact.ID] = true
	case ev.Final:
		stored := ev.Task
		if !ev.Complete {
			var err error
			if stored, err = p.coord.Get(ctx, ev.TaskID, 0); err != nil {
				if ctx.Err() == nil {
					p.log.Error("push: read task artifacts", "task", ev.TaskID, "err", err)
				}
				break
			}
		}
		for _, a := range a2amap.ArtifactEvents(stored, streamed[ev.TaskID]) {
			events = append(events, a)
		}
	}
	events = append(events, out)
	for _, e := range events {
		body, err := json.Marshal(a2a.StreamResponse{Event: e})
		if err != nil {
			p.log.Error("push: encode event", "task", ev.TaskID, "err", err)
			return
		}
		for _, c := range configs {
			p.enqueue(ctx, ev.TaskID, delivery{config: c, body: body, kind: ev.Kind, seq: ev.Seq, trace: traceParent})
		}
	}
}

// enqueue hands d to its task's delivery queue, starting the queue's
// goroutine if it has none. A full queue drops d.
func (p *Pusher) enqueue(ctx context.Context, taskID string, d delivery) {
	if !p.tryEnqueue(ctx, taskID, d) {
		if d.release != nil {
			d.release()
		}
		p.observe(Dropped)
		p.log.Warn("push: delivery queue of task full; event dropped", "task", taskID, "config", d.config.ID, "kind", d.kind, "seq", d.seq)
	}
}

// tryEnqueue is enqueue, reporting false instead of dropping d.
func (p *Pusher) tryEnqueue(ctx context.Context, taskID string, d delivery) bool {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	q, ok := p.queues[taskID]
	if !ok {
		q = make(chan delivery, p.opts.QueueSize)
		p.queues[taskID] = q
		p.wg.Add(1)
		go p.deliverAll(ctx, taskID, q)
	}
	select {
	case q <- d:
		return true
	default:
		return false
	}
}

// deliverAll delivers a task's queue in order and ends when it runs dry.
// After a status event or a whole task was delivered, or given up on, the
// task seq is recorded as sent to the configuration (PushBacklog leaves it
// out from then on); the records are written whenever the queue is empty,
// so a burst of events costs one write per configuration, off the path of
// the deliveries.
func (p *Pusher) deliverAll(ctx context.Context, taskID string, q chan delivery) {
	defer p.wg.Done()
	sent := map[string]int{}   // config id → seq sent, not yet recorded
	marked := map[string]int{} // config id → seq recorded
	for {
		select {
		case d := <-q:
			outcome := Abandoned
			if ctx.Err() == nil {
				outcome = p.deliver(ctx, d)
			} else {
				p.observe(Abandoned)
			}
			if d.release != nil {
				d.release()
			}
			if outcome != Abandoned && d.marks() && d.seq > max(sent[d.config.ID], marked[d.config.ID]) {
				sent[d.config.ID] = d.seq
			}
			continue
		default:
		}
		p.recordSent(ctx, taskID, sent, marked)
		p.qmu.Lock()
		if len(q) == 0 {
			delete(p.queues, taskID)
			p.qmu.Unlock()
			return
		}
		p.qmu.Unlock()
	}
}

// recordSent writes the seqs in sent to the store and moves them to marked.
func (p *Pusher) recordSent(ctx context.Context, taskID string, sent, marked map[string]int) {
	for id, seq := range sent {
		delete(sent, id)
		if ctx.Err() != nil {
			continue // stopping: a later catch-up may send it again
		}
		// Before the mark, which does not stick to a configuration not
		// stored yet: Expect's cleanup, which runs once it is stored,
		// then records it.
		p.notePendingSent(taskID, id, seq)
		if err := p.coord.MarkPushDelivered(ctx, taskID, id, seq); err != nil {
			if ctx.Err() == nil {
				p.log.Warn("push: record what a push configuration was sent", "task", taskID, "config", id, "seq", seq, "err", err)
			}
			continue
		}
		marked[id] = seq
	}
}

// notePendingSent records that seq was sent to configuration id of a task
// if that configuration is announced (Expect) and not stored yet.
func (p *Pusher) notePendingSent(taskID, id string, seq int) {
	p.cacheMu.Lock()
	defer p.cacheMu.Unlock()
	if sent := p.pendingSent[taskID]; sent != nil {
		if old, ok := sent[id]; ok && seq > old {
			sent[id] = seq
		}
	}
}

// configs returns a task's push configurations, from short-lived caches
// that handlers invalidate when they change them: whether the store holds
// any at all, and each task's.
//
// Configurations announced with Expect are added until the store has them:
// they are read before the store, so that one stored meanwhile is seen in
// one place or the other.
func (p *Pusher) configs(ctx context.Context, taskID string) ([]task.PushConfig, error) {
	p.cacheMu.Lock()
	// A copy: Expect's cleanup edits the slice under the lock, and this one
	// is read after it is released.
	pending := slices.Clone(p.pending[taskID])
	anyKnown := !p.anyAt.IsZero() && time.Since(p.anyAt) < pushConfigCacheTTL
	if anyKnown && !p.anyConfigs {
		p.cacheMu.Unlock()
		return pending, nil
	}
	if c, ok := p.cache[taskID]; ok && time.Since(c.at) < pushConfigCacheTTL {
		p.cacheMu.Unlock()
		return withPending(c.configs, pending), nil
	}
	gen := p.gen
	p.cacheMu.Unlock()

	if !anyKnown {
		has, err := p.hasConfigs(ctx, gen)
		if err != nil {
			return nil, err
		}
		if !has {
			return pending, nil
		}
	}
	cs, err := p.coord.PushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	p.cacheMu.Lock()
	if p.slots[slotOf(taskID)] <= gen {
		if len(p.cache) >= pushConfigCacheMax {
			clear(p.cache)
		}
		p.cache[taskID] = cachedConfigs{configs: cs, at: time.Now()}
	}
	p.cacheMu.Unlock()
	return withPending(cs, pending), nil
}

// anyLookup is one HasPushConfigs call that several lanes may share.
type anyLookup struct {
	gen  uint64 // Pusher.gen when it started
	done chan struct{}
	has  bool
	err  error
}

// hasConfigs asks the store whether any task has push configurations,
// sharing the answer of a lookup already under way unless an Invalidate
// came after it started; the answer is cached (anyAt) if nothing was
// invalidated meanwhile. gen is Pusher.gen when the caller began.
func (p *Pusher) hasConfigs(ctx context.Context, gen uint64) (bool, error) {
	p.cacheMu.Lock()
	if call := p.anyCall; call != nil && call.gen == gen {
		p.cacheMu.Unlock()
		select {
		case <-call.done:
			return call.has, call.err
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	call := &anyLookup{gen: gen, done: make(chan struct{})}
	p.anyCall = call
	p.cacheMu.Unlock()

	call.has, call.err = p.coord.HasPushConfigs(ctx)
	p.cacheMu.Lock()
	if p.anyCall == call {
		p.anyCall = nil
	}
	if call.err == nil && p.gen == gen {
		p.anyAt, p.anyConfigs = time.Now(), call.has
	}
	p.cacheMu.Unlock()
	close(call.done)
	return call.has, call.err
}

// withPending returns stored plus the pending configurations it lacks.
func withPending(stored []task.PushConfig, pending []task.PushConfig) []task.PushConfig {
	if len(pending) == 0 {
		return stored
	}
	out := slices.Clone(stored)
	for _, c := range pending {
		if !slices.ContainsFunc(out, func(s task.PushConfig) bool { return s.ID == c.ID }) {
			out = append(out, c)
		}
	}
	return out
}

// Expect announces a configuration that is about to be stored for a task
// that may already be publishing events (a push configuration sent with the
// message): the Pusher delivers to it from the first event on. Call the
// returned function once the configuration is stored, or was not: it
// records what was sent to the configuration meanwhile, so that a
// configuration stored as owed (task.PushConfig.Owed) is not sent that
// state again by the catch-up.
func (p *Pusher) Expect(ctx context.Context, c task.PushConfig) (done func()) {
	p.cacheMu.Lock()
	p.pending[c.TaskID] = append(p.pending[c.TaskID], c)
	if p.pendingSent[c.TaskID] == nil {
		p.pendingSent[c.TaskID] = map[string]int{}
	}
	p.pendingSent[c.TaskID][c.ID] = 0
	p.cacheMu.Unlock()
	return func() {
		p.cacheMu.Lock()
		// A new slice, never an edit in place: readers may hold the old one.
		left := slices.DeleteFunc(slices.Clone(p.pending[c.TaskID]), func(x task.PushConfig) bool { return x.ID == c.ID })
		if len(left) == 0 {
			delete(p.pending, c.TaskID)
		} else {
			p.pending[c.TaskID] = left
		}
		seq := p.pendingSent[c.TaskID][c.ID]
		delete(p.pendingSent[c.TaskID], c.ID)
		if len(p.pendingSent[c.TaskID]) == 0 {
			delete(p.pendingSent, c.TaskID)
		}
		p.cacheMu.Unlock()
		if seq == 0 {
			return
		}
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := p.coord.MarkPushDelivered(mctx, c.TaskID, c.ID, seq); err != nil {
			p.log.Warn("push: record what a push configuration was sent", "task", c.TaskID, "config", c.ID, "seq", seq, "err", err)
		}
	}
}

// permanentPushError marks a delivery failure that retrying cannot fix.
type permanentPushError struct{ err error }

func (e *permanentPushError) Error() string { return e.err.Error() }
func (e *permanentPushError) Unwrap() error { return e.err }

// deliver POSTs d to its webhook, retrying transient failures, and reports
// the outcome (and returns it).
func (p *Pusher) deliver(ctx context.Context, d delivery) (outcome string) {
	defer func() { p.observe(outcome) }()
	c := d.config
	log := p.log.With("task", c.TaskID, "config", c.ID, "kind", d.kind, "seq", d.seq)
	if _, err := ValidateURL(c.URL, p.opts.AllowPrivate); err != nil {
		log.Warn("push: destination refused", "err", err)
		return Refused
	}
	var err error
	for attempt := 1; attempt <= p.opts.MaxAttempts; attempt++ {
		if err = p.post(ctx, d, attempt); err == nil {
			return Delivered
		}
		var perm *permanentPushError
		if errors.Is(err, errPrivateDestination) || errors.Is(err, netguard.ErrBlocked) {
			log.Warn("push: destination refused", "err", err)
			return Refused
		}
		if errors.As(err, &perm) || ctx.Err() != nil || attempt == p.opts.MaxAttempts {
			break
		}
		wait := p.backoff(attempt)
		log.Info("push: attempt failed; retrying", "attempt", attempt, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return Abandoned
	}
	log.Warn("push: delivery failed", "err", err)
	return Failed
}

// catchUpLoop runs catchUp at Start and every CatchUpInterval until Stop.
func (p *Pusher) catchUpLoop(ctx context.Context) {
	defer p.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-p.stopping:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p.catchUp(ctx)
		t.Reset(p.opts.CatchUpInterval)
	}
}

// catchUp sends the task's current state, whole (an A2A StreamResponse
// carrying the task), to every push configuration that was not sent its
// task's latest state: a stop or crash abandoned the delivery, or the
// event was dropped. Tasks changed within CatchUpGrace, and tasks with
// deliveries under way here, are left to those deliveries.
func (p *Pusher) catchUp(ctx context.Context) {
	params := task.PushBacklogParams{UpdatedBefore: time.Now().Add(-p.opts.CatchUpGrace), Limit: catchUpPage}
	for {
		items, err := p.coord.PushBacklog(ctx, params)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error("push: read the configurations owed a notification", "err", err)
			}
			return
		}
		full := len(items) == catchUpPage
		for len(items) > 0 {
			n := 1
			for n < len(items) && items[n].Config.TaskID == items[0].Config.TaskID {
				n++
			}
			if !p.catchUpTask(ctx, items[:n]) {
				return
			}
			last := items[n-1].Config
			params.AfterTaskID, params.AfterID = last.TaskID, last.ID
			items = items[n:]
		}
		if !full {
			return
		}
	}
}

// catchUpTask queues the current state of one task for items, the
// configurations of that task owed it. It reports false when the Pusher is
// stopping.
func (p *Pusher) catchUpTask(ctx context.Context, items []task.PushBacklogItem) bool {
	taskID := items[0].Config.TaskID
	p.qmu.Lock()
	_, busy := p.queues[taskID]
	p.qmu.Unlock()
	if busy {
		return true
	}
	t, err := p.coord.Get(ctx, taskID, 0)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, task.ErrNotFound) {
			p.log.Error("push: read task to catch up", "task", taskID, "err", err)
		}
		return ctx.Err() == nil
	}
	body, err := json.Marshal(a2a.StreamResponse{Event: a2amap.TaskToA2A(t, 0, true)})
	if err != nil {
		p.log.Error("push: encode task", "task", taskID, "err", err)
		return true
	}
	for _, it := range items {
		select {
		case p.catchUpSlots <- struct{}{}:
		case <-p.stopping:
			return false
		case <-ctx.Done():
			return false
		}
		p.log.Info("push: sending a task's latest state it was not sent", "task", taskID, "config", it.Config.ID,
			"sent_seq", it.DeliveredSeq, "seq", t.Seq)
		p.enqueue(ctx, taskID, delivery{config: it.Config, body: body, kind: kindSnapshot, seq: t.Seq, trace: t.Envelope.TraceParent,
			release: func() { <-p.catchUpSlots }})
	}
	return true
}

// backoff returns the delay after the n-th failed attempt.
func (p *Pusher) backoff(n int) time.Duration {
	return pushBackoff(p.opts).Delay(n)
}

// pushBackoff is the wait after a failed delivery attempt: InitialBackoff
// doubling per attempt up to MaxBackoff, less up to a fifth at random.
func pushBackoff(opts Options) backoff.Exponential {
	return backoff.Exponential{Initial: opts.InitialBackoff, Max: opts.MaxBackoff, Jitter: 0.2}
}

// post makes one delivery attempt. Its span (kind client, "push") is a
// child of the trace context stored with the task, and its context goes
// out in the traceparent header: the webhook's receiver joins the task's
// trace. With tracing off the span is a no-op that carries the stored
// context, which then goes out unchanged; a task stored without one sends
// none.
func (p *Pusher) post(ctx context.Context, d delivery, attempt int) (err error) {
	c := d.config
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	ctx, span := p.tracer.Start(task.ContextWithTraceParent(ctx, d.trace), "push",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(task.AttrTaskID.String(c.TaskID), attrPushConfig.String(c.ID),
			attrPushEvent.String(string(d.kind)), attrPushAttempt.Int(attempt)))
	defer func() {
		if err != nil && span.IsRecording() {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(d.body))
	if err != nil {
		return &permanentPushError{err}
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	req.Header.Set("Content-Type", pushContentType)
	if c.Token != "" {
		req.Header.Set(headerNotificationToken, c.Token)
		req.Header.Set(headerNotificationTokenBare, c.Token)
	}
	if len(c.Auth) > 0 {
		var auth a2a.PushAuthInfo
		if json.Unmarshal(c.Auth, &auth) == nil && auth.Scheme != "" && auth.Credentials != "" {
			req.Header.Set("Authorization", auth.Scheme+" "+auth.Credentials)
		}
	}
	resp, err := p.opts.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, pushResponseDrainLimit))
	_ = resp.Body.Close()
	span.SetAttributes(attrHTTPStatus.Int(resp.StatusCode))
	switch httpstatus.Classify(resp.StatusCode) {
	case httpstatus.OK:
		return nil
	case httpstatus.Retry:
		return fmt.Errorf("webhook answered %s", resp.Status)
	default:
		return &permanentPushError{fmt.Errorf("webhook answered %s", resp.Status)}
	}
}
