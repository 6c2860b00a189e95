package a2aserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/internal/syncbuf"
	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/task"
)

// pushed is one webhook request a receiver got.
type pushed struct {
	path   string
	header http.Header
	body   []byte
	event  a2a.Event
}

// receiver is a webhook endpoint on loopback. It answers 503 to the first
// request on each path listed in failFirst, 200 otherwise.
type receiver struct {
	srv       *httptest.Server
	mu        sync.Mutex
	got       []pushed
	failFirst map[string]bool
	arrived   chan struct{}
}

func newReceiver(t *testing.T, failFirst ...string) *receiver {
	r := &receiver{failFirst: map[string]bool{}, arrived: make(chan struct{}, 1)}
	for _, p := range failFirst {
		r.failFirst[p] = true
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var sr a2a.StreamResponse
		_ = json.Unmarshal(body, &sr)
		r.mu.Lock()
		r.got = append(r.got, pushed{path: req.URL.Path, header: req.Header.Clone(), body: body, event: sr.Event})
		fail := r.failFirst[req.URL.Path]
		delete(r.failFirst, req.URL.Path)
		r.mu.Unlock()
		select {
		case r.arrived <- struct{}{}:
		default:
		}
		if fail {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// on returns what arrived on path.
func (r *receiver) on(path string) []pushed {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []pushed
	for _, p := range r.got {
		if p.path == path {
			out = append(out, p)
		}
	}
	return out
}

// waitFinal waits until path received a status update in state.
func (r *receiver) waitFinal(t *testing.T, path string, state a2a.TaskState) []pushed {
	t.Helper()
	ctx := testCtx(t)
	for {
		got := r.on(path)
		for _, p := range got {
			if su, ok := p.event.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == state {
				return got
			}
		}
		select {
		case <-r.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("no %s status arrived on %s; got %d requests", state, path, len(got))
		}
	}
}

func TestPushDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.opts.AllowPrivatePush = true
		c.opts.Push = push.Options{InitialBackoff: 5 * time.Millisecond, MaxAttempts: 4}
	})
	recv := newReceiver(t, "/hook")
	ctx := testCtx(t)
	c := b.client("slow", a2a.TransportProtocolJSONRPC)

	// One config comes with the message, one is created while the task runs.
	req := sendReq(userMessage("notify me"))
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/hook", Token: "tok-1"}}
	tk := send(ctx, t, c, req)
	b.waitStarted()
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{
		TaskID: tk.ID, ID: "with-auth", URL: recv.srv.URL + "/auth",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "s3cret"},
	}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: tk.ID})
	if err != nil || len(list) != 2 {
		t.Fatalf("configs = %v, %v; want 2", list, err)
	}
	b.releaseAll()

	for _, path := range []string{"/hook", "/auth"} {
		got := recv.waitFinal(t, path, a2a.TaskStateCompleted)
		var sawResult bool
		for i, p := range got {
			if ct := p.header.Get("Content-Type"); ct != "application/a2a+json" {
				t.Errorf("%s #%d: Content-Type %q", path, i, ct)
			}
			if p.event == nil {
				t.Fatalf("%s #%d: body is not a StreamResponse: %s", path, i, p.body)
			}
			if p.event.TaskInfo().TaskID != tk.ID {
				t.Errorf("%s #%d: task %s, want %s", path, i, p.event.TaskInfo().TaskID, tk.ID)
			}
			switch path {
			case "/hook":
				if p.header.Get("X-A2A-Notification-Token") != "tok-1" || p.header.Get("A2A-Notification-Token") != "tok-1" {
					t.Errorf("%s #%d: token headers %v", path, i, p.header)
				}
			case "/auth":
				if p.header.Get("Authorization") != "Bearer s3cret" || p.header.Get("X-A2A-Notification-Token") != "" {
					t.Errorf("%s #%d: Authorization %q, token %q", path, i, p.header.Get("Authorization"), p.header.Get("X-A2A-Notification-Token"))
				}
			}
			if au, ok := p.event.(*a2a.TaskArtifactUpdateEvent); ok && au.Artifact.ID == "result" && artifactText(au.Artifact) == "done" {
				sawResult = true
			}
			if su, ok := p.event.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateCompleted {
				if !sawResult {
					t.Errorf("%s: the completed status came before the result artifact", path)
				}
				if pactumMetaMap(su.Metadata)["state"] != "succeeded" {
					t.Errorf("%s: status metadata %v", path, su.Metadata)
				}
			}
		}
	}
	// The first delivery to /hook was answered 503 and was retried.
	hook := recv.on("/hook")
	if len(hook) < 2 || string(hook[0].body) != string(hook[1].body) {
		t.Fatalf("the refused first delivery was not retried: %d requests", len(hook))
	}
}

// A configuration sent with the message sees the task from its first
// event, even when the agent finishes before the configuration is stored.
func TestPushInlineConfigFastAgent(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.AllowPrivatePush = true })
	recv := newReceiver(t)
	ctx := testCtx(t)
	for _, proto := range transports {
		c := b.client("echo", proto)
		for i := range 10 {
			path := fmt.Sprintf("/%s/%d", proto, i)
			req := sendReq(userMessage("quick"))
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: i%2 == 0, PushConfig: &a2a.PushConfig{URL: recv.srv.URL + path, Token: "t"}}
			tk := send(ctx, t, c, req)
			got := recv.waitFinal(t, path, a2a.TaskStateCompleted)
			// The core publishes SUBMITTED, or WORKING when it claims the
			// task in its submit transaction; either way that first status
			// reaches the webhook.
			first, ok := got[0].event.(*a2a.TaskStatusUpdateEvent)
			if !ok || (first.Status.State != a2a.TaskStateSubmitted && first.Status.State != a2a.TaskStateWorking) || first.TaskID != tk.ID {
				t.Fatalf("%s: first push = %#v, want the first status of %s", path, got[0].event, tk.ID)
			}
		}
	}
}

func TestPushRefusedAtDelivery(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	b := setup(t, func(c *setupConfig) {
		c.opts.Logger = slogTo(&logs)
	})
	recv := newReceiver(t)
	ctx := testCtx(t)
	c := b.client("slow", a2a.TransportProtocolJSONRPC)
	req := sendReq(userMessage("sneaky"))
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	tk := send(ctx, t, c, req)
	b.waitStarted()
	// A config that was accepted earlier (say, by a server that allowed
	// private push) is refused when delivering.
	if err := b.store.PutPushConfig(ctx, task.PushConfig{TaskID: string(tk.ID), ID: "old", URL: recv.srv.URL + "/hook", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}, nil); err != nil {
		t.Fatal(err)
	}
	b.srv.Pusher().Invalidate(string(tk.ID))
	b.releaseAll()
	b.waitState(string(tk.ID), task.StateSucceeded)
	for !strings.Contains(logs.String(), "push: destination refused") {
		select {
		case <-ctx.Done():
			t.Fatalf("no refusal logged:\n%s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := len(recv.on("/hook")); n != 0 {
		t.Fatalf("the loopback receiver got %d requests, want none", n)
	}
}

func pactumMetaMap(m map[string]any) map[string]any {
	p, _ := m["pactum"].(map[string]any)
	return p
}

// TestPushSkipsOtherNodesEvents: an event another node published, heard
// through the relay, is that node's to push; this node pushes only its own,
// so a cluster pushes each event once.
func TestPushSkipsOtherNodesEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.AllowPrivatePush = true })
	recv := newReceiver(t)
	ctx := testCtx(t)
	c := b.client("echo", a2a.TransportProtocolJSONRPC)
	req := sendReq(userMessage("once"))
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/once", Token: "t"}}
	tk := send(ctx, t, c, req)
	before := len(recv.waitFinal(t, "/once", a2a.TaskStateCompleted))
	stored, err := b.coord.Get(ctx, string(tk.ID), 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := task.Event{Kind: task.EventStatus, TaskID: stored.ID, ContextID: stored.ContextID, Seq: stored.Seq + 1,
		State: task.StateSucceeded, Task: stored, Final: true, At: time.Now()}
	// publish puts one event on the broker, then one local marker event,
	// and returns how many pushes they caused once the marker's arrived:
	// the lane delivers in order, so the first was handled by then.
	publish := func(first task.Event) int {
		n0 := len(recv.on("/once"))
		b.coord.Broker().Publish(first)
		marker := ev
		marker.Seq += 100
		b.coord.Broker().Publish(marker)
		deadline := time.Now().Add(10 * time.Second)
		for len(recv.on("/once")) == n0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		return len(recv.on("/once")) - n0
	}
	local := publish(ev)
	if local < 2 {
		t.Fatalf("a local event and the marker caused %d pushes, want at least 2", local)
	}
	remote := ev
	remote.Node = "another-node"
	if got := publish(remote); got != local/2 {
		t.Fatalf("a remote event and the marker caused %d pushes, want %d (the marker's only)", got, local/2)
	}
	if before == 0 {
		t.Fatal("the task itself was never pushed")
	}
}

// TestPushConfigChangedOnAnotherNode: a config stored through another node
// (here: straight into the store, past this node's handler) is used once
// that node's note arrives, though this node had cached "no configs".
func TestPushConfigChangedOnAnotherNode(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.AllowPrivatePush = true })
	recv := newReceiver(t)
	ctx := testCtx(t)
	c := b.client("slow", a2a.TransportProtocolJSONRPC)
	tk := send(ctx, t, c, func() *a2a.SendMessageRequest {
		req := sendReq(userMessage("late config"))
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		return req
	}())
	b.waitStarted() // its first events found no config, and were cached so
	if err := b.coord.Store().PutPushConfig(ctx, task.PushConfig{TaskID: string(tk.ID), ID: "remote", URL: recv.srv.URL + "/remote", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}, nil); err != nil {
		t.Fatal(err)
	}
	b.coord.Broker().Publish(task.Event{Kind: task.EventPushConfig, TaskID: string(tk.ID), Node: "another-node", At: time.Now()})
	b.releaseAll()
	recv.waitFinal(t, "/remote", a2a.TaskStateCompleted)
}

// TestPushLookups: the pusher looks push configurations up once per task at
// most, and not at all while the store holds none, however many events the
// tasks publish and however many run at once.
func TestPushLookups(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.AllowPrivatePush = true })
	ctx := testCtx(t)
	c := b.client("echo", a2a.TransportProtocolJSONRPC)
	// sendMany sends n blocking messages from 8 clients at once.
	sendMany := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 8 {
					if _, err := c.SendMessage(ctx, sendReq(userMessage(fmt.Sprint("lookup ", i)))); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("send: %v", err)
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}

	const n = 32
	start := time.Now()
	sendMany(n)
	waitFor("a lookup of whether any config exists", func() bool { return b.store.hasPush.Load() > 0 })
	time.Sleep(200 * time.Millisecond) // let the lanes finish the rest
	if got := b.store.listPush.Load(); got != 0 {
		t.Fatalf("with no push configs in the store, the pusher read task configs %d times, want 0", got)
	}
	// The answer is cached for 2 s (docs/a2a.md): one lookup per 2 s of
	// the phase, and one more for a lookup under way as it expired.
	if got, most := b.store.hasPush.Load(), 2+int64(time.Since(start)/(2*time.Second)); got > most {
		t.Errorf("with no push configs, the pusher asked whether any exist %d times for %d tasks in %s, want at most %d (cached)", got, n, time.Since(start).Round(time.Millisecond), most)
	}

	// One task with a config: the pusher must now look each task up, and
	// deliver to that one.
	recv := newReceiver(t)
	req := sendReq(userMessage("pushed"))
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/hook", Token: "tok"}}
	send(ctx, t, c, req)
	recv.waitFinal(t, "/hook", a2a.TaskStateCompleted)

	before := b.store.listPush.Load()
	sendMany(n)
	waitFor("a lookup per task", func() bool { return b.store.listPush.Load()-before >= n })
	time.Sleep(200 * time.Millisecond)
	// Every task publishes several events (accepted, working, artifact,
	// completed); one lookup each is the cache working. A few more are a
	// cache entry that outlived its TTL on a slow machine.
	got := b.store.listPush.Load() - before
	t.Logf("%d tasks, %d push config lookups", n, got)
	if got > n+n/4 {
		t.Errorf("%d concurrent tasks caused %d push config lookups, want about one per task", n, got)
	}
	if len(recv.on("/hook")) == 0 {
		t.Error("the task with a config was never pushed")
	}
}

// TestPushCatchUpAfterStop: a Pusher stopped while a task's notifications
// were still being retried abandons them (and counts them); the next
// Pusher over the same store finds the configuration that was not sent the
// task's latest state and sends it the task, whole, once.
func TestPushCatchUpAfterStop(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.opts.AllowPrivatePush = true
		// The first notification fails and is retried only after an hour:
		// everything behind it is still queued at the stop.
		c.opts.Push = push.Options{InitialBackoff: time.Hour, MaxBackoff: time.Hour, CatchUpGrace: time.Hour}
	})
	recv := newReceiver(t, "/hook")
	ctx := testCtx(t)
	c := b.client("echo", a2a.TransportProtocolJSONRPC)
	req := sendReq(userMessage("remember me"))
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/hook"}}
	tk := send(ctx, t, c, req)
	if tk.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s is %s, want completed", tk.ID, tk.Status.State)
	}
	select {
	case <-recv.arrived:
	case <-ctx.Done():
		t.Fatal("no notification attempt arrived")
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	_ = b.srv.Stop(stopped)
	if n := b.srv.Pusher().Abandoned(); n < 1 {
		t.Fatalf("Abandoned() = %d after a stop with a delivery being retried", n)
	}
	before := len(recv.on("/hook"))

	p := push.New(b.coord, push.Options{AllowPrivate: true, CatchUpGrace: time.Nanosecond, Logger: testLogger(t)})
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(ctx) }()
	var whole *a2a.Task
	for whole == nil {
		for _, got := range recv.on("/hook")[before:] {
			if w, ok := got.event.(*a2a.Task); ok {
				whole = w
			}
		}
		select {
		case <-recv.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("the restarted Pusher sent nothing; got %d requests after the stop", len(recv.on("/hook"))-before)
		}
	}
	if whole.ID != tk.ID || whole.Status.State != a2a.TaskStateCompleted || len(whole.Artifacts) != 1 {
		t.Fatalf("caught-up task = %+v; want task %s, completed, with its artifact", whole, tk.ID)
	}
	// Marked as sent: nothing is owed any more.
	for {
		owed, err := b.coord.PushBacklog(ctx, task.PushBacklogParams{UpdatedBefore: time.Now().Add(time.Hour), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(owed) == 0 {
			break
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("still owed after the catch-up: %+v", owed)
		}
	}
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(recv.on("/hook")) - before; n != 1 {
		t.Errorf("the restarted Pusher sent %d notifications, want the one task", n)
	}
}

// TestPushOwedWhenSentWithMessage: a push configuration sent with the
// message is owed the task's latest state from the start. Stored only after
// the task finished (the store is slow), its webhook down while the node
// runs, and the node's Pusher stopped before any delivery: the next Pusher
// over the same store sends it the finished task.
func TestPushOwedWhenSentWithMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) {
		c.opts.AllowPrivatePush = true
		c.opts.Push = push.Options{InitialBackoff: time.Hour, MaxBackoff: time.Hour, CatchUpGrace: time.Hour}
	})
	ctx := testCtx(t)
	hook := newSwitchedHook(t)
	b.store.beforePutPush.Store(ptr(waitTerminal(t, b)))
	req := sendReq(userMessage("owed from the start"))
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: hook.srv.URL + "/hook"}}
	tk := send(ctx, t, b.client("echo", a2a.TransportProtocolJSONRPC), req)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	_ = b.srv.Stop(stopped) // the node goes away, nothing delivered

	owed, err := b.coord.PushBacklog(ctx, task.PushBacklogParams{UpdatedBefore: time.Now().Add(time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(owed) != 1 || owed[0].Config.TaskID != string(tk.ID) {
		t.Fatalf("backlog after the stop = %+v; want the configuration sent with the message, owed task %s", owed, tk.ID)
	}

	hook.up.Store(true)
	p := push.New(b.coord, push.Options{AllowPrivate: true, CatchUpGrace: time.Nanosecond, Logger: testLogger(t)})
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(ctx) }()
	whole := hook.waitTask(t)
	if whole.ID != tk.ID || whole.Status.State != a2a.TaskStateCompleted || len(whole.Artifacts) != 1 {
		t.Fatalf("caught-up task = %+v; want task %s, completed, with its artifact", whole, tk.ID)
	}
	waitBacklogEmpty(t, b)
}

// TestPushSentWithMessageNotRepeated: a configuration sent with the message
// that was delivered the finished task before it was stored is not owed it
// again (the catch-up would send it twice).
func TestPushSentWithMessageNotRepeated(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *setupConfig) { c.opts.AllowPrivatePush = true })
	ctx := testCtx(t)
	recv := newReceiver(t)
	wait := waitTerminal(t, b)
	b.store.beforePutPush.Store(ptr(func(ctx context.Context, c task.PushConfig) {
		wait(ctx, c)
		recv.waitFinal(t, "/hook", a2a.TaskStateCompleted) // delivered before it is stored
	}))
	req := sendReq(userMessage("once"))
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: recv.srv.URL + "/hook"}}
	send(ctx, t, b.client("echo", a2a.TransportProtocolJSONRPC), req)
	waitBacklogEmpty(t, b)
}

func ptr[T any](v T) *T { return &v }

// waitTerminal returns a beforePutPush hook that holds the store until the
// configuration's task is finished.
func waitTerminal(t *testing.T, b *bundle) func(context.Context, task.PushConfig) {
	return func(ctx context.Context, c task.PushConfig) {
		for {
			tk, err := b.store.Store.GetTask(ctx, c.TaskID, 0)
			if err == nil && tk.State.Terminal() {
				return
			}
			select {
			case <-ctx.Done():
				t.Errorf("task %s did not finish: %v", c.TaskID, ctx.Err())
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// waitBacklogEmpty waits until no push configuration is owed anything.
func waitBacklogEmpty(t *testing.T, b *bundle) {
	t.Helper()
	ctx := testCtx(t)
	for {
		owed, err := b.coord.PushBacklog(ctx, task.PushBacklogParams{UpdatedBefore: time.Now().Add(time.Hour), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(owed) == 0 {
			return
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("still owed: %+v", owed)
		}
	}
}

// switchedHook is a webhook that answers 503 until up is set.
type switchedHook struct {
	srv   *httptest.Server
	up    atomic.Bool
	tasks chan *a2a.Task
}

func newSwitchedHook(t *testing.T) *switchedHook {
	h := &switchedHook{tasks: make(chan *a2a.Task, 16)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !h.up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var sr a2a.StreamResponse
		if body, err := io.ReadAll(req.Body); err == nil && json.Unmarshal(body, &sr) == nil {
			if tk, ok := sr.Event.(*a2a.Task); ok {
				select {
				case h.tasks <- tk:
				default:
				}
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// waitTask returns the first whole task the hook received while up.
func (h *switchedHook) waitTask(t *testing.T) *a2a.Task {
	t.Helper()
	select {
	case tk := <-h.tasks:
		return tk
	case <-testCtx(t).Done():
		t.Fatal("no task was pushed")
		return nil
	}
}
