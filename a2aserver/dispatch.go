package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbjson"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/pactum/pactum/a2aserver/internal/wire"
	"github.com/pactum/pactum/task"
)

// The dispatcher serves every A2A operation on every binding: it decodes
// the request (a JSON-RPC method's params, or an HTTP+JSON route's path,
// query and body), calls the RequestHandler on the request's goroutine,
// and writes the answer through the codec (internal/wire). a2a-go's
// transports are not on the request path; the oracle test
// (dispatch_oracle_test.go) serves each operation through them and
// through the dispatcher from one stub handler and compares the bytes.
//
// Where pactum answers differently from a2a-go, on purpose:
//   - params (or a body) that do not decode are InvalidParams naming the
//     member (a2a-go: a parse error for most), and a query parameter that
//     does not parse is InvalidParams naming it (a2a-go: InvalidRequest);
//   - a JSON-RPC id is echoed as sent (a2a-go decodes it into a float64);
//   - A2A 0.3 JSON-RPC answers carry Content-Type application/json;
//   - an HTTP+JSON stream refused before its first event is an HTTP error
//     (a2a-go opens the stream first and sends the error as its event);
//   - an HTTP+JSON error on a route that names a task carries its id
//     (ErrorInfo metadata taskId), a refused stream's too;
//   - an unknown method's MethodNotFound names the method and the binding;
//   - a notification (a request without an id) runs and is answered 204
//     No Content (JSON-RPC 2.0 §4.1; a2a-go answers it with "id":null);
//   - absent params are served as {} (JSON-RPC 2.0 §4.2; a2a-go: a parse
//     error);
//   - an A2A 1.0 HTTP+JSON cancel reads the request's metadata from its
//     body (a cancel reason), which a2a-go's transport ignores;
//   - stream events are flushed when the task's follow waits, not one by
//     one (task.WithFollowIdle), and a panic is an internal error on
//     every operation.

// dispatcher serves the A2A operations of one RequestHandler.
type dispatcher struct {
	h a2asrv.RequestHandler
	// keepAlive is the interval of SSE keep-alive comments (≤ 0: none).
	keepAlive time.Duration
	// recovered turns a panic in an operation into the error answered.
	recovered func(any) error
	// extensions says the handler may activate extensions (its agent
	// declares one): answers then name those activated.
	extensions bool
}

// exchange is one request being answered.
type exchange struct {
	d *dispatcher
	w http.ResponseWriter
	r *http.Request
	b wire.Binding
	// id is a JSON-RPC request's id as sent (nil on HTTP+JSON).
	id json.RawMessage
	// notification: a JSON-RPC request without an id, run and answered
	// with 204 No Content.
	notification bool
	// taskID is the task an HTTP+JSON route names, for error metadata.
	taskID string
	// cc is the call context (callContext), made once: the handler
	// activates extensions on it, which the answer's header then names.
	cc context.Context
}

// operation is a decoded request, ready to call: one of unary and stream.
type operation struct {
	// unary calls the handler and returns the result's JSON (nil: no
	// result).
	unary func(ctx context.Context, h a2asrv.RequestHandler) ([]byte, error)
	// stream calls the handler for a stream of events; encode returns an
	// event's result JSON (nil: none).
	stream func(ctx context.Context, h a2asrv.RequestHandler) iter.Seq2[a2a.Event, error]
	encode func(a2a.Event) ([]byte, error)
}

// serveRPC answers a checked JSON-RPC request q on binding b (JSONRPC or
// JSONRPC03).
func (d *dispatcher) serveRPC(w http.ResponseWriter, r *http.Request, b wire.Binding, q *wire.Request) {
	x := &exchange{d: d, w: w, r: r, b: b, id: q.ID, notification: q.Notification()}
	methods := rpcMethods
	if b == wire.JSONRPC03 {
		methods = legacyRPCMethods
	}
	decode, ok := methods[q.Method]
	if !ok {
		x.fail(a2a.NewError(a2a.ErrMethodNotFound, fmt.Sprintf("method %q is not an %s method", q.Method, b)))
		return
	}
	op, err := decode(q.Params)
	if err != nil {
		x.fail(err)
		return
	}
	x.run(op)
}

// serveREST answers an HTTP+JSON request on binding b (REST or REST03):
// path is below the agent's mount point and the binding's route prefix,
// body the request body.
func (d *dispatcher) serveREST(w http.ResponseWriter, r *http.Request, b wire.Binding, path string, body []byte) {
	// Every HTTP+JSON answer is JSON but for streams.
	w.Header().Set("Content-Type", "application/json")
	x := &exchange{d: d, w: w, r: r, b: b}
	route, vars, err := matchREST(r.Method, path, b)
	if err != nil {
		x.fail(err)
		return
	}
	if route == nil {
		msg := fmt.Sprintf("no %s route is %s %s", b, r.Method, r.URL.Path)
		if b == wire.REST03 {
			msg += "; A2A 0.3 routes start with " + a2av0.RESTPathPrefix + "/, and requests without an A2A-Version header are served as 0.3 (send A2A-Version: 1.0 for the 1.0 routes)"
		}
		wire.WriteStatus(w, http.StatusNotFound, "NOT_FOUND", a2a.ErrMethodNotFound, msg)
		return
	}
	x.taskID = vars.taskID
	op, err := route(restRequest{vars: vars, query: r.URL.Query(), body: body, legacy: b == wire.REST03})
	if err != nil {
		x.fail(err)
		return
	}
	x.run(op)
}

// callContext returns the request's context as a2a-go's transport of the
// binding makes it: a call context with the service parameters read
// from the headers.
func (x *exchange) callContext() context.Context {
	if x.cc != nil {
		return x.cc
	}
	params := a2asrv.NewServiceParams(x.r.Header)
	if x.b.Legacy() {
		params = a2av0.ToServiceParams(x.r.Header)
	}
	x.cc, _ = a2asrv.NewCallContext(x.r.Context(), params)
	return x.cc
}

// echoExtensions names the extensions the call activated in the
// answer's header, when the agent declares any.
func (x *exchange) echoExtensions() {
	if x.d.extensions {
		echoExtensions(x.callContext(), x.w.Header(), x.b.Legacy())
	}
}

// run calls op and writes its answer.
func (x *exchange) run(op operation) {
	if op.stream != nil {
		x.stream(op)
		return
	}
	body, err := x.protect(func(ctx context.Context) ([]byte, error) { return op.unary(ctx, x.d.h) })
	if err != nil {
		x.fail(err)
		return
	}
	if x.notification {
		x.w.WriteHeader(http.StatusNoContent)
		return
	}
	x.echoExtensions()
	if body == nil && x.b == wire.REST03 {
		// A2A 0.3's DeleteTaskPushNotificationConfig.
		x.w.WriteHeader(http.StatusNoContent)
		return
	}
	wire.WriteResult(x.w, x.b, x.id, body)
}

// protect calls f with the call context; a panic is the error recovered
// makes of it.
func (x *exchange) protect(f func(context.Context) ([]byte, error)) (body []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			body, err = nil, x.d.recovered(p)
		}
	}()
	return f(x.callContext())
}

// fail answers err: a JSON-RPC error response, or an HTTP+JSON error with
// its status; a notification gets 204 whatever happened.
func (x *exchange) fail(err error) {
	if x.notification {
		x.w.WriteHeader(http.StatusNoContent)
		return
	}
	wire.WriteError(x.w, x.b, x.id, err, x.taskID)
}

// stream writes the events of op's stream as Server-Sent Events. The
// stream opens with its first event: an HTTP+JSON stream whose sequence
// fails before it is answered with an HTTP error (as the specification
// and the official clients want), a JSON-RPC one with one error event.
// Events are flushed when the task's follow waits for more
// (task.WithFollowIdle) and when the stream ends, not one by one: the
// events of a blocking stream, visible at one commit, leave in one write.
func (x *exchange) stream(op operation) {
	var s *wire.Stream
	open := func() bool {
		var err error
		x.echoExtensions()
		s, err = wire.OpenStream(x.w, x.b.RPC(), x.id, x.d.keepAlive)
		if err != nil {
			wire.WriteError(x.w, x.b, x.id, a2a.NewError(a2a.ErrUnsupportedOperation, err.Error()), x.taskID)
			return false
		}
		return true
	}
	ctx, cancel := context.WithCancel(x.callContext())
	defer cancel()
	ctx = task.WithFollowIdle(ctx, func() {
		if s != nil {
			s.Flush()
		}
	})
	err := x.events(ctx, op, func(body []byte) error {
		if x.notification {
			return nil
		}
		if s == nil && !open() {
			return errGone
		}
		return s.Event(body)
	})
	switch {
	case x.notification:
		x.w.WriteHeader(http.StatusNoContent)
	case s != nil:
		if err != nil && !errors.Is(err, errGone) {
			_ = s.Error(err)
		}
		s.Close()
	case errors.Is(err, errGone):
	case err != nil && !x.b.RPC():
		x.fail(err)
	case open():
		if err != nil {
			_ = s.Error(err)
		}
		s.Close()
	}
}

// errGone ends a stream whose caller went away (or could not be streamed
// to): nothing more is written.
var errGone = errors.New("a2aserver: the stream's caller is gone")

// events ranges over op's stream, handing each event's encoding to emit,
// and returns the error the stream ends with (a panic's, as recovered
// makes it), errGone when emit failed, nil at its end.
func (x *exchange) events(ctx context.Context, op operation, emit func([]byte) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = x.d.recovered(p)
		}
	}()
	for ev, err := range op.stream(ctx, x.d.h) {
		if err != nil {
			return err
		}
		body, err := op.encode(ev)
		if err != nil {
			return err
		}
		if emit(body) != nil {
			return errGone
		}
	}
	return nil
}

// ----- JSON-RPC -----

// rpcMethod decodes a method's params (nil when absent or null) into the
// operation to run.
type rpcMethod func(params json.RawMessage) (operation, error)

// rpcMethods are the A2A 1.0 JSON-RPC methods (specification §9.4).
var rpcMethods = map[string]rpcMethod{
	"SendMessage":                      rpcUnary(a2asrv.RequestHandler.SendMessage, encodeSendResult),
	"SendStreamingMessage":             rpcStream(a2asrv.RequestHandler.SendStreamingMessage, encodeEvent),
	"GetTask":                          rpcUnary(a2asrv.RequestHandler.GetTask, encodeTask),
	"ListTasks":                        rpcUnary(a2asrv.RequestHandler.ListTasks, encodeJSON[*a2a.ListTasksResponse]),
	"CancelTask":                       rpcUnary(a2asrv.RequestHandler.CancelTask, encodeTask),
	"SubscribeToTask":                  rpcStream(a2asrv.RequestHandler.SubscribeToTask, encodeEvent),
	"GetTaskPushNotificationConfig":    rpcUnary(a2asrv.RequestHandler.GetTaskPushConfig, encodeJSON[*a2a.PushConfig]),
	"CreateTaskPushNotificationConfig": rpcUnary(a2asrv.RequestHandler.CreateTaskPushConfig, encodeJSON[*a2a.PushConfig]),
	"ListTaskPushNotificationConfigs":  rpcUnary(a2asrv.RequestHandler.ListTaskPushConfigs, encodeJSON[*a2a.ListTaskPushConfigResponse]),
	"DeleteTaskPushNotificationConfig": rpcUnary(deletePushConfig, encodeNothing),
	"GetExtendedAgentCard":             rpcUnary(a2asrv.RequestHandler.GetExtendedAgentCard, encodeJSON[*a2a.AgentCard]),
}

// legacyRPCMethods are the A2A 0.3 JSON-RPC methods: params decoded into
// the 0.3 types and converted, results converted back, as a2a-go's
// compatibility layer (a2av0) converts them. 0.3 has no ListTasks.
var legacyRPCMethods = map[string]rpcMethod{
	"message/send":                        legacyUnary(a2av0.ToV1SendMessageRequest, a2asrv.RequestHandler.SendMessage, encodeLegacySendResult),
	"message/stream":                      legacyStream(a2av0.ToV1SendMessageRequest, a2asrv.RequestHandler.SendStreamingMessage),
	"tasks/get":                           legacyUnary(infallible(a2av0.ToV1GetTaskRequest), a2asrv.RequestHandler.GetTask, encodeLegacyTask),
	"tasks/cancel":                        legacyUnary(infallible(a2av0.ToV1CancelTaskRequest), a2asrv.RequestHandler.CancelTask, encodeLegacyTask),
	"tasks/resubscribe":                   legacyStream(infallible(a2av0.ToV1SubscribeToTaskRequest), a2asrv.RequestHandler.SubscribeToTask),
	"tasks/pushNotificationConfig/get":    legacyUnary(infallible(a2av0.ToV1GetTaskPushConfigRequest), a2asrv.RequestHandler.GetTaskPushConfig, encodeLegacyPushConfig),
	"tasks/pushNotificationConfig/set":    legacyUnary(infallible(a2av0.ToV1PushConfig), a2asrv.RequestHandler.CreateTaskPushConfig, encodeLegacyPushConfig),
	"tasks/pushNotificationConfig/list":   legacyUnary(infallible(a2av0.ToV1ListTaskPushConfigRequest), a2asrv.RequestHandler.ListTaskPushConfigs, encodeLegacyPushConfigs),
	"tasks/pushNotificationConfig/delete": legacyUnary(infallible(a2av0.ToV1DeleteTaskPushConfigRequest), deletePushConfig, encodeNothing),
	// 0.3's card method takes no params: they are not read.
	"agent/getAuthenticatedExtendedCard": func(json.RawMessage) (operation, error) {
		return unaryOp(&a2a.GetExtendedAgentCardRequest{}, a2asrv.RequestHandler.GetExtendedAgentCard, encodeLegacyCard), nil
	},
}

// handlerCall is a RequestHandler method with a result.
type handlerCall[P, R any] func(a2asrv.RequestHandler, context.Context, *P) (R, error)

// handlerStream is a RequestHandler method with a stream of events.
type handlerStream[P any] func(a2asrv.RequestHandler, context.Context, *P) iter.Seq2[a2a.Event, error]

// deletePushConfig is RequestHandler.DeleteTaskPushConfig with an empty
// result.
func deletePushConfig(h a2asrv.RequestHandler, ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) (struct{}, error) {
	return struct{}{}, h.DeleteTaskPushConfig(ctx, req)
}

// unaryOp is the operation that calls call with req and encodes its result.
func unaryOp[P, R any](req *P, call handlerCall[P, R], encode func(R) ([]byte, error)) operation {
	return operation{unary: func(ctx context.Context, h a2asrv.RequestHandler) ([]byte, error) {
		res, err := call(h, ctx, req)
		if err != nil {
			return nil, err
		}
		return encode(res)
	}}
}

// streamOp is the operation that streams what call yields for req.
func streamOp[P any](req *P, call handlerStream[P], encode func(a2a.Event) ([]byte, error)) operation {
	return operation{
		stream: func(ctx context.Context, h a2asrv.RequestHandler) iter.Seq2[a2a.Event, error] {
			return call(h, ctx, req)
		},
		encode: encode,
	}
}

// decodeParams decodes a JSON-RPC request's params into a new P (absent
// params decode as {}).
func decodeParams[P any](params json.RawMessage) (*P, error) {
	p := new(P)
	if params == nil {
		params = json.RawMessage("{}")
	}
	// The usual SendMessage and SendStreamingMessage params, decoded
	// without encoding/json's reflection (~40 allocations).
	if q, ok := any(p).(*a2a.SendMessageRequest); ok && wire.DecodeSendMessage(params, q) {
		return p, nil
	}
	if err := json.Unmarshal(params, p); err != nil {
		return nil, wire.ParamsError(reflect.TypeFor[P](), params, "params", err)
	}
	return p, nil
}

func rpcUnary[P, R any](call handlerCall[P, R], encode func(R) ([]byte, error)) rpcMethod {
	return func(params json.RawMessage) (operation, error) {
		p, err := decodeParams[P](params)
		if err != nil {
			return operation{}, err
		}
		return unaryOp(p, call, encode), nil
	}
}

func rpcStream[P any](call handlerStream[P], encode func(a2a.Event) ([]byte, error)) rpcMethod {
	return func(params json.RawMessage) (operation, error) {
		p, err := decodeParams[P](params)
		if err != nil {
			return operation{}, err
		}
		return streamOp(p, call, encode), nil
	}
}

// infallible makes a conversion that cannot fail one of the form
// legacyUnary takes.
func infallible[L, P any](f func(*L) *P) func(*L) (*P, error) {
	return func(l *L) (*P, error) { return f(l), nil }
}

// decodeLegacy decodes 0.3 params into an L and converts them to the 1.0
// request.
func decodeLegacy[L, P any](params json.RawMessage, convert func(*L) (*P, error)) (*P, error) {
	l, err := decodeParams[L](params)
	if err != nil {
		return nil, err
	}
	p, err := convert(l)
	if err != nil {
		return nil, wire.ParamsError(nil, nil, "params", err)
	}
	return p, nil
}

func legacyUnary[L, P, R any](convert func(*L) (*P, error), call handlerCall[P, R], encode func(R) ([]byte, error)) rpcMethod {
	return func(params json.RawMessage) (operation, error) {
		p, err := decodeLegacy(params, convert)
		if err != nil {
			return operation{}, err
		}
		return unaryOp(p, call, encode), nil
	}
}

func legacyStream[L, P any](convert func(*L) (*P, error), call handlerStream[P]) rpcMethod {
	return func(params json.RawMessage) (operation, error) {
		p, err := decodeLegacy(params, convert)
		if err != nil {
			return operation{}, err
		}
		return streamOp(p, call, encodeLegacyEvent), nil
	}
}

// ----- HTTP+JSON -----

// restVars are the values an HTTP+JSON route's path holds.
type restVars struct {
	taskID, configID string
}

// restRequest is what an HTTP+JSON route decodes.
type restRequest struct {
	vars   restVars
	query  url.Values
	body   []byte
	legacy bool
}

// restRoute decodes an HTTP+JSON request into the operation to run.
type restRoute func(restRequest) (operation, error)

// matchREST returns the route of method and path (below the binding's
// prefix, /v1 for A2A 0.3) and the values its path holds; nil when no
// route matches. A route that matches but names no task (POST
// /tasks/{id} without :cancel or :subscribe, an empty id) is an error.
func matchREST(method, path string, b wire.Binding) (restRoute, restVars, error) {
	if b == wire.REST03 {
		rest, ok := strings.CutPrefix(path, a2av0.RESTPathPrefix)
		if !ok {
			return nil, restVars{}, nil
		}
		path = rest
	}
	switch {
	case path == "/message:send" && method == http.MethodPost:
		return restSendMessage, restVars{}, nil
	case path == "/message:stream" && method == http.MethodPost:
		return restStreamMessage, restVars{}, nil
	case path == "/tasks" && method == http.MethodGet:
		return restListTasks, restVars{}, nil
	case path == "/extendedAgentCard" && method == http.MethodGet && b == wire.REST,
		path == "/card" && method == http.MethodGet && b == wire.REST03:
		return restCard, restVars{}, nil
	}
	rest, ok := strings.CutPrefix(path, "/tasks/")
	if !ok {
		return nil, restVars{}, nil
	}
	segs := strings.Split(rest, "/")
	if len(segs) == 1 && segs[0] != "" {
		idAndAction := segs[0]
		id, subscribe := strings.CutSuffix(idAndAction, ":subscribe")
		switch method {
		case http.MethodGet:
			if subscribe {
				return restSubscribe, restVars{taskID: id}, checkTaskID(id)
			}
			return restGetTask, restVars{taskID: id}, nil
		case http.MethodPost:
			if subscribe {
				return restSubscribe, restVars{taskID: id}, checkTaskID(id)
			}
			if id, ok := strings.CutSuffix(idAndAction, ":cancel"); ok {
				return restCancelTask, restVars{taskID: id}, nil
			}
			return nil, restVars{}, a2a.NewError(a2a.ErrInvalidRequest,
				fmt.Sprintf("POST %s names no operation: use /tasks/{id}:cancel or /tasks/{id}:subscribe", path))
		}
		return nil, restVars{}, nil
	}
	if len(segs) < 2 || segs[1] != "pushNotificationConfigs" || segs[0] == "" {
		return nil, restVars{}, nil
	}
	v := restVars{taskID: segs[0]}
	switch {
	case len(segs) == 2 && method == http.MethodPost:
		return restCreatePushConfig, v, nil
	case len(segs) == 2 && method == http.MethodGet:
		return restListPushConfigs, v, nil
	case len(segs) == 3 && segs[2] != "":
		v.configID = segs[2]
		switch method {
		case http.MethodGet:
			return restGetPushConfig, v, nil
		case http.MethodDelete:
			return restDeletePushConfig, v, nil
		}
	}
	return nil, restVars{}, nil
}

// checkTaskID refuses an empty task id in a route (/tasks/:subscribe).
func checkTaskID(id string) error {
	if id == "" {
		return a2a.NewError(a2a.ErrInvalidRequest, "the route names no task id")
	}
	return nil
}

// decodeBody decodes an HTTP+JSON request body into a new P: a body that
// is not JSON is a parse error, one whose members do not decode is
// InvalidParams naming the member.
func decodeBody[P any](body []byte) (*P, error) {
	p := new(P)
	if !json.Valid(body) {
		return nil, a2a.NewError(a2a.ErrParseError, "the request body is not valid JSON")
	}
	if err := json.Unmarshal(body, p); err != nil {
		return nil, wire.ParamsError(reflect.TypeFor[P](), body, "body", err)
	}
	return p, nil
}

// decodeProto decodes an A2A 0.3 HTTP+JSON body (proto JSON) with from;
// t is the proto JSON type, to name a member that does not decode.
func decodeProto[P any](body []byte, t reflect.Type, from func([]byte) (*P, error)) (*P, error) {
	if !json.Valid(body) {
		return nil, a2a.NewError(a2a.ErrParseError, "the request body is not valid JSON")
	}
	p, err := from(body)
	if err != nil {
		return nil, wire.ParamsError(t, body, "body", err)
	}
	return p, nil
}

// sendRequest decodes the body of message:send and message:stream.
func sendRequest(q restRequest) (*a2a.SendMessageRequest, error) {
	if q.legacy {
		return decodeProto(q.body, reflect.TypeFor[pbjson.SendMessageRequest](), pbjson.FromProtoSendMessageRequest)
	}
	return decodeBody[a2a.SendMessageRequest](q.body)
}

func restSendMessage(q restRequest) (operation, error) {
	req, err := sendRequest(q)
	if err != nil {
		return operation{}, err
	}
	if q.legacy {
		return unaryOp(req, a2asrv.RequestHandler.SendMessage, pbjson.ToProtoSendMessageResult), nil
	}
	return unaryOp(req, a2asrv.RequestHandler.SendMessage, encodeSendResult), nil
}

func restStreamMessage(q restRequest) (operation, error) {
	req, err := sendRequest(q)
	if err != nil {
		return operation{}, err
	}
	return streamOp(req, a2asrv.RequestHandler.SendStreamingMessage, restEventEncoder(q.legacy)), nil
}

func restSubscribe(q restRequest) (operation, error) {
	req := &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(q.vars.taskID)}
	return streamOp(req, a2asrv.RequestHandler.SubscribeToTask, restEventEncoder(q.legacy)), nil
}

// restEventEncoder returns the encoder of HTTP+JSON stream events.
func restEventEncoder(legacy bool) func(a2a.Event) ([]byte, error) {
	if legacy {
		return pbjson.ToProtoStreamEvent
	}
	return encodeEvent
}

func restGetTask(q restRequest) (operation, error) {
	req := &a2a.GetTaskRequest{ID: a2a.TaskID(q.vars.taskID)}
	var err error
	if req.HistoryLength, err = queryInt(q.query, "historyLength"); err != nil {
		return operation{}, err
	}
	return unaryOp(req, a2asrv.RequestHandler.GetTask, taskEncoder(q.legacy)), nil
}

func restCancelTask(q restRequest) (operation, error) {
	req := &a2a.CancelTaskRequest{}
	if !q.legacy && len(strings.TrimSpace(string(q.body))) > 0 {
		// The body may carry the request's metadata (a cancel reason).
		r, err := decodeBody[a2a.CancelTaskRequest](q.body)
		if err != nil {
			return operation{}, err
		}
		req = r
	}
	req.ID = a2a.TaskID(q.vars.taskID)
	return unaryOp(req, a2asrv.RequestHandler.CancelTask, taskEncoder(q.legacy)), nil
}

// taskEncoder returns the encoder of a task result.
func taskEncoder(legacy bool) func(*a2a.Task) ([]byte, error) {
	if legacy {
		return pbjson.ToProtoTask
	}
	return encodeTask
}

func restListTasks(q restRequest) (operation, error) {
	req := &a2a.ListTasksRequest{ContextID: q.query.Get("contextId"), PageToken: q.query.Get("pageToken")}
	after := "statusTimestampAfter"
	if q.legacy {
		req.Status = pbjson.DecodeTaskState(pbjson.TaskState(q.query.Get("status")))
		after = "lastUpdatedAfter"
	} else {
		req.Status = a2a.TaskState(q.query.Get("status"))
		if !q.query.Has(after) {
			// a2a-go's 1.0 client sends the time filter under its 0.3
			// name; accepted as an alias.
			after = "lastUpdatedAfter"
		}
	}
	pageSize, err := queryInt(q.query, "pageSize")
	if err != nil {
		return operation{}, err
	}
	if pageSize != nil {
		req.PageSize = *pageSize
	}
	if req.HistoryLength, err = queryInt(q.query, "historyLength"); err != nil {
		return operation{}, err
	}
	if v := q.query.Get("includeArtifacts"); v != "" {
		if req.IncludeArtifacts, err = strconv.ParseBool(v); err != nil {
			return operation{}, queryError("includeArtifacts", v, "true or false")
		}
	}
	if v := q.query.Get(after); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return operation{}, queryError(after, v, "an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
		req.StatusTimestampAfter = &t
	}
	if q.legacy {
		return unaryOp(req, a2asrv.RequestHandler.ListTasks, pbjson.ToProtoListTasksResponse), nil
	}
	return unaryOp(req, a2asrv.RequestHandler.ListTasks, encodeJSON[*a2a.ListTasksResponse]), nil
}

// queryInt reads an integer query parameter (nil when absent or empty).
func queryInt(query url.Values, name string) (*int, error) {
	v := query.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, queryError(name, v, "an integer")
	}
	return &n, nil
}

// queryError is the InvalidParams error of a query parameter that does
// not parse.
func queryError(name, got, want string) error {
	return invalidParams(fmt.Sprintf("invalid params: query parameter %s: got %.40q, want %s", name, got, want))
}

func restCreatePushConfig(q restRequest) (operation, error) {
	var req *a2a.PushConfig
	var err error
	if q.legacy {
		req, err = decodeProto(q.body, reflect.TypeFor[pbjson.CreateTaskPushNotificationConfigRequest](), func(b []byte) (*a2a.PushConfig, error) {
			return pbjson.FromProtoCreatePushConfigRequest(b, a2a.TaskID(q.vars.taskID))
		})
	} else {
		req, err = decodeBody[a2a.PushConfig](q.body)
	}
	if err != nil {
		return operation{}, err
	}
	req.TaskID = a2a.TaskID(q.vars.taskID)
	return unaryOp(req, a2asrv.RequestHandler.CreateTaskPushConfig, pushConfigEncoder(q.legacy)), nil
}

func restGetPushConfig(q restRequest) (operation, error) {
	req := &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(q.vars.taskID), ID: q.vars.configID}
	return unaryOp(req, a2asrv.RequestHandler.GetTaskPushConfig, pushConfigEncoder(q.legacy)), nil
}

// pushConfigEncoder returns the encoder of a push configuration result.
func pushConfigEncoder(legacy bool) func(*a2a.PushConfig) ([]byte, error) {
	if legacy {
		return pbjson.ToProtoPushConfigResponse
	}
	return encodeJSON[*a2a.PushConfig]
}

func restListPushConfigs(q restRequest) (operation, error) {
	req := &a2a.ListTaskPushConfigRequest{TaskID: a2a.TaskID(q.vars.taskID)}
	if q.legacy {
		return unaryOp(req, a2asrv.RequestHandler.ListTaskPushConfigs, func(r *a2a.ListTaskPushConfigResponse) ([]byte, error) {
			var configs []*a2a.PushConfig
			if r != nil {
				configs = r.Configs
			}
			return pbjson.ToProtoListPushConfigsResponse(configs)
		}), nil
	}
	return unaryOp(req, a2asrv.RequestHandler.ListTaskPushConfigs, encodeJSON[*a2a.ListTaskPushConfigResponse]), nil
}

func restDeletePushConfig(q restRequest) (operation, error) {
	req := &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(q.vars.taskID), ID: q.vars.configID}
	return unaryOp(req, deletePushConfig, encodeNothing), nil
}

func restCard(q restRequest) (operation, error) {
	if q.legacy {
		return unaryOp(&a2a.GetExtendedAgentCardRequest{}, a2asrv.RequestHandler.GetExtendedAgentCard, encodeLegacyCard), nil
	}
	return unaryOp(&a2a.GetExtendedAgentCardRequest{}, a2asrv.RequestHandler.GetExtendedAgentCard, encodeJSON[*a2a.AgentCard]), nil
}

// ----- encoders -----

// encodeJSON encodes a result as encoding/json does.
func encodeJSON[R any](r R) ([]byte, error) { return json.Marshal(r) }

// encodeNothing is the encoder of an operation without a result.
func encodeNothing(struct{}) ([]byte, error) { return nil, nil }

// encodeSendResult encodes SendMessage's result as A2A 1.0 does
// ({"task": …} or {"message": …}). The verified results a task carries
// as CompactJSON are written as they are (jsonenc.Appender).
func encodeSendResult(res a2a.SendMessageResult) ([]byte, error) {
	b, err := marshalEvent(res)
	if err != nil {
		return nil, fmt.Errorf("encode the result: %w", err)
	}
	return b, nil
}

// encodeTask encodes a task result.
func encodeTask(t *a2a.Task) ([]byte, error) {
	b, err := marshalTask(t)
	if err != nil {
		return nil, fmt.Errorf("encode the result: %w", err)
	}
	return b, nil
}

// encodeEvent encodes an A2A 1.0 stream event as a2a-go does
// (a2a.StreamResponse's MarshalJSON, written by marshalEvent).
func encodeEvent(ev a2a.Event) ([]byte, error) { return marshalEvent(ev) }

// encodeLegacyEvent encodes an event in its A2A 0.3 form; nil for none.
func encodeLegacyEvent(ev a2a.Event) ([]byte, error) {
	compat, err := a2av0.FromV1Event(ev)
	if err != nil || compat == nil {
		return nil, err
	}
	return json.Marshal(compat)
}

// encodeLegacySendResult encodes SendMessage's result in its A2A 0.3 form.
func encodeLegacySendResult(res a2a.SendMessageResult) ([]byte, error) {
	compat, err := a2av0.FromV1Event(res)
	if err != nil || compat == nil {
		return nil, err
	}
	if _, ok := compat.(a2alegacy.SendMessageResult); !ok {
		return nil, fmt.Errorf("unexpected event type %T: %w", compat, a2a.ErrInvalidAgentResponse)
	}
	return json.Marshal(compat)
}

func encodeLegacyTask(t *a2a.Task) ([]byte, error) { return json.Marshal(a2av0.FromV1Task(t)) }

func encodeLegacyPushConfig(c *a2a.PushConfig) ([]byte, error) {
	return json.Marshal(a2av0.FromV1PushConfig(c))
}

func encodeLegacyPushConfigs(r *a2a.ListTaskPushConfigResponse) ([]byte, error) {
	var configs []*a2a.PushConfig
	if r != nil {
		configs = r.Configs
	}
	return json.Marshal(a2av0.FromV1PushConfigs(configs))
}

func encodeLegacyCard(c *a2a.AgentCard) ([]byte, error) {
	return json.Marshal(a2av0.FromV1AgentCard(c))
}
