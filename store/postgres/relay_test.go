package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/store/postgres"
	"github.com/pactum/pactum/task"
	"github.com/pactum/pactum/task/relaytest"
)

// The relay tests run real nodes: two stores (two pools, as two processes
// would have) on one schema, each with its coordinator, or bare relays
// sending and listening. Polling is an hour, so whatever moves fast moved
// because a NOTIFY woke it.

// TestRelayConformance runs the relay suite (task/relaytest): two nodes,
// each with its own store and pool on one schema, linked by LISTEN/NOTIFY.
func TestRelayConformance(t *testing.T) {
	dsn := storeDSN(t)
	relaytest.Run(t, func(t *testing.T) relaytest.Open {
		schema := newSchema(t)
		return func(t *testing.T) (task.Store, task.Relay) {
			st := open(t, dsn, schema)
			return st, st.Relay()
		}
	})
}

// listenerPIDs returns the server processes listening on channel (whose
// last statement was the LISTEN).
func listenerPIDs(t *testing.T, channel string) []int {
	t.Helper()
	c := conn(t, "public")
	rows, err := c.Query(t.Context(), `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND query LIKE '%' || $1 || '%' ORDER BY pid`, channel)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pids []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pids
}

// waitListeners waits until n sessions listen on channel and returns their
// pids.
func waitListeners(t *testing.T, channel string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := listenerPIDs(t, channel)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions listen on %s, want %d", len(pids), channel, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listening is a running Listen.
type listening struct {
	events chan task.Event
	done   chan struct{} // closed when Listen returned err
	err    error
	stop   context.CancelFunc
}

// listen runs r.Listen until the test ends (or stop) and waits until the
// session listens, alongside others already on the channel.
func listen(t *testing.T, r task.Relay, channel string, others int) *listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &listening{events: make(chan task.Event, 4096), done: make(chan struct{}), stop: cancel}
	go func() {
		l.err = r.Listen(ctx, func(ev task.Event) { l.events <- ev })
		close(l.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-l.done:
		case <-time.After(5 * time.Second):
			t.Error("Listen did not return after its context ended")
		}
	})
	waitListeners(t, channel, others+1)
	// Listening begins with a resync (task.Relay): what was sent before is
	// not heard.
	select {
	case ev := <-l.events:
		if ev.Kind != task.EventResync {
			t.Fatalf("first delivery %s, want %s", ev.Kind, task.EventResync)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen delivered no resync when it started listening")
	}
	return l
}

// next returns the next delivered event.
func (l *listening) next(t *testing.T) task.Event {
	t.Helper()
	select {
	case ev := <-l.events:
		return ev
	case <-l.done:
		t.Fatalf("Listen returned %v while an event was awaited", l.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no event arrived")
	}
	return task.Event{}
}

func statusEvent(id string, seq int, state task.State) task.Event {
	at := time.Now().UTC().Truncate(time.Microsecond)
	return task.Event{Kind: task.EventStatus, TaskID: id, ContextID: "ctx-" + id, Seq: seq, State: state,
		Task: &task.Task{ID: id, ContextID: "ctx-" + id, State: state, Seq: seq, UpdatedAt: at}, At: at, Node: "sender",
		Final: state.Terminal()}
}

func chunkEvent(id string, seq int, text string) task.Event {
	return task.Event{Kind: task.EventArtifact, TaskID: id, Seq: seq, Node: "sender", At: time.Now().UTC(),
		Chunk: &task.ArtifactChunk{Artifact: task.Artifact{ID: "out", Parts: []task.Part{task.TextPart(text)}}, Append: true}}
}

// TestRelayManyEventsInOrder: a burst, sent several NOTIFYs a round trip,
// arrives whole and in order on another store.
func TestRelayManyEventsInOrder(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	sender, receiver := open(t, dsn, schema), open(t, dsn, schema)
	l := listen(t, receiver.Relay(), postgres.EventChannel(schema), 0)
	const tasks, perTask = 10, 100
	for seq := 1; seq <= perTask; seq++ {
		for i := range tasks {
			if seq%2 == 0 {
				sender.Relay().Send(chunkEvent(fmt.Sprintf("t%d", i), seq, fmt.Sprintf("%d", seq)))
			} else {
				sender.Relay().Send(statusEvent(fmt.Sprintf("t%d", i), seq, task.StateInProgress))
			}
		}
	}
	last := map[string]int{}
	for range tasks * perTask {
		ev := l.next(t)
		if ev.Seq != last[ev.TaskID]+1 {
			t.Fatalf("task %s: seq %d after %d", ev.TaskID, ev.Seq, last[ev.TaskID])
		}
		last[ev.TaskID] = ev.Seq
		if ev.Node != "sender" || ev.Complete {
			t.Fatalf("event %+v: node %q, complete %v", ev, ev.Node, ev.Complete)
		}
		if ev.Kind == task.EventArtifact && ev.Chunk.Artifact.Parts[0].Text != fmt.Sprint(ev.Seq) {
			t.Fatalf("chunk %q at seq %d", ev.Chunk.Artifact.Parts[0].Text, ev.Seq)
		}
	}
}

// TestRelayLargePayload: an event over the 8000-byte NOTIFY limit (a
// ~100 KB artifact chunk, non-ASCII included) crosses through the
// event_payloads table, in order with the small events around it, and the
// table is purged of old payloads.
func TestRelayLargePayload(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := storeDSN(t), newSchema(t)
	sender, receiver := open(t, dsn, schema), open(t, dsn, schema)
	c := conn(t, schema)
	// A payload left from long ago, for the purge.
	if _, err := c.Exec(ctx, `INSERT INTO event_payloads (channel, payload, created_at) VALUES ('old', '\x7b7d', now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	l := listen(t, receiver.Relay(), postgres.EventChannel(schema), 0)

	big := strings.Repeat("pactum streams a large chunk; é ü 日本 😀\n", 100<<10/40)
	snap := statusEvent("t1", 3, task.StateInProgress)
	snap.Task.Envelope.Input = task.Message{ID: "m", Role: task.RoleUser, Parts: []task.Part{task.TextPart(strings.Repeat("a", 20000))}}
	sent := []task.Event{statusEvent("t1", 1, task.StateInProgress), chunkEvent("t1", 2, big), snap, chunkEvent("t1", 4, "small")}
	for _, ev := range sent {
		sender.Relay().Send(ev)
	}
	for i, want := range sent {
		got := l.next(t)
		if got.Seq != want.Seq || got.Kind != want.Kind {
			t.Fatalf("event %d: %s seq %d, want %s seq %d", i, got.Kind, got.Seq, want.Kind, want.Seq)
		}
		if want.Chunk != nil && got.Chunk.Artifact.Parts[0].Text != want.Chunk.Artifact.Parts[0].Text {
			t.Fatalf("event %d: chunk of %d bytes differs from the %d sent", i, len(got.Chunk.Artifact.Parts[0].Text), len(want.Chunk.Artifact.Parts[0].Text))
		}
		if want.Task != nil && (got.Task == nil || got.Task.Envelope.Input.Text() != want.Task.Envelope.Input.Text() || !got.At.Equal(want.At)) {
			t.Fatalf("event %d: snapshot or time differs", i)
		}
	}
	var stored int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM event_payloads WHERE created_at > now() - interval '1 minute'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 2 {
		t.Errorf("%d recent stored payloads, want 2 (the large chunk and the large snapshot)", stored)
	}
	// The first batch that stored a payload purges old ones.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var old int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM event_payloads WHERE created_at < now() - interval '10 minutes'`).Scan(&old); err != nil {
			t.Fatal(err)
		}
		if old == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d old payloads left, want them purged", old)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRelayIsolation: a relay on one schema does not hear another
// schema's events, in the same database.
func TestRelayIsolation(t *testing.T) {
	t.Parallel()
	dsn := storeDSN(t)
	schemaX, schemaY := newSchema(t), newSchema(t)
	if postgres.EventChannel(schemaX) == postgres.EventChannel(schemaY) {
		t.Fatal("two schemas share a channel")
	}
	// Each schema has a listening store and a sending one: a relay does
	// not hear its own events.
	x, y := open(t, dsn, schemaX), open(t, dsn, schemaY)
	xs, ys := open(t, dsn, schemaX), open(t, dsn, schemaY)
	lx := listen(t, x.Relay(), postgres.EventChannel(schemaX), 0)
	ly := listen(t, y.Relay(), postgres.EventChannel(schemaY), 0)
	xs.Relay().Send(statusEvent("on-x", 1, task.StateQueued))
	if ev := lx.next(t); ev.TaskID != "on-x" {
		t.Fatalf("X heard %s, want on-x", ev.TaskID)
	}
	// Y's marker was committed after X's event: a listener that heard both
	// channels would get X's event first.
	ys.Relay().Send(statusEvent("on-y", 1, task.StateQueued))
	if ev := ly.next(t); ev.TaskID != "on-y" {
		t.Fatalf("Y heard %s, want only on-y", ev.TaskID)
	}
	if n := len(postgres.EventChannel(strings.Repeat("s", 200))); n > 63 {
		t.Errorf("channel of a long schema name is %d bytes, over PostgreSQL's 63", n)
	}
}

// TestRelaySkipsItsOwnEvents: a relay's Listen does not deliver what the
// same relay sent (its Coordinator published those itself), small or
// stored as a large payload, while another relay on the schema hears them
// all.
func TestRelaySkipsItsOwnEvents(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	channel := postgres.EventChannel(schema)
	a, b := open(t, dsn, schema), open(t, dsn, schema)
	la := listen(t, a.Relay(), channel, 0)
	lb := listen(t, b.Relay(), channel, 1)
	large := chunkEvent("own", 2, strings.Repeat("a large chunk of a's own ", 1000))
	a.Relay().Send(statusEvent("own", 1, task.StateInProgress))
	a.Relay().Send(large)
	// b hears both (so both were notified), then sends its own marker.
	for i, want := range []int{1, 2} {
		if ev := lb.next(t); ev.TaskID != "own" || ev.Seq != want {
			t.Fatalf("b's event %d: %s seq %d, want own seq %d", i, ev.TaskID, ev.Seq, want)
		}
	}
	b.Relay().Send(statusEvent("marker", 1, task.StateQueued))
	// a's events were notified before b's marker: had a delivered them,
	// they would come first.
	if ev := la.next(t); ev.TaskID != "marker" {
		t.Fatalf("a delivered %s seq %d first, want b's marker: its own events come back", ev.TaskID, ev.Seq)
	}
}

// TestRelayListenerRecovery: when the server ends the listening session,
// Listen returns an error; listening again works and events flow again.
func TestRelayListenerRecovery(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	channel := postgres.EventChannel(schema)
	sender, receiver := open(t, dsn, schema), open(t, dsn, schema)
	l := listen(t, receiver.Relay(), channel, 0)
	sender.Relay().Send(statusEvent("t", 1, task.StateQueued))
	if ev := l.next(t); ev.Seq != 1 {
		t.Fatalf("seq %d, want 1", ev.Seq)
	}
	pids := listenerPIDs(t, channel)
	if len(pids) != 1 {
		t.Fatalf("listener pids %v, want one", pids)
	}
	admin(t, `SELECT pg_terminate_backend($1)`, pids[0])
	select {
	case <-l.done:
		if l.err == nil {
			t.Fatal("Listen returned nil after its session was terminated")
		}
		t.Logf("Listen after pg_terminate_backend: %v", l.err)
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after its session was terminated")
	}
	// The terminated session may still be listed until it has exited.
	deadline := time.Now().Add(10 * time.Second)
	for slicesContain(listenerPIDs(t, channel), pids[0]) {
		if time.Now().After(deadline) {
			t.Fatal("the terminated listener is still there")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l2 := listen(t, receiver.Relay(), channel, 0)
	sender.Relay().Send(statusEvent("t", 2, task.StateInProgress))
	if ev := l2.next(t); ev.Seq != 2 {
		t.Fatalf("after listening again: seq %d, want 2", ev.Seq)
	}
}

func slicesContain(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRelayMalformedPayload: notifications on the channel that are not
// pactum events, or that name a payload that does not exist, are skipped;
// later events still arrive.
func TestRelayMalformedPayload(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	channel := postgres.EventChannel(schema)
	s, sender := open(t, dsn, schema), open(t, dsn, schema)
	l := listen(t, s.Relay(), channel, 0)
	for _, junk := range []string{
		"junk",
		"",
		"null",
		`[]`,
		`{"v":2,"kind":"status","task":"t","state":"queued"}`,
		`{"v":1}`,
		`{"v":1,"ref":987654321}`,
		`{"v":1,"ref":-1}`,
		`{"v":1,"kind":"artifact","task":"t"}`,
		`{"v":1,"kind":"status","task":"t"}`,
		`{"v":1,"kind":"other","task":"t","state":"queued"}`,
		`{"v":1,"kind":"status","task":"t","state":"queued","snap":"not a task"}`,
	} {
		admin(t, `SELECT pg_notify($1, $2)`, channel, junk)
	}
	sender.Relay().Send(statusEvent("good", 1, task.StateQueued))
	if ev := l.next(t); ev.TaskID != "good" {
		t.Fatalf("delivered %+v, want only the good event", ev)
	}
	select {
	case <-l.done:
		t.Fatalf("Listen returned %v", l.err)
	default:
	}
}

// TestRelayClosedWithStore: closing the store ends Listen; afterwards Send
// does nothing and Listen returns at once.
func TestRelayClosedWithStore(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	s, err := postgres.OpenWith(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Relay()
	if s.Relay() != r {
		t.Error("Relay returned two relays")
	}
	l := listen(t, r, postgres.EventChannel(schema), 0)
	open(t, dsn, schema).Relay().Send(statusEvent("t", 1, task.StateQueued))
	l.next(t)
	closed := make(chan struct{})
	go func() {
		_ = s.Close()
		close(closed)
	}()
	select {
	case <-l.done:
		if l.err == nil {
			t.Error("Listen returned nil when the store closed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return when the store closed")
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	r.Send(statusEvent("t", 2, task.StateQueued))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Listen(ctx, func(task.Event) {}); err == nil || ctx.Err() != nil {
		t.Errorf("Listen after Close = %v, want an error at once", err)
	}
	if err := s.Relay().Listen(ctx, func(task.Event) {}); err == nil || ctx.Err() != nil {
		t.Errorf("Listen of a relay made after Close = %v, want an error at once", err)
	}
	_ = s.Close()
}

// The channel on which the nodes of the "pactum" schema relay task events;
// `LISTEN pactum_events_5510be4bb8a594fe` in psql shows them.
func ExampleEventChannel() {
	fmt.Println(postgres.EventChannel("pactum"))
	// Output: pactum_events_5510be4bb8a594fe
}

// BenchmarkRelay measures events from one store's Send to another store's
// Listen, through a real server: ns/op is the cost per event when many are
// in flight (several NOTIFYs a round trip).
func BenchmarkRelay(b *testing.B) {
	dsn, schema := storeDSN(b), newSchema(b)
	sender, receiver := open(b, dsn, schema), open(b, dsn, schema)
	got := make(chan struct{}, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = receiver.Relay().Listen(ctx, func(ev task.Event) {
			if ev.Kind != task.EventResync {
				got <- struct{}{}
			}
		})
	}()
	defer func() { cancel(); <-done }()
	// Wait until the listener hears an event.
	for ready := false; !ready; {
		sender.Relay().Send(statusEvent("warm-up", 1, task.StateQueued))
		select {
		case <-got:
			ready = true
		case <-time.After(50 * time.Millisecond):
		}
	}
	for len(got) > 0 {
		<-got
	}
	// At most 1000 events in flight, well within the send queue's bound:
	// a sender that outruns the database has its oldest events dropped.
	window := make(chan struct{}, 1000)
	ev := statusEvent("t", 1, task.StateInProgress)
	b.ResetTimer()
	go func() {
		for range b.N {
			window <- struct{}{}
			sender.Relay().Send(ev)
		}
	}()
	for range b.N {
		<-got
		<-window
	}
}

// TestRelayPushConfigEvent: the note that a task's push configs changed
// crosses like any event, so the node running the task reads them again.
func TestRelayPushConfigEvent(t *testing.T) {
	t.Parallel()
	dsn, schema := storeDSN(t), newSchema(t)
	sender, receiver := open(t, dsn, schema), open(t, dsn, schema)
	l := listen(t, receiver.Relay(), postgres.EventChannel(schema), 0)
	sender.Relay().Send(task.Event{Kind: task.EventPushConfig, TaskID: "t-push", Node: "sender", At: time.Now().UTC()})
	if ev := l.next(t); ev.Kind != task.EventPushConfig || ev.TaskID != "t-push" || ev.Node != "sender" {
		t.Fatalf("delivered %+v, want the push-config event of t-push from sender", ev)
	}
}
