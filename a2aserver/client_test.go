package a2aserver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// forEachTransport runs f once per A2A 1.0 HTTP binding, as parallel
// subtests sharing b.
func forEachTransport(t *testing.T, f func(t *testing.T, proto a2a.TransportProtocol)) {
	for _, proto := range transports {
		t.Run(string(proto), func(t *testing.T) {
			t.Parallel()
			f(t, proto)
		})
	}
}

func TestSendMessageBlocking(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		tk := send(ctx, t, c, sendReq(userMessage("hi")))
		if tk.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("state = %s, want COMPLETED", tk.Status.State)
		}
		if len(tk.Artifacts) != 1 || artifactText(tk.Artifacts[0]) != "hi" {
			t.Fatalf("artifacts = %+v, want one artifact with text hi", tk.Artifacts)
		}
		if m := tk.Status.Message; m == nil || m.Role != a2a.MessageRoleAgent || m.Parts[0].Text() != "echo: hi" {
			t.Fatalf("status message = %+v, want the agent's message", tk.Status.Message)
		}
		if len(tk.History) != 2 || tk.History[0].Role != a2a.MessageRoleUser || tk.History[1].Role != a2a.MessageRoleAgent {
			t.Fatalf("history = %+v, want the user message then the agent's", tk.History)
		}
		if tk.ContextID == "" || tk.Status.Timestamp == nil {
			t.Fatalf("contextId %q, timestamp %v: both must be set", tk.ContextID, tk.Status.Timestamp)
		}
		meta := pactumMeta(t, tk.Metadata)
		want := map[string]any{"state": "succeeded", "agent": "echo", "action": "echo", "actor": "anonymous", "attempt": float64(1), "maxAttempts": float64(3)}
		for k, v := range want {
			if meta[k] != v {
				t.Errorf("metadata.pactum.%s = %#v, want %#v", k, meta[k], v)
			}
		}
		if meta["correlationId"] != string(tk.ID) {
			t.Errorf("metadata.pactum.correlationId = %v, want the task id (the core's default)", meta["correlationId"])
		}
	})
}

func TestSendMessageEnvelope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		msg := userMessage("with an envelope")
		msg.Metadata = map[string]any{"pactum": map[string]any{"actor": "alice", "matter": "m-1", "correlationId": "corr-1", "idempotencyKey": "key-" + string(proto)}}
		req := sendReq(msg)
		req.Metadata = map[string]any{"pactum": map[string]any{"resource": "r-1", "actor": "overridden-by-message"}, "trace": "t-1"}
		tk := send(ctx, t, c, req)
		meta := pactumMeta(t, tk.Metadata)
		if meta["actor"] != "alice" || meta["correlationId"] != "corr-1" {
			t.Fatalf("metadata.pactum = %v, want actor alice and correlationId corr-1", meta)
		}
		stored, err := b.coord.Get(ctx, string(tk.ID), 0)
		if err != nil {
			t.Fatal(err)
		}
		env := stored.Envelope
		if env.Actor != "alice" || env.Matter != "m-1" || env.Resource != "r-1" || env.CorrelationID != "corr-1" || env.IdempotencyKey != "key-"+string(proto) {
			t.Fatalf("stored envelope = %+v", env)
		}
		if env.Metadata["trace"] != "t-1" {
			t.Fatalf("envelope metadata = %v, want the request metadata", env.Metadata)
		}

		bad := userMessage("typo")
		bad.Metadata = map[string]any{"pactum": map[string]any{"approval_ref": "A-1"}}
		_, err = c.SendMessage(ctx, sendReq(bad))
		if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "approval_ref") {
			t.Fatalf("unknown envelope field: err = %v, want InvalidParams naming it", err)
		}
		bad = userMessage("not a string")
		bad.Metadata = map[string]any{"pactum": map[string]any{"actor": 7}}
		if _, err = c.SendMessage(ctx, sendReq(bad)); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("numeric actor: err = %v, want InvalidParams", err)
		}
	})
}

func TestSendMessageHistoryLength(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		for _, tc := range []struct {
			n    int
			want int
		}{{0, 0}, {1, 1}, {5, 2}} {
			req := sendReq(userMessage("history"))
			req.Config = &a2a.SendMessageConfig{HistoryLength: &tc.n}
			tk := send(ctx, t, c, req)
			if len(tk.History) != tc.want {
				t.Errorf("historyLength %d: got %d messages, want %d", tc.n, len(tk.History), tc.want)
			}
			if tc.n == 1 && tk.History[0].Role != a2a.MessageRoleAgent {
				t.Errorf("historyLength 1 kept %s, want the newest (agent) message", tk.History[0].Role)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID, HistoryLength: &tc.n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != tc.want {
				t.Errorf("GetTask historyLength %d: got %d messages, want %d", tc.n, len(got.History), tc.want)
			}
		}
	})
}

func TestSendMessageIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		msg := userMessage("once")
		first := send(ctx, t, c, sendReq(msg))
		again := send(ctx, t, c, sendReq(msg))
		if again.ID != first.ID {
			t.Fatalf("duplicate submit made task %s, want the existing %s", again.ID, first.ID)
		}
		if again.Status.State != a2a.TaskStateCompleted || len(again.Artifacts) != 1 {
			t.Fatalf("duplicate submit returned %s with %d artifacts, want the finished task", again.Status.State, len(again.Artifacts))
		}
		changed := *msg
		changed.Parts = a2a.ContentParts{a2a.NewTextPart("twice")}
		_, err := c.SendMessage(ctx, sendReq(&changed))
		if !errors.Is(err, a2a.ErrInvalidRequest) || !strings.Contains(err.Error(), "idempotency key") {
			t.Fatalf("reused message id with another payload: err = %v, want InvalidRequest about the idempotency key", err)
		}
	})
}

func TestSendMessageReturnImmediately(t *testing.T) {
	t.Parallel()
	for _, proto := range transports {
		t.Run(string(proto), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := testCtx(t)
			c := b.client("slow", proto)
			req := sendReq(userMessage("take your time"))
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			tk := send(ctx, t, c, req)
			if tk.Status.State.Terminal() {
				t.Fatalf("return-immediately answered a %s task", tk.Status.State)
			}
			id := b.waitStarted()
			if id != string(tk.ID) {
				t.Fatalf("slow agent ran %s, want %s", id, tk.ID)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateWorking || pactumMeta(t, got.Metadata)["state"] != "in_progress" {
				t.Fatalf("running task reads as %s (%v), want WORKING (in_progress)", got.Status.State, got.Metadata)
			}
			b.releaseAll()
			b.waitState(string(tk.ID), task.StateSucceeded)
			got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state = %s, want COMPLETED", got.Status.State)
			}
		})
	}
}

func TestSendMessageFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		for _, tc := range []struct {
			agent     string
			state     a2a.TaskState
			core      string
			errorCode string
			says      string
		}{
			{"failing", a2a.TaskStateFailed, "failed", "agent_failed", "the agent broke"},
			{"flaky", a2a.TaskStateFailed, "dead_letter", "agent_failed", "attempt 2 failed"},
			{"guarded", a2a.TaskStateRejected, "failed", "approval_required", "approvalRef"},
		} {
			tk := send(ctx, t, b.client(tc.agent, proto), sendReq(userMessage("go")))
			if tk.Status.State != tc.state {
				t.Errorf("%s: state = %s, want %s", tc.agent, tk.Status.State, tc.state)
				continue
			}
			meta := pactumMeta(t, tk.Metadata)
			if meta["state"] != tc.core || meta["errorCode"] != tc.errorCode {
				t.Errorf("%s: metadata.pactum = %v, want state %s, errorCode %s", tc.agent, meta, tc.core, tc.errorCode)
			}
			m := tk.Status.Message
			if m == nil || m.Role != a2a.MessageRoleAgent || !strings.Contains(m.Parts[0].Text(), tc.says) {
				t.Errorf("%s: status message = %+v, want an agent message saying %q", tc.agent, m, tc.says)
			}
		}
	})
}

func TestStreamingMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		var events []a2a.Event
		for ev, err := range b.client("chunks", proto).SendStreamingMessage(ctx, sendReq(userMessage("count"))) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			events = append(events, ev)
		}
		checkStream(t, events, a2a.TaskStateCompleted, map[string]string{"words": "onetwothree"})
		// The chunks arrive in order, the later ones appending.
		var words []string
		for _, ev := range events {
			if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && au.Append {
				words = append(words, artifactText(au.Artifact))
			}
		}
		if len(words) > 0 && strings.Join(words, ",") != "two,three" {
			t.Fatalf("appended chunks = %v, want two, three", words)
		}
	})
}

func TestStreamingInputRequired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("ask", proto)
		var events []a2a.Event
		for ev, err := range c.SendStreamingMessage(ctx, sendReq(userMessage("hello"))) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			events = append(events, ev)
		}
		checkStream(t, events, a2a.TaskStateInputRequired, nil)
		id := events[0].TaskInfo().TaskID

		answer := userMessage("Ada")
		answer.TaskID = id
		events = nil
		for ev, err := range c.SendStreamingMessage(ctx, sendReq(answer)) {
			if err != nil {
				t.Fatalf("second stream: %v", err)
			}
			events = append(events, ev)
		}
		checkStream(t, events, a2a.TaskStateCompleted, map[string]string{"greeting": "Hello, Ada"})
	})
}

// checkStream asserts the shape of a task stream: a Task first, then only
// updates of that task in a sensible order, ending with a final status in
// state final; the artifacts rebuilt from the events are want.
func checkStream(t *testing.T, events []a2a.Event, final a2a.TaskState, want map[string]string) {
	t.Helper()
	if len(events) == 0 {
		t.Fatal("empty stream")
	}
	first, ok := events[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first event is %T, want *a2a.Task", events[0])
	}
	if len(events) == 1 {
		// The task was already final when the stream opened (the core may
		// run a task inside its submit call): the Task is the whole stream.
		if first.Status.State != final {
			t.Fatalf("a one-event stream holds a %s task, want %s", first.Status.State, final)
		}
	} else if last, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent); !ok || last.Status.State != final {
		t.Fatalf("last event is %#v, want a %s status update", events[len(events)-1], final)
	}
	arts := map[string]string{}
	for _, a := range first.Artifacts {
		arts[string(a.ID)] = artifactText(a)
	}
	rank := map[a2a.TaskState]int{a2a.TaskStateSubmitted: 0, a2a.TaskStateWorking: 1}
	seen := rank[first.Status.State]
	for i, ev := range events[1:] {
		if ev.TaskInfo().TaskID != first.ID {
			t.Fatalf("event %d belongs to task %s, want %s", i+1, ev.TaskInfo().TaskID, first.ID)
		}
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			r, known := rank[e.Status.State]
			if !known {
				r = 2
			}
			if r < seen {
				t.Fatalf("status went back to %s at event %d", e.Status.State, i+1)
			}
			seen = r
			if r == 2 && i+1 != len(events)-1 {
				t.Fatalf("final status %s at event %d is not the last of %d", e.Status.State, i+1, len(events))
			}
			pactumMeta(t, e.Metadata)
		case *a2a.TaskArtifactUpdateEvent:
			id := string(e.Artifact.ID)
			if e.Append {
				arts[id] += artifactText(e.Artifact)
			} else {
				arts[id] = artifactText(e.Artifact)
			}
		default:
			t.Fatalf("event %d is %T, want a status or artifact update", i+1, ev)
		}
	}
	for id, text := range want {
		if arts[id] != text {
			t.Fatalf("artifact %s rebuilt from the stream = %q, want %q (all: %v)", id, arts[id], text, arts)
		}
	}
}

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	for _, proto := range transports {
		t.Run(string(proto), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := testCtx(t)
			c := b.client("slow", proto)
			req := sendReq(userMessage("watch me"))
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			tk := send(ctx, t, c, req)
			b.waitStarted()

			var events []a2a.Event
			for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: tk.ID}) {
				if err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				events = append(events, ev)
				if len(events) == 1 {
					// The stream starts from the stored state: the task is
					// running, and stays so until released.
					first, ok := ev.(*a2a.Task)
					if !ok || first.Status.State != a2a.TaskStateWorking {
						t.Fatalf("first event = %#v, want the running task", ev)
					}
					b.releaseAll()
				}
			}
			checkStream(t, events, a2a.TaskStateCompleted, map[string]string{"result": "done"})

			// Terminal tasks cannot be subscribed to; unknown ones are not found.
			for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: tk.ID}) {
				if !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Fatalf("subscribe to a completed task: %v, %v; want UnsupportedOperation", ev, err)
				}
				break
			}
			for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"}) {
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("subscribe to an unknown task: %v, %v; want TaskNotFound", ev, err)
				}
				break
			}
		})
	}
}

func TestGetTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		tk := send(ctx, t, c, sendReq(userMessage("get me")))
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != tk.ID || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || len(got.History) != 2 {
			t.Fatalf("GetTask = %+v, want the completed task with its artifact and history", got)
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("unknown task: err = %v, want TaskNotFound", err)
		}
		// A task of another agent is not visible through this one.
		other := send(ctx, t, b.client("failing", proto), sendReq(userMessage("x")))
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: other.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("task of another agent: err = %v, want TaskNotFound", err)
		}
	})
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		contextID := "ctx-list-" + string(proto)
		var ids []a2a.TaskID
		for i := range 3 {
			m := userMessage("list " + string(rune('a'+i)))
			m.ContextID = contextID
			ids = append(ids, send(ctx, t, c, sendReq(m)).ID)
		}
		all, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Tasks) != 3 || all.TotalSize != 3 || all.NextPageToken != "" {
			t.Fatalf("list = %d tasks, total %d, next %q; want 3, 3, none", len(all.Tasks), all.TotalSize, all.NextPageToken)
		}
		for _, tk := range all.Tasks {
			if tk.Artifacts != nil {
				t.Fatalf("artifacts listed without includeArtifacts: %+v", tk.Artifacts)
			}
		}

		page1, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 2 || page1.NextPageToken == "" || page1.PageSize != 2 {
			t.Fatalf("page 1 = %d tasks, next %q, pageSize %d; want 2, a token, 2", len(page1.Tasks), page1.NextPageToken, page1.PageSize)
		}
		page2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: 2, PageToken: page1.NextPageToken})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2.Tasks) != 1 || page2.NextPageToken != "" {
			t.Fatalf("page 2 = %d tasks, next %q; want 1 and none", len(page2.Tasks), page2.NextPageToken)
		}
		seen := map[a2a.TaskID]bool{}
		for _, tk := range append(page1.Tasks, page2.Tasks...) {
			seen[tk.ID] = true
		}
		for _, id := range ids {
			if !seen[id] {
				t.Fatalf("task %s missing from the pages", id)
			}
		}

		zero := 0
		withArts, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, IncludeArtifacts: true, HistoryLength: &zero, Status: a2a.TaskStateCompleted})
		if err != nil {
			t.Fatal(err)
		}
		if len(withArts.Tasks) != 3 {
			t.Fatalf("COMPLETED filter listed %d tasks, want 3", len(withArts.Tasks))
		}
		for _, tk := range withArts.Tasks {
			if len(tk.Artifacts) != 1 || len(tk.History) != 0 {
				t.Fatalf("task %s: %d artifacts, %d messages; want 1 and 0", tk.ID, len(tk.Artifacts), len(tk.History))
			}
		}
		working, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, Status: a2a.TaskStateWorking})
		if err != nil {
			t.Fatal(err)
		}
		if len(working.Tasks) != 0 {
			t.Fatalf("WORKING filter listed %d tasks, want none", len(working.Tasks))
		}
		future := time.Now().Add(time.Hour)
		later, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, StatusTimestampAfter: &future})
		if err != nil {
			t.Fatal(err)
		}
		if len(later.Tasks) != 0 {
			t.Fatalf("statusTimestampAfter in the future listed %d tasks, want none", len(later.Tasks))
		}
		if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 500}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("pageSize 500: err = %v, want InvalidParams", err)
		}
	})
}

func TestListTasksRejectedAndFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := testCtx(t)
	c := b.client("guarded", a2a.TransportProtocolJSONRPC)
	send(ctx, t, c, sendReq(userMessage("no approval")))
	rejected, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateRejected})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := c.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateFailed})
	if err != nil {
		t.Fatal(err)
	}
	if len(rejected.Tasks) != 1 || len(failed.Tasks) != 0 {
		t.Fatalf("REJECTED lists %d, FAILED lists %d; want 1 and 0", len(rejected.Tasks), len(failed.Tasks))
	}
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	for _, proto := range transports {
		t.Run(string(proto), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := testCtx(t)
			c := b.client("slow", proto)
			req := sendReq(userMessage("cancel me"))
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			tk := send(ctx, t, c, req)
			b.waitStarted()
			got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("state after cancel = %s, want CANCELED", got.Status.State)
			}
			// No reason given: the Coordinator's default, as over MCP.
			if stored, err := b.coord.Get(ctx, string(tk.ID), 0); err != nil {
				t.Fatal(err)
			} else if stored.Reason != "canceled by request" {
				t.Fatalf("stored reason = %q, want the Coordinator's default %q", stored.Reason, "canceled by request")
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Fatalf("second cancel: err = %v, want TaskNotCancelable", err)
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("cancel unknown: err = %v, want TaskNotFound", err)
			}

			// A reason under metadata.pactum is recorded; other keys and
			// non-string values are refused before anything changes. The
			// SDK's HTTP+JSON binding sends no body with a cancel (and its
			// server reads none), so only JSON-RPC carries the metadata.
			if proto != a2a.TransportProtocolJSONRPC {
				return
			}
			req = sendReq(userMessage("cancel me with a reason"))
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			tk = send(ctx, t, c, req)
			b.waitStarted()
			for _, meta := range []map[string]any{
				{"pactum": map[string]any{"reson": "typo"}},
				{"pactum": map[string]any{"reason": 7}},
				{"pactum": "not an object"},
			} {
				if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID, Metadata: meta}); !errors.Is(err, a2a.ErrInvalidParams) {
					t.Fatalf("cancel with metadata %v: err = %v, want InvalidParams", meta, err)
				}
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID, Metadata: map[string]any{"pactum": map[string]any{"reason": "changed my mind"}}}); err != nil {
				t.Fatal(err)
			}
			if stored, err := b.coord.Get(ctx, string(tk.ID), 0); err != nil {
				t.Fatal(err)
			} else if stored.Reason != "changed my mind" {
				t.Fatalf("stored reason = %q, want the one in metadata.pactum.reason", stored.Reason)
			}
		})
	}
}

func TestMultiTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("ask", proto)
		first := send(ctx, t, c, sendReq(userMessage("greet me")))
		if first.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state = %s, want INPUT_REQUIRED", first.Status.State)
		}
		if m := first.Status.Message; m == nil || m.Parts[0].Text() != "What is your name?" {
			t.Fatalf("status message = %+v, want the agent's question", first.Status.Message)
		}

		wrongCtx := userMessage("Ada")
		wrongCtx.TaskID, wrongCtx.ContextID = first.ID, "another-context"
		if _, err := c.SendMessage(ctx, sendReq(wrongCtx)); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("mismatched contextId: err = %v, want InvalidParams", err)
		}

		answer := userMessage("Ada")
		answer.TaskID, answer.ContextID = first.ID, first.ContextID
		done := send(ctx, t, c, sendReq(answer))
		if done.ID != first.ID || done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("after the answer: task %s is %s, want %s COMPLETED", done.ID, done.Status.State, first.ID)
		}
		if len(done.Artifacts) != 1 || artifactText(done.Artifacts[0]) != "Hello, Ada" {
			t.Fatalf("artifacts = %+v, want the greeting", done.Artifacts)
		}
		if len(done.History) != 3 {
			t.Fatalf("history has %d messages, want question's prompt, question, answer", len(done.History))
		}

		late := userMessage("again")
		late.TaskID = first.ID
		if _, err := c.SendMessage(ctx, sendReq(late)); !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("message to a completed task: err = %v, want UnsupportedOperation", err)
		}
		unknown := userMessage("hello?")
		unknown.TaskID = "no-such-task"
		if _, err := c.SendMessage(ctx, sendReq(unknown)); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("message to an unknown task: err = %v, want TaskNotFound", err)
		}
	})
}

func TestContextContinuation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		first := send(ctx, t, c, sendReq(userMessage("first")))
		next := userMessage("second")
		next.ContextID = first.ContextID
		second := send(ctx, t, c, sendReq(next))
		if second.ID == first.ID || second.ContextID != first.ContextID {
			t.Fatalf("second task %s in context %s; want a new task in %s", second.ID, second.ContextID, first.ContextID)
		}
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: first.ContextID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) != 2 {
			t.Fatalf("context %s holds %d tasks, want 2", first.ContextID, len(list.Tasks))
		}
	})
}

func TestPushConfigOperations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	forEachTransport(t, func(t *testing.T, proto a2a.TransportProtocol) {
		ctx := testCtx(t)
		c := b.client("echo", proto)
		tk := send(ctx, t, c, sendReq(userMessage("push")))
		created, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{
			TaskID: tk.ID, URL: "https://hooks.example.com/a2a", Token: "secret",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || created.URL != "https://hooks.example.com/a2a" || created.Token != "secret" || created.Auth == nil || created.Auth.Scheme != "Bearer" {
			t.Fatalf("created = %+v", created)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: tk.ID, ID: created.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != created.URL || got.ID != created.ID {
			t.Fatalf("get = %+v, want %+v", got, created)
		}
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: tk.ID, ID: "second", URL: "http://93.184.216.34/hook"}); err != nil {
			t.Fatal(err)
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: tk.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("list = %d configs, want 2", len(list))
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: tk.ID, ID: created.ID}); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: tk.ID, ID: created.ID}); err != nil {
			t.Fatalf("deleting twice must succeed: %v", err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: tk.ID, ID: created.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("get deleted: err = %v, want TaskNotFound", err)
		}

		for _, bad := range []struct{ url, says string }{
			{"http://127.0.0.1:9999/hook", "AllowPrivatePush"},
			{"http://localhost/hook", "localhost"},
			{"http://[::1]/hook", "AllowPrivatePush"},
			{"http://10.1.2.3/hook", "AllowPrivatePush"},
			{"http://169.254.169.254/latest", "AllowPrivatePush"},
			{"http://2130706433:9999/hook", "127.0.0.1, a loopback address"},
			{"http://0x7f000001:9999/hook", "0x7f000001"},
			{"http://127.1:9999/hook", "127.0.0.1, a loopback address"},
			{"http://100.100.100.200/latest", "a shared address"},
			{"http://[64:ff9b::a9fe:a9fe]/latest", "NAT64 form of 169.254.169.254"},
			{"http://1.2.3.256/hook", "not an IPv4 address"},
			{"ftp://example.com/hook", "http or https"},
			{"not a url", "http or https"},
		} {
			_, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: tk.ID, URL: bad.url})
			if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), bad.says) {
				t.Errorf("push url %q: err = %v, want InvalidParams saying %q", bad.url, err, bad.says)
			}
		}
		if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: "no-such-task", URL: "https://hooks.example.com/a2a"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("config for an unknown task: err = %v, want TaskNotFound", err)
		}
		if _, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("list for an unknown task: err = %v, want TaskNotFound", err)
		}
		// A refused URL in the send configuration refuses the whole send.
		req := sendReq(userMessage("push me"))
		req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "http://127.0.0.1/hook"}}
		if _, err := c.SendMessage(ctx, req); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("send with a loopback push url: err = %v, want InvalidParams", err)
		}
	})
}
