package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pactum/pactum/a2aserver/internal/wire"
	"github.com/pactum/pactum/internal/bearer"
)

// GRPCServer serves the agents of a Server over A2A 1.0's gRPC binding
// (the lf.a2a.v1.A2AService of specification §10), through a2a-go's gRPC
// handler on each agent's Handler: the same Handler, lifecycle and store
// as JSON-RPC and HTTP+JSON.
//
// One A2AService serves every agent: a call names its agent in the tenant
// field every A2A 1.0 request has, which each card's gRPC interface sets
// to the agent's name (clients built from the card send it). A call that
// names no agent, or one not served here, is refused with InvalidArgument.
//
// Calls go through the Server's bearer authentication (metadata
// "authorization: Bearer TOKEN"), so they act as the token's actor and
// see only its tasks. The a2a-version metadata, when present, must ask
// for 1.0: the service is 1.0's (0.3 clients are served over HTTP).
// a2a-extensions metadata reaches the call context as the HTTP header
// does. A panic in a call answers Internal, as on HTTP.
type GRPCServer struct {
	srv *Server
	gs  *grpc.Server
	// base ends the calls under way when the context given to Serve ends,
	// as an http.Server's BaseContext does, so that GracefulStop is not
	// held by streams that would outlive the node.
	base   context.Context
	cancel context.CancelFunc
	// agents are the A2AService of each agent, by name.
	agents map[string]*a2agrpc.Handler
	// names lists the agents served, sorted, for refusals.
	names string
}

// NewGRPCServer returns the gRPC server of s's agents. Serve it on a
// listener of its own; Shutdown stops it. Request messages are bounded by
// Options.MaxBodyBytes, as HTTP request bodies are.
func (s *Server) NewGRPCServer() *GRPCServer {
	g := &GRPCServer{srv: s, agents: make(map[string]*a2agrpc.Handler, len(s.agents))}
	g.base, g.cancel = context.WithCancel(context.Background())
	for name, ep := range s.agents {
		g.agents[name] = a2agrpc.NewHandler(grpcHandler{ep.handler})
	}
	g.names = strings.Join(slices.Sorted(maps.Keys(s.agents)), ", ")
	g.gs = grpc.NewServer(
		grpc.MaxRecvMsgSize(int(s.opts.MaxBodyBytes)),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
	)
	a2apb.RegisterA2AServiceServer(g.gs, &grpcService{g: g})
	return g
}

// Serve accepts gRPC connections on ln until Shutdown; the calls under way
// end when ctx ends. It returns nil once Shutdown stopped it.
func (g *GRPCServer) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, g.cancel)
	defer stop()
	if err := g.gs.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("a2aserver: serve gRPC on %s: %w", ln.Addr(), err)
	}
	return nil
}

// Shutdown stops the server gracefully: it accepts no more connections
// and waits for the calls under way until ctx ends, then closes what is
// left. Stopping twice is safe.
func (g *GRPCServer) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		g.gs.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		g.cancel()
		return nil
	case <-ctx.Done():
		g.cancel()
		g.gs.Stop()
		<-done
		return ctx.Err()
	}
}

// unary runs a unary call under the server's checks (call).
func (g *GRPCServer) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, wire.GRPCError(g.srv.recovered(p))
		}
	}()
	callCtx, done, err := g.call(ctx, func(md metadata.MD) { _ = grpc.SetHeader(ctx, md) })
	if err != nil {
		return nil, err
	}
	defer done()
	res, err = next(callCtx, req)
	if err != nil && g.cut(ctx) {
		return nil, errShuttingDown
	}
	return res, err
}

// stream runs a streaming call under the server's checks (call).
func (g *GRPCServer) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = wire.GRPCError(g.srv.recovered(p))
		}
	}()
	ctx, done, err := g.call(ss.Context(), func(md metadata.MD) { _ = ss.SetHeader(md) })
	if err != nil {
		return err
	}
	defer done()
	err = next(srv, &callStream{ServerStream: ss, ctx: ctx})
	if g.cut(ss.Context()) {
		// The stream ended because the server stops, not because its
		// task settled: say so, rather than end it as if complete.
		return errShuttingDown
	}
	return err
}

// errShuttingDown ends the calls the server's stop cut short. Unavailable
// is gRPC's code for a call to try again (elsewhere, or after the restart).
var errShuttingDown = status.Error(codes.Unavailable,
	"pactum is shutting down: the call was cut short; the task goes on (read it with GetTask, or follow it again with SubscribeToTask)")

// cut reports whether a call whose own context is ctx ended because the
// context Serve was given ended, the caller still waiting.
func (g *GRPCServer) cut(ctx context.Context) bool {
	return g.base.Err() != nil && ctx.Err() == nil
}

// call checks a call's metadata and returns the context the call runs
// under: ended with Serve's context, carrying the caller's trace context
// and its authenticated actor. header sends response metadata (the
// WWW-Authenticate challenge of a refusal). Call done when the call ends.
func (g *GRPCServer) call(ctx context.Context, header func(metadata.MD)) (context.Context, func(), error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(a2a.SvcParamVersion); len(v) > 0 {
		requested := strings.TrimSpace(v[0])
		if version, ok := negotiate(requested); !ok || version != a2a.Version {
			return nil, nil, wire.GRPCError(versionNotSupported(requested, []a2a.ProtocolVersion{a2a.Version},
				"the gRPC binding serves A2A 1.0; A2A 0.3 is served over JSON-RPC and HTTP+JSON"))
		}
	}
	ctx, err := g.srv.caller(ctx, md.Get("authorization"))
	if err != nil {
		challenge, _ := bearer.Challenge(err)
		header(metadata.Pairs("www-authenticate", challenge))
		if errors.Is(err, bearer.ErrMultipleHeaders) {
			return nil, nil, wire.GRPCError(a2a.NewError(a2a.ErrInvalidRequest, err.Error()))
		}
		return nil, nil, wire.GRPCError(a2a.NewError(a2a.ErrUnauthenticated, err.Error()))
	}
	if len(md.Get("traceparent")) > 0 {
		ctx = propagation.TraceContext{}.Extract(ctx, metadataCarrier(md))
	}
	// The answer is converted to protobuf: its metadata takes plain
	// JSON values only.
	ctx = context.WithValue(ctx, plainMetadataKey{}, true)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.base, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// callStream is a server stream whose context is the one call made.
type callStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context implements grpc.ServerStream.
func (s *callStream) Context() context.Context { return s.ctx }

// metadataCarrier reads the W3C trace context from gRPC metadata.
type metadataCarrier metadata.MD

// Get implements propagation.TextMapCarrier.
func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

// Keys implements propagation.TextMapCarrier.
func (c metadataCarrier) Keys() []string { return slices.Collect(maps.Keys(c)) }

// agent returns the A2AService of the agent a call names in its tenant
// field, or the InvalidArgument refusing the call.
func (g *GRPCServer) agent(tenant string) (*a2agrpc.Handler, error) {
	if h, ok := g.agents[tenant]; ok {
		return h, nil
	}
	msg := fmt.Sprintf("no agent named %q is served here; the agents served are %s (set the request's tenant to one: the tenant of the agent card's GRPC interface)", tenant, g.names)
	if tenant == "" {
		msg = "the request names no agent: set its tenant to one of " + g.names + " (the tenant of the agent card's GRPC interface)"
	}
	meta := map[string]string{"tenant": tenant, "agents": strings.ReplaceAll(g.names, ", ", ",")}
	return nil, wire.GRPCError(a2a.NewError(a2a.ErrInvalidParams, msg).WithErrorInfoMeta(meta))
}

// tenantRequest is a request of the A2AService: each names its agent.
type tenantRequest interface{ GetTenant() string }

// unaryCall calls op of the agent req names.
func unaryCall[Req tenantRequest, Res any](g *GRPCServer, ctx context.Context, req Req, op func(*a2agrpc.Handler, context.Context, Req) (Res, error)) (Res, error) {
	h, err := g.agent(req.GetTenant())
	if err != nil {
		var zero Res
		return zero, err
	}
	return op(h, ctx, req)
}

// streamCall calls the streaming op of the agent req names.
func streamCall[Req tenantRequest](g *GRPCServer, req Req, ss grpc.ServerStreamingServer[a2apb.StreamResponse], op func(*a2agrpc.Handler, Req, grpc.ServerStreamingServer[a2apb.StreamResponse]) error) error {
	h, err := g.agent(req.GetTenant())
	if err != nil {
		return err
	}
	return op(h, req, ss)
}

// grpcService is the one A2AService of a GRPCServer: each call goes to
// the agent its tenant names.
type grpcService struct {
	a2apb.UnimplementedA2AServiceServer
	g *GRPCServer
}

var _ a2apb.A2AServiceServer = (*grpcService)(nil)

// SendMessage implements a2apb.A2AServiceServer.
func (s *grpcService) SendMessage(ctx context.Context, req *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).SendMessage)
}

// SendStreamingMessage implements a2apb.A2AServiceServer.
func (s *grpcService) SendStreamingMessage(req *a2apb.SendMessageRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return streamCall(s.g, req, ss, (*a2agrpc.Handler).SendStreamingMessage)
}

// GetTask implements a2apb.A2AServiceServer.
func (s *grpcService) GetTask(ctx context.Context, req *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).GetTask)
}

// ListTasks implements a2apb.A2AServiceServer.
func (s *grpcService) ListTasks(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).ListTasks)
}

// CancelTask implements a2apb.A2AServiceServer. a2a-go's handler passes
// on only the task id; the request's metadata (a cancel reason,
// metadata.pactum.reason) reaches the Handler through the context.
func (s *grpcService) CancelTask(ctx context.Context, req *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	if md := req.GetMetadata(); md != nil {
		ctx = context.WithValue(ctx, cancelMetadataKey{}, md.AsMap())
	}
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).CancelTask)
}

// SubscribeToTask implements a2apb.A2AServiceServer.
func (s *grpcService) SubscribeToTask(req *a2apb.SubscribeToTaskRequest, ss grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	return streamCall(s.g, req, ss, (*a2agrpc.Handler).SubscribeToTask)
}

// CreateTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (s *grpcService) CreateTaskPushNotificationConfig(ctx context.Context, req *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).CreateTaskPushNotificationConfig)
}

// GetTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (s *grpcService) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).GetTaskPushNotificationConfig)
}

// ListTaskPushNotificationConfigs implements a2apb.A2AServiceServer.
func (s *grpcService) ListTaskPushNotificationConfigs(ctx context.Context, req *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).ListTaskPushNotificationConfigs)
}

// DeleteTaskPushNotificationConfig implements a2apb.A2AServiceServer.
func (s *grpcService) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).DeleteTaskPushNotificationConfig)
}

// GetExtendedAgentCard implements a2apb.A2AServiceServer.
func (s *grpcService) GetExtendedAgentCard(ctx context.Context, req *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return unaryCall(s.g, ctx, req, (*a2agrpc.Handler).GetExtendedAgentCard)
}

// cancelMetadataKey carries a gRPC CancelTask request's metadata.
type cancelMetadataKey struct{}

// grpcHandler is an agent's Handler as a2a-go's gRPC handler calls it.
type grpcHandler struct{ *Handler }

// CancelTask implements a2asrv.RequestHandler: a request without metadata
// takes the metadata the gRPC request carried (see
// grpcService.CancelTask).
func (h grpcHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req != nil && req.Metadata == nil {
		if md, ok := ctx.Value(cancelMetadataKey{}).(map[string]any); ok {
			req.Metadata = md
		}
	}
	return h.Handler.CancelTask(ctx, req)
}
