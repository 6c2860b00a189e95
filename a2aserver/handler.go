package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/pactum/pactum/internal/a2amap"
	"github.com/pactum/pactum/push"
	"github.com/pactum/pactum/task"
)

// defaultListHistory is how many of the newest messages ListTasks returns
// per task when the caller does not say.
const defaultListHistory = 100

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	// AllowPrivatePush lets push configurations name loopback, private and
	// link-local destinations (default false: refused).
	AllowPrivatePush bool
	// Pusher, when set, is told when a task's push configurations change so
	// that it sees them at once.
	Pusher *push.Pusher
	// Logger receives internal errors in full (default: discard).
	Logger *slog.Logger
	// VerifiedResult, when set, returns the verified result of a task's
	// newest checked attempt (nil: none), which the task's answers carry
	// under metadata.pactum.verifiedResult. See Options.VerifiedResult.
	VerifiedResult func(ctx context.Context, t *task.Task) (any, error)
	// Contracts, when set, are the contracts the agent's answers are
	// checked against, as its card declares them (the contracts
	// extension, ContractsURI): a call that activates the extension gets
	// each verified result under its key too; with Required, a call that
	// does not is refused.
	Contracts *ContractsInfo
}

// Handler serves the A2A operations of one agent directly on the
// Coordinator. New tasks go to that agent; tasks of other agents are not
// visible through it (they answer TaskNotFound).
type Handler struct {
	coord        *task.Coordinator
	agent        string
	allowPrivate bool
	pusher       *push.Pusher
	log          *slog.Logger
	// verifiedResult is HandlerOptions.VerifiedResult.
	verifiedResult func(ctx context.Context, t *task.Task) (any, error)
	// contracts is HandlerOptions.Contracts.
	contracts *ContractsInfo
}

var _ a2asrv.RequestHandler = (*Handler)(nil)

// NewHandler returns the A2A request handler of the agent registered with
// coord under agent.
func NewHandler(coord *task.Coordinator, agent string, opts HandlerOptions) (*Handler, error) {
	if coord == nil {
		return nil, errors.New("a2aserver: NewHandler needs a Coordinator")
	}
	if _, ok := coord.Agent(agent); !ok {
		return nil, fmt.Errorf("a2aserver: no agent %q is registered with the Coordinator", agent)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{coord: coord, agent: agent, allowPrivate: opts.AllowPrivatePush, pusher: opts.Pusher, log: log.With("agent", agent), verifiedResult: opts.VerifiedResult, contracts: opts.Contracts}, nil
}

// Agent returns the name of the agent the handler serves.
func (h *Handler) Agent() string { return h.agent }

func (h *Handler) wireErr(ctx context.Context, op string, err error) error {
	return toA2AError(ctx, h.log, op, err)
}

// owned reads a task and checks that it belongs to this handler's agent.
// Whether the caller may see it at all the Coordinator decides: another
// actor's task is not found, as one that does not exist.
func (h *Handler) owned(ctx context.Context, op, id string, historyLength int) (*task.Task, error) {
	if id == "" {
		return nil, invalidParams("task id is required")
	}
	t, err := h.coord.Get(ctx, id, historyLength)
	if err != nil {
		if task.ErrorCode(err) == task.CodeNotFound {
			return nil, taskNotFound(id)
		}
		return nil, h.wireErr(ctx, op, err)
	}
	if t.Agent != h.agent {
		return nil, taskNotFound(id)
	}
	return t, nil
}

// withCaller returns ctx carrying the authenticated actor of the request
// for the Coordinator (task.WithCaller), which shows a caller only its own
// tasks: the one pactum's own authentication put there, else the
// authenticated user an a2asrv middleware set on the call context. Every
// operation of the Handler starts with it.
func withCaller(ctx context.Context) context.Context {
	if task.Caller(ctx) != "" {
		return ctx
	}
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil && cc.User.Authenticated && cc.User.Name != "" {
		return task.WithCaller(ctx, cc.User.Name)
	}
	return ctx
}

// SendMessage implements a2asrv.RequestHandler. A message without a task id
// submits a new task; one with a task id answers a task waiting for input.
// Unless the configuration asks to return immediately, the call waits until
// the task is terminal or waits for input.
func (h *Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	ctx = withCaller(ctx)
	mode := submitOnly
	if req != nil && (req.Config == nil || !req.Config.ReturnImmediately) {
		mode = submitWait
	}
	st, err := h.start(ctx, "SendMessage", req, mode)
	if err != nil {
		return nil, err
	}
	t := st.task
	var cfg a2a.SendMessageConfig
	if req.Config != nil {
		cfg = *req.Config
	}
	hl := historyLen(cfg.HistoryLength, -1)
	if cfg.ReturnImmediately || t.State.Terminal() || t.State.Interrupted() {
		return h.taskWithVerified(ctx, t, hl, true), nil
	}
	done, err := h.coord.Wait(ctx, t.ID)
	if err != nil {
		return nil, h.wireErr(ctx, "SendMessage", err)
	}
	return h.taskWithVerified(ctx, done, hl, true), nil
}

// SendStreamingMessage implements a2asrv.RequestHandler: it submits (or
// continues) like SendMessage, then streams the task, its status and
// artifact updates until the task is terminal or waits for input. A new
// task's stream starts from the task its submission stored
// (Coordinator.SubmitAndFollow), not from a second read of it.
func (h *Handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		// Read the caller when the stream starts: an a2asrv interceptor
		// may set it on the call context only then.
		ctx := withCaller(ctx)
		st, err := h.start(ctx, "SendStreamingMessage", req, submitFollow)
		if err != nil {
			yield(nil, err)
			return
		}
		defer st.stop()
		hl := -1
		if req.Config != nil {
			hl = historyLen(req.Config.HistoryLength, -1)
		}
		items := h.coord.Follow(ctx, st.task.ID)
		if st.following != nil {
			items = st.following.Follow(ctx)
		}
		h.stream(ctx, items, st.task.ID, hl, func(err error) error {
			return h.wireErr(ctx, "SendStreamingMessage", err)
		}, nil, yield)
	}
}

// startedRequest is a SendStreamingMessage request whose message was submitted
// (or delivered): the task as stored right after, and, for a new task,
// its subscription from the submission on.
type startedRequest struct {
	task      *task.Task
	following *task.Following
}

// stop ends the subscription if the stream did not.
func (s *startedRequest) stop() {
	if s.following != nil {
		s.following.Stop()
	}
}

// SubscribeToTask implements a2asrv.RequestHandler. The stream starts with
// the task as stored and follows it until it is terminal or waits for
// input. A task that is already terminal cannot be subscribed to
// (UnsupportedOperation, as the specification requires).
func (h *Handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		// Read the caller when the stream starts: an a2asrv interceptor
		// may set it on the call context only then.
		ctx := withCaller(ctx)
		if err := h.extensions(ctx); err != nil {
			yield(nil, err)
			return
		}
		if req == nil || req.ID == "" {
			yield(nil, invalidParams("task id is required"))
			return
		}
		id := string(req.ID)
		openErr := func(err error) error {
			if task.ErrorCode(err) == task.CodeNotFound {
				return taskNotFound(id)
			}
			return h.wireErr(ctx, "SubscribeToTask", err)
		}
		check := func(snap *task.Task) error {
			if snap.Agent != h.agent {
				return taskNotFound(id)
			}
			if snap.State.Terminal() {
				return terminalSubscribeError(snap)
			}
			return nil
		}
		h.stream(ctx, h.coord.Follow(ctx, id), id, -1, openErr, check, yield)
	}
}

// terminalSubscribeError is the answer to SubscribeToTask on a terminal
// task (specification §3.1.6).
func terminalSubscribeError(t *task.Task) error {
	return a2a.NewError(a2a.ErrUnsupportedOperation,
		fmt.Sprintf("task %s is %s (%s) and will not change any more; read it with GetTask", t.ID, a2amap.StateToA2A(t), t.State))
}

// stream follows task id (items, from Coordinator.Follow or
// Following.Follow) and yields the snapshot,
// then the events that follow it, until a final status. openErr maps an
// error reading the task before the snapshot; check, if set, may refuse the
// snapshot with an error. Right before the final status it sends, whole,
// the stored artifacts that did not stream on this connection (an agent's
// result artifacts are stored with the final transition and published
// nowhere else). When the core dropped the subscription (the consumer fell
// behind), Follow re-reads the task and stream resumes from what is stored:
// a status newer than the last one sent is sent, and when that status is
// final all stored artifacts are sent whole first, so that nothing the
// client missed is lost for good. When artifact chunks were lost
// (FollowItem.ChunksLost) every stored artifact is sent whole before the
// final status, as after a resync to a final state.
func (h *Handler) stream(ctx context.Context, items iter.Seq2[task.FollowItem, error], id string, hl int, openErr func(error) error, check func(*task.Task) error, yield func(a2a.Event, error) bool) {
	streamed := map[string]bool{}
	// chunksLost: some artifact chunks never reached this stream, so the
	// stored artifacts are all sent whole at the end.
	chunksLost := false
	started := false
	// finish sends the stored artifacts not in skip, then the final status.
	finish := func(status *a2a.TaskStatusUpdateEvent, skip map[string]bool, stored *task.Task) {
		if stored == nil {
			var err error
			if stored, err = h.coord.Get(ctx, id, 0); err != nil {
				if ctx.Err() == nil {
					yield(nil, h.wireErr(ctx, "stream", err))
				}
				return
			}
		}
		vr := h.verified(ctx, stored)
		evs := artifactEvents(stored, skip)
		if n := len(evs); n > 0 {
			artifactWithVerified(evs[n-1].Artifact, vr)
			artifactWithExtensionVerified(ctx, evs[n-1].Artifact, vr)
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
		withVerified(status.Metadata, vr)
		status.Metadata = withExtensionVerified(ctx, status.Metadata, vr)
		yield(status, nil)
	}
	for it, err := range items {
		if err != nil {
			switch {
			case !started:
				yield(nil, openErr(err))
			case ctx.Err() == nil:
				yield(nil, h.wireErr(ctx, "stream", err))
			}
			return
		}
		switch it.Kind {
		case task.FollowSnapshot:
			started = true
			if check != nil {
				if err := check(it.Task); err != nil {
					yield(nil, err)
					return
				}
			}
			if !yield(h.taskWithVerified(ctx, it.Task, hl, true), nil) {
				return
			}
		case task.FollowGap:
			h.log.InfoContext(ctx, "stream fell behind and lost artifact chunks; the stored artifacts will be sent whole", "task", id, "seq", it.Task.Seq)
			chunksLost = true
		case task.FollowResync:
			chunksLost = chunksLost || it.ChunksLost
			t := it.Task
			h.log.InfoContext(ctx, "stream fell behind; resumed from the stored task", "task", id, "seq", t.Seq)
			if it.Settled() {
				finish(statusEvent(t, t.UpdatedAt), nil, t)
				return
			}
			if !yield(statusEvent(t, t.UpdatedAt), nil) {
				return
			}
		case task.FollowEvent:
			ev := it.Event
			switch ev.Kind {
			case task.EventStatus:
				if ev.Final {
					skip := streamed
					if chunksLost {
						skip = nil
					}
					finish(statusEvent(ev.Task, ev.At), skip, it.Whole())
					return
				}
			case task.EventArtifact:
				if ev.Chunk != nil {
					streamed[ev.Chunk.Artifact.ID] = true
				}
			}
			out := eventToA2A(ev)
			if out == nil {
				continue
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// submitMode says how start submits a new task.
type submitMode int

const (
	// submitOnly submits (Coordinator.Submit).
	submitOnly submitMode = iota
	// submitWait submits and waits (Coordinator.SubmitAndWait) unless a
	// push configuration comes with the message.
	submitWait
	// submitFollow submits and subscribes (Coordinator.SubmitAndFollow).
	submitFollow
)

// start validates a SendMessage request and submits a new task or delivers
// the message to the task it names. It returns the task as stored right
// after (and, with submitFollow, a new task's subscription: call the
// result's stop when it is not streamed).
//
// With submitWait, a new task is submitted with Coordinator.SubmitAndWait
// and the returned task is final (or waiting for input) already.
func (h *Handler) start(ctx context.Context, op string, req *a2a.SendMessageRequest, mode submitMode) (_ *startedRequest, err error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil || req.Message == nil {
		return nil, invalidParams("message is required")
	}
	if req.Config != nil {
		if err := checkHistoryLength("configuration.historyLength", req.Config.HistoryLength); err != nil {
			return nil, err
		}
	}
	m := req.Message
	switch {
	case m.ID == "":
		return nil, invalidParams("message.messageId is required")
	case len(m.Parts) == 0:
		return nil, invalidParams("message.parts must hold at least one part")
	case m.Role != a2a.MessageRoleUser:
		return nil, invalidParams(fmt.Sprintf("message.role must be %s, got %s", a2a.MessageRoleUser, m.Role))
	}
	msg, err := a2amap.MessageFromA2A(m)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	var push *task.PushConfig
	if req.Config != nil && req.Config.PushConfig != nil {
		if push, err = h.pushConfigFromA2A(req.Config.PushConfig); err != nil {
			return nil, err
		}
	}

	st := &startedRequest{}
	var t *task.Task
	if m.TaskID != "" {
		id := string(m.TaskID)
		cur, err := h.owned(ctx, op, id, 0)
		if err != nil {
			return nil, err
		}
		if m.ContextID != "" && m.ContextID != cur.ContextID {
			return nil, invalidParams(fmt.Sprintf("message.contextId %q does not match the context %q of task %s", m.ContextID, cur.ContextID, id))
		}
		defer h.expectPush(ctx, push, id)()
		if t, err = h.coord.Continue(ctx, id, msg); err != nil {
			return nil, h.wireErr(ctx, op, err)
		}
	} else {
		em, err := readEnvelope(req.Metadata, m.Metadata)
		if err != nil {
			return nil, invalidParams(err.Error())
		}
		env, err := em.envelope(msg, req.Metadata, task.Caller(ctx))
		if err != nil {
			return nil, h.wireErr(ctx, op, err)
		}
		if push != nil {
			// Name the task now, so that the Pusher can deliver the
			// task's very first events to the configuration that comes
			// with it.
			env.TaskID = task.NewID()
			defer h.expectPush(ctx, push, env.TaskID)()
		}
		sr := task.SubmitRequest{Envelope: env, Agent: h.agent}
		var res *task.SubmitResult
		switch {
		case mode == submitFollow && push == nil:
			// Speculative like SubmitAndWait (the stream tells of the task
			// only once stored); with a push configuration the Pusher
			// would tell of it first, so that one is submitted plainly.
			res, st.following, err = h.coord.SubmitAndFollow(ctx, sr)
			defer func() {
				if err != nil {
					st.stop()
				}
			}()
		case mode == submitWait && push == nil:
			res, err = h.coord.SubmitAndWait(ctx, sr)
		default:
			res, err = h.coord.Submit(ctx, sr)
		}
		if err != nil {
			return nil, h.wireErr(ctx, op, err)
		}
		t = res.Task
	}
	if push != nil {
		// Owed the task's latest state until a delivery is recorded: the
		// task may have finished before the configuration is stored, and
		// a node that stops before it delivers must leave it owed.
		push.TaskID, push.Owed = t.ID, true
		if err := h.putPushConfig(ctx, op, *push, t.Envelope.Actor); err != nil {
			return nil, err
		}
	}
	st.task = t
	return st, nil
}

// expectPush announces a push configuration sent with a message to the
// Pusher under the task id it will be stored for, and returns the function
// that withdraws the announcement.
func (h *Handler) expectPush(ctx context.Context, c *task.PushConfig, taskID string) func() {
	if c == nil || h.pusher == nil {
		return func() {}
	}
	ann := *c
	ann.TaskID = taskID
	return h.pusher.Expect(ctx, ann)
}

// checkHistoryLength refuses a negative historyLength: the specification
// has no meaning for one, and serving it as "all history" would hide a
// caller's bug.
func checkHistoryLength(field string, n *int) error {
	if n != nil && *n < 0 {
		return invalidParams(fmt.Sprintf("%s must not be negative, got %d", field, *n))
	}
	return nil
}

// GetTask implements a2asrv.RequestHandler.
func (h *Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, invalidParams("task id is required")
	}
	if err := checkHistoryLength("historyLength", req.HistoryLength); err != nil {
		return nil, err
	}
	hl := historyLen(req.HistoryLength, -1)
	t, err := h.owned(ctx, "GetTask", string(req.ID), hl)
	if err != nil {
		return nil, err
	}
	return h.taskWithVerified(ctx, t, hl, true), nil
}

// ListTasks implements a2asrv.RequestHandler. Anonymous callers may list
// (the SDK's own handler refuses them); an authenticated caller sees the
// tasks it submitted. Only this agent's tasks are listed.
func (h *Handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		req = &a2a.ListTasksRequest{}
	}
	states, rejected, ok := a2amap.StatesFromA2A(req.Status)
	if !ok {
		return nil, invalidParams(fmt.Sprintf("status %q is not an A2A task state", req.Status))
	}
	if err := checkHistoryLength("historyLength", req.HistoryLength); err != nil {
		return nil, err
	}
	pageSize, ok := task.ResolvePageSize(req.PageSize)
	if !ok {
		return nil, invalidParams(task.PageSizeError("pageSize", req.PageSize))
	}
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, PageSize: pageSize}
	if states != nil && len(states) == 0 {
		return resp, nil
	}
	hl := historyLen(req.HistoryLength, defaultListHistory)
	p := task.ListParams{
		ContextID:        req.ContextID,
		Agent:            h.agent,
		States:           states,
		Rejected:         rejected,
		PageSize:         pageSize,
		PageToken:        req.PageToken,
		HistoryLength:    hl,
		IncludeArtifacts: req.IncludeArtifacts,
	}
	if req.StatusTimestampAfter != nil {
		p.UpdatedAfter = req.StatusTimestampAfter.UTC()
	}
	page, err := h.coord.List(ctx, p)
	if err != nil {
		return nil, h.wireErr(ctx, "ListTasks", err)
	}
	for _, t := range page.Tasks {
		resp.Tasks = append(resp.Tasks, taskToA2A(t, hl, req.IncludeArtifacts))
	}
	resp.TotalSize = page.TotalSize
	resp.NextPageToken = page.NextPageToken
	return resp, nil
}

// CancelTask implements a2asrv.RequestHandler. The reason recorded on the
// task is metadata.pactum.reason when the request carries one, else the
// Coordinator's default, as for MCP's cancel_task: the execution record does
// not depend on the transport the cancel came through.
func (h *Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	ctx = withCaller(ctx)
	if err := h.extensions(ctx); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, invalidParams("task id is required")
	}
	reason, err := readCancelReason(req.Metadata)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	id := string(req.ID)
	if _, err := h.owned(ctx, "CancelTask", id, 0); err != nil {
		return nil, err
	}
	t, err := h.coord.Cancel(ctx, id, reason)
	if err != nil {
		return nil, h.wireErr(ctx, "CancelTask", err)
	}
	return h.taskWithVerified(ctx, t, -1, true), nil
}

// GetExtendedAgentCard implements a2asrv.RequestHandler. pactum publishes
// no extended card; the public card is complete.
func (h *Handler) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	// The cards do not declare capabilities.extendedAgentCard; for that case
	// the specification asks for UnsupportedOperation (as a2a-go's own
	// handler answers), not ExtendedAgentCardNotConfigured.
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation,
		"this agent has no extended agent card (capabilities.extendedAgentCard is false): the public card at /.well-known/agent-card.json is complete")
}
