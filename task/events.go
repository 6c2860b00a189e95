package task

import (
	"slices"
	"sync"
	"time"
)

// EventKind classifies task events.
type EventKind string

// Event kinds.
const (
	EventStatus   EventKind = "status"
	EventArtifact EventKind = "artifact"
	// EventPushConfig says a task's push configs changed on another node,
	// so a node that caches them reads them again. It travels only
	// between nodes (Relay).
	EventPushConfig EventKind = "push_config"
	// EventResync is what a Relay delivers each time it starts listening:
	// events sent before may have been missed (see Relay).
	EventResync EventKind = "resync"
)

// Event is one change of a task, published after it was committed (status)
// or as an agent streamed it (artifact chunk).
type Event struct {
	Kind      EventKind
	TaskID    string
	ContextID string
	// Seq is the task's record sequence when the event was published.
	Seq int
	// State and Task are set for status events: the new state and the task
	// snapshot (without history) right after the transition.
	State State
	Task  *Task
	// Complete says Task carries its whole history and all its artifacts
	// (the event of an attempt's result on the node that ran it); otherwise
	// Task has neither and a consumer that needs them reads the task.
	Complete bool
	// Message is the status message, if any.
	Message *Message
	// Chunk is set for artifact events.
	Chunk *ArtifactChunk
	// Final is true when the task reached a terminal or interrupted state.
	Final bool
	At    time.Time
	// Node is set on events that came from another node through a Relay
	// (the node that published them); it is empty on this node's own
	// events, so a consumer that must act once per event cluster-wide
	// (push delivery) skips events whose Node is set.
	Node string
}

// Broker fans task events out to in-process subscribers. Slow subscribers
// never block publishers: a channel subscriber whose buffer is full is
// dropped and its channel closed, so it can resume from the stored state;
// a queue subscriber (Follow's) is kept and told that it lost events.
type Broker struct {
	mu     sync.Mutex
	byTask map[string]map[*subscription]struct{}
	all    map[*subscription]struct{}
	// funcs is a slice, not a set: Publish runs through it for every
	// event (a streamed answer's every chunk), and starting a map's
	// iteration costs more than the call it leads to.
	funcs []*funcSubscription
}

// funcSubscription is a SubscribeFunc subscriber.
type funcSubscription struct{ fn func(Event) }

type subscription struct {
	ch chan Event
	// q, when set, replaces ch: the subscriber is a queue.
	q *queue
	// finalOnly: the subscriber reads only Final events (a blocking
	// request waiting for its task's end); the others are not sent.
	finalOnly bool
	closed    bool
}

// queue is a subscriber's backlog that holds only what is pending (a
// channel allocates its whole buffer up front: ~40 KB for 256 events, per
// stream) and is bounded by limit. A queue is never dropped: past its limit
// it discards its backlog and marks itself lost, and its consumer re-reads
// the stored task, then goes on with the events published after.
type queue struct {
	mu     sync.Mutex
	events []Event
	limit  int
	// lost says events were discarded (or, after Broker.Reset, may have
	// been missed) since the consumer last took; chunks says an artifact
	// chunk was among the discarded, which no stored status shows.
	lost, chunks bool
	// ready holds a token while something is pending.
	ready chan struct{}
}

func newQueue(limit int) *queue {
	return &queue{limit: limit, ready: make(chan struct{}, 1)}
}

// push appends ev, or discards the backlog when it is full. It never
// blocks.
func (q *queue) push(ev Event) {
	q.mu.Lock()
	if len(q.events) >= q.limit {
		for _, d := range q.events {
			q.chunks = q.chunks || d.Kind == EventArtifact
		}
		q.chunks = q.chunks || ev.Kind == EventArtifact
		clear(q.events)
		q.events = q.events[:0]
		q.lost = true
	} else {
		q.events = append(q.events, ev)
	}
	q.mu.Unlock()
	q.signal()
}

// markLost says events may have been missed (Broker.Reset).
func (q *queue) markLost() {
	q.mu.Lock()
	q.lost = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns what is pending, in publication order, and whether events
// were lost before them (and whether artifact chunks were). spare, a slice
// take returned before and the caller is done with, is reused for the
// backlog that follows.
func (q *queue) take(spare []Event) (evs []Event, lost, chunks bool) {
	clear(spare)
	q.mu.Lock()
	evs, lost, chunks = q.events, q.lost, q.chunks
	q.events, q.lost, q.chunks = spare[:0], false, false
	q.mu.Unlock()
	return evs, lost, chunks
}

// NewBroker returns an empty broker.
func NewBroker() *Broker {
	return &Broker{byTask: map[string]map[*subscription]struct{}{}, all: map[*subscription]struct{}{}}
}

// subscriberBuffer bounds each streaming subscriber's backlog.
const subscriberBuffer = 256

// waiterBuffer is the backlog of a subscriber that only waits for a task's
// final event (SubmitAndWait, Wait). A waiter that overflows re-reads the
// store, so it needs little room, and a blocking request then does not
// allocate a streaming-sized channel (~35 KB) it never fills.
const waiterBuffer = 8

// Subscribe returns a channel of events for taskID ("" for every task) and a
// function that ends the subscription. The channel is closed when the
// subscription ends or overflows.
func (b *Broker) Subscribe(taskID string) (<-chan Event, func()) {
	return b.subscribe(taskID, subscriberBuffer)
}

func (b *Broker) subscribe(taskID string, buffer int) (<-chan Event, func()) {
	s := &subscription{ch: make(chan Event, buffer)}
	return s.ch, b.add(taskID, s)
}

// subscribeFinal is subscribe for a subscriber that reads only taskID's
// Final events (SubmitAndWait): the others are not sent to it. The
// blocking request's own goroutine may run the attempt before it reads,
// and an agent that streams its answer a token a chunk would otherwise
// overflow the small buffer with chunks nobody reads, and the request
// would read its task back from the store instead of taking it from the
// final event.
func (b *Broker) subscribeFinal(taskID string, buffer int) (<-chan Event, func()) {
	s := &subscription{ch: make(chan Event, buffer), finalOnly: true}
	return s.ch, b.add(taskID, s)
}

// subscribeQueue subscribes a queue of at most limit pending events to
// taskID's events ("" for every task).
func (b *Broker) subscribeQueue(taskID string, limit int) (*queue, func()) {
	s := &subscription{q: newQueue(limit)}
	return s.q, b.add(taskID, s)
}

// add registers s and returns the function that ends it.
func (b *Broker) add(taskID string, s *subscription) func() {
	b.mu.Lock()
	if taskID == "" {
		b.all[s] = struct{}{}
	} else {
		m := b.byTask[taskID]
		if m == nil {
			m = map[*subscription]struct{}{}
			b.byTask[taskID] = m
		}
		m[s] = struct{}{}
	}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.remove(taskID, s)
	}
}

// Subscribers returns how many channel and queue subscriptions are open:
// one per stream following a task (SubscribeToTask, a streaming send, an
// MCP wait) and per blocking request waiting for its task's end. It
// counts neither SubscribeFunc subscribers (pactum's own consumers) nor a
// subscription dropped for overflowing, which its holder no longer reads.
// A subscription whose caller went away must leave this count: what
// stays is held for nobody.
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.all)
	for _, m := range b.byTask {
		n += len(m)
	}
	return n
}

// SubscribeFunc calls fn with every task's events, synchronously, in
// publication order, until the returned function is called; once it has
// returned fn is not called again. fn runs while the broker is locked: it
// must return at once, never block, and never call the broker. Unlike a
// channel subscription it is never dropped: Reset calls it with an Event
// of Kind EventResync instead, so a consumer that keeps its own bounded
// queues can tell a resync, which loses none of this node's events, from
// an overflow of its own.
func (b *Broker) SubscribeFunc(fn func(Event)) (cancel func()) {
	s := &funcSubscription{fn: fn}
	b.mu.Lock()
	b.funcs = append(b.funcs, s)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.funcs = slices.DeleteFunc(b.funcs, func(f *funcSubscription) bool { return f == s })
		b.mu.Unlock()
	}
}

func (b *Broker) remove(taskID string, s *subscription) {
	if taskID == "" {
		delete(b.all, s)
	} else if m := b.byTask[taskID]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(b.byTask, taskID)
		}
	}
	if !s.closed {
		s.closed = true
		if s.ch != nil {
			close(s.ch)
		}
	}
}

// Reset ends every channel subscription (their channels close), so each
// consumer re-reads the stored state, as after an overflow, marks every
// queue lost, which makes its consumer re-read, and tells each
// SubscribeFunc subscriber with an Event of Kind EventResync.
func (b *Broker) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.funcs {
		s.fn(Event{Kind: EventResync, At: time.Now()})
	}
	for id, m := range b.byTask {
		for s := range m {
			if s.q != nil {
				s.q.markLost()
				continue
			}
			b.remove(id, s)
		}
	}
	for s := range b.all {
		if s.q != nil {
			s.q.markLost()
			continue
		}
		b.remove("", s)
	}
}

// Publish delivers ev to the task's subscribers and to global ones.
func (b *Broker) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// An empty set is not ranged over: that starts an iteration all the
	// same.
	if m := b.byTask[ev.TaskID]; len(m) > 0 {
		for s := range m {
			b.send(ev.TaskID, s, ev)
		}
	}
	if len(b.all) > 0 {
		for s := range b.all {
			b.send("", s, ev)
		}
	}
	for _, s := range b.funcs {
		s.fn(ev)
	}
}

func (b *Broker) send(taskID string, s *subscription, ev Event) {
	if s.q != nil {
		s.q.push(ev)
		return
	}
	if s.finalOnly && !ev.Final {
		return
	}
	select {
	case s.ch <- ev:
	default:
		b.remove(taskID, s)
	}
}
