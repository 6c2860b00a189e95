package a2aserver_test

import (
	"context"
	"errors"
	"iter"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/pactum/pactum/a2aserver"
	"github.com/pactum/pactum/internal/bearer"
	"github.com/pactum/pactum/task"
)

// grpcBundle is a bundle whose server also serves gRPC on loopback.
type grpcBundle struct {
	*bundle
	// addr is the gRPC listener's address, as the cards list it.
	addr string
	// stopServe ends the context the gRPC server serves under.
	stopServe context.CancelFunc
	grpc      *a2aserver.GRPCServer
	served    chan error
}

// setupGRPC is setup with the gRPC binding served on a loopback port of
// its own, stopped when the test ends.
func setupGRPC(t *testing.T, tweak ...func(*setupConfig)) *grpcBundle {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	b := setup(t, append(tweak, func(c *setupConfig) { c.opts.GRPCAddress = addr })...)
	g := &grpcBundle{bundle: b, addr: addr, grpc: b.srv.NewGRPCServer(), served: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	g.stopServe = cancel
	go func() { g.served <- g.grpc.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if err := g.grpc.Shutdown(sctx); err != nil {
			t.Errorf("gRPC shutdown: %v", err)
		}
		if err := <-g.served; err != nil {
			t.Errorf("gRPC Serve: %v", err)
		}
	})
	return g
}

// client returns the official a2a-go client of agent over gRPC, built
// from the agent's card as served over HTTP; opts are added to its
// connection's.
func (g *grpcBundle) client(agent string, opts ...grpc.DialOption) *a2aclient.Client {
	g.t.Helper()
	ctx := testCtx(g.t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, g.url+"/agents/"+agent)
	if err != nil {
		g.t.Fatalf("resolve card of %s: %v", agent, err)
	}
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	c, err := a2aclient.NewFromCard(ctx, card, a2agrpc.WithGRPCTransport(opts...),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolGRPC}}))
	if err != nil {
		g.t.Fatalf("gRPC client for %s: %v", agent, err)
	}
	g.t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// raw returns the generated A2AService client on a connection to the
// server, for calls the a2a-go client would not make.
func (g *grpcBundle) raw() a2apb.A2AServiceClient {
	g.t.Helper()
	conn, err := grpc.NewClient(g.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { _ = conn.Close() })
	return a2apb.NewA2AServiceClient(conn)
}

// wantStatus checks that err is a gRPC status with code whose message
// holds every one of msg and whose ErrorInfo has the A2A reason.
func wantStatus(t *testing.T, what string, err error, code codes.Code, reason string, msg ...string) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s: got %v, want a gRPC status %v", what, err, code)
	}
	if st.Code() != code {
		t.Errorf("%s: code %v (%q), want %v", what, st.Code(), st.Message(), code)
	}
	for _, m := range msg {
		if !strings.Contains(st.Message(), m) {
			t.Errorf("%s: message %q lacks %q", what, st.Message(), m)
		}
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil || info.Reason != reason || info.Domain != a2a.ProtocolDomain {
		t.Errorf("%s: ErrorInfo %v, want reason %s in domain %s", what, info, reason, a2a.ProtocolDomain)
	}
	return st
}

// TestGRPCCard checks that with Options.GRPCAddress each card lists a
// gRPC 1.0 interface at that address whose tenant is the agent, after
// the 1.0 HTTP interfaces; without it, none.
func TestGRPCCard(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t)
	for _, agent := range []string{"echo", "slow"} {
		card, ok := g.srv.Card(agent, "")
		if !ok {
			t.Fatalf("no card for %s", agent)
		}
		i := slices.IndexFunc(card.SupportedInterfaces, func(i *a2a.AgentInterface) bool {
			return i.ProtocolBinding == a2a.TransportProtocolGRPC
		})
		if i != 2 {
			t.Fatalf("%s: gRPC interface at index %d of %+v, want 2 (after JSON-RPC and HTTP+JSON 1.0)", agent, i, card.SupportedInterfaces)
		}
		want := a2a.AgentInterface{URL: g.addr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: a2a.Version, Tenant: agent}
		if got := *card.SupportedInterfaces[i]; got != want {
			t.Errorf("%s: gRPC interface %+v, want %+v", agent, got, want)
		}
	}
	plain := setup(t)
	card, _ := plain.srv.Card("echo", "")
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == a2a.TransportProtocolGRPC {
			t.Errorf("without GRPCAddress the card lists %+v", i)
		}
	}
	for _, bad := range []string{"grpc.example.com", ":9001", "host:0", "host:http", "https://host:443"} {
		_, err := a2aserver.New(a2aserver.Options{Coordinator: g.coord, Agents: []a2aserver.AgentInfo{{Name: "echo"}}, GRPCAddress: bad})
		if err == nil || !strings.Contains(err.Error(), "Options.GRPCAddress") {
			t.Errorf("GRPCAddress %q: err %v, want one naming Options.GRPCAddress", bad, err)
		}
	}
}

// TestGRPCClient drives the operations over gRPC with the official
// client: a message, a continuation of a task waiting for input, a
// stream of artifact chunks, a cancel whose reason comes in the request's
// metadata, subscription, the push configurations and the extended card.
// (internal/e2e/interop runs the whole flow against the binary.)
func TestGRPCClient(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t)
	ctx := testCtx(t)

	echo := g.client("echo")
	tk := send(ctx, t, echo, sendReq(userMessage("hi over gRPC")))
	if tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) == 0 || artifactText(tk.Artifacts[0]) != "hi over gRPC" {
		t.Fatalf("SendMessage: %s %+v, want completed echoing the text", tk.Status.State, tk.Artifacts)
	}
	if got, err := echo.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID}); err != nil || got.ID != tk.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask: %v, %v", got, err)
	}
	list, err := echo.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || !slices.ContainsFunc(list.Tasks, func(x *a2a.Task) bool { return x.ID == tk.ID }) {
		t.Fatalf("ListTasks: %v, %v; want it to hold %s", list, err, tk.ID)
	}

	ask := g.client("ask")
	first := send(ctx, t, ask, sendReq(userMessage("hello")))
	if first.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: %s, want input required", first.Status.State)
	}
	reply := userMessage("Ada")
	reply.TaskID, reply.ContextID = first.ID, first.ContextID
	if done := send(ctx, t, ask, sendReq(reply)); done.Status.State != a2a.TaskStateCompleted || artifactText(done.Artifacts[0]) != "Hello, Ada" {
		t.Fatalf("continuation: %s %+v", done.Status.State, done.Artifacts)
	}

	var words strings.Builder
	var final bool
	for ev, err := range g.client("chunks").SendStreamingMessage(ctx, sendReq(userMessage("go"))) {
		if err != nil {
			t.Fatalf("SendStreamingMessage: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			words.WriteString(artifactText(ev.Artifact))
		case *a2a.TaskStatusUpdateEvent:
			final = ev.Status.State == a2a.TaskStateCompleted
		}
	}
	if words.String() != "onetwothree" || !final {
		t.Errorf("stream: artifact %q, completed %v; want onetwothree and a final completed status", words.String(), final)
	}

	slow := g.client("slow")
	res, err := slow.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMessage("wait"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	running := res.(*a2a.Task)
	g.waitStarted()
	created, err := slow.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: running.ID, URL: "https://hooks.example.com/a2a", Token: "tok"})
	if err != nil || created.ID == "" {
		t.Fatalf("CreateTaskPushConfig: %+v, %v", created, err)
	}
	if got, err := slow.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: running.ID, ID: created.ID}); err != nil || got.URL != created.URL {
		t.Fatalf("GetTaskPushConfig: %+v, %v", got, err)
	}
	if cfgs, err := slow.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: running.ID}); err != nil || len(cfgs) != 1 {
		t.Fatalf("ListTaskPushConfigs: %+v, %v", cfgs, err)
	}
	if err := slow.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: running.ID, ID: created.ID}); err != nil {
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	if _, err := slow.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: running.ID, ID: created.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTaskPushConfig after delete: %v, want %v", err, a2a.ErrTaskNotFound)
	}

	next, stop := iter.Pull2(slow.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}))
	defer stop()
	if ev, err, ok := next(); !ok || err != nil {
		t.Fatalf("SubscribeToTask's first event: %v, %v", ev, err)
	} else if first, isTask := ev.(*a2a.Task); !isTask || first.ID != running.ID {
		t.Fatalf("SubscribeToTask's first event %#v, want task %s", ev, running.ID)
	}
	canceled, err := slow.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID, Metadata: map[string]any{"pactum": map[string]any{"reason": "changed my mind over gRPC"}}})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %v, %v", canceled, err)
	}
	if st, err := g.coord.Get(ctx, string(running.ID), 0); err != nil || st.Reason != "changed my mind over gRPC" {
		t.Errorf("stored reason %q (err %v), want the one in the request's metadata.pactum.reason", st.Reason, err)
	}
	var last a2a.Event
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatalf("SubscribeToTask: %v", err)
		}
		last = ev
	}
	if su, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || su.Status.State != a2a.TaskStateCanceled {
		t.Errorf("SubscribeToTask's last event %#v, want a canceled status", last)
	}
	_, err = collectEvents(slow.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}))
	if !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("SubscribeToTask of a canceled task: %v, want %v", err, a2a.ErrUnsupportedOperation)
	}

	// The client does not ask for an extended card the card does not
	// declare; its gRPC transport does, with the agent as tenant.
	conn, err := grpc.NewClient(g.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := a2agrpc.NewGRPCTransport(conn)
	_, err = tr.GetExtendedAgentCard(ctx, a2aclient.ServiceParams{a2a.SvcParamVersion: {"1.0"}}, &a2a.GetExtendedAgentCardRequest{Tenant: "echo"})
	if !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("GetExtendedAgentCard: %v, want %v", err, a2a.ErrUnsupportedOperation)
	}
}

// collectEvents reads a stream to its end or its first error.
func collectEvents(seq iter.Seq2[a2a.Event, error]) ([]a2a.Event, error) {
	var out []a2a.Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// TestGRPCAuth checks bearer authentication on gRPC: the same tokens and
// refusals as HTTP (Unauthenticated with a WWW-Authenticate challenge;
// InvalidArgument for several authorization values), each refusal told
// to Options.Refused; a caller acts as its token's actor and another
// actor's task is not found, as one that does not exist.
func TestGRPCAuth(t *testing.T) {
	t.Parallel()
	var refused, invalid atomic.Int64
	g := setupGRPC(t, func(c *setupConfig) {
		c.opts.Authenticate = func(_ context.Context, token string) (task.Identity, error) {
			switch token {
			case "alice-token":
				return task.Identity{Actor: "alice"}, nil
			case "bob-token":
				return task.Identity{Actor: "bob"}, nil
			}
			return task.Identity{}, bearer.ErrInvalidToken
		}
		c.opts.Refused = func(bad bool) {
			refused.Add(1)
			if bad {
				invalid.Add(1)
			}
		}
	})
	ctx := testCtx(t)
	raw := g.raw()
	get := &a2apb.GetTaskRequest{Tenant: "echo", Id: "x"}
	for _, tc := range []struct {
		name      string
		md        metadata.MD
		code      codes.Code
		reason    string
		challenge string
	}{
		{"no token", nil, codes.Unauthenticated, "UNAUTHENTICATED", `Bearer realm="pactum"`},
		{"wrong token", metadata.Pairs("authorization", "Bearer nope"), codes.Unauthenticated, "UNAUTHENTICATED", `Bearer realm="pactum", error="invalid_token"`},
		{"not bearer", metadata.Pairs("authorization", "Basic YWxpY2U6"), codes.Unauthenticated, "UNAUTHENTICATED", `Bearer realm="pactum"`},
		{"two tokens", metadata.Pairs("authorization", "Bearer alice-token", "authorization", "Bearer bob-token"), codes.InvalidArgument, "INVALID_REQUEST", `Bearer realm="pactum", error="invalid_request"`},
	} {
		var header metadata.MD
		_, err := raw.GetTask(metadata.NewOutgoingContext(ctx, tc.md), get, grpc.Header(&header))
		wantStatus(t, tc.name, err, tc.code, tc.reason)
		if got := header.Get("www-authenticate"); len(got) != 1 || got[0] != tc.challenge {
			t.Errorf("%s: www-authenticate %q, want %q", tc.name, got, tc.challenge)
		}
		// A stream is refused before it starts.
		ss, err := raw.SubscribeToTask(metadata.NewOutgoingContext(ctx, tc.md), &a2apb.SubscribeToTaskRequest{Tenant: "echo", Id: "x"})
		if err == nil {
			_, err = ss.Recv()
		}
		wantStatus(t, tc.name+" (stream)", err, tc.code, tc.reason)
	}
	if refused.Load() != 8 || invalid.Load() != 4 {
		t.Errorf("Refused told of %d refusals (%d with a token), want 8 (4)", refused.Load(), invalid.Load())
	}

	alice := g.client("echo", grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "alice-token", AllowInsecure: true}))
	bob := g.client("echo", grpc.WithPerRPCCredentials(bearer.PerRPC{Token: "bob-token", AllowInsecure: true}))
	m := userMessage("mine")
	m.Metadata = map[string]any{"pactum": map[string]any{"actor": "alice"}}
	tk := send(ctx, t, alice, sendReq(m))
	if st, err := g.coord.Get(ctx, string(tk.ID), 0); err != nil || st.Envelope.Actor != "alice" {
		t.Fatalf("stored task %v (err %v), want actor alice", st, err)
	}
	if _, err := alice.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID}); err != nil {
		t.Errorf("alice reads her task: %v", err)
	}
	if _, err := bob.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob reads alice's task: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	if _, err := bob.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob cancels alice's task: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	if _, err := collectEvents(bob.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: tk.ID})); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob subscribes to alice's task: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	if _, err := bob.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: tk.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob lists alice's push configs: %v, want %v", err, a2a.ErrTaskNotFound)
	}
	list, err := bob.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(list.Tasks, func(x *a2a.Task) bool { return x.ID == tk.ID }) {
		t.Errorf("bob's ListTasks holds alice's task %s", tk.ID)
	}
	// Naming another actor than the token's is forbidden, as on HTTP.
	m = userMessage("as alice")
	m.Metadata = map[string]any{"pactum": map[string]any{"actor": "alice"}}
	if _, err := bob.SendMessage(ctx, sendReq(m)); !errors.Is(err, a2a.ErrUnauthorized) {
		t.Errorf("bob sends as alice: %v, want %v", err, a2a.ErrUnauthorized)
	}
}

// TestGRPCAgentRouting checks that a call reaches the agent its tenant
// names, that a call naming none or an unknown one is refused with
// InvalidArgument naming the agents served, and that an agent does not
// see another agent's tasks (as on HTTP).
func TestGRPCAgentRouting(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t)
	ctx := testCtx(t)
	raw := g.raw()
	msg := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}}
	_, err := raw.SendMessage(ctx, msg)
	st := wantStatus(t, "no tenant", err, codes.InvalidArgument, "INVALID_PARAMS", "names no agent", "echo, failing")
	msg.Tenant = "nope"
	_, err = raw.SendMessage(ctx, msg)
	wantStatus(t, "unknown tenant", err, codes.InvalidArgument, "INVALID_PARAMS", `no agent named "nope"`, "echo, failing")
	ss, err := raw.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Tenant: "nope", Id: "x"})
	if err == nil {
		_, err = ss.Recv()
	}
	wantStatus(t, "unknown tenant (stream)", err, codes.InvalidArgument, "INVALID_PARAMS", `no agent named "nope"`)
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok && i.Metadata["agents"] != "ask,chunks,echo,failing,flaky,guarded,slow" {
			t.Errorf("ErrorInfo metadata agents = %q", i.Metadata["agents"])
		}
	}

	msg.Tenant = "echo"
	res, err := raw.SendMessage(ctx, msg)
	if err != nil {
		t.Fatalf("SendMessage to echo: %v", err)
	}
	id := res.GetTask().GetId()
	if st, err := g.coord.Get(ctx, id, 0); err != nil || st.Agent != "echo" {
		t.Fatalf("task %s: %v (err %v), want one of echo", id, st, err)
	}
	_, err = raw.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: "slow", Id: id})
	wantStatus(t, "echo's task through slow", err, codes.NotFound, "TASK_NOT_FOUND", id)
	if _, err := raw.CancelTask(ctx, &a2apb.CancelTaskRequest{Tenant: "slow", Id: id}); status.Code(err) != codes.NotFound {
		t.Errorf("cancel of echo's task through slow: %v, want NotFound", err)
	}
}

// TestGRPCVersion checks the a2a-version metadata: absent or 1.0 (any
// patch) is served; another version is refused with VersionNotSupported
// naming 1.0, before the operation runs.
func TestGRPCVersion(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t)
	ctx := testCtx(t)
	raw := g.raw()
	list := &a2apb.ListTasksRequest{Tenant: "echo"}
	for _, v := range []string{"", "1.0", "1.0.3", " 1.0 "} {
		c := ctx
		if v != "" {
			c = metadata.AppendToOutgoingContext(ctx, "a2a-version", v)
		}
		if _, err := raw.ListTasks(c, list); err != nil {
			t.Errorf("a2a-version %q: %v", v, err)
		}
	}
	for _, v := range []string{"0.3", "2.0", "one"} {
		_, err := raw.ListTasks(metadata.AppendToOutgoingContext(ctx, "a2a-version", v), list)
		wantStatus(t, "a2a-version "+v, err, codes.FailedPrecondition, "VERSION_NOT_SUPPORTED", `"`+v+`" is not supported`, "supported versions: 1.0")
	}
}

// TestGRPCShutdown checks that Shutdown stops the server with a stream
// still open once the context the server serves under ends: the stream's
// call ends with Unavailable (its client sees that error, not a hang, nor
// an end as if the task had settled), Shutdown returns nil
// and Serve returns nil; stopping again is safe.
func TestGRPCShutdown(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t)
	ctx := testCtx(t)
	slow := g.client("slow")
	res, err := slow.SendMessage(ctx, &a2a.SendMessageRequest{Message: userMessage("wait"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	next, stop := iter.Pull2(slow.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: res.(*a2a.Task).ID}))
	defer stop()
	if _, err, ok := next(); !ok || err != nil {
		t.Fatalf("first event: ok %v, err %v", ok, err)
	}
	g.stopServe()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.grpc.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for {
		_, err, ok := next()
		if !ok {
			t.Fatal("the stream ended without an error while its task still runs")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "shutting down") {
				t.Errorf("stream cut by the stop: %v, want the shutting-down error", err)
			}
			break
		}
	}
	if err := g.grpc.Shutdown(sctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// TestGRPCMetadataAndLimits checks that a call's traceparent metadata is
// the trace context stored with the task it submits, as the HTTP header
// is, and that a request message over Options.MaxBodyBytes is refused
// with ResourceExhausted before anything is submitted.
func TestGRPCMetadataAndLimits(t *testing.T) {
	t.Parallel()
	g := setupGRPC(t, func(c *setupConfig) { c.opts.MaxBodyBytes = 2048 })
	ctx := testCtx(t)
	raw := g.raw()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req := func(text string) *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Tenant: "echo", Message: &a2apb.Message{MessageId: a2a.NewMessageID(), Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}
	}
	res, err := raw.SendMessage(metadata.AppendToOutgoingContext(ctx, "traceparent", tp), req("traced"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g.coord.Get(ctx, res.GetTask().GetId(), 0); err != nil || st.Envelope.TraceParent != tp {
		t.Errorf("stored traceparent %q (err %v), want the one sent, %q", st.Envelope.TraceParent, err, tp)
	}
	before, err := raw.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.SendMessage(ctx, req(strings.Repeat("x", 4096)))
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a 4 KiB message with MaxBodyBytes 2048: %v, want ResourceExhausted", err)
	}
	after, err := raw.ListTasks(ctx, &a2apb.ListTasksRequest{Tenant: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetTotalSize() != before.GetTotalSize() {
		t.Errorf("tasks went from %d to %d: the refused message was submitted", before.GetTotalSize(), after.GetTotalSize())
	}
}
