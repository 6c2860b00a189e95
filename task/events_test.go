package task

import "testing"

func TestBrokerDeliversPerTaskAndGlobal(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	one, cancelOne := b.Subscribe("a")
	all, cancelAll := b.Subscribe("")
	defer cancelAll()
	b.Publish(Event{TaskID: "a", Seq: 1})
	b.Publish(Event{TaskID: "b", Seq: 2})
	if ev := <-one; ev.TaskID != "a" {
		t.Fatalf("task subscriber got %+v", ev)
	}
	select {
	case ev := <-one:
		t.Fatalf("task subscriber got foreign event %+v", ev)
	default:
	}
	if a, b := <-all, <-all; a.Seq != 1 || b.Seq != 2 {
		t.Fatalf("global subscriber got %d, %d", a.Seq, b.Seq)
	}
	cancelOne()
	cancelOne() // twice is safe
	if _, ok := <-one; ok {
		t.Fatal("channel open after cancel")
	}
}

func TestBrokerDropsSlowSubscriber(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	ch, cancel := b.Subscribe("a")
	defer cancel()
	for i := range subscriberBuffer + 1 {
		b.Publish(Event{TaskID: "a", Seq: i})
	}
	n := 0
	for range ch {
		n++
	}
	if n != subscriberBuffer {
		t.Fatalf("received %d events before close, want %d", n, subscriberBuffer)
	}
}

func TestAccumulatorMergesChunks(t *testing.T) {
	t.Parallel()
	a := newAccumulator()
	a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("hel")}}})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("lo")}}, Append: true, LastChunk: true})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "y", Parts: []Part{TextPart("other")}}})
	got := a.merge([]Artifact{{ID: "y", Parts: []Part{TextPart("final y")}}, {Parts: []Part{TextPart("z")}}})
	if len(got) != 3 || got[0].ID != "x" || got[0].Parts[0].Text != "hello" || got[1].Parts[0].Text != "final y" || got[2].ID == "" {
		t.Fatalf("merge = %+v", got)
	}
}

// TestAccumulatorAppendsAcrossParts: text chunks appended to a text part
// join it, a chunk of another kind starts a part after it (the text so far
// kept), text after that starts a new text part, and an artifact sent again
// without Append starts over; merging twice gives the same artifacts.
func TestAccumulatorAppendsAcrossParts(t *testing.T) {
	t.Parallel()
	a := newAccumulator()
	a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("")}}})
	for _, w := range []string{"one", " two", " three"} {
		a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart(w)}}, Append: true})
	}
	a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{{Kind: PartData, Data: []byte(`{"n":1}`)}}}, Append: true})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("four"), TextPart(" five")}}, Append: true, LastChunk: true})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "y", Parts: []Part{TextPart("old")}}})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "y", Parts: []Part{TextPart(" more")}}, Append: true})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "y", Parts: []Part{TextPart("new")}}})
	a.add(ArtifactChunk{Artifact: Artifact{ID: "y", Parts: []Part{TextPart("er")}}, Append: true})
	for range 2 {
		got := a.merge(nil)
		if len(got) != 2 {
			t.Fatalf("merge = %+v, want 2 artifacts", got)
		}
		x := got[0].Parts
		if len(x) != 3 || x[0].Text != "one two three" || x[1].Kind != PartData || string(x[1].Data) != `{"n":1}` || x[2].Text != "four five" {
			t.Fatalf("x = %+v", x)
		}
		if y := got[1].Parts; len(y) != 1 || y[0].Text != "newer" {
			t.Fatalf("y = %+v", y)
		}
	}
}

// BenchmarkAccumulatorTokens streams a 40 KB answer a 4-byte token a chunk
// into one artifact: linear in the chunks (each appended once), where
// concatenating each to the part's string copied the whole text so far.
func BenchmarkAccumulatorTokens(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		a := newAccumulator()
		a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("")}}})
		for range 10000 {
			a.add(ArtifactChunk{Artifact: Artifact{ID: "x", Parts: []Part{TextPart("tok ")}}, Append: true})
		}
		if got := a.merge(nil); len(got[0].Parts[0].Text) != 40000 {
			b.Fatalf("text of %d bytes", len(got[0].Parts[0].Text))
		}
	}
}

// TestBrokerFuncSubscriberSurvivesResetAndBursts: a SubscribeFunc
// subscriber sees every event of a burst larger than any buffer, hears a
// Reset as an EventResync instead of losing its subscription, and is not
// called after its cancel returned.
func TestBrokerFuncSubscriberSurvivesResetAndBursts(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	var got []Event
	cancel := b.SubscribeFunc(func(ev Event) { got = append(got, ev) })
	for i := range 3 * subscriberBuffer {
		b.Publish(Event{TaskID: "a", Seq: i})
	}
	b.Reset()
	b.Publish(Event{TaskID: "b", Seq: 1})
	cancel()
	b.Publish(Event{TaskID: "c", Seq: 1})
	b.Reset()
	if len(got) != 3*subscriberBuffer+2 {
		t.Fatalf("got %d events, want %d", len(got), 3*subscriberBuffer+2)
	}
	for i, ev := range got[:3*subscriberBuffer] {
		if ev.Seq != i {
			t.Fatalf("event %d has seq %d: out of order", i, ev.Seq)
		}
	}
	if got[3*subscriberBuffer].Kind != EventResync || got[3*subscriberBuffer+1].TaskID != "b" {
		t.Fatalf("after the burst got %+v, %+v; want a resync then b's event", got[3*subscriberBuffer], got[3*subscriberBuffer+1])
	}
}

// TestBrokerQueueIsNeverDropped: a queue subscriber past its limit keeps
// its subscription, discards its backlog and says so (and whether chunks
// were among the discarded); Reset marks it lost without chunks.
func TestBrokerQueueIsNeverDropped(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	q, cancel := b.subscribeQueue("a", 4)
	defer cancel()
	for i := range 4 {
		b.Publish(Event{TaskID: "a", Kind: EventStatus, Seq: i})
	}
	b.Publish(Event{TaskID: "a", Kind: EventStatus, Seq: 4}) // over the limit
	b.Publish(Event{TaskID: "a", Kind: EventArtifact, Seq: 4})
	evs, lost, chunks := q.take(nil)
	if !lost || chunks || len(evs) != 1 || evs[0].Kind != EventArtifact {
		t.Fatalf("after a status overflow: %+v lost=%v chunks=%v", evs, lost, chunks)
	}
	for range 5 {
		b.Publish(Event{TaskID: "a", Kind: EventArtifact})
	}
	b.Publish(Event{TaskID: "b", Kind: EventArtifact})
	evs, lost, chunks = q.take(evs)
	if !lost || !chunks || len(evs) != 0 {
		t.Fatalf("after a chunk overflow: %+v lost=%v chunks=%v", evs, lost, chunks)
	}
	if evs, lost, _ = q.take(evs); lost || len(evs) != 0 {
		t.Fatalf("nothing pending: %+v lost=%v", evs, lost)
	}
	b.Reset()
	b.Publish(Event{TaskID: "a", Kind: EventStatus, Seq: 9})
	evs, lost, chunks = q.take(evs)
	if !lost || chunks || len(evs) != 1 || evs[0].Seq != 9 {
		t.Fatalf("after Reset: %+v lost=%v chunks=%v", evs, lost, chunks)
	}
	select {
	case <-q.ready:
	default:
		t.Fatal("no token after publishing")
	}
	cancel()
	b.Publish(Event{TaskID: "a", Kind: EventStatus, Seq: 10})
	if evs, lost, _ = q.take(evs); lost || len(evs) != 0 {
		t.Fatalf("after cancel: %+v lost=%v", evs, lost)
	}
}

func TestBrokerCountsOpenSubscriptions(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	count := func(want int, when string) {
		t.Helper()
		if got := b.Subscribers(); got != want {
			t.Fatalf("Subscribers() = %d %s, want %d", got, when, want)
		}
	}
	count(0, "at first")
	_, cancelA := b.Subscribe("a")
	_, cancelA2 := b.subscribe("a", waiterBuffer)
	_, cancelAll := b.Subscribe("")
	_, cancelQ := b.subscribeQueue("b", 4)
	cancelFn := b.SubscribeFunc(func(Event) {})
	defer cancelFn()
	count(4, "with two subscriptions to a task, one to all tasks and a queue (SubscribeFunc not counted)")
	cancelA()
	cancelA() // twice counts once
	count(3, "after one was ended twice")
	// A waiter that overflows is dropped: nobody reads it any more.
	for i := range waiterBuffer + 1 {
		b.Publish(Event{TaskID: "a", Seq: i})
	}
	count(2, "after the overflowing waiter was dropped")
	cancelA2()
	cancelAll()
	count(1, "after the waiter's late cancel and the all-tasks subscriber's")
	// A queue past its limit is kept (its consumer re-reads the task).
	for i := range 10 {
		b.Publish(Event{TaskID: "b", Seq: i})
	}
	count(1, "with the overflowing queue")
	cancelQ()
	count(0, "after every subscription ended")
}

// A final-only subscription is sent only final events: any number of
// others do not overflow it.
func TestBrokerFinalOnlySubscription(t *testing.T) {
	t.Parallel()
	b := NewBroker()
	ch, cancel := b.subscribeFinal("a", waiterBuffer)
	defer cancel()
	for i := range 10 * waiterBuffer {
		b.Publish(Event{TaskID: "a", Kind: EventArtifact, Seq: i})
	}
	b.Publish(Event{TaskID: "a", Seq: 99, Final: true})
	if ev, ok := <-ch; !ok || !ev.Final || ev.Seq != 99 {
		t.Fatalf("first event %+v (open %v), want the final one", ev, ok)
	}
	if got := b.Subscribers(); got != 1 {
		t.Fatalf("Subscribers() = %d, want the final-only one kept", got)
	}
}

// BenchmarkPublishChunk publishes an artifact chunk of a task one waiter
// follows, with two SubscribeFunc subscribers (pactum's own consumers, as
// push and metrics): what every streamed token costs the broker.
func BenchmarkPublishChunk(b *testing.B) {
	br := NewBroker()
	for range 2 {
		defer br.SubscribeFunc(func(Event) {})()
	}
	_, cancel := br.subscribeFinal("a", waiterBuffer)
	defer cancel()
	ev := Event{TaskID: "a", Kind: EventArtifact}
	b.ReportAllocs()
	for b.Loop() {
		br.Publish(ev)
	}
}
